package nn_test

import (
	"path/filepath"
	"testing"

	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// compiledFlagship is the seeds' CIFAR-10 model (12,230,010 weights),
// compiled with SGD with momentum so a checkpoint holds one slot per weight.
func compiledFlagship(b *testing.B) *nn.Sequential {
	b.Helper()
	m := flagship()
	m.SetSeed(1)
	opt, err := optim.NewSGD(optim.SGDConfig{Momentum: 0.9})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		b.Fatal(err)
	}
	if err := m.Build(32, 32, 3); err != nil {
		b.Fatal(err)
	}
	// Give every weight a momentum slot, as after the first step.
	st := opt.State()
	st.Slots["momentum"] = map[string][]float32{}
	ws, _ := m.GetWeights()
	for i, name := range []string{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias", "dense_2/kernel", "dense_2/bias"} {
		st.Slots["momentum"][name] = make([]float32, ws[i].Shape().TotalSize())
	}
	if err := opt.SetState(st); err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkSaveWeights(b *testing.B) {
	m := compiledFlagship(b)
	path := filepath.Join(b.TempDir(), "w.safetensors")
	b.SetBytes(4 * int64(m.CountParams()))
	for b.Loop() {
		if err := m.SaveWeights(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSaveCheckpoint(b *testing.B) {
	m := compiledFlagship(b)
	path := filepath.Join(b.TempDir(), "ck.safetensors")
	b.SetBytes(2 * 4 * int64(m.CountParams())) // weights and momentum
	for b.Loop() {
		if err := m.SaveCheckpoint(path, nn.Checkpoint{Epoch: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadCheckpoint(b *testing.B) {
	m := compiledFlagship(b)
	path := filepath.Join(b.TempDir(), "ck.safetensors")
	if err := m.SaveCheckpoint(path, nn.Checkpoint{Epoch: 1}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * 4 * int64(m.CountParams()))
	for b.Loop() {
		if _, err := m.LoadCheckpoint(path); err != nil {
			b.Fatal(err)
		}
	}
}
