package layers_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// compiled compiles m for /CPU:0 (SGD, mean squared error).
func compiled(t *testing.T, m *nn.Sequential) *nn.Sequential {
	t.Helper()
	compileSGD(t, m, optim.SGDConfig{LearningRate: 0.01}, losses.MeanSquaredError{}, "/CPU:0")
	return m
}

func predictRows(t *testing.T, m *nn.Sequential, x []float32, shape ...int) [][]float32 {
	t.Helper()
	in, err := data.TensorInputs(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return p.Rows()
}

// TestMaskZeroSkipsPadding checks Embedding(mask_zero) before each
// recurrent layer, read forwards and backwards, outputting the last state
// or the sequence, on sequences padded with zeros at the end and at the
// start: each sample's output is what the same layers (the same weights)
// compute from its tokens alone, unpadded; at a padded step the sequence
// holds the output of the step before (zero before the first step read),
// as Keras 2 does. The model predicts the same after a Save/LoadModel
// round trip through each file format.
func TestMaskZeroSkipsPadding(t *testing.T) {
	const steps, vocab, dim, units = 6, 7, 3, 4
	lengths := []int{6, 3, 1, 4}
	tokens := func(i, k int) float32 { return float32(1 + (3*i+5*k)%(vocab-1)) }
	for _, kind := range []string{"LSTM", "GRU", "SimpleRNN"} {
		for _, v := range [][3]bool{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, false}, {true, false, true}, {false, true, true}} {
			seq, back, prePad := v[0], v[1], v[2]
			t.Run(fmt.Sprintf("%s/sequences=%t/backwards=%t/prepadded=%t", kind, seq, back, prePad), func(t *testing.T) {
				mk := func(steps int, mask bool) *nn.Sequential {
					var opts []layers.RecurrentOption
					if seq {
						opts = append(opts, layers.ReturnSequences())
					}
					if back {
						opts = append(opts, layers.GoBackwards())
					}
					rec := map[string]func(int, ...layers.RecurrentOption) *layers.RecurrentLayer{"LSTM": layers.LSTM, "GRU": layers.GRU, "SimpleRNN": layers.SimpleRNN}[kind](units, opts...)
					ls := []layers.Layer{layers.Input(steps), layers.Embedding(vocab, dim, layers.MaskZero(mask)), rec}
					if seq {
						ls = append(ls, layers.Flatten())
					}
					m := nn.NewSequential(ls...)
					m.SetSeed(5)
					if err := m.Build(steps); err != nil {
						t.Fatal(err)
					}
					return compiled(t, m)
				}
				padded := mk(steps, true)
				defer padded.Close()
				w, err := padded.GetWeights()
				if err != nil {
					t.Fatal(err)
				}
				x := make([]float32, len(lengths)*steps)
				for i, n := range lengths {
					for k := range n {
						at := k
						if prePad {
							at = steps - n + k
						}
						x[i*steps+at] = tokens(i, k)
					}
				}
				got := predictRows(t, padded, x, len(lengths), steps)
				for i, n := range lengths {
					alone := mk(n, false)
					if err := alone.SetWeights(w); err != nil {
						t.Fatal(err)
					}
					xs := make([]float32, n)
					for k := range n {
						xs[k] = tokens(i, k)
					}
					ref := predictRows(t, alone, xs, 1, n)[0]
					alone.Close()
					want := ref
					if seq {
						// The outputs in the order read: a padded step
						// holds the output before it (zero before the
						// first token read).
						want = make([]float32, steps*units)
						read := 0
						for k := range steps {
							at := k
							if back {
								at = steps - 1 - k
							}
							if (!prePad && at < n) || (prePad && at >= steps-n) {
								read++
							}
							if read > 0 {
								copy(want[k*units:], ref[(read-1)*units:read*units])
							}
						}
					}
					for j := range want {
						if math.Abs(float64(got[i][j]-want[j])) > 1e-5 {
							t.Errorf("sample %d (%d tokens): %v, want %v", i, n, got[i], want)
							break
						}
					}
				}
				for _, file := range []string{"m.safetensors", "m.keras", "m.h5"} {
					again := predictRows(t, saveAndLoad(t, padded, file), x, len(lengths), steps)
					for i := range got {
						if !slices.Equal(again[i], got[i]) {
							t.Errorf("%s: the loaded model predicts %v for sample %d, want %v", file, again[i], i, got[i])
						}
					}
				}
			})
		}
	}
}

// TestMaskingAndPooling checks Masking's output and mask against values
// worked out by hand: GlobalAveragePooling1D averages the steps kept,
// GlobalMaxPooling1D (which takes no mask in Keras 2) every step, the
// masked ones zeroed by Masking; a Dropout layer in between hands the
// mask on.
func TestMaskingAndPooling(t *testing.T) {
	// Two samples of four steps of two features; mask value -1.
	x := []float32{1, 2, -1, -1, 3, 0, -1, -1, -1, -1, -1, -1, -1, 5, 4, -2}
	cases := []struct {
		name string
		ls   []layers.Layer
		want [][]float32
	}{
		{"average", []layers.Layer{layers.GlobalAveragePooling1D()}, [][]float32{{2, 1}, {1.5, 1.5}}},
		{"max", []layers.Layer{layers.GlobalMaxPooling1D()}, [][]float32{{3, 2}, {4, 5}}},
		{"masked only", []layers.Layer{layers.Flatten()}, [][]float32{{1, 2, 0, 0, 3, 0, 0, 0}, {0, 0, 0, 0, -1, 5, 4, -2}}},
		{"dropout then average", []layers.Layer{layers.Dropout(0.5), layers.GlobalAveragePooling1D()}, [][]float32{{2, 1}, {1.5, 1.5}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := nn.NewSequential(append([]layers.Layer{layers.Input(4, 2), layers.Masking(-1)}, c.ls...)...)
			defer m.Close()
			if err := m.Build(4, 2); err != nil {
				t.Fatal(err)
			}
			compiled(t, m)
			got := predictRows(t, m, x, 2, 4, 2)
			for i := range c.want {
				if !slices.Equal(got[i], c.want[i]) {
					t.Errorf("sample %d: %v, want %v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// paddedSign is sign data of n sequences whose last (i mod 4) steps are
// zero, padding a Masking(0) layer skips.
func paddedSign(t *testing.T, n, steps int) (x, y []float32) {
	t.Helper()
	x, y = make([]float32, n*steps), make([]float32, n)
	for i := range n {
		sum := 0.0
		for k := range steps - i%4 {
			v := math.Sin(float64(7*i+3*k+1)) * 2
			x[i*steps+k] = float32(v)
			sum += v
		}
		if sum > 0 {
			y[i] = 1
		}
	}
	return x, y
}

// fitData fits m on (x, y) sequences of one feature on dev for epochs
// epochs of Adam, batch 32, without shuffling's effect on the comparison
// (the model's seed fixes it).
func fitData(t *testing.T, m *nn.Sequential, dev string, epochs int, x, y []float32) *nn.History {
	t.Helper()
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(adam, losses.BinaryCrossentropy{}, nil, nn.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	n := len(y)
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, len(x)/n, 1), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Fit(context.Background(), ds, nn.Epochs(epochs), nn.BatchSize(32), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
