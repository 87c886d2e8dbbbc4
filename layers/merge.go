package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// MultiInputLayer is a layer applied to several tensors at once in a
// functional model (nn.Apply): Keras' merge layers, such as Add and
// Concatenate. Its one-input Build and Call are not used; a model calls
// these instead.
type MultiInputLayer interface {
	Layer
	// PlanInputs returns the shape of the samples the layer outputs for
	// inputs of the given sample shapes, or the error BuildInputs would
	// return for them, in Keras' words. It changes nothing.
	PlanInputs(inputShapes [][]int) ([]int, error)
	// BuildInputs builds the layer for inputs of the given sample shapes
	// and returns the shape of the samples it outputs.
	BuildInputs(inputShapes [][]int, rng *rand.Rand) ([]int, error)
	// CallInputs adds the layer to a graph: in holds one Flow per input,
	// in the order the layer was applied to them.
	CallInputs(in []Flow, params []*gorgonia.Node) (Flow, error)
}

// KerasCaller is a MultiInputLayer whose Keras call takes its inputs as
// separate arguments, some by keyword (MultiHeadAttention(query, value,
// key=..., attention_mask=...)), rather than as one list: model files
// write and read its calls so.
type KerasCaller interface {
	MultiInputLayer
	// KerasCall names each of n inputs as the call takes it, the first
	// positional ones positional and the rest by keyword, and gives the
	// call's other keyword arguments.
	KerasCall(n int) (names []string, positional int, flags map[string]any)
	// SetKerasCall sets the layer up for a saved call given the named
	// inputs and the other keyword arguments, and returns the names in
	// the order the layer takes the inputs.
	SetKerasCall(names []string, flags map[string]any) ([]string, error)
}

// MergeLayer is one of Keras' merge layers, applied to several tensors in
// a functional model (nn.Apply): Add, Subtract, Multiply, Average,
// Maximum and Minimum combine their inputs value by value, Concatenate
// joins them along an axis. They have no weights.
//
// The value-by-value ones take inputs of one shape, or shapes that differ
// only where one of them is 1 (that input is broadcast along the axis), as
// Keras' merge layers do: ((None, 4, 1) and (None, 4, 8) give (None, 4,
// 8)); inputs of different ranks are not supported yet. Subtract takes
// exactly two inputs, the others two or more, each folded in turn into the
// result of the ones before.
type MergeLayer struct {
	named
	kind mergeKind
	// axis is Concatenate's, counted as Keras counts it, the batch axis
	// being 0: -1 (the default) is the last axis.
	axis int
}

type mergeKind int

const (
	mergeAdd mergeKind = iota
	mergeSubtract
	mergeMultiply
	mergeAverage
	mergeMaximum
	mergeMinimum
	mergeConcatenate
)

var mergeTypes = [...]string{"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"}

// mergeOps are the value-by-value merges' ops, each folding one more input
// into the result (Average adds, then divides by n); mergeONNX their ONNX
// operators.
var (
	mergeOps = [...]func(a, b *gorgonia.Node) (*gorgonia.Node, error){
		mergeAdd: ops.Add, mergeSubtract: ops.Subtract, mergeMultiply: ops.Multiply,
		mergeAverage: ops.Add, mergeMaximum: ops.Maximum, mergeMinimum: ops.Minimum,
	}
	mergeONNX = [...]string{mergeAdd: "Add", mergeSubtract: "Sub", mergeMultiply: "Mul",
		mergeAverage: "Mean", mergeMaximum: "Max", mergeMinimum: "Min"}
)

func newMerge(kind mergeKind, axis int, opts []Option) *MergeLayer {
	l := &MergeLayer{kind: kind, axis: axis}
	applyOptions(&l.named, opts)
	return l
}

// Add makes a layer that adds its inputs, like keras.layers.Add.
func Add(opts ...Option) *MergeLayer { return newMerge(mergeAdd, 0, opts) }

// Subtract makes a layer that subtracts its second input from its first,
// like keras.layers.Subtract.
func Subtract(opts ...Option) *MergeLayer { return newMerge(mergeSubtract, 0, opts) }

// Multiply makes a layer that multiplies its inputs value by value, like
// keras.layers.Multiply.
func Multiply(opts ...Option) *MergeLayer { return newMerge(mergeMultiply, 0, opts) }

// Average makes a layer that averages its inputs, like
// keras.layers.Average.
func Average(opts ...Option) *MergeLayer { return newMerge(mergeAverage, 0, opts) }

// Maximum makes a layer that takes the largest of its inputs' values, like
// keras.layers.Maximum.
func Maximum(opts ...Option) *MergeLayer { return newMerge(mergeMaximum, 0, opts) }

// Minimum makes a layer that takes the smallest of its inputs' values,
// like keras.layers.Minimum.
func Minimum(opts ...Option) *MergeLayer { return newMerge(mergeMinimum, 0, opts) }

// Concatenate makes a layer that joins its inputs along axis, like
// keras.layers.Concatenate(axis): the axis counted with the batch axis as
// 0, negative from the end (-1, Keras' default, is the last). The inputs
// must match on every other axis.
func Concatenate(axis int, opts ...Option) *MergeLayer {
	return newMerge(mergeConcatenate, axis, opts)
}

// Type returns the Keras class name: "Add", "Concatenate", ...
func (l *MergeLayer) Type() string { return mergeTypes[l.kind] }

// Axis is Concatenate's axis (0 for the others).
func (l *MergeLayer) Axis() int { return l.axis }

