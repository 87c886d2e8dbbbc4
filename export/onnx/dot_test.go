package onnx

import (
	"slices"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// Dot maps to MatMul (with a Transpose of an input summed over its first
// axis of a sample's matrix, or of a second input summed over its last),
// to ReduceSum of a Mul for vectors, and with Normalize divides each input
// by √max(ReduceSumSquare, 1e-12) first; a convolution's output, held
// channels first, is taken channels last.
func TestExportONNXDot(t *testing.T) {
	m := functional(t, []int{5, 3}, func(in *nn.Tensor) *nn.Tensor {
		c := nn.Apply(layers.Conv1D(3, 2, layers.Padding("same")), in)          // (5, 3), channels first
		s := nn.Apply(layers.DotAxes(1, 1), c, in)                              // (3, 3)
		f := nn.Apply(layers.Flatten(), in)                                     // (15)
		a, b := nn.Apply(layers.Dense(4), f), nn.Apply(layers.Dense(4), f)      // (4), (4)
		v := nn.Apply(layers.Dot(-1, layers.Normalize()), a, b)                 // (1)
		j := nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Flatten(), s), v) // (10)
		return nn.Apply(layers.Dense(2), j)
	})
	m.SetSeed(6)
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Transpose", "Conv", "Transpose", "Transpose", "MatMul", "Flatten", "Gemm", "Gemm",
		"ReduceSumSquare", "Max", "Sqrt", "Div", "ReduceSumSquare", "Max", "Sqrt", "Div", "Mul", "ReduceSum",
		"Flatten", "Concat", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if eps := om.Graph.Initializer("dot_1/epsilon"); eps == nil || len(eps.Dims) != 0 || !slices.Equal(eps.Floats, []float32{1e-12}) {
		t.Errorf("initializer dot_1/epsilon: %+v, want the scalar 1e-12", eps)
	}
}
