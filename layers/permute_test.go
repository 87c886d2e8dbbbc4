package layers

import (
	"slices"
	"strings"
	"testing"
)

// TestPermuteLayer: Permute's shapes and values by hand, its refusals and
// its ONNX Transpose.
func TestPermuteLayer(t *testing.T) {
	// One sample of 2×3×2: x[a][b][c] = 100a + 10b + c.
	x := []float32{0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121}
	for _, c := range []struct {
		dims  []int
		shape []int
		want  []float32
	}{
		{[]int{1, 2, 3}, []int{2, 3, 2}, x},
		// out[b][a][c] = x[a][b][c]
		{[]int{2, 1, 3}, []int{3, 2, 2}, []float32{0, 1, 100, 101, 10, 11, 110, 111, 20, 21, 120, 121}},
		// out[c][a][b]: channels first.
		{[]int{3, 1, 2}, []int{2, 2, 3}, []float32{0, 10, 20, 100, 110, 120, 1, 11, 21, 101, 111, 121}},
		// out[c][b][a]
		{[]int{3, 2, 1}, []int{2, 3, 2}, []float32{0, 100, 10, 110, 20, 120, 1, 101, 11, 111, 21, 121}},
	} {
		shape, got := callOn(t, Permute(c.dims), []int{2, 3, 2}, 1, slices.Clone(x))
		if !slices.Equal(shape, c.shape) || !slices.Equal(got, c.want) {
			t.Errorf("Permute(%v): %v %v, want %v %v", c.dims, shape, got, c.shape, c.want)
		}
	}
	// Two samples of 2×3, each transposed.
	shape, got := callOn(t, Permute([]int{2, 1}), []int{2, 3}, 2, []float32{1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6})
	if want := []float32{1, 4, 2, 5, 3, 6, -1, -4, -2, -5, -3, -6}; !slices.Equal(shape, []int{3, 2}) || !slices.Equal(got, want) {
		t.Errorf("Permute(2, 1) of two samples: %v %v, want [3 2] %v", shape, got, want)
	}
	for _, c := range []struct {
		dims  []int
		input []int
	}{
		{[]int{1}, []int{2, 3}},
		{[]int{1, 2, 3}, []int{2, 3}},
		{[]int{0, 1}, []int{2, 3}},
		{[]int{2, 2}, []int{2, 3}},
		{[]int{3, 1}, []int{2, 3}},
		{nil, []int{4}},
	} {
		_, err := Permute(c.dims).Build(c.input, nil)
		if err == nil || !strings.Contains(err.Error(), "want each of 1..") {
			t.Errorf("Permute(%v) on %v: %v, want an error naming the dims it takes", c.dims, c.input, err)
		}
	}
	for _, first := range []bool{false, true} {
		g := &fakeONNX{shapes: [][]int{{6, 5, 2}}, first: map[string]bool{"x": first}}
		if _, err := Permute([]int{3, 1, 2}).ONNX(g, "x"); err != nil {
			t.Fatal(err)
		}
		want := []string{"v1 = Transpose(x) perm=[0 3 1 2]"}
		if first {
			want = []string{"v1 = ToLast(x)", "v2 = Transpose(v1) perm=[0 3 1 2]"}
		}
		if !slices.Equal(g.lines, want) {
			t.Errorf("ONNX (input channels first %t): %q, want %q", first, g.lines, want)
		}
	}
}
