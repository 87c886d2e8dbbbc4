package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"gorgonia.org/gorgonia"
)

// IdentityLayer passes its input through, like keras.layers.Identity.
type IdentityLayer struct{ named }

// Identity makes an Identity layer, like keras.layers.Identity: its
// output is its input.
func Identity(opts ...Option) *IdentityLayer {
	l := &IdentityLayer{}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "Identity".
func (l *IdentityLayer) Type() string { return "Identity" }

// plan keeps the input's shape; no weights.
func (l *IdentityLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build returns the input shape unchanged.
func (l *IdentityLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if l.nameErr != nil {
		return nil, fmt.Errorf("Identity layer: %w", l.nameErr)
	}
	out, _, err := l.plan(inputShape)
	return out, err
}

// Params returns nil: Identity has no weights.
func (l *IdentityLayer) Params() []*Param { return nil }

// Call returns its input: no node is added.
func (l *IdentityLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return Flow{Node: in.Node, NeedsGrad: in.NeedsGrad, Logits: in.Logits}, nil
}

// Config returns "Identity" with name.
func (l *IdentityLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name}}, nil
}

func identityFromConfig(args map[string]any) (Layer, error) {
	var a baseArgs
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	return Identity(a.nameOptions()...), nil
}

// ONNX adds ONNX's Identity to the graph.
func (l *IdentityLayer) ONNX(b ONNXGraph, in string) (string, error) {
	return b.Apply("Identity", in, nil), nil
}

// ReLULayer is keras.layers.ReLU with its defaults, max(x, 0).
type ReLULayer struct{ named }

// NewReLU makes a ReLU layer, like keras.layers.ReLU() with its defaults
// (max_value None, negative_slope 0, threshold 0): max(x, 0), the ReLU
// activation as a layer (the name ReLU is that activation's). Its
// automatic name is Keras' "re_lu".
func NewReLU(opts ...Option) *ReLULayer {
	l := &ReLULayer{}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "ReLU".
func (l *ReLULayer) Type() string { return "ReLU" }

// plan keeps the input's shape; no weights.
func (l *ReLULayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build returns the input shape unchanged.
func (l *ReLULayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if l.nameErr != nil {
		return nil, fmt.Errorf("ReLU layer: %w", l.nameErr)
	}
	out, _, err := l.plan(inputShape)
	return out, err
}

// Params returns nil: ReLU has no weights.
func (l *ReLULayer) Params() []*Param { return nil }

// Call adds the ReLU activation to the graph.
func (l *ReLULayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	out, err := ReLU.apply(in)
	if err != nil {
		return Flow{}, fmt.Errorf("ReLU layer %q: %w", l.name, err)
	}
	return out, nil
}

// Config returns "ReLU" with name and Keras' defaults: max_value null,
// negative_slope 0, threshold 0.
func (l *ReLULayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "max_value": nil, "negative_slope": 0.0, "threshold": 0.0}}, nil
}

func reluFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		MaxValue      *float64 `json:"max_value"`
		NegativeSlope float64  `json:"negative_slope"`
		Threshold     float64  `json:"threshold"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.MaxValue != nil || a.NegativeSlope != 0 || a.Threshold != 0 {
		max := "null"
		if a.MaxValue != nil {
			max = fmt.Sprint(*a.MaxValue)
		}
		return nil, fmt.Errorf("max_value %s, negative_slope %v, threshold %v: not supported yet: gokeras' ReLU layer is Keras' default, max_value null, negative_slope 0 and threshold 0 (max(x, 0))",
			max, a.NegativeSlope, a.Threshold)
	}
	return NewReLU(a.nameOptions()...), nil
}

// ONNX adds ONNX's Relu to the graph.
func (l *ReLULayer) ONNX(b ONNXGraph, in string) (string, error) {
	return b.Apply("Relu", in, nil), nil
}
