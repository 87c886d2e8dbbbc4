package layers

import (
	"slices"
	"strings"
	"testing"
)

// Dot's shape rule, as Keras' batch_dot gives it, and Keras' errors.
func TestDotShapes(t *testing.T) {
	tests := []struct {
		name    string
		l       *DotLayer
		in      [][]int
		want    []int
		wantErr string
	}{
		{"rows", Dot(1), [][]int{{5}, {5}}, []int{1}, ""},
		{"rows, from the end", Dot(-1, Normalize()), [][]int{{5}, {5}}, []int{1}, ""},
		{"(2, 2)", Dot(2), [][]int{{3, 4}, {5, 4}}, []int{3, 5}, ""},
		{"(2, 1)", DotAxes(2, 1), [][]int{{3, 4}, {4, 5}}, []int{3, 5}, ""},
		{"(1, 1)", DotAxes(1, 1), [][]int{{4, 3}, {4, 5}}, []int{3, 5}, ""},
		{"(1, 2), Keras' example", DotAxes(1, 2), [][]int{{5, 2}, {2, 5}}, []int{2, 2}, ""},
		{"(-1, -2)", DotAxes(-1, -2), [][]int{{3, 4}, {4, 5}}, []int{3, 5}, ""},
		{"sizes differ", Dot(1, Named("d")), [][]int{{3}, {4}}, nil,
			`Dot layer "d": dimension incompatibility using dot product: 3 != 4. Layer shapes: (None, 3), (None, 4)`},
		{"sizes differ, rank 3", DotAxes(2, 1), [][]int{{3, 4}, {3, 4}}, nil, "4 != 3. Layer shapes: (None, 3, 4), (None, 3, 4)"},
		{"one input", Dot(1), [][]int{{4}}, nil, "a `Dot` layer should be called on a list of 2 inputs; got 1"},
		{"three inputs", Dot(1), [][]int{{4}, {4}, {4}}, nil, "a `Dot` layer should be called on a list of 2 inputs; got 3"},
		{"ranks differ", Dot(-1), [][]int{{4}, {3, 4}}, nil, "two inputs of rank 2, (None, n), or two of rank 3"},
		{"rank 4", Dot(-1), [][]int{{2, 3, 4}, {2, 3, 4}}, nil, "other ranks are not supported yet"},
		{"no such axis", Dot(2), [][]int{{4}, {4}}, nil, "use axes from 1 to 1 (or -1 to -1)"},
		{"the batch axis from the end", Dot(-3), [][]int{{3, 4}, {3, 4}}, nil, "the batch axis 0 cannot be summed over"},
		{"the batch axis", DotAxes(0, 1), [][]int{{4}, {4}}, nil, "cannot perform batch_dot over axis 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.l.PlanInputs(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PlanInputs = %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("PlanInputs = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := Dot(1).Build([]int{3}, nil); err == nil || !strings.Contains(err.Error(), "should be called on a list of 2 inputs") {
		t.Errorf("Build of one input = %v", err)
	}
	if _, _, err := PlanBuild(Dot(1), []int{3}); err == nil {
		t.Error("PlanBuild of one input was accepted")
	}
}

// Dot round-trips through its Keras config: axes an integer or a pair as
// given, normalize, the name; Keras' forms of the config are read, and
// wrong ones refused.
func TestDotConfig(t *testing.T) {
	for _, l := range []*DotLayer{Dot(1), Dot(-1, Normalize(), Named("cos")), DotAxes(2, 1), DotAxes(1, -1, Normalize())} {
		c, err := l.Config()
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromConfig(c)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		d, ok := back.(*DotLayer)
		if !ok || d.Name() != l.Name() || d.axes != l.axes || d.pair != l.pair || d.Normalized() != l.Normalized() {
			t.Errorf("%v round-tripped to %#v", c, back)
		}
	}
	c, err := DotAxes(2, 1, Normalize(), Named("d")).Config()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Config{ClassName: "Dot", Config: map[string]any{"name": "d", "axes": []int{2, 1}, "normalize": true}}); c.ClassName != want.ClassName ||
		!slices.Equal(c.Config["axes"].([]int), []int{2, 1}) || c.Config["normalize"] != true || c.Config["name"] != "d" || len(c.Config) != 3 {
		t.Errorf("config %v, want %v", c, want)
	}
	if c, _ := Dot(-1).Config(); c.Config["axes"] != -1 || c.Config["normalize"] != false {
		t.Errorf("Dot(-1)'s config %v: want axes -1, normalize false", c)
	}

	// As Keras writes it, decoded from JSON: numbers are float64s, lists []any.
	l, err := FromConfig(Config{ClassName: "Dot", Config: map[string]any{"name": "dot_3", "axes": []any{1.0, 2.0}, "normalize": false}})
	if d, ok := l.(*DotLayer); err != nil || !ok || d.axes != [2]int{1, 2} || !d.pair || d.Normalized() || d.Name() != "dot_3" {
		t.Errorf("FromConfig of Keras' JSON: %#v, %v", l, err)
	}
	l, err = FromConfig(Config{ClassName: "Dot", Config: map[string]any{"axes": 1.0}})
	if d, ok := l.(*DotLayer); err != nil || !ok || d.axes != [2]int{1, 1} || d.pair || d.Normalized() || d.Name() != "" {
		t.Errorf("FromConfig without normalize: %#v, %v", l, err)
	}
	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"normalize": true}, `argument "axes" is missing`},
		{map[string]any{"axes": nil}, `argument "axes" is missing`},
		{map[string]any{"axes": []any{1.0, 2.0, 1.0}}, `argument "axes" is [1,2,1]: want an integer or a list of two`},
		{map[string]any{"axes": "last"}, `want an integer or a list of two`},
		{map[string]any{"axes": 0.0}, "cannot perform batch_dot over axis 0"},
		{map[string]any{"axes": 1.0, "normalize": "yes"}, `argument "normalize"`},
		{map[string]any{"axes": 1.0, "mode": "dot"}, `unknown argument "mode"`},
	} {
		if _, err := FromConfig(Config{ClassName: "Dot", Config: bad.args}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("FromConfig(%v) = %v, want an error saying %s", bad.args, err, bad.want)
		}
	}
}

