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

// ReshapeLayer gives each sample another shape with as many values, like
// keras.layers.Reshape.
type ReshapeLayer struct {
	named
	target []int
	shape  []int // the resolved output shape
}

// Reshape makes a Reshape layer to the given sample shape (no batch axis).
// One dimension may be -1: it is whatever holds the remaining values.
func Reshape(shape []int, opts ...Option) *ReshapeLayer {
	r := &ReshapeLayer{target: append([]int(nil), shape...)}
	applyOptions(&r.named, opts)
	return r
}

// Type returns "Reshape".
func (r *ReshapeLayer) Type() string { return "Reshape" }

// plan is Reshape's shape rule: the target shape, its -1 resolved
// against the input's size; no weights.
func (r *ReshapeLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	what := fmt.Sprintf("reshape layer %q", r.name)
	total := 1
	for _, d := range inputShape {
		total *= d
	}
	known, free := 1, -1
	for i, d := range r.target {
		switch {
		case d == -1 && free < 0:
			free = i
		case d <= 0:
			return nil, nil, fmt.Errorf("%s: target shape %v: dimensions must be positive, with at most one -1", what, r.target)
		default:
			known *= d
		}
	}
	if len(r.target) == 0 {
		return nil, nil, fmt.Errorf("%s: the target shape is empty", what)
	}
	shape := append([]int(nil), r.target...)
	if free >= 0 {
		if total%known != 0 {
			return nil, nil, fmt.Errorf("%s: cannot reshape input %s to %v: %d values do not divide into %d", what, shapes.String(inputShape), r.target, total, known)
		}
		shape[free] = total / known
	} else if known != total {
		return nil, nil, fmt.Errorf("%s: cannot reshape input %s (%d values) to %s (%d values)", what, shapes.String(inputShape), total, shapes.String(shape), known)
	}
	return shape, nil, nil
}

// Build resolves the target shape against the input's.
func (r *ReshapeLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if r.nameErr != nil {
		return nil, fmt.Errorf("reshape layer: %w", r.nameErr)
	}
	shape, _, err := r.plan(inputShape)
	if err != nil {
		return nil, err
	}
	r.shape = shape
	return slices.Clone(shape), nil
}

// Params returns nil: Reshape has no weights.
func (r *ReshapeLayer) Params() []*Param { return nil }

// Call adds the reshape to the graph.
func (r *ReshapeLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	out, err := ops.Reshape(in.Node, append([]int{in.Node.Shape()[0]}, r.shape...), in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("reshape layer %q: %w", r.name, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns "Reshape" with name and target_shape.
func (r *ReshapeLayer) Config() (Config, error) {
	return Config{ClassName: r.Type(), Config: map[string]any{"name": r.name, "target_shape": slices.Clone(r.target)}}, nil
}

func reshapeFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		TargetShape []int `json:"target_shape"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.TargetShape == nil {
		return nil, missing("target_shape")
	}
	return Reshape(a.TargetShape, a.nameOptions()...), nil
}

// ONNX adds Reshape to the layer's resolved output shape to an ONNX graph,
// the batch axis kept (0 copies it).
func (r *ReshapeLayer) ONNX(b ONNXGraph, in string) (string, error) {
	x := b.ChannelsLast(in)
	return b.Apply("Reshape", x, []string{b.Int64s("shape", append([]int64{0}, int64s(r.shape)...)...)}), nil
}
