package nn

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// lossTestData makes n samples of 4 features and 3 targets of the given
// kind: "real" values, "positive" ones in [0.5, 2], "counts" in {0, 1, 2},
// "probs" rows summing to 1, "onehot" rows, "zeroone" or "sign" (-1/1)
// labels. The targets depend on the features, so that there is something
// to learn.
func lossTestData(t *testing.T, n int, kind string, seed uint64) data.Dataset {
	t.Helper()
	const features, cols = 4, 3
	rng := rand.New(rand.NewPCG(seed, 3))
	x := make([]float32, n*features)
	y := make([]float32, n*cols)
	for i := 0; i < n; i++ {
		xi := x[i*features : (i+1)*features]
		for j := range xi {
			xi[j] = float32(rng.NormFloat64())
		}
		yi := y[i*cols : (i+1)*cols]
		var sum float32
		for j := range yi {
			s := xi[j] - 0.5*xi[j+1] + 0.3*float32(rng.NormFloat64())
			switch kind {
			case "real":
				yi[j] = s
			case "positive":
				yi[j] = float32(0.5 + 1.5/(1+math.Exp(-float64(s))))
			case "counts":
				yi[j] = float32(min(2, max(0, math.Round(float64(s)+1))))
			case "probs":
				yi[j] = float32(math.Exp(float64(s)))
				sum += yi[j]
			case "zeroone", "sign":
				if s > 0 {
					yi[j] = 1
				} else if kind == "sign" {
					yi[j] = -1
				}
			}
		}
		switch kind {
		case "probs":
			for j := range yi {
				yi[j] /= sum
			}
		case "onehot":
			best := 0
			for j := range yi {
				if xi[j] > xi[best] {
					best = j
				}
			}
			yi[best] = 1
		}
	}
	ds, err := data.TensorData(
		tensor.New(tensor.WithShape(n, features), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestEveryLossMatchesTapeMachine trains a small model with each of Keras'
// losses beyond the cross-entropies and MSE, and with label smoothing on
// every path of the cross-entropies (logits after the activation,
// from_logits, and probabilities), on the plan machine and on the tape
// machine, and compares the losses of every epoch and the weights. The
// last batch of each epoch is a partial one.
func TestEveryLossMatchesTapeMachine(t *testing.T) {
	// probs ends the model with softmax or sigmoid followed by a Reshape,
	// which hides the logits, so that the loss computes from probabilities.
	tests := []struct {
		name    string
		loss    losses.Loss
		act     layers.Activation
		probs   bool
		targets string
	}{
		{"mean_absolute_error", losses.MeanAbsoluteError{}, layers.Linear, false, "real"},
		{"mean_absolute_percentage_error", losses.MeanAbsolutePercentageError{}, layers.Linear, false, "positive"},
		{"mean_squared_logarithmic_error", losses.MeanSquaredLogarithmicError{}, layers.Linear, false, "positive"},
		{"huber", losses.Huber{}, layers.Linear, false, "real"},
		{"huber delta 0.3", losses.Huber{Delta: 0.3}, layers.Linear, false, "real"},
		{"log_cosh", losses.LogCosh{}, layers.Linear, false, "real"},
		{"kl_divergence", losses.KLDivergence{}, layers.Softmax, false, "probs"},
		{"poisson", losses.Poisson{}, layers.Sigmoid, false, "counts"},
		{"hinge 0/1 labels", losses.Hinge{}, layers.Tanh, false, "zeroone"},
		{"hinge -1/1 labels", losses.Hinge{}, layers.Tanh, false, "sign"},
		{"squared_hinge", losses.SquaredHinge{}, layers.Tanh, false, "zeroone"},
		{"categorical_hinge", losses.CategoricalHinge{}, layers.Linear, false, "onehot"},
		{"cosine_similarity", losses.CosineSimilarity{}, layers.Linear, false, "real"},
		{"categorical_crossentropy smoothed, softmax logits", losses.CategoricalCrossentropy{LabelSmoothing: 0.2}, layers.Softmax, false, "onehot"},
		{"categorical_crossentropy smoothed, from_logits", losses.CategoricalCrossentropy{FromLogits: true, LabelSmoothing: 0.2}, layers.Linear, false, "onehot"},
		{"categorical_crossentropy smoothed, probabilities", losses.CategoricalCrossentropy{LabelSmoothing: 0.2}, layers.Softmax, true, "onehot"},
		{"binary_crossentropy smoothed, sigmoid logits", losses.BinaryCrossentropy{LabelSmoothing: 0.2}, layers.Sigmoid, false, "zeroone"},
		{"binary_crossentropy smoothed, from_logits", losses.BinaryCrossentropy{FromLogits: true, LabelSmoothing: 0.2}, layers.Linear, false, "zeroone"},
		{"binary_crossentropy smoothed, probabilities", losses.BinaryCrossentropy{LabelSmoothing: 0.2}, layers.Sigmoid, true, "zeroone"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := lossTestData(t, 40, tc.targets, uint64(i))
			var ms [2]*Sequential
			for k, reference := range []bool{true, false} {
				opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.02, Momentum: 0.5})
				if err != nil {
					t.Fatal(err)
				}
				ls := []layers.Layer{layers.Input(4), layers.Dense(8, layers.Tanh), layers.Dense(3, tc.act)}
				if tc.probs {
					ls = append(ls, layers.Reshape([]int{3}))
				}
				m := NewSequential(ls...)
				m.SetSeed(5)
				if err := m.Compile(opt, tc.loss, nil, OnDevice("/CPU:0")); err != nil {
					t.Fatal(err)
				}
				m.compiled.reference = reference
				defer m.Close()
				ms[k] = m
			}
			var loss [2][]float64
			for k, m := range ms {
				h, err := m.Fit(context.Background(), ds, Epochs(3), BatchSize(16), Seed(4), Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				loss[k] = h.Get("loss")
			}
			if len(loss[0]) != 3 || loss[0][0] == loss[0][2] {
				t.Fatalf("the tape machine's losses %v do not show 3 epochs of training", loss[0])
			}
			for e := range loss[0] {
				if d := math.Abs(loss[1][e] - loss[0][e]); !(d <= 1e-5*math.Max(1, math.Abs(loss[0][e]))) {
					t.Fatalf("epoch %d: loss %v on the plan machine, %v on the tape machine", e, loss[1][e], loss[0][e])
				}
			}
			for li, l := range ms[0].layers {
				for pi, prm := range l.Params() {
					want := prm.Value.Data().([]float32)
					got := ms[1].layers[li].Params()[pi].Value.Data().([]float32)
					for j := range want {
						if d := math.Abs(float64(got[j] - want[j])); d > 1e-5*(1+math.Abs(float64(want[j]))) {
							t.Fatalf("%s/%s[%d] = %v on the plan machine, %v on the tape machine", l.Name(), prm.Name, j, got[j], want[j])
						}
					}
				}
			}
		})
	}
}
