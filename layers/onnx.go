package layers

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
)

// ONNXMapper is implemented by every layer of this package: ONNX adds
// what Predict computes of the layer to the graph g, reading the value
// in, and returns the value it writes. Package export/onnx walks a
// model's layer calls and calls it for each (twice for a layer applied
// twice, which adds its weights once); each layer's mapping is beside
// its code, what they share is here.
type ONNXMapper interface {
	ONNX(g ONNXGraph, in string) (out string, err error)
}

// ONNXInputsMapper is the ONNXMapper of a layer of several inputs (a
// MultiInputLayer, such as Keras' merge layers): ONNXInputs adds the
// layer to g, reading the values in, one per input in the order the layer
// was applied to them, and returns the value it writes. onnxMerge and
// onnxConcat map Keras' merge layers.
type ONNXInputsMapper interface {
	ONNXInputs(g ONNXGraph, in []string) (out string, err error)
}

// ONNXOutputsMapper is the ONNXMapper of a layer whose call may take
// several inputs or output several tensors (a recurrent layer called on
// its sequences and initial states, or with return_state): ONNXOutputs
// adds the layer to g, reading the values in, and returns the values it
// writes, one per output of the call, in order.
type ONNXOutputsMapper interface {
	ONNXOutputs(g ONNXGraph, in []string) (out []string, err error)
}

// ONNXGraph is an ONNX graph being built, as a layer's ONNX method sees
// it; package export/onnx makes one for each export. Values are named by
// strings. The graph knows, for each value, whether it holds its channels
// first, (batch, channels, spatial axes...), as ONNX's convolutions and
// poolings take them, or last, as gokeras holds them; Node, Apply, Weight
// and Int64s name what they add after the layer ("dense/Gemm",
// "dense/kernel").
type ONNXGraph interface {
	// InputShape is the shape of the layer's input samples, channels
	// last (no batch axis); for a layer of several inputs, the first's.
	InputShape() []int
	// InputShapes are the shapes of the samples of each of the layer's
	// inputs, in order, channels last.
	InputShapes() [][]int
	// IsChannelsFirst reports whether the value x holds its channels
	// first.
	IsChannelsFirst(x string) bool
	// ChannelsFirst and ChannelsLast return x, a value of the layer's
	// input (of its rank, for a layer of several inputs), with its
	// channels first or last, adding a Transpose where it has the other
	// layout (once per value: a value that two layers read is transposed
	// once).
	ChannelsFirst(x string) string
	ChannelsLast(x string) string
	// Node adds a node of an op with one output, and returns the output,
	// channels last (or without a channels axis).
	Node(op string, inputs []string, attrs ...ONNXAttr) string
	// NodeOutputs adds a node of an op with n outputs (a recurrent
	// operator's Y, Y_h and Y_c), and returns them, channels last; an
	// input named "" is an optional input left out.
	NodeOutputs(op string, inputs []string, n int, attrs ...ONNXAttr) []string
	// Apply adds a node that reads x, then the extra inputs, and returns
	// its output, with its channels as x has them.
	Apply(op, x string, extra []string, attrs ...ONNXAttr) string
	// Within makes x, whose samples have the given shape (channels
	// last, no batch axis), the input that the layer's mapping reads
	// from here on, as InputShape, InputShapes, ChannelsFirst and
	// ChannelsLast see it, and returns a function that makes the call's
	// own inputs the input again: TimeDistributed maps the layer it wraps
	// on the steps folded into the batch.
	Within(x string, shape []int) (restore func())
	// Weight adds a float32 initializer of the given dimensions (none: a
	// scalar) and returns its name; Int64s adds an int64 vector. A layer
	// that adds the same initializer again (the same name and values, as
	// a layer applied twice adds its weights) gets the first one's name:
	// the graph holds it once.
	Weight(what string, dims []int, values []float32) string
	Int64s(what string, values ...int64) string
}

// ONNXAttr is an attribute of an ONNX node: its name, and a value that is
// an int64, a []int64, a float32, a []float32, a string or a []string.
type ONNXAttr struct {
	name  string
	value any
}

// Name is the attribute's name.
func (a ONNXAttr) Name() string { return a.name }

// Value is the attribute's value: an int64, a []int64, a float32, a
// []float32, a string or a []string (nil for the zero ONNXAttr).
func (a ONNXAttr) Value() any { return a.value }

func intAttr(name string, v int64) ONNXAttr     { return ONNXAttr{name, v} }
func intsAttr(name string, v ...int64) ONNXAttr { return ONNXAttr{name, append([]int64(nil), v...)} }
func floatAttr(name string, v float32) ONNXAttr { return ONNXAttr{name, v} }
func stringAttr(name, v string) ONNXAttr        { return ONNXAttr{name, v} }
func floatsAttr(name string, v ...float32) ONNXAttr {
	return ONNXAttr{name, append([]float32(nil), v...)}
}
func stringsAttr(name string, v ...string) ONNXAttr {
	return ONNXAttr{name, append([]string(nil), v...)}
}

