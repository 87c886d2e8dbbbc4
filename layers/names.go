package layers

import (
	"errors"
	"fmt"
	"strings"
)

// Option is an optional argument every layer accepts: Named. Layers with
// more keyword arguments take their own options (DenseOption, ConvOption,
// PoolOption, DropoutOption) as well; an Option is one of each.
type Option interface {
	DenseOption
	ConvOption
	PoolOption
	DropoutOption
	NormOption
	EmbeddingOption
	DotOption
	AugmentOption
	NormalizationOption
	PReLUOption
	ResizingOption
	RecurrentOption
	AttentionOption
	DotAttentionOption
	BidirectionalOption
	applyLayer(*named)
}

// Named gives a layer its own name, Keras' name= argument, instead of the
// automatic one ("dense", "dense_1", ...) a model gives it:
//
//	layers.Dense(64, layers.ReLU, layers.Named("hidden"))
//	layers.Flatten(layers.Named("pixels"))
//	layers.NewActivation(layers.Softmax, layers.Named("probs"))
//	layers.Input(32, 32, 3).With(layers.Named("images"))
//
// The name is the layer's in Summary and prefixes its weights' names
// ("hidden/kernel"). A name must not be empty or contain "/", and no two
// layers of a model may share one: a model reports either when it is built.
func Named(name string) Option { return nameOption(name) }

type nameOption string

func (o nameOption) applyLayer(n *named) {
	n.name = string(o)
	n.nameErr = nil
	if err := checkName(string(o)); err != nil {
		n.nameErr = fmt.Errorf("layers.Named(%q): %w", string(o), err)
	}
}

func (o nameOption) applyDense(d *DenseLayer)     { o.applyLayer(&d.named) }
func (o nameOption) applyConv(c *ConvLayer)       { o.applyLayer(&c.named) }
func (o nameOption) applyPool(p *PoolLayer)       { o.applyLayer(&p.named) }
func (o nameOption) applyDropout(d *DropoutLayer) { o.applyLayer(&d.named) }

// checkName says why no layer can have the given name, or returns nil.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New(`a layer name must not be empty: leave Named out for an automatic name ("dense", "dense_1", ...)`)
	case strings.Contains(name, "/"):
		return fmt.Errorf(`a layer name must not contain "/", which separates it from its weights' names (%q): use another character, such as "_"`,
			name+"/kernel")
	}
	return nil
}

// CheckNames checks the names of a model's layers, in order: each must be
// a name Named accepts, and no two may be the same. A model calls it when
// it is built, after naming its unnamed layers.
func CheckNames(ls []Layer) error {
	seen := make(map[string]int, len(ls))
	for i, l := range ls {
		if l == nil {
			continue
		}
		var err error
		if n, ok := l.(interface{ nameError() error }); ok {
			err = n.nameError()
		}
		if err == nil {
			if err = checkName(l.Name()); err != nil {
				err = fmt.Errorf("name %q: %w", l.Name(), err)
			}
		}
		if err != nil {
			return fmt.Errorf("layer %d (%s): %w", i+1, l.Type(), err)
		}
		if j, ok := seen[l.Name()]; ok {
			return fmt.Errorf("layers %d (%s) and %d (%s) are both named %q: layer names must be unique in a model, as they name its weights (%q): give one of them another name with layers.Named",
				j+1, ls[j].Type(), i+1, l.Type(), l.Name(), l.Name()+"/kernel")
		}
		seen[l.Name()] = i
	}
	return nil
}
