package nn_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// smallModel is Input(4) → Dense(hidden, relu) → Dense(10, softmax), compiled
// with opt (SGD 0.1 when nil) on the CPU.
func smallModel(t *testing.T, seed uint64, opt optim.Optimizer, hidden int) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Input(4), layers.Dense(hidden, layers.ReLU), layers.Dense(10, layers.Softmax))
	m.SetSeed(seed)
	if opt == nil {
		opt = newSGD(t, 0.1)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	return m
}

func flatWeights(t *testing.T, m *nn.Sequential) []float32 {
	t.Helper()
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	var all []float32
	for _, w := range ws {
		all = append(all, w.Data().([]float32)...)
	}
	return all
}

func TestSaveWeightsWritesKerasNamesAndShapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.safetensors")
	a := smallModel(t, 1, nil, 3)
	if err := a.SaveWeights(path); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"dense/kernel": {4, 3}, "dense/bias": {3}, "dense_1/kernel": {3, 10}, "dense_1/bias": {10}}
	if len(f.Tensors) != len(want) {
		t.Errorf("file holds %v, want %v", f.Names(), want)
	}
	ws, _ := a.GetWeights()
	for i, name := range []string{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"} {
		got, ok := f.Tensor(name)
		if !ok || !slices.Equal(got.Shape, want[name]) {
			t.Errorf("tensor %q: %v (present %v), want shape %v", name, got.Shape, ok, want[name])
			continue
		}
		if !slices.Equal(got.Data, ws[i].Data().([]float32)) {
			t.Errorf("tensor %q does not hold the model's values", name)
		}
	}
	if f.Metadata["gokeras.kind"] != "weights" {
		t.Errorf("metadata %v", f.Metadata)
	}

	b := smallModel(t, 2, nil, 3)
	if slices.Equal(flatWeights(t, a), flatWeights(t, b)) {
		t.Fatal("two seeds gave the same weights: the test cannot tell a load happened")
	}
	if err := b.LoadWeights(path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(flatWeights(t, a), flatWeights(t, b)) {
		t.Error("loaded weights differ from the saved ones")
	}
	// The loaded weights are the ones the model computes with.
	data := blobs(t, 10, 4, 1, true)
	pa, err := a.PredictTensor(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.PredictTensor(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pa.Data().([]float32), pb.Data().([]float32)) {
		t.Error("the model with loaded weights predicts differently")
	}
}

func TestLoadWeightsErrors(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "w.safetensors")
	if err := smallModel(t, 1, nil, 3).SaveWeights(saved); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.safetensors")
	if err := os.WriteFile(truncated, raw[:len(raw)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.safetensors")
	if err := safetensors.WriteFile(missing, []safetensors.Tensor{{Name: "dense/kernel", Shape: []int{4, 3}, Data: make([]float32, 12)}}, nil); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(dir, "extra.safetensors")
	f, _ := safetensors.ReadFile(saved)
	f.Tensors = append(f.Tensors, safetensors.Tensor{Name: "dense_2/kernel", Shape: []int{1}, Data: []float32{1}})
	if err := safetensors.WriteFile(extra, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		path   string
		hidden int
		want   []string
	}{
		{"shape mismatch", saved, 5, []string{`"dense/kernel"`, "(4, 3)", "(4, 5)"}},
		{"missing tensor", missing, 3, []string{`no tensor "dense/bias"`}},
		{"extra tensor", extra, 3, []string{`"dense_2/kernel"`, "another model"}},
		{"truncated", truncated, 3, []string{"truncated", truncated}},
		{"no file", filepath.Join(dir, "nope"), 3, []string{"no such file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := smallModel(t, 9, nil, tc.hidden)
			before := flatWeights(t, m)
			err := m.LoadWeights(tc.path)
			if err == nil {
				t.Fatal("LoadWeights succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !slices.Equal(before, flatWeights(t, m)) {
				t.Error("a failed load changed the weights")
			}
		})
	}
}

func TestCheckpointRoundTripAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ck.safetensors")
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	a := smallModel(t, 1, adam, 3)
	if _, err := a.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Seed(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	adam.SetLearningRate(0.0025)
	if err := a.SaveCheckpoint(path, nn.Checkpoint{Epoch: 1, Metadata: map[string]string{"seed": "42"}}); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"optimizer/dense/kernel/m", "optimizer/dense/kernel/v", "optimizer/dense_1/bias/v"} {
		if _, ok := f.Tensor(name); !ok {
			t.Errorf("checkpoint lacks %q: %v", name, f.Names())
		}
	}
	if got, _ := f.Tensor("optimizer/dense/kernel/m"); !slices.Equal(got.Shape, []int{4, 3}) {
		t.Errorf("optimizer slot shape %v, want the weight's (4, 3)", got.Shape)
	}
	ck, err := nn.ReadCheckpoint(path)
	if err != nil || ck.Epoch != 1 || ck.Step != 0 || ck.Metadata["seed"] != "42" || len(ck.Metadata) != 1 {
		t.Errorf("ReadCheckpoint = %+v, %v", ck, err)
	}

	adam2, _ := optim.NewAdam(optim.AdamConfig{})
	b := smallModel(t, 2, adam2, 3)
	if _, err := b.LoadCheckpoint(path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(flatWeights(t, a), flatWeights(t, b)) {
		t.Error("weights differ after LoadCheckpoint")
	}
	if adam2.Iterations() != adam.Iterations() || adam2.LearningRate() != 0.0025 {
		t.Errorf("optimizer restored to %d iterations, lr %v; want %d, 0.0025", adam2.Iterations(), adam2.LearningRate(), adam.Iterations())
	}

	// A checkpoint's weights load into a model on their own.
	c := smallModel(t, 3, nil, 3)
	if err := c.LoadWeights(path); err != nil {
		t.Fatal(err)
	}
	// Another optimizer, or a weights-only file, is refused.
	if _, err := smallModel(t, 3, nil, 3).LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "the Adam optimizer but model") {
		t.Errorf("loading Adam state into SGD: %v", err)
	}
	weightsOnly := filepath.Join(dir, "w.safetensors")
	if err := a.SaveWeights(weightsOnly); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.ReadCheckpoint(weightsOnly); err == nil || !strings.Contains(err.Error(), "weights only") {
		t.Errorf("ReadCheckpoint of a weights file: %v", err)
	}
	if err := a.SaveCheckpoint(path, nn.Checkpoint{Metadata: map[string]string{"gokeras.epoch": "9"}}); err == nil {
		t.Error("metadata may overwrite gokeras' own keys")
	}
}

func TestSetWeightsChecksShapes(t *testing.T) {
	a, b := smallModel(t, 1, nil, 3), smallModel(t, 2, nil, 3)
	ws, err := a.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetWeights(ws[:3]); err == nil || !strings.Contains(err.Error(), "has 4 weight tensors but 3") {
		t.Errorf("too few: %v", err)
	}
	bad := slices.Clone(ws)
	bad[0], bad[2] = bad[2], bad[0]
	if err := b.SetWeights(bad); err == nil || !strings.Contains(err.Error(), "dense/kernel has shape (4, 3)") {
		t.Errorf("swapped: %v", err)
	}
	if err := b.SetWeights(ws); err != nil {
		t.Fatal(err)
	}
	ws[0].Data().([]float32)[0] = 1e6 // GetWeights gave copies, SetWeights took copies
	if got := flatWeights(t, b); got[0] == 1e6 || !slices.Equal(got[1:], flatWeights(t, a)[1:]) {
		t.Error("SetWeights did not copy the weights")
	}
}
