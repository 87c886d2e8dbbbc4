package onnx

import (
	"fmt"
	"slices"

	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/layers"
)

// builder builds an inference graph one layer call after another: each
// reads values earlier calls wrote (a Sequential's, the one before's) and
// adds its nodes and weights, named after its layer ("dense/Gemm",
// "dense/kernel"); a layer called again (a shared layer) adds its weights
// once, its nodes again ("dense/Gemm_1"). It knows, for each value,
// whether it holds its channels first, (batch, channels, spatial axes...),
// as ONNX's convolutions and poolings take them, or last, as gokeras and
// Keras hold them; it moves a value between the two with Transpose nodes
// only where a layer needs the other layout.
type builder struct {
	g wire.Graph
	// prefix is the name of the layer being added: its nodes and
	// initializers are named after it.
	prefix string
	// shape is the sample shape of the layer's input, channels last (its
	// first input's); inputs and shapes are the values the call reads
	// and their sample shapes.
	shape  []int
	inputs []string
	shapes [][]int
	// first holds the values that hold their channels first.
	first map[string]bool
	// toFirst and toLast map a value to its Transpose to channels first
	// or last, made once.
	toFirst, toLast map[string]string
	// inits maps an initializer's name to where it is in the graph's
	// initializers, for a layer adding it again.
	inits map[string]int
	used  map[string]bool // the names of nodes and values
	err   error           // of an attribute the builder could not write
}

// builder is the graph each layer's ONNX method adds itself to.
var _ layers.ONNXGraph = (*builder)(nil)

// newBuilder starts an empty graph; reserved are names its nodes and
// initializers must not take, such as the graph's input and output.
func newBuilder(reserved ...string) *builder {
	b := &builder{first: map[string]bool{}, toFirst: map[string]string{}, toLast: map[string]string{}, inits: map[string]int{}, used: map[string]bool{}}
	for _, r := range reserved {
		b.used[r] = true
	}
	return b
}

// Begin starts a call of a layer: the nodes and weights added until the
// next Begin are named after it, and it reads the values inputs, whose
// samples have the given shapes, channels last (no batch axis).
func (b *builder) Begin(layer string, inputs []string, shapes [][]int) {
	b.prefix = layer
	b.inputs = append([]string(nil), inputs...)
	b.shapes = make([][]int, len(shapes))
	for i, sh := range shapes {
		b.shapes[i] = append([]int(nil), sh...)
	}
	b.shape = nil
	if len(shapes) > 0 {
		b.shape = append([]int(nil), shapes[0]...)
	}
}

// Within makes x, of samples of the given shape, the input the layer's
// mapping reads until restore is called, which makes the call's inputs,
// as Begin was given them, the input again.
func (b *builder) Within(x string, shape []int) (restore func()) {
	inputs, shapes, first := b.inputs, b.shapes, b.shape
	b.inputs, b.shapes, b.shape = []string{x}, [][]int{slices.Clone(shape)}, slices.Clone(shape)
	return func() { b.inputs, b.shapes, b.shape = inputs, shapes, first }
}

// InputShape is the sample shape of the layer's (first) input, channels
// last, as Begin was given it.
func (b *builder) InputShape() []int { return append([]int(nil), b.shape...) }

// InputShapes are the sample shapes of the layer's inputs, channels last,
// as Begin was given them.
func (b *builder) InputShapes() [][]int {
	out := make([][]int, len(b.shapes))
	for i, sh := range b.shapes {
		out[i] = append([]int(nil), sh...)
	}
	return out
}

// rank is the rank of x, batch axis included: that of the call's input x
// is, else of its first input's.
func (b *builder) rank(x string) int {
	for i, in := range b.inputs {
		if in == x {
			return len(b.shapes[i]) + 1
		}
	}
	return len(b.shape) + 1
}

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
		case []float32:
			out = append(out, wire.FloatsAttr(a.Name(), v...))
		case string:
			out = append(out, wire.StringAttr(a.Name(), v))
		case []string:
			out = append(out, wire.StringsAttr(a.Name(), v...))
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

