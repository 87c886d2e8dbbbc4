package nn_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// The SHA-256 of each file a fixed model saves: the file formats, byte for
// byte. A change that alters one on purpose (a new format version, a new
// layer argument in the config) updates it here and says so; any other
// change must leave them as they are.
var savedBytes = map[string]string{
	"weights":                 "786cef8e53f9fcd930ecda4d6e0f5404803cb358167bd8da4620d20a788f7d87",
	"checkpoint":              "a3b7f48d13dacafaaf530a8c23e8d6865aa1f545cd85f0057aed4d3e2c410089",
	"model":                   "296899538c6b327e2161b6f22b6a0147997ae050d39688dbefb828ad0c425b7f",
	"model without optimizer": "a830fe433d5c4cadc37959106e70a35639fce0724bbe677285983eb85ec6b2bd",
	"model not compiled":      "b8735d13a32d8c49dc976fac5382620f063073811c6da6b4eaa8f8309844c306",
}

// bytesModel is a fixed model: its weights and, when compiled, an Adam's
// state as after two steps, set value by value so that no kernel's
// rounding enters the files. Unless fixed, it is the same model as made,
// its weights initialised and its optimizer new: what a load fills in.
func bytesModel(t *testing.T, compile, fixed bool) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Input(4), layers.Dense(5, layers.ReLU), layers.Dense(3, layers.Softmax))
	m.SetSeed(11)
	var adam *optim.Adam
	if compile {
		var err error
		if adam, err = optim.NewAdam(optim.AdamConfig{LearningRate: 0.003}); err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(adam, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.CategoricalAccuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	if !fixed {
		return m
	}
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"}
	st := optim.State{Iterations: 2, LearningRate: 0.0025, Slots: map[string]map[string][]float32{"m": {}, "v": {}}}
	for i, w := range ws {
		data := make([]float32, w.Shape().TotalSize())
		m1 := make([]float32, len(data))
		v := make([]float32, len(data))
		for j := range data {
			data[j] = float32((i+1)*(j-7)) / 64
			m1[j] = float32(j-i) / 1024
			v[j] = float32(j*j+i) / 4096
		}
		ws[i] = tensor.New(tensor.WithShape(w.Shape()...), tensor.WithBacking(data))
		st.Slots["m"][names[i]] = m1
		st.Slots["v"][names[i]] = v
	}
	if err := m.SetWeights(ws); err != nil {
		t.Fatal(err)
	}
	if adam != nil {
		if err := adam.SetState(st); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestSavedFilesKeepTheirBytes saves a fixed model's weights, checkpoint
// and whole-model files and compares their SHA-256 with savedBytes; then
// loads each and saves it again, which must give the same bytes: what is
// read is what was written.
func TestSavedFilesKeepTheirBytes(t *testing.T) {
	dir := t.TempDir()
	ck := nn.Checkpoint{Epoch: 3, Step: 2, Metadata: map[string]string{"seed": "11", "note": "bytes"}}
	saves := map[string]func(m *nn.Sequential, path string) error{
		"weights":    func(m *nn.Sequential, p string) error { return m.SaveWeights(p) },
		"checkpoint": func(m *nn.Sequential, p string) error { return m.SaveCheckpoint(p, ck) },
		"model":      func(m *nn.Sequential, p string) error { return m.Save(p) },
		"model without optimizer": func(m *nn.Sequential, p string) error {
			return m.Save(p, nn.IncludeOptimizer(false))
		},
		"model not compiled": func(m *nn.Sequential, p string) error { return m.Save(p) },
	}
	for name, save := range saves {
		t.Run(name, func(t *testing.T) {
			m := bytesModel(t, name != "model not compiled", true)
			path := filepath.Join(dir, name+".safetensors")
			if err := save(m, path); err != nil {
				t.Fatal(err)
			}
			got := fileSHA256(t, path)
			if want := savedBytes[name]; got != want {
				t.Errorf("SHA-256 %s, want %s: the file format changed", got, want)
			}

			// Read it back into a model, and save that again.
			var again *nn.Sequential
			switch name {
			case "weights":
				again = bytesModel(t, true, false)
				if err := again.LoadWeights(path); err != nil {
					t.Fatal(err)
				}
			case "checkpoint":
				again = bytesModel(t, true, false)
				if _, err := again.LoadCheckpoint(path); err != nil {
					t.Fatal(err)
				}
			default:
				var err error
				if again, err = nn.LoadModel(path); err != nil {
					t.Fatal(err)
				}
			}
			path2 := filepath.Join(dir, name+" again.safetensors")
			if err := save(again, path2); err != nil {
				t.Fatal(err)
			}
			if got2 := fileSHA256(t, path2); got2 != got {
				t.Errorf("saved again after loading, SHA-256 %s, want %s", got2, got)
			}
		})
	}
}
