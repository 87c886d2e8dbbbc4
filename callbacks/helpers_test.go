package callbacks_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// tinyModel is a 10-class softmax regression on 4 features, with accuracy.
func tinyModel(t *testing.T, lr float64) *nn.Sequential {
	t.Helper()
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: lr})
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(4), layers.Dense(10, layers.Softmax))
	m.SetSeed(1)
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	return m
}

// blobs makes n samples of 4 features around 10 centres, one-hot labelled
// by centre; seed picks the centres and the noise.
func blobs(t *testing.T, n int, seed uint64) data.Dataset {
	t.Helper()
	const features, classes = 4, 10
	rng := rand.New(rand.NewPCG(seed, 1))
	centres := make([]float32, classes*features)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	x, y := make([]float32, n*features), make([]float32, n*classes)
	for i := range n {
		c := i % classes
		for j := range features {
			x[i*features+j] = centres[c*features+j] + float32(0.8*rng.NormFloat64())
		}
		y[i*classes+c] = 1
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, features), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(n, classes), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
