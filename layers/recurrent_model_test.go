package layers_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// signData are n sequences of steps values, each labelled 1 when the
// sum of its values is positive, else 0.
func signData(t *testing.T, n, steps int, seed uint64) (data.Dataset, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	x, y := make([]float32, n*steps), make([]float32, n)
	for i := range n {
		sum := 0.0
		for k := range steps {
			v := rng.NormFloat64()
			x[i*steps+k] = float32(v)
			sum += v
		}
		if sum > 0 {
			y[i] = 1
		}
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, steps, 1), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds, y
}

// signModel is a recurrent layer reading sequences of steps values, then
// a sigmoid unit.
func signModel(rec layers.Layer, steps int) *nn.Sequential {
	m := nn.NewSequential(layers.Input(steps, 1), rec, layers.Dense(1, layers.Sigmoid))
	m.SetSeed(3)
	return m
}

// accuracy is the share of predictions on the label's side of 0.5.
func accuracy(t *testing.T, m *nn.Sequential, ds data.Dataset, y []float32) float64 {
	t.Helper()
	p, err := m.PredictTensor(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i, v := range p.Data().([]float32) {
		if (v > 0.5) == (y[i] == 1) {
			right++
		}
	}
	return float64(right) / float64(len(y))
}

func fitSign(t *testing.T, m *nn.Sequential, dev string, epochs int) (*nn.History, data.Dataset, []float32) {
	t.Helper()
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(adam, losses.BinaryCrossentropy{}, nil, nn.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	ds, y := signData(t, 256, 8, 7)
	h, err := m.Fit(context.Background(), ds, nn.Epochs(epochs), nn.BatchSize(32), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	return h, ds, y
}

// TestRecurrentModelsLearn: each recurrent layer, in a model on /CPU:0,
// learns the sign of a sequence's sum (held-out accuracy well above the
// half a guess gets), and a model saved with Save and with SaveWeights
// (Keras 2's .h5 and Keras 3's .weights.h5) loads back predicting the
// same values.
func TestRecurrentModelsLearn(t *testing.T) {
	for _, rec := range []func() layers.Layer{
		func() layers.Layer { return layers.SimpleRNN(8) },
		func() layers.Layer { return layers.LSTM(8) },
		func() layers.Layer { return layers.GRU(8, layers.GoBackwards()) },
	} {
		l := rec()
		t.Run(l.Type(), func(t *testing.T) {
			m := signModel(l, 8)
			defer m.Close()
			h, ds, _ := fitSign(t, m, "/CPU:0", 15)
			loss := h.Get("loss")
			if first, last := loss[0], loss[len(loss)-1]; !(last < 0.5*first) {
				t.Errorf("loss %v after 15 epochs from %v: the model did not learn", last, first)
			}
			test, ty := signData(t, 256, 8, 99)
			acc := accuracy(t, m, test, ty)
			t.Logf("loss %v -> %v, held-out accuracy %.3f", loss[0], loss[len(loss)-1], acc)
			if acc < 0.9 {
				t.Errorf("held-out accuracy %.3f, want at least 0.9", acc)
			}
			ctx := context.Background()
			want, err := m.PredictTensor(ctx, ds)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			loaded := checkLoadedPredicts(t, m, ds, "model.safetensors")
			if ls := loaded.Layers(); len(ls) != 2 || ls[0].Type() != l.Type() {
				t.Errorf("the loaded model's layers: %v", ls)
			}
			for _, name := range []string{"w.h5", "w.weights.h5"} {
				p := filepath.Join(dir, name)
				if err := m.SaveWeights(p); err != nil {
					t.Fatal(err)
				}
				again := signModel(rec(), 8)
				defer again.Close()
				if err := again.Build(8, 1); err != nil {
					t.Fatal(err)
				}
				if err := again.LoadWeights(p); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				sgd, _ := optim.NewSGD(optim.SGDConfig{})
				if err := again.Compile(sgd, losses.BinaryCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
					t.Fatal(err)
				}
				got, err := again.PredictTensor(ctx, ds)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Data().([]float32), want.Data().([]float32)) {
					t.Errorf("%s: the model that loaded the weights predicts other values", name)
				}
			}
		})
	}
}

// TestRecurrentSummary: Summary shows Keras' output shapes and parameter
// counts for LSTM(128), GRU(128) and SimpleRNN(128) on 64 features.
func TestRecurrentSummary(t *testing.T) {
	for _, c := range []struct {
		l   layers.Layer
		row string
	}{
		{layers.LSTM(128), " lstm (LSTM)                 (None, 128)               98816"},
		{layers.GRU(128, layers.ReturnSequences()), " gru (GRU)                   (None, 10, 128)           74496"},
		{layers.SimpleRNN(128), " simple_rnn (SimpleRNN)      (None, 128)               24704"},
	} {
		m := nn.NewSequential(layers.Input(10, 64), c.l)
		if err := m.Build(10, 64); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := m.Summary(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.row) {
			t.Errorf("the summary has no row %q:\n%s", c.row, b.String())
		}
		m.Close()
	}
}

// TestRecurrentAfterEmbedding: an Embedding then two recurrent layers
// stacked (the LSTM's sequence into a GRU) learn whether token 7 occurs
// in a sequence of 10 tokens, held-out accuracy at least 0.9.
func TestRecurrentAfterEmbedding(t *testing.T) {
	tokens := func(n int, seed uint64) (data.Dataset, []float32) {
		rng := rand.New(rand.NewPCG(seed, 3))
		x, y := make([]float32, n*10), make([]float32, n)
		for i := range n {
			for k := range 10 {
				v := rng.IntN(10)
				x[i*10+k] = float32(v)
				if v == 7 {
					y[i] = 1
				}
			}
		}
		ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 10), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
		if err != nil {
			t.Fatal(err)
		}
		return ds, y
	}
	m := nn.NewSequential(layers.Input(10), layers.Embedding(10, 8), layers.LSTM(16, layers.ReturnSequences()), layers.GRU(8),
		layers.Dense(1, layers.Sigmoid))
	defer m.Close()
	m.SetSeed(4)
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(adam, losses.BinaryCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	ds, _ := tokens(512, 1)
	h, err := m.Fit(context.Background(), ds, nn.Epochs(15), nn.BatchSize(32), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	test, ty := tokens(256, 2)
	acc := accuracy(t, m, test, ty)
	loss := h.Get("loss")
	t.Logf("loss %v -> %v, held-out accuracy %.3f", loss[0], loss[len(loss)-1], acc)
	if acc < 0.9 {
		t.Errorf("held-out accuracy %.3f, want at least 0.9", acc)
	}
}

// TestRecurrentFunctional: recurrent layers in a functional model (two
// branches joined by Concatenate) train, and the model Save writes loads
// back predicting the same values.
func TestRecurrentFunctional(t *testing.T) {
	in := nn.Input(8, 1)
	a := nn.Apply(layers.GRU(3), nn.Apply(layers.LSTM(4, layers.ReturnSequences()), in))
	b := nn.Apply(layers.SimpleRNN(3, layers.GoBackwards()), in)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(1, layers.Sigmoid), nn.Apply(layers.Concatenate(-1), a, b))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.SetSeed(2)
	h, ds, _ := fitSign(t, m, "/CPU:0", 5)
	if loss := h.Get("loss"); !(loss[len(loss)-1] < loss[0]) {
		t.Errorf("loss %v: the model did not learn", loss)
	}
	var b2 strings.Builder
	if err := m.Summary(&b2); err != nil {
		t.Fatal(err)
	}
	if row := " gru (GRU)                      (None, 3)            81          ['lstm[0][0]']"; !strings.Contains(b2.String(), row) {
		t.Errorf("the summary has no row %q:\n%s", row, b2.String())
	}
	checkLoadedPredicts(t, m, ds, "f.safetensors")
}
