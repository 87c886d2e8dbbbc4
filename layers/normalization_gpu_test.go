//go:build cudavm && cgo && kernelemu

package layers_test

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// TestNormalizationOnGPU: an adapted Normalization and an inverted one
// predict on the emulated /GPU:0 what they predict on /CPU:0, bit for
// bit (gk_binary's subtract, divide, multiply and add).
func TestNormalizationOnGPU(t *testing.T) {
	ds, _ := normData(t, 20, 4, 4, 3)
	var outs [2][]float32
	for i, dev := range []string{"/CPU:0", "/GPU:0"} {
		norm := layers.Normalization(layers.NormalizationAxis(1, -1))
		if err := norm.Adapt(ds, 6); err != nil {
			t.Fatal(err)
		}
		m := nn.NewSequential(layers.Input(4, 4, 3), norm, layers.Normalization(layers.MeanVariance([]float64{2}, []float64{3}), layers.Invert()), layers.Flatten())
		outs[i] = predictOn(t, m, ds, dev)
		m.Close()
	}
	for i := range outs[0] {
		if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) {
			t.Fatalf("value %d: %v on /GPU:0, %v on /CPU:0", i, outs[1][i], outs[0][i])
		}
	}
}
