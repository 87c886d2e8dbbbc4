package nn

import (
	"context"
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// flagship is the seeds' CIFAR-10 model compiled as cmd/train does, on the
// tape machine when reference is set.
func flagship(b testing.TB, reference bool) *Sequential {
	b.Helper()
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	return flagshipWith(b, opt, reference)
}

// flagshipWith is flagship with another optimizer.
func flagshipWith(b testing.TB, opt optim.Optimizer, reference bool) *Sequential {
	b.Helper()
	m := NewSequential(
		layers.Input(32, 32, 3),
		layers.Flatten(),
		layers.Dense(3000, layers.ReLU),
		layers.Dense(1000, layers.ReLU),
		layers.Dense(10, layers.Sigmoid),
	)
	m.SetSeed(1)
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
		b.Fatal(err)
	}
	m.compiled.reference = reference
	return m
}

// flagshipFLOPs is the arithmetic of one training step of the flagship at
// a batch size: three products per dense layer, two for the first, whose
// input needs no gradient.
func flagshipFLOPs(batch int) float64 {
	f := 2.0 * float64(batch)
	return f * (2*3072*3000 + 3*3000*1000 + 3*1000*10)
}

// BenchmarkTrainStep times one training step of the flagship model (gather
// the batch from uint8 CIFAR-shaped data, forward, backward, SGD update)
// on /CPU:0, as Fit runs it.
func BenchmarkTrainStep(b *testing.B) {
	for _, batch := range []int{32, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchmarkTrainStep(b, batch, false) })
	}
	b.Run("tape-machine/batch=32", func(b *testing.B) { benchmarkTrainStep(b, 32, true) })
}

// BenchmarkOptimizerStep times the training step of the flagship at batch
// 32 with each optimizer, its update and slots on /CPU:0.
func BenchmarkOptimizerStep(b *testing.B) {
	for _, tc := range []struct {
		name string
		opt  func() (optim.Optimizer, error)
	}{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{}) }},
		{"momentum", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{Momentum: 0.9}) }},
		{"nesterov", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{Momentum: 0.9, Nesterov: true}) }},
		{"adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{}) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			opt, err := tc.opt()
			if err != nil {
				b.Fatal(err)
			}
			benchmarkStep(b, flagshipWith(b, opt, false), 32)
		})
	}
}

func benchmarkTrainStep(b *testing.B, batch int, reference bool) {
	benchmarkStep(b, flagship(b, reference), batch)
}

func benchmarkStep(b *testing.B, m *Sequential, batch int) {
	defer m.Close()
	data := cifar10.Synthetic(4096, 0, 1).Train.OneHot()
	if err := m.checkData("bench", data); err != nil {
		b.Fatal(err)
	}
	p, err := m.program(batch, labelLayout{cols: 10}, modeTrain)
	if err != nil {
		b.Fatal(err)
	}
	idx := make([]int, batch)
	step := func(i int) {
		for j := range idx {
			idx[j] = (i*batch + j*7) % data.Len()
		}
		if _, err := m.trainStep(p, data, idx); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ { // warm up: buffers, page faults
		step(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		step(i)
		i++
	}
	perStep := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perStep*1e3, "ms/step")
	b.ReportMetric(flagshipFLOPs(batch)/perStep/1e9, "GFLOP/s")
}

// BenchmarkPredict times Predict of the flagship on 4096 CIFAR-shaped
// samples, in batches of 32 and 256.
func BenchmarkPredict(b *testing.B) {
	for _, batch := range []int{32, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			m := flagship(b, false)
			defer m.Close()
			data := &cifar10.Synthetic(4096, 0, 2).Train
			if _, err := m.PredictTensor(context.Background(), data, BatchSize(batch), Verbose(0)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.PredictTensor(context.Background(), data, BatchSize(batch), Verbose(0)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(data.Len()*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
