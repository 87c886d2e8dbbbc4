package onnx

import (
	"fmt"

	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/layers"
)

// builder builds an inference graph one layer after another: each layer
// reads the value the one before it wrote and adds its nodes and weights,
// named after it ("dense/Gemm", "dense/kernel"). It knows, for each value,
// whether it holds its channels first, (batch, channels, spatial axes...),
// as ONNX's convolutions and poolings take them, or last, as gokeras and
// Keras hold them; it moves a value between the two with Transpose nodes
// only where a layer needs the other layout.
type builder struct {
	g wire.Graph
	// prefix is the name of the layer being added: its nodes and
	// initializers are named after it.
	prefix string
	// shape is the sample shape of the layer's input, channels last.
	shape []int
	// first holds the values that hold their channels first.
	first map[string]bool
	used  map[string]bool // the names of nodes and values
	err   error           // of an attribute the builder could not write
}

// builder is the graph each layer's ONNX method adds itself to.
var _ layers.ONNXGraph = (*builder)(nil)

// newBuilder starts an empty graph; reserved are names its nodes and
// initializers must not take, such as the graph's input and output.
func newBuilder(reserved ...string) *builder {
	b := &builder{first: map[string]bool{}, used: map[string]bool{}}
	for _, r := range reserved {
		b.used[r] = true
	}
	return b
}

// Begin starts a layer: the nodes and weights added until the next Begin
// are named after it, and its input's samples have the given shape,
// channels last (no batch axis).
func (b *builder) Begin(layer string, inputShape []int) {
	b.prefix = layer
	b.shape = append([]int(nil), inputShape...)
}

// InputShape is the sample shape of the layer's input, channels last, as
// Begin was given it.
func (b *builder) InputShape() []int { return append([]int(nil), b.shape...) }

// IsChannelsFirst reports whether the value x holds its channels first.
func (b *builder) IsChannelsFirst(x string) bool { return b.first[x] }

// name returns an unused name for a node or initializer of the layer.
func (b *builder) name(what string) string {
	base := b.prefix + "/" + what
	name := base
	for i := 1; b.used[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	b.used[name] = true
	return name
}

// attributes converts a layer's node attributes to the wire's; a zero
// ONNXAttr, which no layer makes, is the builder's error.
func (b *builder) attributes(attrs []layers.ONNXAttr) []wire.Attribute {
	var out []wire.Attribute
	for _, a := range attrs {
		switch v := a.Value().(type) {
		case int64:
			out = append(out, wire.IntAttr(a.Name(), v))
		case []int64:
			out = append(out, wire.IntsAttr(a.Name(), v...))
		case float32:
			out = append(out, wire.FloatAttr(a.Name(), v))
		default:
			if b.err == nil {
				b.err = fmt.Errorf("an ONNX attribute %q of no value", a.Name())
			}
		}
	}
	return out
}

// Node adds a node of one output, named after its op, and returns the
// output, which holds its channels last (or has no channels axis).
func (b *builder) Node(op string, inputs []string, attrs ...layers.ONNXAttr) string {
	return b.node(op, inputs, b.attributes(attrs)...)
}

func (b *builder) node(op string, inputs []string, attrs ...wire.Attribute) string {
	name := b.name(op)
	b.g.Nodes = append(b.g.Nodes, wire.Node{Name: name, OpType: op, Inputs: inputs, Outputs: []string{name}, Attributes: attrs})
	return name
}

// Apply adds a node that reads x, then the extra inputs, and returns its
// output, which holds its channels as x does: an elementwise op's, a
// convolution's, a pooling's.
func (b *builder) Apply(op, x string, extra []string, attrs ...layers.ONNXAttr) string {
	return b.apply(op, x, extra, b.attributes(attrs)...)
}

func (b *builder) apply(op, x string, extra []string, attrs ...wire.Attribute) string {
	out := b.node(op, append([]string{x}, extra...), attrs...)
	if b.first[x] {
		b.first[out] = true
	}
	return out
}

// Weight adds a float32 initializer of the layer, of the given dimensions
// (none: a scalar), and returns its name.
func (b *builder) Weight(what string, dims []int, values []float32) string {
	name := b.name(what)
	t := wire.Tensor{Name: name, DataType: wire.Float, Floats: values}
	for _, d := range dims {
		t.Dims = append(t.Dims, int64(d))
	}
	b.g.Initializers = append(b.g.Initializers, t)
	return name
}

// Int64s adds an int64 vector initializer of the layer and returns its
// name.
func (b *builder) Int64s(what string, values ...int64) string {
	name := b.name(what)
	b.g.Initializers = append(b.g.Initializers, wire.Tensor{Name: name, DataType: wire.Int64, Dims: []int64{int64(len(values))}, Int64s: values})
	return name
}

// ChannelsFirst returns x, a value of the layer's input shape, with its
// channels first; values of one axis of features are the same either
// way.
func (b *builder) ChannelsFirst(x string) string {
	r := len(b.shape) + 1
	if b.first[x] || r < 3 {
		return x
	}
	perm := []int64{0, int64(r - 1)}
	for i := 1; i < r-1; i++ {
		perm = append(perm, int64(i))
	}
	out := b.apply("Transpose", x, nil, wire.IntsAttr("perm", perm...))
	b.first[out] = true
	return out
}

// ChannelsLast returns x, a value of the layer's input shape, with its
// channels last, as gokeras holds them.
func (b *builder) ChannelsLast(x string) string {
	r := len(b.shape) + 1
	if !b.first[x] || r < 3 {
		delete(b.first, x)
		return x
	}
	perm := []int64{0}
	for i := 2; i < r; i++ {
		perm = append(perm, int64(i))
	}
	perm = append(perm, 1)
	out := b.node("Transpose", []string{x}, wire.IntsAttr("perm", perm...))
	return out
}

// Finish makes x, the last layer's output of samples of the given shape,
// the graph's output: channels last and named output. It returns the
// graph, nodes and initializers, for its caller to name it and declare
// its input and output.
func (b *builder) Finish(x string, outputShape []int, output string) wire.Graph {
	b.shape = append([]int(nil), outputShape...)
	x = b.ChannelsLast(x)
	if n := len(b.g.Nodes); n > 0 && b.g.Nodes[n-1].Outputs[0] == x {
		b.g.Nodes[n-1].Outputs[0] = output
	} else { // no node: the model passes its input through
		b.prefix = output
		b.g.Nodes = append(b.g.Nodes, wire.Node{Name: b.name("Identity"), OpType: "Identity", Inputs: []string{x}, Outputs: []string{output}})
	}
	return b.g
}
