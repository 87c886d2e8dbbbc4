package layers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// DotOption configures a Dot layer: Normalize, or any Option, such as
// Named.
type DotOption interface{ applyDot(*DotLayer) }

// Normalize makes a Dot layer divide each input by its L2 norm along its
// dot axis first (Keras' normalize=True: x/√max(Σx², 1e-12), as
// tf.math.l2_normalize), so that it computes cosine similarities.
func Normalize() DotOption { return dotNormalize{} }

type dotNormalize struct{}

func (dotNormalize) applyDot(l *DotLayer) { l.normalize = true }

func (o nameOption) applyDot(l *DotLayer) { o.applyLayer(&l.named) }

// DotLayer is keras.layers.Dot: the dot product of each sample of its two
// inputs along an axis of each (Keras' batch_dot). Inputs of rank 2,
// (None, n) and (None, n), give (None, 1); inputs of rank 3 give the axes
// of the first that are not summed over, then the second's: (None, m, n)
// and (None, k, n) along (2, 2) give (None, m, k), as do (None, m, n) and
// (None, n, k) along (2, 1). Other ranks, and inputs of two ranks, are not
// supported yet. It has no weights.
type DotLayer struct {
	named
	axes [2]int
	// pair says the axes were given as a pair (Keras' tuple), which the
	// config keeps, rather than one axis for both.
	pair      bool
	normalize bool
}

func newDot(axes [2]int, pair bool, opts []DotOption) *DotLayer {
	l := &DotLayer{axes: axes, pair: pair}
	for _, o := range opts {
		if o != nil {
			o.applyDot(l)
		}
	}
	return l
}

// Dot makes a layer of the dot products of its two inputs' samples along
// axis of both, like keras.layers.Dot(axes=axis): the axis counted with
// the batch axis as 0, negative from the end (1 or -1: the last axis of
// inputs of rank 2). With Normalize, the products are cosine similarities.
func Dot(axis int, opts ...DotOption) *DotLayer { return newDot([2]int{axis, axis}, false, opts) }

// DotAxes makes a Dot layer summing over axisA of its first input and
// axisB of its second, like keras.layers.Dot(axes=(axisA, axisB)).
func DotAxes(axisA, axisB int, opts ...DotOption) *DotLayer {
	return newDot([2]int{axisA, axisB}, true, opts)
}

// Type returns "Dot".
func (l *DotLayer) Type() string { return "Dot" }

// Axes returns the axis of each input the products sum over, as given.
func (l *DotLayer) Axes() (axisA, axisB int) { return l.axes[0], l.axes[1] }

// Normalized reports whether the inputs are L2-normalized first
// (Normalize).
func (l *DotLayer) Normalized() bool { return l.normalize }

// CheckConfig checks the layer's name and axes: neither may be the batch
// axis 0.
func (l *DotLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("Dot layer: %w", l.nameErr)
	}
	if l.axes[0] == 0 || l.axes[1] == 0 {
		return fmt.Errorf("Dot layer %q: axes %s: cannot perform batch_dot over axis 0: take the dot product over an axis of the samples, 1 or more (or -1 for the last)", l.name, l.axesString())
	}
	return nil
}

func (l *DotLayer) axesString() string {
	if l.pair {
		return fmt.Sprintf("(%d, %d)", l.axes[0], l.axes[1])
	}
	return fmt.Sprint(l.axes[0])
}

// params checks the inputs' sample shapes, in Keras' words, and returns
// the product's parameters (ops.DotParams) for a batch of 1.
func (l *DotLayer) params(inputShapes [][]int) (ops.BatchMatMulParams, error) {
	if err := l.CheckConfig(); err != nil {
		return ops.BatchMatMulParams{}, err
	}
	if len(inputShapes) != 2 {
		return ops.BatchMatMulParams{}, fmt.Errorf("Dot layer %q: a `Dot` layer should be called on a list of 2 inputs; got %d", l.name, len(inputShapes))
	}
	s1, s2 := inputShapes[0], inputShapes[1]
	list := shapes.String(s1) + ", " + shapes.String(s2)
	if len(s1) != len(s2) || len(s1) < 1 || len(s1) > 2 {
		return ops.BatchMatMulParams{}, fmt.Errorf("Dot layer %q: inputs of shapes %s: gokeras' Dot takes two inputs of rank 2, (None, n), or two of rank 3, (None, m, n); other ranks are not supported yet", l.name, list)
	}
	rank := len(s1) + 1
	var axes [2]int
	for i, a := range l.axes {
		if a < 0 {
			a += rank
		}
		if a <= 0 || a >= rank {
			return ops.BatchMatMulParams{}, fmt.Errorf("Dot layer %q: axes %s are not axes of inputs of shapes %s: use axes from 1 to %d (or -1 to -%d); the batch axis 0 cannot be summed over", l.name, l.axesString(), list, rank-1, rank-1)
		}
		axes[i] = a
	}
	if d1, d2 := s1[axes[0]-1], s2[axes[1]-1]; d1 != d2 {
		return ops.BatchMatMulParams{}, fmt.Errorf("Dot layer %q: dimension incompatibility using dot product: %d != %d. Layer shapes: %s", l.name, d1, d2, list)
	}
	return ops.DotParams(append([]int{1}, s1...), append([]int{1}, s2...), axes[0], axes[1])
}