// NodeOutputs adds a node of n outputs, named after its op (the first
// output as the node, the others with "_output1", "_output2" added), and
// returns them; they hold their channels last.
func (b *builder) NodeOutputs(op string, inputs []string, n int, attrs ...layers.ONNXAttr) []string {
	name := b.name(op)
	outs := []string{name}
	for i := 1; i < n; i++ {
		outs = append(outs, b.name(fmt.Sprintf("%s_output%d", op, i)))
	}
	b.g.Nodes = append(b.g.Nodes, wire.Node{Name: name, OpType: op, Inputs: inputs, Outputs: outs, Attributes: b.attributes(attrs)})
	return outs
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
// (none: a scalar), and returns its name; the layer's initializer of that
// name and the same values, if it added one before (a shared layer's
// earlier call did), is returned instead.
func (b *builder) Weight(what string, dims []int, values []float32) string {
	t := wire.Tensor{DataType: wire.Float, Floats: values}
	for _, d := range dims {
		t.Dims = append(t.Dims, int64(d))
	}
	return b.initializer(what, t)
}

// Int64s adds an int64 vector initializer of the layer and returns its
// name, or that of the same one the layer added before.
func (b *builder) Int64s(what string, values ...int64) string {
	return b.initializer(what, wire.Tensor{DataType: wire.Int64, Dims: []int64{int64(len(values))}, Int64s: values})
}

// initializer adds t, named after the layer and what, unless the layer
// added the same tensor under that name before.
func (b *builder) initializer(what string, t wire.Tensor) string {
	base := b.prefix + "/" + what
	if i, ok := b.inits[base]; ok {
		if prev := b.g.Initializers[i]; prev.DataType == t.DataType && slices.Equal(prev.Dims, t.Dims) &&
			slices.Equal(prev.Floats, t.Floats) && slices.Equal(prev.Int64s, t.Int64s) {
			return prev.Name
		}
	}
	t.Name = b.name(what)
	if _, ok := b.inits[base]; !ok {
		b.inits[base] = len(b.g.Initializers)
	}
	b.g.Initializers = append(b.g.Initializers, t)
	return t.Name
}

// ChannelsFirst returns x, a value of the layer's input shape, with its
// channels first; values of one axis of features are the same either
// way.
func (b *builder) ChannelsFirst(x string) string {
	r := b.rank(x)
	if b.first[x] || r < 3 {
		return x
	}
	if t, ok := b.toFirst[x]; ok {
		return t
	}
	perm := []int64{0, int64(r - 1)}
	for i := 1; i < r-1; i++ {
		perm = append(perm, int64(i))
	}
	out := b.apply("Transpose", x, nil, wire.IntsAttr("perm", perm...))
	b.first[out] = true
	b.toFirst[x] = out
	return out
}

// ChannelsLast returns x, a value of the layer's input shape, with its
// channels last, as gokeras holds them.
func (b *builder) ChannelsLast(x string) string {
	r := b.rank(x)
	if !b.first[x] || r < 3 {
		delete(b.first, x)
		return x
	}
	if t, ok := b.toLast[x]; ok {
		return t
	}
	perm := []int64{0}
	for i := 2; i < r; i++ {
		perm = append(perm, int64(i))
	}
	perm = append(perm, 1)
	out := b.node("Transpose", []string{x}, wire.IntsAttr("perm", perm...))
	b.toLast[x] = out
	return out
}

// Finish makes xs, the values of the model's outputs, whose samples have
// the given shapes, the graph's outputs, named names, in order: each is
// moved to channels last, as gokeras holds it, and the node that writes
// it has its output renamed, and every node that reads it its input (an
// output may feed other layers: another output's, say). A value that no
// node writes (an input passed through, as Dropout passes it) or that is
// already an earlier output (two outputs that compute the same values) is
// copied by an Identity node named after the output ("class/Identity").
// It returns the graph, nodes and initializers, for its caller to name it
// and declare its inputs and outputs.
func (b *builder) Finish(xs []string, shapes [][]int, names []string) wire.Graph {
	b.inputs, b.shapes = nil, nil
	rename := map[string]string{} // a value a node writes: the output it becomes
	for i, x := range xs {
		b.shape = append([]int(nil), shapes[i]...)
		x = b.ChannelsLast(x)
		if _, ok := rename[x]; !ok && b.writes(x) {
			rename[x] = names[i]
			continue
		}
		b.prefix = names[i]
		b.g.Nodes = append(b.g.Nodes, wire.Node{Name: b.name("Identity"), OpType: "Identity", Inputs: []string{x}, Outputs: []string{names[i]}})
	}
	for k := range b.g.Nodes {
		n := &b.g.Nodes[k]
		for j, v := range n.Inputs {
			if to, ok := rename[v]; ok {
				n.Inputs[j] = to
			}
		}
		for j, v := range n.Outputs {
			if to, ok := rename[v]; ok {
				n.Outputs[j] = to
			}
		}
	}
	return b.g
}

// writes reports whether a node of the graph writes the value x.
func (b *builder) writes(x string) bool {
	for _, n := range b.g.Nodes {
		if slices.Contains(n.Outputs, x) {
			return true
		}
	}
	return false
}