// onnxInt64 is ONNX's TensorProto.INT64, the type Embedding casts its
// indices to.
const onnxInt64 = 7

// onnx adds the activation to an ONNX graph, on x; softmax works on the
// channels, as Keras' on the last axis.
func (a Activation) onnx(b ONNXGraph, x string) (string, error) {
	return onnxActivation(b, x, a.act, ops.DefaultAlpha(a.act))
}

// onnxActivation adds act to an ONNX graph, on x, with the alpha of ELU
// or LeakyReLU: operator set 17's own operator where it has one, else
// written out.
func onnxActivation(b ONNXGraph, x string, act ops.Activation, alpha float64) (string, error) {
	switch act {
	case ops.Linear:
		return x, nil
	case ops.ReLU:
		return b.Apply("Relu", x, nil), nil
	case ops.Sigmoid:
		return b.Apply("Sigmoid", x, nil), nil
	case ops.Tanh:
		return b.Apply("Tanh", x, nil), nil
	case ops.Softmax:
		axis := int64(-1)
		if b.IsChannelsFirst(x) {
			axis = 1
		}
		return b.Apply("Softmax", x, nil, intAttr("axis", axis)), nil
	case ops.GELU:
		// ONNX's Gelu comes with operator set 20; the graph's is lower, so
		// GELU is written out as Keras' exact one: 0.5·x·(1 + erf(x/√2)).
		h := b.Apply("Div", x, []string{b.Weight("sqrt2", nil, []float32{math.Sqrt2})})
		e := b.Apply("Erf", h, nil)
		p := b.Apply("Add", e, []string{b.Weight("one", nil, []float32{1})})
		m := b.Apply("Mul", x, []string{p})
		return b.Apply("Mul", m, []string{b.Weight("half", nil, []float32{0.5})}), nil
	case ops.GELUApproximate:
		// The tanh form, written out: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
		x3 := b.Apply("Mul", b.Apply("Mul", x, []string{x}), []string{x})
		inner := b.Apply("Add", x, []string{b.Apply("Mul", x3, []string{b.Weight("gelu_cubic", nil, []float32{0.044715})})})
		t := b.Apply("Tanh", b.Apply("Mul", inner, []string{b.Weight("sqrt_2_over_pi", nil, []float32{math.Sqrt2 / math.SqrtPi})}), nil)
		p := b.Apply("Add", t, []string{b.Weight("one", nil, []float32{1})})
		m := b.Apply("Mul", x, []string{p})
		return b.Apply("Mul", m, []string{b.Weight("half", nil, []float32{0.5})}), nil
	case ops.Swish:
		return b.Apply("Mul", x, []string{b.Apply("Sigmoid", x, nil)}), nil
	case ops.ELU:
		return b.Apply("Elu", x, nil, floatAttr("alpha", float32(alpha))), nil
	case ops.SELU:
		return b.Apply("Selu", x, nil, floatAttr("alpha", ops.SELUAlpha), floatAttr("gamma", ops.SELUScale)), nil
	case ops.Softplus:
		return b.Apply("Softplus", x, nil), nil
	case ops.Softsign:
		return b.Apply("Softsign", x, nil), nil
	case ops.HardSigmoid:
		// ONNX's HardSigmoid is max(0, min(1, alpha·x + beta)): Keras 2's
		// with alpha 0.2 and beta 0.5.
		return b.Apply("HardSigmoid", x, nil, floatAttr("alpha", 0.2), floatAttr("beta", 0.5)), nil
	case ops.Exponential:
		return b.Apply("Exp", x, nil), nil
	case ops.LeakyReLU:
		return b.Apply("LeakyRelu", x, nil, floatAttr("alpha", float32(alpha))), nil
	}
	return "", fmt.Errorf("activation %v has no ONNX mapping", act)
}

// onnxPads returns ONNX's pads for a window on samples of shape in
// (spatial axes, then channels): the padding before each spatial axis,
// then after each, by TensorFlow's rules as package ops places windows.
func onnxPads(in, kernel, strides, dilation []int, same bool) ([]int64, error) {
	rank := len(in) - 1
	if rank < 1 || rank > 2 || len(kernel) != rank || len(strides) != rank || len(dilation) != rank {
		return nil, fmt.Errorf("a window of size %v, strides %v and dilation %v on samples %v: want one value per spatial axis", kernel, strides, dilation, in)
	}
	// A 1D window is a 2D one of height 1, as package layers places it.
	h, spec := 1, ops.WindowSpec{Kernel: [2]int{1, kernel[0]}, Strides: [2]int{1, strides[0]}, Dilation: [2]int{1, dilation[0]}, Same: same}
	if rank == 2 {
		h = in[0]
		spec = ops.WindowSpec{Kernel: [2]int{kernel[0], kernel[1]}, Strides: [2]int{strides[0], strides[1]}, Dilation: [2]int{dilation[0], dilation[1]}, Same: same}
	}
	win, err := spec.On(1, h, in[rank-1], in[rank])
	if err != nil {
		return nil, err
	}
	after := func(size, k, stride, dil, out, before int) int64 {
		return int64(max((out-1)*stride+(k-1)*dil+1-size-before, 0))
	}
	bottom := after(win.H, win.KH, win.StrideH, win.DilationH, win.OH, win.PadTop)
	right := after(win.W, win.KW, win.StrideW, win.DilationW, win.OW, win.PadLeft)
	if rank == 1 {
		return []int64{int64(win.PadLeft), right}, nil
	}
	return []int64{int64(win.PadTop), int64(win.PadLeft), bottom, right}, nil
}

