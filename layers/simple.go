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

// Flatten makes a Flatten layer.
func Flatten() *FlattenLayer { return &FlattenLayer{} }

// Type returns "Flatten".
func (f *FlattenLayer) Type() string { return "Flatten" }

// Build returns the flattened sample shape.
func (f *FlattenLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
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

// NewActivation makes an Activation layer.
func NewActivation(a Activation) *ActivationLayer { return &ActivationLayer{activation: a} }

// Type returns "Activation".
func (a *ActivationLayer) Type() string { return "Activation" }

// Build returns the input shape unchanged.
func (a *ActivationLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
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

// Input declares the sample shape (no batch axis), e.g. Input(32, 32, 3).
func Input(shape ...int) *InputLayer { return &InputLayer{shape: append([]int(nil), shape...)} }

// Shape is the declared sample shape.
func (i *InputLayer) Shape() []int { return append([]int(nil), i.shape...) }

// Type returns "InputLayer".
func (i *InputLayer) Type() string { return "InputLayer" }

// Build checks the shape and returns it.
func (i *InputLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return append([]int(nil), inputShape...), nil
}

// Params returns nil.
func (i *InputLayer) Params() []*Param { return nil }

// Call passes its input through.
func (i *InputLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) { return in, nil }
