package layers

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeONNX is an ONNXGraph that writes each node as a line, "out = Op(in,
// ...) attrs", to check the merge mappings without package export/onnx.
type fakeONNX struct {
	shapes [][]int
	first  map[string]bool
	lines  []string
	n      int
}

func (g *fakeONNX) InputShape() []int    { return g.shapes[0] }
func (g *fakeONNX) InputShapes() [][]int { return g.shapes }
func (g *fakeONNX) IsChannelsFirst(x string) bool {
	return g.first[x]
}
func (g *fakeONNX) ChannelsFirst(x string) string {
	if g.first[x] {
		return x
	}
	out := g.Node("ToFirst", []string{x})
	g.first[out] = true
	return out
}
func (g *fakeONNX) ChannelsLast(x string) string {
	if !g.first[x] {
		return x
	}
	return g.Node("ToLast", []string{x})
}
func (g *fakeONNX) Node(op string, inputs []string, attrs ...ONNXAttr) string {
	g.n++
	out := fmt.Sprintf("v%d", g.n)
	line := fmt.Sprintf("%s = %s(%s)", out, op, strings.Join(inputs, ", "))
	for _, a := range attrs {
		line += fmt.Sprintf(" %s=%v", a.Name(), a.Value())
	}
	g.lines = append(g.lines, line)
	return out
}
func (g *fakeONNX) NodeOutputs(op string, inputs []string, n int, attrs ...ONNXAttr) []string {
	first := g.Node(op, inputs, attrs...)
	outs := []string{first}
	for i := 1; i < n; i++ {
		outs = append(outs, fmt.Sprintf("%s.%d", first, i))
	}
	return outs
}
func (g *fakeONNX) Within(_ string, shape []int) func() {
	shapes := g.shapes
	g.shapes = [][]int{shape}
	return func() { g.shapes = shapes }
}
func (g *fakeONNX) Apply(op, x string, extra []string, attrs ...ONNXAttr) string {
	out := g.Node(op, append([]string{x}, extra...), attrs...)
	if g.first[x] {
		g.first[out] = true
	}
	return out
}
func (g *fakeONNX) Weight(what string, dims []int, values []float32) string {
	return fmt.Sprintf("%s%v", what, values)
}
func (g *fakeONNX) Int64s(what string, values ...int64) string {
	return fmt.Sprintf("%s%v", what, values)
}

// The merge mappings: elementwise ops chained or variadic as ONNX has
// them, Keras' expansion of a lower rank, and Concatenate's axis on
// either layout.
func TestONNXMerges(t *testing.T) {
	cases := []struct {
		name   string
		shapes [][]int
		first  []string // the inputs held channels first
		merge  func(g ONNXGraph, in []string) (string, error)
		want   []string
		out    string
	}{
		{"Add of three, chained", [][]int{{3}, {3}, {3}}, nil,
			func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Add", in) },
			[]string{"v1 = Add(a, b)", "v2 = Add(v1, c)"}, "v2"},
		{"Maximum of three, at once", [][]int{{3}, {3}, {3}}, nil,
			func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Max", in) },
			[]string{"v1 = Max(a, b, c)"}, "v1"},
		{"Average of images channels first stays so", [][]int{{4, 4, 2}, {4, 4, 2}}, []string{"a", "b"},
			func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Mean", in) },
			[]string{"v1 = Mean(a, b)"}, "v1*"},
		{"Subtract of mixed layouts: channels last", [][]int{{4, 4, 2}, {4, 4, 2}}, []string{"a"},
			func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Sub", in) },
			[]string{"v1 = ToLast(a)", "v2 = Sub(v1, b)"}, "v2"},
		{"Multiply of ranks 3 and 1: expanded after the batch axis", [][]int{{4, 4, 2}, {2}}, []string{"a"},
			func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Mul", in) },
			[]string{"v1 = ToLast(a)", "v2 = Unsqueeze(b, axes[1 2])", "v3 = Mul(v1, v2)"}, "v3"},
		{"Concatenate channels last", [][]int{{4, 2}, {4, 3}}, nil,
			func(g ONNXGraph, in []string) (string, error) { return onnxConcat(g, in, -1) },
			[]string{"v1 = Concat(a, b) axis=2"}, "v1"},
		{"Concatenate of the channels, channels first", [][]int{{4, 4, 2}, {4, 4, 3}}, []string{"a", "b"},
			func(g ONNXGraph, in []string) (string, error) { return onnxConcat(g, in, -1) },
			[]string{"v1 = Concat(a, b) axis=1"}, "v1*"},
		{"Concatenate of the rows, channels first", [][]int{{4, 4, 2}, {3, 4, 2}}, []string{"a", "b"},
			func(g ONNXGraph, in []string) (string, error) { return onnxConcat(g, in, 1) },
			[]string{"v1 = Concat(a, b) axis=2"}, "v1*"},
		{"Concatenate of the columns, one channels first", [][]int{{4, 4, 2}, {4, 3, 2}}, []string{"b"},
			func(g ONNXGraph, in []string) (string, error) { return onnxConcat(g, in, -2) },
			[]string{"v1 = ToLast(b)", "v2 = Concat(a, v1) axis=2"}, "v2"},
	}
	names := []string{"a", "b", "c"}
	for _, c := range cases {
		g := &fakeONNX{shapes: c.shapes, first: map[string]bool{}}
		for _, x := range c.first {
			g.first[x] = true
		}
		out, err := c.merge(g, names[:len(c.shapes)])
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if g.first[out] {
			out += "*"
		}
		if !slices.Equal(g.lines, c.want) || out != c.out {
			t.Errorf("%s: %q, output %s; want %q, output %s", c.name, g.lines, out, c.want, c.out)
		}
	}

	errs := []struct {
		name   string
		shapes [][]int
		merge  func(g ONNXGraph, in []string) (string, error)
		want   string
	}{
		{"Subtract of three", [][]int{{2}, {2}, {2}}, func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Sub", in) }, "exactly two"},
		{"one input", [][]int{{2}}, func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Add", in) }, "two or more"},
		{"an unknown op", [][]int{{2}, {2}}, func(g ONNXGraph, in []string) (string, error) { return onnxMerge(g, "Pow", in) }, `"Pow"`},
		{"Concatenate along the batch", [][]int{{2}, {2}}, func(g ONNXGraph, in []string) (string, error) { return onnxConcat(g, in, 0) }, "axis 0"},
		{"Concatenate of ranks 2 and 3", [][]int{{2}, {2, 2}}, func(g ONNXGraph, in []string) (string, error) { return onnxConcat(g, in, -1) }, "same rank"},
	}
	for _, c := range errs {
		g := &fakeONNX{shapes: c.shapes, first: map[string]bool{}}
		if _, err := c.merge(g, names[:len(c.shapes)]); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %s", c.name, err, c.want)
		}
	}
}
