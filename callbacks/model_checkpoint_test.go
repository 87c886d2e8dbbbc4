package callbacks_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

func TestModelCheckpointNamesAndSaves(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 0.1)
	mc := callbacks.NewModelCheckpoint(filepath.Join(dir, "ck-{epoch:02d}-{val_loss:.3f}.safetensors"))
	mc.Metadata = map[string]string{"seed": "5"}
	hist, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(2), nn.Verbose(0),
		nn.ValidationData(blobs(t, 20, 2)), nn.Callbacks(mc))
	if err != nil {
		t.Fatal(err)
	}
	for e, vl := range hist.Get("val_loss") {
		path := filepath.Join(dir, fmt.Sprintf("ck-%02d-%.3f.safetensors", e+1, vl))
		ck, err := nn.ReadCheckpoint(path)
		if err != nil {
			t.Fatalf("epoch %d: %v", e, err)
		}
		if ck.Epoch != e+1 || ck.Metadata["seed"] != "5" {
			t.Errorf("%s: %+v, want epoch %d and the seed", path, ck, e+1)
		}
		// A whole model, as Keras' ModelCheckpoint saves: LoadModel
		// loads it, with the model's weights after that epoch.
		loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
		if err != nil {
			t.Fatalf("epoch %d: LoadModel: %v", e, err)
		}
		loaded.Close()
	}
	// The last one resumes: LoadCheckpoint into the model made in code
	// gives its weights and optimizer state back.
	last := filepath.Join(dir, fmt.Sprintf("ck-%02d-%.3f.safetensors", 2, hist.Get("val_loss")[1]))
	other := tinyModel(t, 0.1)
	ck, err := other.LoadCheckpoint(last)
	if err != nil || ck.Epoch != 2 {
		t.Fatalf("LoadCheckpoint of the last save: %+v, %v", ck, err)
	}
	a, _ := m.GetWeights()
	b, _ := other.GetWeights()
	for i := range a {
		if !slices.Equal(a[i].Data().([]float32), b[i].Data().([]float32)) {
			t.Errorf("weight %d differs after LoadCheckpoint", i)
		}
	}
	if m.Optimizer().Iterations() != other.Optimizer().Iterations() {
		t.Errorf("the optimizer's steps: %d after loading, %d saved", other.Optimizer().Iterations(), m.Optimizer().Iterations())
	}

	bad := callbacks.NewModelCheckpoint(filepath.Join(dir, "{val_los}.safetensors"))
	_, err = tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 64, 1), nn.Verbose(0), nn.Callbacks(bad))
	if err == nil || !strings.Contains(err.Error(), "{val_los}") {
		t.Errorf("a filepath naming a missing figure: %v", err)
	}
}

func TestModelCheckpointSaveBestOnly(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 0.1)
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "best.safetensors")
	mc := callbacks.NewModelCheckpoint(path)
	mc.SaveBestOnly, mc.SaveWeightsOnly, mc.Verbose = true, true, 1
	var out bytes.Buffer
	mc.SetModel(m)
	mc.SetParams(nn.Params{Output: &out})
	if err := mc.OnTrainBegin(nn.Logs{}); err != nil {
		t.Fatal(err)
	}
	saves := 0
	for e, loss := range []float64{0.9, 1.2, 0.4} {
		before, _ := os.Stat(path)
		if err := mc.OnEpochEnd(e, nn.Logs{"val_loss": loss}); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(path)
		if err == nil && (before == nil || !os.SameFile(before, after)) {
			saves++
		}
	}
	if saves != 2 {
		t.Errorf("saved %d times, want 2 (epochs 1 and 3)", saves)
	}
	want := "\nEpoch 1: val_loss improved from inf to 0.90000, saving model to " + path + "\n" +
		"\nEpoch 2: val_loss did not improve from 0.90000\n" +
		"\nEpoch 3: val_loss improved from 0.90000 to 0.40000, saving model to " + path + "\n"
	if out.String() != want {
		t.Errorf("messages:\n%q\nwant:\n%q", out.String(), want)
	}
	if err := tinyModel(t, 0.1).LoadWeights(path); err != nil {
		t.Errorf("SaveWeightsOnly should write a weights file: %v", err)
	}
}

// ownMetric is a metric of the user's own: it has no config.
type ownMetric struct{ metrics.Accuracy }

func (ownMetric) Name() string { return "own" }

// A model that cannot be saved whole (a metric without a config) fails
// ModelCheckpoint at the start of Fit, before any epoch trains, and says
// what to do.
func TestModelCheckpointRefusesAnUnsavableModelAtOnce(t *testing.T) {
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(4), layers.Dense(10, layers.Softmax))
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&ownMetric{}}, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	mc := callbacks.NewModelCheckpoint(filepath.Join(t.TempDir(), "m.safetensors"))
	_, err = m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(1), nn.Verbose(0), nn.Callbacks(mc))
	if err == nil || !strings.Contains(err.Error(), "SaveWeightsOnly") {
		t.Fatalf("Fit with an unsavable model: %v", err)
	}
	if m.Optimizer().Iterations() != 0 {
		t.Errorf("%d steps trained before the error", m.Optimizer().Iterations())
	}
}