// Dot's ONNX mapping: its inputs channels last; rows multiplied and summed
// (kept as (batch, 1)); MatMul with the inputs transposed where their
// summed axis asks it; Normalize as √max(ReduceSumSquare, 1e-12) along each
// input's axis.
func TestONNXDot(t *testing.T) {
	cases := []struct {
		name   string
		l      *DotLayer
		shapes [][]int
		first  []string
		want   []string
	}{
		{"rows", Dot(1), [][]int{{4}, {4}}, nil, []string{"v1 = Mul(a, b)", "v2 = ReduceSum(v1, axes[1]) keepdims=1"}},
		{"cosine of rows", Dot(-1, Normalize()), [][]int{{4}, {4}}, nil, []string{
			"v1 = ReduceSumSquare(a) axes=[1] keepdims=1", "v2 = Max(v1, epsilon[1e-12])", "v3 = Sqrt(v2)", "v4 = Div(a, v3)",
			"v5 = ReduceSumSquare(b) axes=[1] keepdims=1", "v6 = Max(v5, epsilon[1e-12])", "v7 = Sqrt(v6)", "v8 = Div(b, v7)",
			"v9 = Mul(v4, v8)", "v10 = ReduceSum(v9, axes[1]) keepdims=1"}},
		{"(2, 1)", DotAxes(2, 1), [][]int{{3, 4}, {4, 5}}, nil, []string{"v1 = MatMul(a, b)"}},
		{"(2, 2), the first channels first", Dot(2), [][]int{{3, 4}, {5, 4}}, []string{"a"},
			[]string{"v1 = ToLast(a)", "v2 = Transpose(b) perm=[0 2 1]", "v3 = MatMul(v1, v2)"}},
		{"(1, 2)", DotAxes(1, -1), [][]int{{5, 2}, {2, 5}}, nil,
			[]string{"v1 = Transpose(a) perm=[0 2 1]", "v2 = Transpose(b) perm=[0 2 1]", "v3 = MatMul(v1, v2)"}},
		{"(1, 1) normalized", DotAxes(1, 1, Normalize()), [][]int{{4, 3}, {4, 5}}, nil, []string{
			"v1 = ReduceSumSquare(a) axes=[1] keepdims=1", "v2 = Max(v1, epsilon[1e-12])", "v3 = Sqrt(v2)", "v4 = Div(a, v3)",
			"v5 = ReduceSumSquare(b) axes=[1] keepdims=1", "v6 = Max(v5, epsilon[1e-12])", "v7 = Sqrt(v6)", "v8 = Div(b, v7)",
			"v9 = Transpose(v4) perm=[0 2 1]", "v10 = MatMul(v9, v8)"}},
	}
	for _, c := range cases {
		g := &fakeONNX{shapes: c.shapes, first: map[string]bool{}}
		for _, x := range c.first {
			g.first[x] = true
		}
		out, err := c.l.ONNXInputs(g, []string{"a", "b"})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(g.lines, c.want) || out != g.lines[len(g.lines)-1][:strings.Index(g.lines[len(g.lines)-1], " ")] {
			t.Errorf("%s: %q, output %s; want %q", c.name, g.lines, out, c.want)
		}
	}
	g := &fakeONNX{shapes: [][]int{{3}, {4}}, first: map[string]bool{}}
	if _, err := Dot(1).ONNXInputs(g, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "3 != 4") {
		t.Errorf("ONNX of mismatched inputs: %v", err)
	}
}