// PlanInputs is the layer's shape rule (see DotLayer), with Keras' errors.
func (l *DotLayer) PlanInputs(inputShapes [][]int) ([]int, error) {
	p, err := l.params(inputShapes)
	if err != nil {
		return nil, err
	}
	return slices.Clone(p.Out[1:]), nil
}

// BuildInputs checks the inputs' shapes (PlanInputs): Dot has no weights.
func (l *DotLayer) BuildInputs(inputShapes [][]int, _ *rand.Rand) ([]int, error) {
	return l.PlanInputs(inputShapes)
}

func (l *DotLayer) oneInput() error {
	return fmt.Errorf("Dot layer %q: a `Dot` layer should be called on a list of 2 inputs: apply it to two tensors with nn.Apply, in a functional model (a Sequential passes one tensor from layer to layer)", l.name)
}

// Build is an error: Dot takes two inputs (nn.Apply).
func (l *DotLayer) Build([]int, *rand.Rand) ([]int, error) { return nil, l.oneInput() }

// plan is an error, as Build is: PlanBuild plans one input.
func (l *DotLayer) plan([]int) ([]int, []WeightShape, error) { return nil, nil, l.oneInput() }

// Params returns nil: Dot has no weights.
func (l *DotLayer) Params() []*Param { return nil }

// Call is an error, as Build is.
func (l *DotLayer) Call(Flow, []*gorgonia.Node) (Flow, error) { return Flow{}, l.oneInput() }

// CallInputs adds the products to the graph: ops.BatchDot, after
// ops.L2Normalize of each input along its axis with Normalize.
func (l *DotLayer) CallInputs(in []Flow, _ []*gorgonia.Node) (Flow, error) {
	if len(in) != 2 {
		return Flow{}, l.oneInput()
	}
	a, b := in[0].Node, in[1].Node
	var err error
	if l.normalize {
		if a, err = ops.L2Normalize(a, l.axes[0]); err == nil {
			b, err = ops.L2Normalize(b, l.axes[1])
		}
	}
	var out *gorgonia.Node
	if err == nil {
		out, err = ops.BatchDot(a, b, l.axes[0], l.axes[1])
	}
	if err != nil {
		return Flow{}, fmt.Errorf("Dot layer %q: %w", l.name, err)
	}
	return Flow{Node: out, NeedsGrad: in[0].NeedsGrad || in[1].NeedsGrad}, nil
}

// Config returns "Dot" with name, axes (an integer, or a list of two as
// given) and normalize.
func (l *DotLayer) Config() (Config, error) {
	var axes any = l.axes[0]
	if l.pair {
		axes = []int{l.axes[0], l.axes[1]}
	}
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "axes": axes, "normalize": l.normalize}}, nil
}

func dotFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Axes      json.RawMessage `json:"axes"`
		Normalize bool            `json:"normalize"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.Axes) == 0 || string(a.Axes) == "null" {
		return nil, missing("axes")
	}
	var opts []DotOption
	if a.Normalize {
		opts = append(opts, Normalize())
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	var axis int
	if err := json.Unmarshal(a.Axes, &axis); err == nil {
		return Dot(axis, opts...), nil
	}
	var axes [2]int
	if err := json.Unmarshal(a.Axes, &axes); err != nil || !isPair(a.Axes) {
		return nil, fmt.Errorf("argument \"axes\" is %s: want an integer or a list of two, one axis of each input", strings.TrimSpace(string(a.Axes)))
	}
	return DotAxes(axes[0], axes[1], opts...), nil
}

// ONNXInputs maps the layer to ONNX, on its inputs channels last: for
// Normalize, each input divided by √max(ReduceSumSquare, 1e-12) along its
// axis; then, for inputs of rank 2, ReduceSum of their Mul along axis 1,
// kept; for rank 3, MatMul, with a Transpose of the last two axes of each
// input summed over its axis 1 (the second) or 2 (the first).
func (l *DotLayer) ONNXInputs(g ONNXGraph, in []string) (string, error) {
	p, err := l.params(g.InputShapes())
	if err != nil {
		return "", err
	}
	if len(in) != 2 {
		return "", l.oneInput()
	}
	rank := len(p.A)
	xs := [2]string{g.ChannelsLast(in[0]), g.ChannelsLast(in[1])}
	if l.normalize {
		eps := g.Weight("epsilon", nil, []float32{1e-12})
		for i, x := range xs {
			axis := l.axes[i]
			if axis < 0 {
				axis += rank
			}
			sq := g.Node("ReduceSumSquare", []string{x}, intsAttr("axes", int64(axis)), intAttr("keepdims", 1))
			norm := g.Node("Sqrt", []string{g.Node("Max", []string{sq, eps})})
			xs[i] = g.Node("Div", []string{x, norm})
		}
	}
	if rank == 2 {
		return g.Node("ReduceSum", []string{g.Node("Mul", xs[:]), g.Int64s("axes", 1)}, intAttr("keepdims", 1)), nil
	}
	for i, t := range []bool{p.TransA, p.TransB} {
		if t {
			xs[i] = g.Node("Transpose", []string{xs[i]}, intsAttr("perm", 0, 2, 1))
		}
	}
	return g.Node("MatMul", xs[:]), nil
}
