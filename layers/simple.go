package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
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

// plan is Flatten's shape rule: one axis of all the input's values; no
// weights.
func (f *FlattenLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	n := 1
	for _, d := range inputShape {
		if d <= 0 {
			return nil, nil, fmt.Errorf("flatten layer %q: input shape %s has a non-positive dimension", f.name, shapes.String(inputShape))
		}
		n *= d
	}
	return []int{n}, nil, nil
}

// Build returns the flattened sample shape.
func (f *FlattenLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if f.nameErr != nil {
		return nil, fmt.Errorf("flatten layer: %w", f.nameErr)
	}
	out, _, err := f.plan(inputShape)
	return out, err
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

// plan is the shape rule of a layer that keeps its input's shape and has
// no weights.
func (a *ActivationLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build returns the input shape unchanged.
func (a *ActivationLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if a.nameErr != nil {
		return nil, fmt.Errorf("activation layer: %w", a.nameErr)
	}
	out, _, err := a.plan(inputShape)
	return out, err
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

// plan is the Input layer's shape rule: the shape it is given, no
// weights.
func (i *InputLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build returns the shape it is given.
func (i *InputLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if i.nameErr != nil {
		return nil, fmt.Errorf("input layer: %w", i.nameErr)
	}
	out, _, err := i.plan(inputShape)
	return out, err
}

// Params returns nil.
func (i *InputLayer) Params() []*Param { return nil }

// Call passes its input through.
func (i *InputLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) { return in, nil }

// Config returns "Flatten" with name.
func (f *FlattenLayer) Config() (Config, error) {
	return Config{ClassName: f.Type(), Config: map[string]any{"name": f.name}}, nil
}

func flattenFromConfig(args map[string]any) (Layer, error) {
	var a baseArgs
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	return Flatten(a.nameOptions()...), nil
}

// Config returns "Activation" with name and activation.
func (a *ActivationLayer) Config() (Config, error) {
	return Config{ClassName: a.Type(), Config: map[string]any{"name": a.name, "activation": a.activation.String()}}, nil
}

func activationFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Activation *string `json:"activation"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Activation == nil {
		return nil, missing("activation")
	}
	act, err := GetActivation(*a.Activation)
	if err != nil {
		return nil, err
	}
	return NewActivation(act, a.nameOptions()...), nil
}

// Config returns "InputLayer" with name and batch_shape, the shape with
// the batch axis first as nil (Keras' None).
func (i *InputLayer) Config() (Config, error) {
	shape := []any{nil}
	for _, d := range i.shape {
		shape = append(shape, d)
	}
	return Config{ClassName: i.Type(), Config: map[string]any{"name": i.name, "batch_shape": shape}}, nil
}

func inputFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		BatchShape []*int `json:"batch_shape"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.BatchShape) == 0 {
		return nil, missing("batch_shape")
	}
	if a.BatchShape[0] != nil {
		return nil, fmt.Errorf("batch_shape: the batch axis must be null (None), got %d: gokeras takes batches of any size", *a.BatchShape[0])
	}
	var shape []int
	for i, d := range a.BatchShape[1:] {
		if d == nil {
			return nil, fmt.Errorf("batch_shape: axis %d is null: only the batch axis may be", i+1)
		}
		shape = append(shape, *d)
	}
	return Input(shape...).With(a.nameOptions()...), nil
}

// ONNX adds Flatten to an ONNX graph, channels last as Keras flattens;
// flat samples pass through.
func (f *FlattenLayer) ONNX(b ONNXGraph, in string) (string, error) {
	if len(b.InputShape()) == 1 {
		return in, nil
	}
	return b.Apply("Flatten", b.ChannelsLast(in), nil, intAttr("axis", 1)), nil
}

// ONNX adds the activation to an ONNX graph.
func (a *ActivationLayer) ONNX(b ONNXGraph, in string) (string, error) {
	return a.activation.onnx(b, in)
}

// ONNX adds nothing to an ONNX graph: an Input after the first layer
// passes its input through.
func (i *InputLayer) ONNX(_ ONNXGraph, in string) (string, error) { return in, nil }