// A Keras user's "model.h5" checkpoint: a whole-model save there is Keras
// 2's model file, which nn.LoadModel loads; a model.weights.h5 name is
// refused for a whole model before the first step; with SaveWeightsOnly
// the weights go to Keras 2's HDF5 file, which LoadWeights reads back.
func TestModelCheckpointKerasNames(t *testing.T) {
	newModel := func() *nn.Sequential {
		opt, err := optim.NewSGD(optim.SGDConfig{})
		if err != nil {
			t.Fatal(err)
		}
		m := nn.NewSequential(layers.Input(4), layers.Dense(10, layers.Softmax))
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		return m
	}
	dir := t.TempDir()
	m := newModel()
	mc := callbacks.NewModelCheckpoint(filepath.Join(dir, "model.weights.h5"))
	_, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(1), nn.Verbose(0), nn.Callbacks(mc))
	if err == nil || !strings.Contains(err.Error(), "SaveWeightsOnly") {
		t.Fatalf("Fit with a whole-model checkpoint to model.weights.h5: %v", err)
	}
	if m.Optimizer().Iterations() != 0 {
		t.Errorf("%d steps trained before the error", m.Optimizer().Iterations())
	}
	mc = callbacks.NewModelCheckpoint(filepath.Join(dir, "whole.h5"))
	if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(1), nn.Verbose(0), nn.Callbacks(mc)); err != nil {
		t.Fatal(err)
	}
	whole, err := nn.LoadModel(filepath.Join(dir, "whole.h5"))
	if err != nil {
		t.Fatal(err)
	}
	wa, _ := m.GetWeights()
	wb, _ := whole.GetWeights()
	for i := range wa {
		if !slices.Equal(wa[i].Data().([]float32), wb[i].Data().([]float32)) {
			t.Fatalf("weight %d differs after the round trip through whole.h5", i)
		}
	}
	mc = callbacks.NewModelCheckpoint(filepath.Join(dir, "model.h5"))
	mc.SaveWeightsOnly = true
	if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(1), nn.Verbose(0), nn.Callbacks(mc)); err != nil {
		t.Fatal(err)
	}
	other := newModel()
	if err := other.LoadWeights(filepath.Join(dir, "model.h5")); err != nil {
		t.Fatal(err)
	}
	a, _ := m.GetWeights()
	b, _ := other.GetWeights()
	for i := range a {
		if !slices.Equal(a[i].Data().([]float32), b[i].Data().([]float32)) {
			t.Fatalf("weight %d differs after the round trip through model.h5", i)
		}
	}
}

// A whole-model checkpoint to a .keras name is Keras 3's archive, which
// nn.LoadModel loads with the weights of the epoch that wrote it; a model
// that archive cannot hold (Keras 2's hard_sigmoid) fails before the first
// step.
func TestModelCheckpointKerasArchive(t *testing.T) {
	newModel := func(act layers.Activation) *nn.Sequential {
		opt, err := optim.NewSGD(optim.SGDConfig{})
		if err != nil {
			t.Fatal(err)
		}
		m := nn.NewSequential(layers.Input(4), layers.Dense(6, act), layers.Dense(10, layers.Softmax))
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		return m
	}
	dir := t.TempDir()
	m := newModel(layers.ReLU)
	mc := callbacks.NewModelCheckpoint(filepath.Join(dir, "model-{epoch:02d}.keras"))
	if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(2), nn.Verbose(0), nn.Callbacks(mc)); err != nil {
		t.Fatal(err)
	}
	loaded, err := nn.LoadModel(filepath.Join(dir, "model-02.keras"), nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.GetWeights()
	b, _ := loaded.GetWeights()
	if len(a) != len(b) {
		t.Fatalf("%d weights loaded, want %d", len(b), len(a))
	}
	for i := range a {
		if !slices.Equal(a[i].Data().([]float32), b[i].Data().([]float32)) {
			t.Fatalf("weight %d differs after the round trip through model-02.keras", i)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "model-01.keras")); err != nil {
		t.Errorf("the first epoch's archive: %v", err)
	}

	m = newModel(layers.HardSigmoid)
	mc = callbacks.NewModelCheckpoint(filepath.Join(dir, "hard.keras"))
	_, err = m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(1), nn.Verbose(0), nn.Callbacks(mc))
	if err == nil || !strings.Contains(err.Error(), "hard_sigmoid") {
		t.Fatalf("Fit with a .keras checkpoint of a hard_sigmoid model: %v", err)
	}
	if m.Optimizer().Iterations() != 0 {
		t.Errorf("%d steps trained before the error", m.Optimizer().Iterations())
	}
}
