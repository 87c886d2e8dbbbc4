package nn_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// A model TensorFlow.js 4.22 saved (testdata/tfjs) loads with LoadModel and
// predicts what TensorFlow.js predicted.
func TestLoadModelOfATensorFlowJSModel(t *testing.T) {
	dir := filepath.Join("testdata", "tfjs")
	raw, err := os.ReadFile(filepath.Join(dir, "predictions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Shape   []int     `json:"shape"`
		Inputs  []float32 `json:"inputs"`
		Outputs []float64 `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{dir, filepath.Join(dir, "model.json")} {
		m, err := nn.LoadModel(where)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, l := range m.Layers() {
			types = append(types, l.Type()+":"+l.Name())
		}
		if got := strings.Join(types, " "); got != "Conv2D:conv BatchNormalization:bn MaxPooling2D:pool Flatten:flat Dense:hidden Dense:probs" {
			t.Errorf("%s: layers %s", where, got)
		}
		if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		x, err := data.TensorInputs(tensor.New(tensor.WithShape(want.Shape...), tensor.WithBacking(append([]float32(nil), want.Inputs...))))
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Values()
		if len(got) != len(want.Outputs) {
			t.Fatalf("%d predictions, TensorFlow.js made %d", len(got), len(want.Outputs))
		}
		for i, v := range got {
			if math.Abs(float64(v)-want.Outputs[i]) > 1e-5*math.Max(1, math.Abs(want.Outputs[i])) {
				t.Errorf("%s: prediction %d is %v, TensorFlow.js predicted %v", where, i, v, want.Outputs[i])
			}
		}
	}
}

// What export/tfjs writes, LoadModel and LoadModelFS read back: the same
// layers and weights. A missing or short shard is refused, naming it.
func TestLoadModelOfATensorFlowJSExport(t *testing.T) {
	want := kerasCNN(t, 1)
	parent := t.TempDir()
	dir := filepath.Join(parent, "cnn.tfjs")
	if err := tfjs.Export(want, dir); err != nil {
		t.Fatal(err)
	}
	got, err := nn.LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameWeights(t, got, want)
	fromFS, err := nn.LoadModelFS(os.DirFS(parent), "cnn.tfjs")
	if err != nil {
		t.Fatal(err)
	}
	sameWeights(t, fromFS, want)
	shards, _ := filepath.Glob(filepath.Join(dir, "group1-shard*.bin"))
	if len(shards) != 1 {
		t.Fatalf("shards %v", shards)
	}
	shard, err := os.ReadFile(shards[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shards[0], shard[:len(shard)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.LoadModel(dir); err == nil || !strings.Contains(err.Error(), "a shard is missing or damaged") {
		t.Errorf("a short shard: error %v", err)
	}
	if err := os.Remove(shards[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.LoadModel(dir); err == nil || !strings.Contains(err.Error(), filepath.Base(shards[0])) {
		t.Errorf("a missing shard: error %v, want one naming it", err)
	}
}

// A Keras model.to_json() file given to LoadModel is refused, pointing to
// ModelFromJSON.
func TestLoadModelOfKerasJSONPointsToModelFromJSON(t *testing.T) {
	_, err := nn.LoadModel(filepath.Join("testdata", "keras", "jetTagger_Conv2D_Small.json"))
	if err == nil || !strings.Contains(err.Error(), "nn.ModelFromJSON") {
		t.Errorf("error %v, want one pointing to nn.ModelFromJSON", err)
	}
}
