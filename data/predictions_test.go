package data

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

func TestPredictionsReadTheOutputs(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name   string
		shape  []int
		values []float32
		argmax []int
		row1   []float32
	}{
		{"classes", []int{3, 3}, []float32{0.1, 0.7, 0.2, 0.5, 0.5, 0, -1, -3, -2}, []int{1, 0, 0}, []float32{0.5, 0.5, 0}},
		{"a NaN wins, the first of two", []int{2, 3}, []float32{1, nan, 2, nan, 5, nan}, []int{1, 0}, []float32{nan, 5, nan}},
		{"one sigmoid output", []int{2, 1}, []float32{0.9, 0.1}, []int{0, 0}, []float32{0.1}},
		{"outputs of two axes, flattened", []int{2, 2, 2}, []float32{0, 1, 2, 3, 7, 6, 5, 4}, []int{3, 0}, []float32{7, 6, 5, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := TensorPredictions(tensor.New(tensor.WithShape(tc.shape...), tensor.WithBacking(slices.Clone(tc.values))))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Argmax(); !slices.Equal(got, tc.argmax) {
				t.Errorf("Argmax() = %v, want %v", got, tc.argmax)
			}
			same := func(a, b float32) bool { return a == b || (a != a && b != b) }
			if got := p.Row(1); !slices.EqualFunc(got, tc.row1, same) {
				t.Errorf("Row(1) = %v, want %v", got, tc.row1)
			}
			if got := p.Rows(); len(got) != tc.shape[0] || !slices.EqualFunc(got[1], tc.row1, same) {
				t.Errorf("data.Rows() = %v", got)
			}
			if got := p.Shape(); !slices.Equal(got, tc.shape) || p.Len() != tc.shape[0] {
				t.Errorf("Shape() = %v, Len() = %d", got, p.Len())
			}
			for _, i := range []int{-1, tc.shape[0]} {
				if row := p.Row(i); row != nil {
					t.Errorf("Row(%d) = %v, want nil", i, row)
				}
			}
			// A row is a view that cannot grow into the next one.
			row := append(p.Row(0), 42)
			if p.Values()[len(tc.row1)] == 42 {
				t.Errorf("appending to Row(0) wrote into row 1: %v", row)
			}
			// Shape is the caller's.
			p.Shape()[0] = 99
			if p.Len() != tc.shape[0] {
				t.Error("changing Shape()'s result changed the Predictions")
			}
		})
	}
	var none *Predictions
	if none.Len() != 0 || none.Shape() != nil || none.Values() != nil || none.Row(0) != nil || len(none.Rows()) != 0 || len(none.Argmax()) != 0 {
		t.Error("a nil *Predictions does not read as empty")
	}
}
