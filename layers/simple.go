package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/internal/shapes"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// FlattenLayer reshapes each sample to a vector: (None, 32, 32, 3) becomes
// (None, 3072).
type FlattenLayer struct{ named }

// Flatten makes a Flatten layer, like keras.layers.Flatten.
func Flatten(opts ...Option) *FlattenLayer {
	f := &FlattenLayer{}
	applyOptions(&f.named, opts)
	return f
}

// applyOptions applies a layer's options in order; nil options are skipped.
func applyOptions(n *named, opts []Option) {
	for _, o := range opts {
		if o != nil {
			o.applyLayer(n)
		}
	}
}

// Type returns "Flatten".
func (f *FlattenLayer) Type() string { return "Flatten" }

// Build returns the flattened sample shape.
func (f *FlattenLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if f.nameErr != nil {
		return nil, fmt.Errorf("flatten layer: %w", f.nameErr)
	}
	n := 1
	for _, d := range inputShape {
		if d <= 0 {
			return nil, fmt.Errorf("flatten layer %q: input shape %s has a non-positive dimension", f.name, shapes.String(inputShape))
		}
		n *= d
	}
	return []int{n}, nil
}

// Params returns nil: Flatten has no weights.
func (f *FlattenLayer) Params() []*Param { return nil }

// Call adds the reshape to the graph.
func (f *FlattenLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	if in.Node.Dims() == 2 {
		return Flow{Node: in.Node, NeedsGrad: in.NeedsGrad}, nil
	}
	out, err := ops.Flatten(in.Node, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("flatten layer %q: %w", f.name, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

// ActivationLayer applies an activation on its own, like keras.layers.Activation.
type ActivationLayer struct {
	named
	activation Activation
}

// NewActivation makes an Activation layer, like keras.layers.Activation
// (the name Activation is the activation functions' type here).
func NewActivation(a Activation, opts ...Option) *ActivationLayer {
	l := &ActivationLayer{activation: a}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "Activation".
func (a *ActivationLayer) Type() string { return "Activation" }

// Build returns the input shape unchanged.
func (a *ActivationLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if a.nameErr != nil {
		return nil, fmt.Errorf("activation layer: %w", a.nameErr)
	}
	return append([]int(nil), inputShape...), nil
}

// Params returns nil: activations have no weights.
func (a *ActivationLayer) Params() []*Param { return nil }

// Call adds the activation to the graph.
func (a *ActivationLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	out, err := a.activation.apply(in)
	if err != nil {
		return Flow{}, fmt.Errorf("activation layer %q: %w", a.name, err)
	}
	return out, nil
}

// InputLayer declares the shape of a model's samples, like keras.Input. It is
// not a step of the model: a Sequential model takes its shape and drops it.
type InputLayer struct {
	named
	shape []int
}

// Input declares the sample shape (no batch axis), e.g. Input(32, 32, 3),
// as keras.Input(shape=(32, 32, 3)) does. Its arguments are the shape, so
// its options are given with With.
func Input(shape ...int) *InputLayer { return &InputLayer{shape: append([]int(nil), shape...)} }

// With applies options to the Input layer and returns it:
// layers.Input(32, 32, 3).With(layers.Named("images")).
func (i *InputLayer) With(opts ...Option) *InputLayer {
	applyOptions(&i.named, opts)
	return i
}

// Shape is the declared sample shape.
func (i *InputLayer) Shape() []int { return append([]int(nil), i.shape...) }

// Type returns "InputLayer".
func (i *InputLayer) Type() string { return "InputLayer" }

// Build returns the shape it is given.
func (i *InputLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if i.nameErr != nil {
		return nil, fmt.Errorf("input layer: %w", i.nameErr)
	}
	return append([]int(nil), inputShape...), nil
}

// Params returns nil.
func (i *InputLayer) Params() []*Param { return nil }

// Call passes its input through.
func (i *InputLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) { return in, nil }
