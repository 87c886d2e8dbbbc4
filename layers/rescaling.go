package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// RescalingLayer multiplies its input by a constant and adds another,
// like keras.layers.Rescaling: x·scale + offset, in training and in
// inference alike. It has no weights.
type RescalingLayer struct {
	named
	scale, offset float64
}

// Rescaling makes a Rescaling layer computing x·scale + offset, Keras'
// Rescaling(scale, offset): Rescaling(1.0/255, 0) maps pixels of [0, 255]
// to [0, 1], Rescaling(1.0/127.5, -1) to [-1, 1]. The product is rounded
// to float32 before the offset is added, as TensorFlow computes it.
// Keras' per-channel scale (a list) is not supported.
func Rescaling(scale, offset float64, opts ...Option) *RescalingLayer {
	l := &RescalingLayer{scale: scale, offset: offset}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "Rescaling".
func (l *RescalingLayer) Type() string { return "Rescaling" }

// Scale and Offset are the layer's arguments.
func (l *RescalingLayer) Scale() float64 { return l.scale }

// Offset is what is added after the scaling.
func (l *RescalingLayer) Offset() float64 { return l.offset }

// CheckConfig checks that scale and offset are finite numbers.
func (l *RescalingLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("rescaling layer: %w", l.nameErr)
	}
	for _, a := range []struct {
		what string
		v    float64
	}{{"scale", l.scale}, {"offset", l.offset}} {
		if math.IsNaN(a.v) || math.IsInf(a.v, 0) {
			return fmt.Errorf("rescaling layer %q: the %s %v is not a finite number: give a finite one, such as 1.0/255", l.name, a.what, a.v)
		}
	}
	return nil
}

// plan keeps the input's shape; no weights.
func (l *RescalingLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build checks the arguments and returns the input shape unchanged.
func (l *RescalingLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := l.plan(inputShape)
	return out, err
}

// Params returns nil: Rescaling has no weights.
func (l *RescalingLayer) Params() []*Param { return nil }

// Call adds x·scale + offset to the graph (ops.Rescale), whose gradient
// is dy·scale.
func (l *RescalingLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	out, err := ops.Rescale(in.Node, l.scale, l.offset)
	if err != nil {
		return Flow{}, fmt.Errorf("rescaling layer %q: %w", l.name, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "Rescaling" with name, scale and offset.
func (l *RescalingLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "scale": l.scale, "offset": l.offset}}, nil
}

func rescalingFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Scale  *float64 `json:"scale"`
		Offset float64  `json:"offset"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Scale == nil {
		return nil, missing("scale")
	}
	return Rescaling(*a.Scale, a.Offset, a.nameOptions()...), nil
}

// ONNX adds Mul by the scale and Add of the offset, scalar initializers
// ("rescaling/scale", "rescaling/offset"), to an ONNX graph.
func (l *RescalingLayer) ONNX(g ONNXGraph, in string) (string, error) {
	y := g.Apply("Mul", in, []string{g.Weight("scale", nil, []float32{float32(l.scale)})})
	return g.Apply("Add", y, []string{g.Weight("offset", nil, []float32{float32(l.offset)})}), nil
}