// onnxMerge maps a merge layer of Keras that computes its output element
// by element: op is ONNX's op for it, Add, Sub, Mul, Max, Min or Mean (of
// Keras' Add, Subtract, Multiply, Maximum, Minimum and Average). Add, Sub
// and Mul, binary in ONNX, are chained from the first input on, as Keras
// adds its inputs one after another; Max, Min and Mean take them all. The
// inputs keep their channels first where they all have them first and
// the same rank; otherwise they are all taken channels last, and one of a
// lower rank gets axes of size 1 after its batch axis until it has the
// highest rank, as Keras expands it (axis 1) before it broadcasts.
func onnxMerge(g ONNXGraph, op string, in []string) (string, error) {
	shapes := g.InputShapes()
	if len(in) < 2 || len(shapes) != len(in) {
		return "", fmt.Errorf("a merge (%s) of %d input(s) of %d shape(s): want two or more, with a shape each", op, len(in), len(shapes))
	}
	switch op {
	case "Sub":
		if len(in) != 2 {
			return "", fmt.Errorf("a subtraction of %d inputs: Subtract takes exactly two", len(in))
		}
	case "Add", "Mul", "Max", "Min", "Mean":
	default:
		return "", fmt.Errorf("no elementwise merge op %q: want Add, Sub, Mul, Max, Min or Mean", op)
	}
	xs := onnxSameLayout(g, in, shapes)
	if !g.IsChannelsFirst(xs[0]) {
		rank := 0
		for _, sh := range shapes {
			rank = max(rank, len(sh))
		}
		for i, sh := range shapes {
			if k := rank - len(sh); k > 0 {
				axes := make([]int64, k)
				for j := range axes {
					axes[j] = int64(j + 1)
				}
				xs[i] = g.Node("Unsqueeze", []string{xs[i], g.Int64s("axes", axes...)})
			}
		}
	}
	switch op {
	case "Max", "Min", "Mean":
		return g.Apply(op, xs[0], xs[1:]), nil
	}
	out := xs[0]
	for _, x := range xs[1:] {
		out = g.Apply(op, out, []string{x})
	}
	return out, nil
}

// onnxConcat maps Keras' Concatenate: ONNX's Concat of the inputs along
// axis, Keras' axis of the inputs with their batch axis (1 the first axis
// of a sample, -1 the last, the channels). Inputs that all hold their
// channels first are concatenated so, along the axis that is axis there
// (the channels are axis 1, a spatial axis one further than in Keras);
// otherwise all are taken channels last.
func onnxConcat(g ONNXGraph, in []string, axis int) (string, error) {
	shapes := g.InputShapes()
	if len(in) < 2 || len(shapes) != len(in) {
		return "", fmt.Errorf("a concatenation of %d input(s) of %d shape(s): want two or more, with a shape each", len(in), len(shapes))
	}
	r := len(shapes[0]) + 1
	for _, sh := range shapes[1:] {
		if len(sh)+1 != r {
			return "", fmt.Errorf("a concatenation of inputs of shapes %v: they must have the same rank", shapes)
		}
	}
	a := axis
	if a < 0 {
		a += r
	}
	if a < 1 || a >= r {
		return "", fmt.Errorf("a concatenation along axis %d of inputs of rank %d (batch axis included): want an axis of the samples, 1 to %d or -1 to %d", axis, r, r-1, 1-r)
	}
	xs := onnxSameLayout(g, in, shapes)
	if g.IsChannelsFirst(xs[0]) {
		if a == r-1 {
			a = 1
		} else {
			a++
		}
	}
	return g.Apply("Concat", xs[0], xs[1:], intAttr("axis", int64(a))), nil
}

// onnxSameLayout returns the inputs of a layer of several inputs in one
// layout: as they are when all hold their channels first and have one
// rank, else all channels last.
func onnxSameLayout(g ONNXGraph, in []string, shapes [][]int) []string {
	first := true
	for i, x := range in {
		first = first && g.IsChannelsFirst(x) && len(shapes[i]) == len(shapes[0])
	}
	xs := make([]string, len(in))
	for i, x := range in {
		xs[i] = x
		if !first {
			xs[i] = g.ChannelsLast(x)
		}
	}
	return xs
}

// onnxWeight adds a weight as it is, named as the layer names it.
func onnxWeight(b ONNXGraph, p *Param) string {
	return b.Weight(p.Name, p.Value.Shape(), p.Value.Data().([]float32))
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
