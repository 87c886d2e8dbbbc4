package nn_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// kerasCNN is Input(6, 6, 3) → Conv2D(4, 3, relu) → BatchNormalization →
// Flatten → Dense(5, relu) → Dense(3, softmax): weights of three kinds,
// two Dense layers to number, a layer without weights between.
func kerasCNN(t testing.TB, seed uint64) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Input(6, 6, 3), layers.Conv2D(4, 3, layers.ReLU), layers.BatchNormalization(),
		layers.Flatten(), layers.Dense(5, layers.ReLU), layers.Dense(3, layers.Softmax))
	m.SetSeed(seed)
	if err := m.Build(6, 6, 3); err != nil {
		t.Fatal(err)
	}
	// Moving statistics other than their initial 0 and 1, so that a loader
	// that skipped them would be caught.
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		if len(w.Shape()) == 1 && w.Shape()[0] == 4 {
			for j := range w.Data().([]float32) {
				w.Data().([]float32)[j] = float32(seed)*0.25 + float32(i) + float32(j)/8
			}
		}
	}
	if err := m.SetWeights(ws); err != nil {
		t.Fatal(err)
	}
	return m
}

func sameWeights(t *testing.T, got, want *nn.Sequential) {
	t.Helper()
	g, w := flatWeights(t, got), flatWeights(t, want)
	if len(g) != len(w) {
		t.Fatalf("%d weight values, want %d", len(g), len(w))
	}
	for i := range w {
		if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
			t.Fatalf("weight value %d is %v, want %v", i, g[i], w[i])
		}
	}
}

// Weights saved in either Keras layout load back into a model made with
// other weights, every value; from a path, a reader and an fs.FS.
func TestKerasWeightsRoundTrip(t *testing.T) {
	for _, name := range []string{"m.weights.h5", "m.h5"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			a := kerasCNN(t, 1)
			if err := a.SaveWeights(path); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(raw, []byte("\x89HDF\r\n\x1a\n")) {
				t.Fatalf("%s is not an HDF5 file: starts %q", name, raw[:8])
			}
			b := kerasCNN(t, 2)
			if slices.Equal(flatWeights(t, a), flatWeights(t, b)) {
				t.Fatal("the two models start with the same weights: the check would prove nothing")
			}
			if err := b.LoadWeights(path); err != nil {
				t.Fatal(err)
			}
			sameWeights(t, b, a)
			c := kerasCNN(t, 3)
			if err := c.LoadWeightsFrom(bytes.NewReader(raw)); err != nil {
				t.Fatal(err)
			}
			sameWeights(t, c, a)
			d := kerasCNN(t, 4)
			if err := d.LoadWeightsFS(fstest.MapFS{name: {Data: raw}}, name); err != nil {
				t.Fatal(err)
			}
			sameWeights(t, d, a)
		})
	}
}

// A Keras file for another model is refused, naming what does not match,
// and the model keeps its weights.
func TestKerasWeightsOfAnotherModel(t *testing.T) {
	dir := t.TempDir()
	other := nn.NewSequential(layers.Input(6, 6, 3), layers.Conv2D(4, 3), layers.Flatten(), layers.Dense(3))
	if err := other.Build(6, 6, 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"o.weights.h5", "no tensor"},    // batch_normalization's variables missing
		{"o.h5", "weights for 2 layers"}, // conv2d and dense; the model has 4 layers with weights
	} {
		path := filepath.Join(dir, tc.name)
		if err := other.SaveWeights(path); err != nil {
			t.Fatal(err)
		}
		m := kerasCNN(t, 1)
		before := flatWeights(t, m)
		err := m.LoadWeights(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
		if !slices.Equal(flatWeights(t, m), before) {
			t.Errorf("%s: a refused file changed the weights", tc.name)
		}
	}
	// A Keras file is weights only: LoadModel says so.
	path := filepath.Join(dir, "o.weights.h5")
	if _, err := nn.LoadModel(path); err == nil || !strings.Contains(err.Error(), "Keras weights file, without the model's config") {
		t.Errorf("LoadModel of a Keras weights file: error %v, want one naming the kind of file", err)
	}
}

