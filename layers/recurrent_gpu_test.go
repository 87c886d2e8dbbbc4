//go:build cudavm && cgo && kernelemu

package layers_test

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// TestRecurrentOnGPU: each recurrent layer (and LSTM and GRU with
// dropout and recurrent dropout, which drop the same units on both)
// trains on the emulated /GPU:0 as on /CPU:0: the same losses epoch by
// epoch (within float32 rounding of the products' other order), and it
// learns.
func TestRecurrentOnGPU(t *testing.T) {
	for _, rec := range []func() layers.Layer{
		func() layers.Layer { return layers.SimpleRNN(4, layers.ReturnSequences()) },
		func() layers.Layer { return layers.LSTM(4) },
		func() layers.Layer { return layers.GRU(4, layers.GoBackwards()) },
		func() layers.Layer { return layers.GRU(4, layers.ResetAfter(false)) },
		func() layers.Layer { return layers.LSTM(16, layers.InputDropout(0.2), layers.RecurrentDropout(0.2)) },
		func() layers.Layer {
			return layers.GRU(4, layers.GoBackwards(), layers.InputDropout(0.3), layers.RecurrentDropout(0.3), layers.ReturnSequences())
		},
		func() layers.Layer { return layers.GRU(4, layers.ResetAfter(false), layers.InputDropout(0.3)) },
	} {
		var losses [2][]float64
		for i, dev := range []string{"/CPU:0", "/GPU:0"} {
			m := nn.NewSequential(layers.Input(8, 1), rec(), layers.Flatten(), layers.Dense(1, layers.Sigmoid))
			m.SetSeed(3)
			h, _, _ := fitSign(t, m, dev, 4)
			losses[i] = h.Get("loss")
			m.Close()
		}
		name := rec().Type()
		for e := range losses[0] {
			if d := math.Abs(losses[0][e] - losses[1][e]); d > 1e-4*max(1, losses[0][e]) {
				t.Errorf("%s: epoch %d: loss %v on /GPU:0, %v on /CPU:0", name, e+1, losses[1][e], losses[0][e])
			}
		}
		if first, last := losses[1][0], losses[1][len(losses[1])-1]; !(last < first) {
			t.Errorf("%s on /GPU:0: loss %v after 4 epochs from %v", name, last, first)
		}
		t.Logf("%s: /CPU:0 %v, /GPU:0 %v", name, losses[0], losses[1])
	}
}

// TestMaskedRecurrentOnGPU: a Masking layer before an LSTM of sequences
// and a backwards GRU, on sequences whose last steps are zero padding,
// trains on the emulated /GPU:0 (the Mask op's and the masked
// recurrence's kernels) as on /CPU:0: the same losses epoch by epoch.
func TestMaskedRecurrentOnGPU(t *testing.T) {
	const n, steps = 128, 8
	x, y := paddedSign(t, n, steps)
	var losses [2][]float64
	for i, dev := range []string{"/CPU:0", "/GPU:0"} {
		m := nn.NewSequential(layers.Input(steps, 1), layers.Masking(0), layers.LSTM(4, layers.ReturnSequences()),
			layers.GRU(3, layers.GoBackwards()), layers.Dense(1, layers.Sigmoid))
		m.SetSeed(3)
		h := fitData(t, m, dev, 4, x, y)
		losses[i] = h.Get("loss")
		m.Close()
	}
	for e := range losses[0] {
		if d := math.Abs(losses[0][e] - losses[1][e]); d > 1e-4*max(1, losses[0][e]) {
			t.Errorf("epoch %d: loss %v on /GPU:0, %v on /CPU:0", e+1, losses[1][e], losses[0][e])
		}
	}
	t.Logf("/CPU:0 %v, /GPU:0 %v", losses[0], losses[1])
}

// TestBidirectionalOnGPU: Bidirectional LSTM of sequences (concat)
// then a Bidirectional GRU (ave) over masked sequences train on the
// emulated /GPU:0 as on /CPU:0: the same losses epoch by epoch.
func TestBidirectionalOnGPU(t *testing.T) {
	const n, steps = 128, 8
	x, y := paddedSign(t, n, steps)
	var losses [2][]float64
	for i, dev := range []string{"/CPU:0", "/GPU:0"} {
		m := nn.NewSequential(layers.Input(steps, 1), layers.Masking(0),
			layers.Bidirectional(layers.LSTM(4, layers.ReturnSequences())),
			layers.Bidirectional(layers.GRU(3), layers.MergeMode("ave")), layers.Dense(1, layers.Sigmoid))
		m.SetSeed(3)
		h := fitData(t, m, dev, 4, x, y)
		losses[i] = h.Get("loss")
		m.Close()
	}
	for e := range losses[0] {
		if d := math.Abs(losses[0][e] - losses[1][e]); d > 1e-4*max(1, losses[0][e]) {
			t.Errorf("epoch %d: loss %v on /GPU:0, %v on /CPU:0", e+1, losses[1][e], losses[0][e])
		}
	}
	if first, last := losses[1][0], losses[1][len(losses[1])-1]; !(last < first) {
		t.Errorf("on /GPU:0: loss %v after 4 epochs from %v", last, first)
	}
	t.Logf("/CPU:0 %v, /GPU:0 %v", losses[0], losses[1])
}
