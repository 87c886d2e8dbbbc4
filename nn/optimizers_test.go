package nn

import (
	"context"
	"math"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

// TestEveryOptimizerMatchesTapeMachine trains a small convolutional model
// with every optimizer, and with clipping, weight decay and a schedule, on
// the plan machine (updates folded into the gradient products where they
// can be) and on the tape machine (optim's own Apply on the host), and
// compares the losses and the weights.
func TestEveryOptimizerMatchesTapeMachine(t *testing.T) {
	type maker func() (optim.Optimizer, error)
	cases := map[string]maker{}
	for _, name := range optim.Names {
		cases[name] = func() (optim.Optimizer, error) { return optim.Get(name) }
	}
	cases["sgd clipnorm"] = func() (optim.Optimizer, error) {
		return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Options: optim.Options{ClipNorm: 0.1}})
	}
	cases["momentum clipvalue weight decay"] = func() (optim.Optimizer, error) {
		return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9, Options: optim.Options{ClipValue: 0.01, WeightDecay: 0.01}})
	}
	cases["rmsprop centered momentum clipnorm"] = func() (optim.Optimizer, error) {
		return optim.NewRMSprop(optim.RMSpropConfig{Momentum: 0.5, Centered: true, Options: optim.Options{ClipNorm: 1}})
	}
	cases["adam amsgrad cosine"] = func() (optim.Optimizer, error) {
		return optim.NewAdam(optim.AdamConfig{AMSGrad: true, Options: optim.Options{Schedule: optim.CosineDecay{InitialLearningRate: 0.01, DecaySteps: 6}}})
	}
	data := imageData(t, 96, 6, 6, 2, 3, true)
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			var ms [2]*Sequential
			for i, reference := range []bool{true, false} {
				opt, err := mk()
				if err != nil {
					t.Fatal(err)
				}
				m := NewSequential(layers.Input(6, 6, 2), layers.Conv2D(3, 3, layers.ReLU), layers.Flatten(), layers.Dense(10, layers.Softmax))
				m.SetSeed(2)
				if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
					t.Fatal(err)
				}
				m.compiled.reference = reference
				defer m.Close()
				ms[i] = m
			}
			var loss [2][]float64
			for i, m := range ms {
				h, err := m.Fit(context.Background(), data, Epochs(3), BatchSize(32), Seed(4), Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				loss[i] = h.Get("loss")
			}
			requirePlanMachines(t, ms[1])
			for e := range loss[0] {
				if rel := math.Abs(loss[1][e]-loss[0][e]) / loss[0][e]; !(rel <= 1e-5) {
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