// h5pyPython returns a python3 that imports h5py and numpy, or skips (CI
// installs python3-h5py: .ci/run).
func h5pyPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import h5py, numpy").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with h5py and numpy (apt-get install python3-h5py)")
	return ""
}

func runPython(t *testing.T, py, script string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(py, append([]string{"-c", script}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return out
}

// h5py finds in the files gokeras writes the groups, attributes and values
// Keras' own loaders look for.
func TestH5pyReadsKerasWeights(t *testing.T) {
	py := h5pyPython(t)
	dir := t.TempDir()
	m := kerasCNN(t, 1)
	want := map[string][]float32{}
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		want[[]string{"conv2d/kernel", "conv2d/bias", "batch_normalization/gamma", "batch_normalization/beta",
			"batch_normalization/moving_mean", "batch_normalization/moving_variance", "dense/kernel", "dense/bias",
			"dense_1/kernel", "dense_1/bias"}[i]] = w.Data().([]float32)
	}
	const dump = `
import h5py, json, sys
out = {}
with h5py.File(sys.argv[1], "r") as f:
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out[name] = {"shape": list(obj.shape), "values": [float(v) for v in obj[()].reshape(-1)]}
    f.visititems(visit)
    attrs = {}
    for where in [f] + [f[k] for k in f.keys() if isinstance(f[k], h5py.Group)]:
        for k, v in where.attrs.items():
            attrs[(where.name + "@" + k)] = [x.decode() for x in v] if hasattr(v, "__len__") and not isinstance(v, (str, bytes)) else (v.decode() if isinstance(v, bytes) else str(v))
    out["@attrs"] = attrs
print(json.dumps(out))
`
	type dataset struct {
		Shape  []int     `json:"shape"`
		Values []float32 `json:"values"`
	}
	read := func(path string) (map[string]dataset, map[string]any) {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(runPython(t, py, dump, path), &raw); err != nil {
			t.Fatal(err)
		}
		var attrs map[string]any
		if err := json.Unmarshal(raw["@attrs"], &attrs); err != nil {
			t.Fatal(err)
		}
		delete(raw, "@attrs")
		ds := map[string]dataset{}
		for k, v := range raw {
			var d dataset
			if err := json.Unmarshal(v, &d); err != nil {
				t.Fatal(err)
			}
			ds[k] = d
		}
		return ds, attrs
	}
	check := func(file string, places map[string]string) {
		t.Helper()
		path := filepath.Join(dir, file)
		if err := m.SaveWeights(path); err != nil {
			t.Fatal(err)
		}
		ds, attrs := read(path)
		if len(ds) != len(places) {
			t.Errorf("%s: h5py finds %d datasets, want %d: %v", file, len(ds), len(places), slices.Sorted(maps.Keys(ds)))
		}
		for place, weight := range places {
			d, ok := ds[place]
			if !ok {
				t.Errorf("%s: no dataset %s (for %s); h5py finds %v", file, place, weight, slices.Sorted(maps.Keys(ds)))
				continue
			}
			if !slices.Equal(d.Values, want[weight]) {
				t.Errorf("%s: %s holds %v, want %s's %v", file, place, d.Values, weight, want[weight])
			}
		}
		t.Logf("%s attributes: %v", file, attrs)
		if file == "k2.h5" {
			names, _ := attrs["/@layer_names"].([]any)
			if len(names) != 5 || names[0] != "conv2d" || names[2] != "flatten" {
				t.Errorf("k2.h5: layer_names %v, want the 5 layers in order", attrs["/@layer_names"])
			}
			wn, _ := attrs["/batch_normalization@weight_names"].([]any)
			if len(wn) != 4 || wn[2] != "batch_normalization/moving_mean:0" {
				t.Errorf("k2.h5: batch_normalization's weight_names %v", attrs["/batch_normalization@weight_names"])
			}
		}
	}
	check("k3.weights.h5", map[string]string{
		"layers/conv2d/vars/0": "conv2d/kernel", "layers/conv2d/vars/1": "conv2d/bias",
		"layers/batch_normalization/vars/0": "batch_normalization/gamma", "layers/batch_normalization/vars/1": "batch_normalization/beta",
		"layers/batch_normalization/vars/2": "batch_normalization/moving_mean", "layers/batch_normalization/vars/3": "batch_normalization/moving_variance",
		"layers/dense/vars/0": "dense/kernel", "layers/dense/vars/1": "dense/bias",
		"layers/dense_1/vars/0": "dense_1/kernel", "layers/dense_1/vars/1": "dense_1/bias",
	})
	check("k2.h5", map[string]string{
		"conv2d/conv2d/kernel:0": "conv2d/kernel", "conv2d/conv2d/bias:0": "conv2d/bias",
		"batch_normalization/batch_normalization/gamma:0":           "batch_normalization/gamma",
		"batch_normalization/batch_normalization/beta:0":            "batch_normalization/beta",
		"batch_normalization/batch_normalization/moving_mean:0":     "batch_normalization/moving_mean",
		"batch_normalization/batch_normalization/moving_variance:0": "batch_normalization/moving_variance",
		"dense/dense/kernel:0":                                      "dense/kernel", "dense/dense/bias:0": "dense/bias",
		"dense_1/dense_1/kernel:0": "dense_1/kernel", "dense_1/dense_1/bias:0": "dense_1/bias",
	})
}

// Files h5py writes in Keras' layouts, as Keras' savers lay them out (not
// by gokeras' writer): Keras 3's with the optimizer's variables, metadata
// attributes and gzip-compressed chunked datasets; Keras 2's whole-model
// file, its weights under model_weights, a layer without weights listed,
// weight names that are not the layer's own. gokeras loads their values.
func TestLoadWeightsOfFilesInKerasLayouts(t *testing.T) {
	py := h5pyPython(t)
	dir := t.TempDir()
	m := kerasCNN(t, 1)
	want := flatWeights(t, m)
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	shapes := `[[3,3,3,4],[4],[4],[4],[4],[4],[64,5],[5],[5,3],[3]]`
	const write = `
import h5py, json, sys
import numpy as np
values = np.array(json.loads(sys.argv[2]), dtype=np.float32)
shapes = json.loads(sys.argv[3])
arrays, at = [], 0
for s in shapes:
    n = int(np.prod(s))
    arrays.append(values[at:at + n].reshape(s))
    at += n
layers = [("conv2d", "conv2d", ["kernel", "bias"], arrays[0:2]),
          ("batch_normalization", "batch_normalization", ["gamma", "beta", "moving_mean", "moving_variance"], arrays[2:6]),
          ("dense", "dense", ["kernel", "bias"], arrays[6:8]),
          ("dense_1", "dense_1", ["kernel", "bias"], arrays[8:10])]
if sys.argv[4] == "3":
    with h5py.File(sys.argv[1], "w") as f:
        f.create_group("vars").attrs["name"] = "sequential"
        for group, _, _, arrs in layers:
            v = f.create_group("layers/" + group).create_group("vars")
            v.attrs["name"] = group
            for i, a in enumerate(arrs):
                v.create_dataset(str(i), data=a, chunks=True, compression="gzip")
        f.create_group("layers/flatten/vars")
        opt = f.create_group("optimizer").create_group("vars")
        opt.create_dataset("0", data=np.int64(7))
        opt.create_dataset("1", data=np.zeros((3, 3, 3, 4), np.float32))
else:
    with h5py.File(sys.argv[1], "w") as f:
        f.attrs["keras_version"] = b"2.12.0"
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps({"class_name": "Sequential"}).encode()
        g = f.create_group("model_weights")
        names = ["conv2d_7", "batch_normalization_2", "flatten", "dense_3", "dense_4"]
        g.attrs["layer_names"] = np.array([n.encode() for n in names])
        g.attrs["backend"] = b"tensorflow"
        g.create_group("flatten").attrs["weight_names"] = np.array([])  # Keras 2 writes an empty list as float64
        for (_, _, ws, arrs), name in zip(layers, [n for n in names if n != "flatten"]):
            lg = g.create_group(name)
            lg.attrs["weight_names"] = np.array([(name + "/" + w + ":0").encode() for w in ws])
            for w, a in zip(ws, arrs):
                lg.create_dataset(name + "/" + w + ":0", data=a)
        f.create_group("optimizer_weights")
`
	for _, layout := range []string{"3", "2"} {
		path := filepath.Join(dir, "keras"+layout+".h5")
		runPython(t, py, write, path, string(wantJSON), shapes, layout)
		got := kerasCNN(t, 5)
		if err := got.LoadWeights(path); err != nil {
			t.Fatalf("Keras %s layout: %v", layout, err)
		}
		if g := flatWeights(t, got); !slices.Equal(g, want) {
			t.Errorf("Keras %s layout: loaded weights differ from what h5py wrote", layout)
		}
	}
}

// A .keras archive Keras 3.15 wrote (testdata/keras/README.md): its weights
// load into the same layers made in Go, and the model then computes what
// the weights give by hand.
func TestLoadWeightsOfAKerasArchive(t *testing.T) {
	path := filepath.Join("testdata", "keras", "pre_pr22362_nested_container.keras")
	m := nn.NewSequential(layers.Input(4), layers.Dense(4, layers.WithoutBias()), layers.Dense(4, layers.WithoutBias()),
		layers.Dense(4, layers.WithoutBias()), layers.Dense(2))
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	if err := m.LoadWeights(path); err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	fills := []float32{0.1, 0.2, 0.3, 0.5, 0}
	for i, w := range ws {
		for j, v := range w.Data().([]float32) {
			if v != fills[i] {
				t.Fatalf("weight %d value %d is %v, want %v as Keras wrote it", i, j, v, fills[i])
			}
		}
	}
	// x = (1, 2, 3, 4): each layer sums its inputs times its fill:
	// 0.1·10 = 1, then 0.2·4·1 = 0.8, 0.3·4·0.8 = 0.96, 0.5·4·0.96 = 1.92.
	x, err := data.TensorInputs(tensor.New(tensor.WithShape(1, 4), tensor.WithBacking([]float32{1, 2, 3, 4})))
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range p.Values() {
		if math.Abs(float64(v)-1.92) > 1e-6 {
			t.Errorf("prediction %d is %v, want 1.92", i, v)
		}
	}
	// Damaged archives are refused with what is wrong, not a panic.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"truncated":  raw[:len(raw)/2],
		"no weights": zipOf(t, map[string]string{"config.json": "{}", "metadata.json": "{}"}),
	} {
		m2 := nn.NewSequential(layers.Input(4), layers.Dense(2))
		if err := m2.Build(4); err != nil {
			t.Fatal(err)
		}
		if err := m2.LoadWeightsFrom(bytes.NewReader(bad)); err == nil {
			t.Errorf("%s archive: loaded", name)
		} else {
			t.Logf("%s archive: %v", name, err)
		}
	}
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzKerasWeights feeds LoadWeightsFrom and LoadModelFrom damaged Keras
// files (HDF5 weights in both layouts, Keras 2 model files, .keras
// archives): never a panic; a refused file leaves the weights as they were,
// an accepted one gives finite weights.
func FuzzKerasWeights(f *testing.F) {
	newModel := func(t testing.TB) *nn.Sequential {
		m := nn.NewSequential(layers.Input(4), layers.Dense(4, layers.WithoutBias()), layers.Dense(4, layers.WithoutBias()),
			layers.Dense(4, layers.WithoutBias()), layers.Dense(2))
		if err := m.Build(4); err != nil {
			t.Fatal(err)
		}
		return m
	}
	seed := newModel(f)
	dir := f.TempDir()
	for _, name := range []string{"s.weights.h5", "s.h5"} {
		path := filepath.Join(dir, name)
		if err := seed.SaveWeights(path); err != nil {
			f.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "keras", "pre_pr22362_nested_container.keras"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	// Whole Keras models: a Keras 2 .h5 model file and a .keras archive,
	// which LoadModelFrom reads.
	cnn := kerasCNN(f, 1)
	layersJSON := keras2LayerConfigs(`"data_format": "channels_last", `)
	for name, config := range map[string]string{"m.h5": keras2ModelConfig(layersJSON), "m.keras": keras3Config(f, layersJSON)} {
		raw, err := os.ReadFile(kerasFileOf(f, cnn, name, config))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	m := newModel(f)
	f.Fuzz(func(t *testing.T, file []byte) {
		if loaded, err := nn.LoadModelFrom(bytes.NewReader(file)); err == nil {
			for i, v := range flatWeights(t, loaded) {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("LoadModelFrom accepted a file with weight value %d = %v", i, v)
				}
			}
		}
		before := flatWeights(t, m)
		if err := m.LoadWeightsFrom(bytes.NewReader(file)); err != nil {
			if !slices.Equal(flatWeights(t, m), before) {
				t.Fatalf("a refused file (%v) changed the weights", err)
			}
			return
		}
		for i, v := range flatWeights(t, m) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("an accepted file gave weight value %d = %v", i, v)
			}
		}
	})
}

// Save writes gokeras' format or, for a .keras name, Keras 3's archive,
// for a .h5 name Keras 2's model file: it refuses Keras 3's name of a
// weights file, writing nothing, rather than give Keras users a file that
// is not what its name says.
func TestSaveRefusesKerasNames(t *testing.T) {
	m := kerasCNN(t, 1)
	dir := t.TempDir()
	for _, name := range []string{"m.weights.h5", "M.WEIGHTS.H5"} {
		path := filepath.Join(dir, name)
		err := m.Save(path)
		if err == nil || !strings.Contains(err.Error(), "SaveWeights") {
			t.Errorf("Save(%s): error %v, want one pointing to SaveWeights", name, err)
		}
		if _, serr := os.Stat(path); !os.IsNotExist(serr) {
			t.Errorf("Save(%s) wrote a file", name)
		}
	}
	if err := m.Save(filepath.Join(dir, "m.safetensors")); err != nil {
		t.Error(err)
	}
}

// Keras keeps Normalization's count as an int64 scalar; gokeras as a
// float32 vector of one: a Keras 3 file of a model with one loads.
func TestLoadWeightsOfANormalizationKerasWrote(t *testing.T) {
	py := h5pyPython(t)
	path := filepath.Join(t.TempDir(), "n.weights.h5")
	runPython(t, py, `
import h5py, sys
import numpy as np
with h5py.File(sys.argv[1], "w") as f:
    v = f.create_group("layers/normalization/vars")
    v.create_dataset("0", data=np.array([1, 2, 3], np.float32))
    v.create_dataset("1", data=np.array([4, 5, 6], np.float32))
    v.create_dataset("2", data=np.int64(40))
    d = f.create_group("layers/dense/vars")
    d.create_dataset("0", data=np.arange(6, dtype=np.float32).reshape(3, 2))
    d.create_dataset("1", data=np.array([0.5, -0.5], np.float32))
`, path)
	m := nn.NewSequential(layers.Input(3), layers.Normalization(), layers.Dense(2))
	if err := m.Build(3); err != nil {
		t.Fatal(err)
	}
	if err := m.LoadWeights(path); err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 3, 4, 5, 6, 40, 0, 1, 2, 3, 4, 5, 0.5, -0.5}
	if got := flatWeights(t, m); !slices.Equal(got, want) {
		t.Errorf("weights %v, want %v", got, want)
	}
}
