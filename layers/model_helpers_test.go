package layers_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// compileSGD compiles m with plain SGD of the given configuration, the
// loss and no metrics, on the device named dev.
func compileSGD(t *testing.T, m *nn.Model, cfg optim.SGDConfig, loss losses.Loss, dev string) {
	t.Helper()
	sgd, err := optim.NewSGD(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, loss, nil, nn.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
}

// saveAndLoad saves m as file in a temporary folder (its extension picks
// the format: .safetensors is gokeras' own, .keras and .h5 Keras') and
// loads it back on the CPU; the loaded model is closed when the test ends.
func saveAndLoad(t *testing.T, m *nn.Model, file string) *nn.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), file)
	if err := m.Save(path); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	t.Cleanup(func() { loaded.Close() })
	return loaded
}

// checkLoadedPredicts saves m as each of files (saveAndLoad) and checks
// that the loaded model predicts inputs exactly as m does, every output.
// It returns the model loaded from the last file.
func checkLoadedPredicts(t *testing.T, m *nn.Model, inputs data.InputSource, files ...string) *nn.Model {
	t.Helper()
	ctx := context.Background()
	want, err := m.PredictOutputs(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	var loaded *nn.Model
	for _, file := range files {
		loaded = saveAndLoad(t, m, file)
		got, err := loaded.PredictOutputs(ctx, inputs)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: the loaded model has %d outputs, want %d", file, len(got), len(want))
		}
		for o := range want {
			g, w := got[o].Values(), want[o].Values()
			if len(g) != len(w) {
				t.Errorf("%s: output %d: the loaded model predicts %d values, want %d", file, o, len(g), len(w))
				continue
			}
			for i := range w {
				if g[i] != w[i] {
					t.Errorf("%s: output %d, value %d: the loaded model predicts %v, want %v", file, o, i, g[i], w[i])
					break
				}
			}
		}
	}
	return loaded
}
