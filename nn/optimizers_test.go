package nn

import (
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
	cases["adam global clipnorm"] = func() (optim.Optimizer, error) {
		return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01, Options: optim.Options{GlobalClipNorm: 0.05}})
	}
	cases["sgd global clipnorm weight decay"] = func() (optim.Optimizer, error) {
		return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Options: optim.Options{GlobalClipNorm: 0.1, WeightDecay: 0.01}})
	}
	cases["adam amsgrad cosine"] = func() (optim.Optimizer, error) {
		return optim.NewAdam(optim.AdamConfig{AMSGrad: true, Options: optim.Options{Schedule: optim.CosineDecay{InitialLearningRate: 0.01, DecaySteps: 6}}})
	}
	data := imageData(t, 96, 6, 6, 2, 3, true)
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			build := func() *Sequential {
				m := NewSequential(layers.Input(6, 6, 2), layers.Conv2D(3, 3, layers.ReLU), layers.Flatten(), layers.Dense(10, layers.Softmax))
				m.SetSeed(2)
				return m
			}
			ms, loss := fitTwins(t, build, mk, losses.CategoricalCrossentropy{}, data, Epochs(3), BatchSize(32), Seed(4))
			requireSameTraining(t, ms, loss)
		})
	}
}
