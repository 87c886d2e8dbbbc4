package ops

import (
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestMask checks a Mask op's values worked out by hand, for sequences
// of features and of one value (token ids), and what it refuses.
func TestMask(t *testing.T) {
	for _, c := range []struct {
		shape []int
		x     []float64
		value float64
		want  []float64
	}{
		// Two samples of three steps of two features: a step is masked
		// only when both features equal the value.
		{[]int{2, 3, 2}, []float64{0, 0, 0, 1, 2, 0, -1, 0, 0, 0, 0, 0}, 0, []float64{0, 1, 1, 1, 0, 0}},
		{[]int{1, 3, 2}, []float64{5, 5, 5, 0, 1, 1}, 5, []float64{0, 1, 1}},
		{[]int{2, 4}, []float64{3, 7, 0, 0, 0, 0, 9, 0}, 0, []float64{1, 1, 0, 0, 0, 0, 1, 0}},
	} {
		g := gorgonia.NewGraph()
		x := gorgonia.NewTensor(g, tensor.Float64, len(c.shape), gorgonia.WithShape(c.shape...), gorgonia.WithName("x"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(c.shape...), tensor.WithBacking(c.x))))
		m, err := Mask(x, c.value)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Shape().Eq(tensor.Shape{c.shape[0], c.shape[1]}) {
			t.Errorf("%v: mask of shape %v", c.shape, m.Shape())
		}
		vm := gorgonia.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Close()
		if got := m.Value().Data().([]float64); !slices.Equal(got, c.want) {
			t.Errorf("%v value %v: mask %v, want %v", c.shape, c.value, got, c.want)
		}
		got32 := make([]float32, len(c.want))
		x32 := make([]float32, len(c.x))
		for i, v := range c.x {
			x32[i] = float32(v)
		}
		MaskForward(MaskParams{Rows: len(c.want), Width: len(c.x) / len(c.want), Value: c.value}, x32, got32)
		for i := range got32 {
			if float64(got32[i]) != c.want[i] {
				t.Errorf("%v: MaskForward %v, want %v", c.shape, got32, c.want)
				break
			}
		}
	}
	g := gorgonia.NewGraph()
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4), gorgonia.WithName("v"))
	if _, err := Mask(v, 0); err == nil {
		t.Error("a mask of a vector: no error")
	}
}