// PlanInputs is the layer's shape rule (see MergeLayer), with Keras' errors.
func (l *MergeLayer) PlanInputs(inputShapes [][]int) ([]int, error) {
	if l.nameErr != nil {
		return nil, fmt.Errorf("%s layer: %w", l.Type(), l.nameErr)
	}
	if len(inputShapes) < 2 {
		return nil, fmt.Errorf("%s layer %q: a merge layer should be called on a list of at least 2 inputs; got %d", l.Type(), l.name, len(inputShapes))
	}
	if l.kind == mergeSubtract && len(inputShapes) != 2 {
		return nil, fmt.Errorf("Subtract layer %q: a Subtract layer should be called on exactly 2 inputs; got %d", l.name, len(inputShapes))
	}
	list := func() string {
		var s []string
		for _, sh := range inputShapes {
			s = append(s, shapes.String(sh))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	if l.kind == mergeConcatenate {
		rank := len(inputShapes[0]) + 1 // with the batch axis
		axis := l.axis
		if axis < 0 {
			axis += rank
		}
		if axis <= 0 || axis >= rank {
			return nil, fmt.Errorf("Concatenate layer %q: axis %d is not an axis of inputs of shape %s: use one of 1 to %d (or -1 to -%d); the batch axis 0 cannot be joined", l.name, l.axis, shapes.String(inputShapes[0]), rank-1, rank-1)
		}
		out := slices.Clone(inputShapes[0])
		for _, sh := range inputShapes[1:] {
			ok := len(sh) == len(out)
			for k := 0; ok && k < len(sh); k++ {
				ok = k == axis-1 || sh[k] == inputShapes[0][k]
			}
			if !ok {
				return nil, fmt.Errorf("Concatenate layer %q: a Concatenate layer requires inputs with matching shapes except for the concatenation axis %d; got inputs of shapes %s", l.name, l.axis, list())
			}
			out[axis-1] += sh[axis-1]
		}
		return out, nil
	}
	out := slices.Clone(inputShapes[0])
	for _, sh := range inputShapes[1:] {
		if len(sh) != len(out) {
			return nil, fmt.Errorf("%s layer %q: inputs of shapes %s have different ranks: merging inputs of different ranks is not supported yet; reshape them to one rank", l.Type(), l.name, list())
		}
		for k := range sh {
			switch {
			case sh[k] == out[k] || sh[k] == 1:
			case out[k] == 1:
				out[k] = sh[k]
			default:
				return nil, fmt.Errorf("%s layer %q: inputs have incompatible shapes: got inputs of shapes %s", l.Type(), l.name, list())
			}
		}
	}
	return out, nil
}

// BuildInputs checks the inputs' shapes (PlanInputs): a merge layer has no
// weights to make.
func (l *MergeLayer) BuildInputs(inputShapes [][]int, _ *rand.Rand) ([]int, error) {
	return l.PlanInputs(inputShapes)
}

// Build is an error: a merge layer takes several inputs (nn.Apply).
func (l *MergeLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	return nil, l.oneInput()
}

func (l *MergeLayer) oneInput() error {
	return fmt.Errorf("%s layer %q: a merge layer should be called on a list of inputs: apply it to two or more tensors with nn.Apply, in a functional model (a Sequential passes one tensor from layer to layer)", l.Type(), l.name)
}

// plan is an error, as Build is: PlanBuild plans one input.
func (l *MergeLayer) plan([]int) ([]int, []WeightShape, error) { return nil, nil, l.oneInput() }

// Params returns nil: merge layers have no weights.
func (l *MergeLayer) Params() []*Param { return nil }

// Call is an error, as Build is.
func (l *MergeLayer) Call(Flow, []*gorgonia.Node) (Flow, error) { return Flow{}, l.oneInput() }

// CallInputs adds the merge to the graph.
func (l *MergeLayer) CallInputs(in []Flow, _ []*gorgonia.Node) (Flow, error) {
	if len(in) < 2 {
		return Flow{}, l.oneInput()
	}
	needsGrad := false
	nodes := make([]*gorgonia.Node, len(in))
	for i, f := range in {
		nodes[i], needsGrad = f.Node, needsGrad || f.NeedsGrad
	}
	var out *gorgonia.Node
	var err error
	if l.kind == mergeConcatenate {
		out, err = ops.Concatenate(l.axis, nodes...)
	} else {
		op := mergeOps[l.kind]
		out = nodes[0]
		for _, n := range nodes[1:] {
			if out, err = op(out, n); err != nil {
				break
			}
		}
		if err == nil && l.kind == mergeAverage {
			out, err = ops.DivideBy(out, float64(len(nodes))) // Keras divides the sum by n
		}
	}
	if err != nil {
		return Flow{}, fmt.Errorf("%s layer %q: %w", l.Type(), l.name, err)
	}
	return Flow{Node: out, NeedsGrad: needsGrad}, nil
}

// Config returns the layer's class with its name (and Concatenate's axis).
func (l *MergeLayer) Config() (Config, error) {
	args := map[string]any{"name": l.name}
	if l.kind == mergeConcatenate {
		args["axis"] = l.axis
	}
	return Config{ClassName: l.Type(), Config: args}, nil
}

func mergeFromConfig(kind mergeKind) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		if kind == mergeConcatenate {
			a := struct {
				baseArgs
				Axis int `json:"axis"`
			}{Axis: -1}
			if err := configargs.Decode(args, &a); err != nil {
				return nil, err
			}
			return Concatenate(a.Axis, a.nameOptions()...), nil
		}
		var a baseArgs
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		return newMerge(kind, 0, a.nameOptions()), nil
	}
}

// ONNXInputs maps the layer to ONNX: Add, Sub, Mul, Mean, Max, Min or
// Concat.
func (l *MergeLayer) ONNXInputs(g ONNXGraph, in []string) (string, error) {
	if l.kind == mergeConcatenate {
		return onnxConcat(g, in, l.axis)
	}
	return onnxMerge(g, mergeONNX[l.kind], in)
}
