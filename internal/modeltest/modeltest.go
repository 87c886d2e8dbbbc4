// Package modeltest holds what tests that fit models share, whichever
// package they test (nn, the plan compiler, the CUDA backend): small
// learnable datasets. It sits above the device layer, so a package below nn
// uses it from its _test.go files only; the device layer's own helpers are
// in device/internal/opstest, which imports nothing above ops.
package modeltest

import (
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"gorgonia.org/tensor"
)

// Blobs is a learnable 10-class problem of n samples of the given shape:
// each class a cluster of noise 0.5 around its own random centre. Labels
// are one-hot (labelCols 10) or class indices (labelCols 1).
func Blobs(t testing.TB, n int, sampleShape []int, labelCols int) data.Dataset {
	t.Helper()
	features := 1
	for _, d := range sampleShape {
		features *= d
	}
	rng := rand.New(rand.NewPCG(9, 9))
	centres := make([]float32, 10*features)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	x := make([]float32, n*features)
	y := make([]float32, n*labelCols)
	for i := 0; i < n; i++ {
		c := i % 10
		for j := 0; j < features; j++ {
			x[i*features+j] = centres[c*features+j] + float32(0.5*rng.NormFloat64())
		}
		if labelCols == 1 {
			y[i] = float32(c)
		} else {
			y[i*labelCols+c] = 1
		}
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(append([]int{n}, sampleShape...)...), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(n, labelCols), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
