//go:build cudavm && cgo

package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// A model of two inputs and two outputs trains on /GPU:0 as on /CPU:0: the
// inputs and labels split on the device (ConcatGrad steps), each output's
// loss weighted (a Scale of a scalar) and read back, every log within
// 1e-4 of the CPU's at each of 30 steps.
func TestSeveralInputsAndOutputsMatchCPU(t *testing.T) {
	needGPU(t)
	const n = 128
	rng := rand.New(rand.NewPCG(8, 8))
	as, bs := make([][]float32, n), make([][]float32, n)
	classes, values := make([]int, n), make([]float32, n)
	for i := range n {
		as[i], bs[i] = make([]float32, 6), make([]float32, 5)
		for j := range as[i] {
			as[i][j] = float32(rng.NormFloat64())
		}
		for j := range bs[i] {
			bs[i][j] = float32(rng.NormFloat64())
			values[i] += bs[i][j] * float32(j)
		}
		classes[i] = rng.IntN(4)
		as[i][classes[i]] += 2
	}
	ds, err := data.SliceData(data.InputTuple(data.Rows(as), data.Rows(bs)), data.LabelTuple(data.Classes(classes, 4), data.Targets(values)))
	if err != nil {
		t.Fatal(err)
	}
	train := func(dev string) *nn.History {
		a, b := nn.Input(6), nn.Input(5)
		x := nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Dense(16, layers.ReLU), a), nn.Apply(layers.Dense(16, layers.Tanh), b))
		m, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{
			nn.Apply(layers.Dense(4, layers.Softmax, layers.Named("class")), x),
			nn.Apply(layers.Dense(1, layers.Named("value")), x)})
		if err != nil {
			t.Fatal(err)
		}
		m.SetSeed(2)
		opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, nil, nil, nn.OnDevice(dev),
			nn.OutputLosses(losses.SparseCategoricalCrossentropy{}, losses.MeanSquaredError{}),
			nn.LossWeights(2, 0.25),
			nn.MetricsFor("class", &metrics.SparseCategoricalAccuracy{}),
			nn.MetricsFor("value", &metrics.MeanAbsoluteError{})); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		h, err := m.Fit(context.Background(), ds, nn.Epochs(30), nn.StepsPerEpoch(1), nn.BatchSize(32), nn.Seed(3), nn.Verbose(0))
		if err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
		return h
	}
	cpu, gpu := train("/CPU:0"), train("/GPU:0")
	for _, key := range cpu.Keys {
		c, g := cpu.Values[key], gpu.Values[key]
		for i := range c {
			if rel := math.Abs(g[i]-c[i]) / math.Max(math.Abs(c[i]), 1e-6); rel > 1e-4 {
				t.Fatalf("%s, step %d: %.7f on /GPU:0, %.7f on /CPU:0", key, i, g[i], c[i])
			}
		}
	}
	if loss := cpu.Values["loss"]; !(loss[29] < loss[0]) {
		t.Errorf("the loss did not fall: %v -> %v", loss[0], loss[29])
	}
	t.Logf("logs %v; loss %.4f -> %.4f", cpu.Keys, cpu.Values["loss"][0], cpu.Values["loss"][29])
}
