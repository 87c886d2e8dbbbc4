package nn_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gokeras/gokeras/nn"
)

// A model written to a writer is the file Save writes, byte for byte, and
// reads back from a reader or from a file system (an embed.FS in a
// program) as LoadModel reads the file: the same predictions, the same
// training to come.
func TestSaveToAndLoadModelFromStreams(t *testing.T) {
	m := twoByTwo(t)
	compileTwoByTwo(t, m)
	defer m.Close()
	ds, _, _, _, _ := twoByTwoData(t, 32, 5)
	ctx := context.Background()
	if _, err := m.Fit(ctx, ds, nn.Epochs(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.SaveTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, buf.Bytes()) {
		t.Fatalf("SaveTo wrote %d bytes, Save %d, not the same", buf.Len(), len(onDisk))
	}
	want, err := m.PredictOutputs(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"models/m.safetensors": {Data: buf.Bytes()}}
	for name, load := range map[string]func() (*nn.Model, error){
		"reader": func() (*nn.Model, error) {
			return nn.LoadModelFrom(bytes.NewReader(buf.Bytes()), nn.CompileOptions(nn.OnDevice("/CPU:0")))
		},
		"fs": func() (*nn.Model, error) {
			return nn.LoadModelFS(fsys, "models/m.safetensors", nn.CompileOptions(nn.OnDevice("/CPU:0")))
		},
	} {
		loaded, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := loaded.PredictOutputs(ctx, ds)
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if !slices.Equal(got[k].Values(), want[k].Values()) {
				t.Errorf("%s: output %d predicts otherwise than the saved model", name, k)
			}
		}
		loaded.Close()
	}
	// Weights alone, both ways.
	var wbuf bytes.Buffer
	if err := m.SaveWeightsTo(&wbuf); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func(*nn.Model) error{
		"reader": func(o *nn.Model) error { return o.LoadWeightsFrom(bytes.NewReader(wbuf.Bytes())) },
		"fs": func(o *nn.Model) error {
			return o.LoadWeightsFS(fstest.MapFS{"w.safetensors": {Data: wbuf.Bytes()}}, "w.safetensors")
		},
	} {
		other := twoByTwo(t)
		other.SetSeed(77)
		compileTwoByTwo(t, other)
		if err := load(other); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(weightsOf(t, other), weightsOf(t, m)) {
			t.Errorf("%s: other weights after loading", name)
		}
		other.Close()
	}
}

// A damaged stream or a missing embedded file is an error naming it, and
// loads nothing.
func TestLoadFromStreamsErrors(t *testing.T) {
	m := twoByTwo(t)
	compileTwoByTwo(t, m)
	defer m.Close()
	var buf bytes.Buffer
	if err := m.SaveTo(&buf); err != nil {
		t.Fatal(err)
	}
	half := buf.Bytes()[:buf.Len()/2]
	for _, c := range []struct {
		name string
		load func() error
		want []string
	}{
		{"a truncated stream", func() error {
			_, err := nn.LoadModelFrom(bytes.NewReader(half))
			return err
		}, []string{"load model: the model read"}},
		{"a missing file", func() error {
			_, err := nn.LoadModelFS(fstest.MapFS{}, "model.safetensors")
			return err
		}, []string{"model.safetensors"}},
		{"a directory", func() error {
			_, err := nn.LoadModelFS(fstest.MapFS{"d/x": {Data: []byte("x")}}, "d")
			return err
		}, []string{"d is not a regular file"}},
		{"weights of a truncated stream", func() error { return m.LoadWeightsFrom(bytes.NewReader(half)) }, []string{"load weights: the weights read"}},
		{"no reader", func() error { _, err := nn.LoadModelFrom(nil); return err }, []string{"no reader given"}},
	} {
		err := c.load()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error does not say %q:\n%v", c.name, w, err)
			}
		}
	}
}
