package nn

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/hdf5"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// kerasArchiveModels are Sequential models of the layers a .keras archive
// holds, beside functionalModels' graphs.
var kerasArchiveModels = []struct {
	name  string
	shape []int
	make  func(t *testing.T) *Sequential
}{
	{"dense, dropout, batch normalization, a regularizer", []int{6}, func(t *testing.T) *Sequential {
		return NewSequential(layers.Input(6), layers.Dense(8, layers.ReLU, layers.KernelRegularizer(layers.L2(0.01))),
			layers.Dropout(0.25), layers.BatchNormalization(layers.Momentum(0.9), layers.Epsilon(0.01)),
			layers.Dense(3, layers.Softmax))
	}},
	{"convolutions and pooling", []int{8, 8, 2}, func(t *testing.T) *Sequential {
		return NewSequential(layers.Input(8, 8, 2), layers.Conv2D(3, 3, layers.Padding("same"), layers.ReLU),
			layers.BatchNormalization(), layers.MaxPooling2D(), layers.Conv2D(4, 2, layers.Strides(2, 2)),
			layers.AveragePooling2D(layers.PoolSize(2, 2), layers.Padding("same")), layers.Flatten(),
			layers.Dense(3, layers.Softmax))
	}},
	{"activation layers", []int{5}, func(t *testing.T) *Sequential {
		return NewSequential(layers.Input(5), layers.Dense(6), layers.NewLeakyReLU(0.3), layers.Dense(6, layers.Swish),
			layers.NewELU(0.5), layers.NewActivation(layers.GELU), layers.Dense(3, layers.Softmax))
	}},
	{"recurrent layers", []int{4, 3}, func(t *testing.T) *Sequential {
		return NewSequential(layers.Input(4, 3), layers.SimpleRNN(5, layers.ReturnSequences()),
			layers.LSTM(4, layers.ReturnSequences()), layers.GRU(3), layers.Dense(3, layers.Softmax))
	}},
}

// TestKerasArchiveRoundTrip saves trained models, Sequential and
// functional, to .keras archives and loads them back with LoadModel: the
// same layers and compile settings, the same weights bit for bit, the same
// predictions and evaluation, and Adam's state, so that one more epoch
// trains both the same, bit for bit (given the seed, which Keras models do
// not have).
func TestKerasArchiveRoundTrip(t *testing.T) {
	type model struct {
		name  string
		shape []int
		make  func(t *testing.T) *Sequential
	}
	var all []model
	for _, c := range kerasArchiveModels {
		all = append(all, model(c))
	}
	for _, c := range functionalModels {
		all = append(all, model{"functional: " + c.name, c.shape, c.make})
	}
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			m := c.make(t)
			m.SetSeed(9)
			opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ds := saveData(t, 24, c.shape, 0, 3, false, 4)
			fitOnce(t, m, ds)

			path := filepath.Join(t.TempDir(), "model.keras")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			if (loaded.graph == nil) != (m.graph == nil) {
				t.Fatalf("saved a functional model %v, loaded one %v", m.graph != nil, loaded.graph != nil)
			}
			if got, want := summaryOf(t, loaded), summaryOf(t, m); got != want {
				t.Errorf("the loaded model's summary is\n%s\nthe saved one's\n%s", got, want)
			}
			checkSameModel(t, m, loaded, ds)

			// Loaded and saved again, the model writes the same config.
			var a, b bytes.Buffer
			if err := m.SaveKeras(&a); err != nil {
				t.Fatal(err)
			}
			if err := loaded.SaveKeras(&b); err != nil {
				t.Fatal(err)
			}
			if ca, cb := archiveMember(t, a.Bytes(), kerasArchiveConfig), archiveMember(t, b.Bytes(), kerasArchiveConfig); !bytes.Equal(ca, cb) {
				t.Errorf("saved again, the loaded model's config.json is\n%s\nthe saved one's\n%s", cb, ca)
			}
			// And from a reader, as LoadModelFrom reads a model received.
			fromReader, err := LoadModelFrom(bytes.NewReader(a.Bytes()), LoadCompiled(false))
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(allWeights(t, fromReader), allWeights(t, m)) {
				t.Error("LoadModelFrom of SaveKeras' archive has other weights")
			}
			loaded.SetSeed(9)
			checkTrainsOn(t, m, loaded, ds)
		})
	}
}

// An uncompiled model's archive has no compile_config, and loads
// uncompiled.
func TestKerasArchiveUncompiled(t *testing.T) {
	m := kerasArchiveModels[0].make(t)
	if err := m.Build(6); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.SaveKeras(&buf); err != nil {
		t.Fatal(err)
	}
	var config map[string]any
	if err := json.Unmarshal(archiveMember(t, buf.Bytes(), kerasArchiveConfig), &config); err != nil {
		t.Fatal(err)
	}
	if _, ok := config["compile_config"]; ok {
		t.Error("an uncompiled model's config.json has a compile_config")
	}
	loaded, err := LoadModelFrom(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.compiled != nil {
		t.Error("the model loaded from an uncompiled model's archive is compiled")
	}
	if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
		t.Error("the loaded model has other weights")
	}
}

// archiveMember reads a member of a zip archive.
func archiveMember(t *testing.T, archive []byte, name string) []byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := z.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keysOf is the sorted keys of a JSON object.
func keysOf(v any) []string {
	obj, _ := v.(map[string]any)
	var keys []string
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestKerasArchiveLayoutAsKerasWrites compares the archive SaveKeras
// writes of the FlowNet fixture's architecture (a Sequential of Dense,
// Dropout and LeakyReLU layers, compiled with Adam and mse) with the
// archive Keras 3.9.2 wrote of it: the same members in the same order,
// stored; the same keys in metadata.json, at the top of config.json, in
// its config, in each layer's entry and config, and in compile_config.
func TestKerasArchiveLayoutAsKerasWrites(t *testing.T) {
	keras, err := os.ReadFile(filepath.Join("testdata", "keras", "flownet_final_model.keras"))
	if err != nil {
		t.Fatal(err)
	}
	m := NewSequential(layers.Input(2), layers.Dense(128, layers.ReLU), layers.Dropout(0.2), layers.Dense(64),
		layers.NewLeakyReLU(0.2), layers.Dense(32), layers.NewLeakyReLU(0.2), layers.Dense(2))
	opt, err := optim.NewAdam(optim.AdamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer func(now func() time.Time) { kerasNow = now }(kerasNow)
	kerasNow = func() time.Time { return time.Date(2025, 5, 19, 18, 57, 43, 0, time.UTC) }
	var buf bytes.Buffer
	if err := m.SaveKeras(&buf); err != nil {
		t.Fatal(err)
	}
	ours := buf.Bytes()

	members := func(archive []byte) (names []string) {
		z, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range z.File {
			if f.Method != zip.Store {
				t.Errorf("member %s is compressed (method %d); Keras stores its members", f.Name, f.Method)
			}
			names = append(names, f.Name)
		}
		return names
	}
	if got, want := members(ours), members(keras); !slices.Equal(got, want) {
		t.Errorf("members %v, want Keras' %v", got, want)
	}
	decode := func(b []byte) map[string]any {
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := string(archiveMember(t, ours, kerasArchiveMetadata)); got != `{"date_saved":"2025-05-19@18:57:43","keras_version":"3.9.2"}` {
		t.Errorf("metadata.json is %s", got)
	}
	same := func(what string, got, want any) {
		t.Helper()
		if g, w := keysOf(got), keysOf(want); !slices.Equal(g, w) {
			t.Errorf("%s has keys %v, Keras' %v", what, g, w)
		}
	}
	same("metadata.json", decode(archiveMember(t, ours, kerasArchiveMetadata)), decode(archiveMember(t, keras, kerasArchiveMetadata)))
	got, want := decode(archiveMember(t, ours, kerasArchiveConfig)), decode(archiveMember(t, keras, kerasArchiveConfig))
	same("config.json", got, want)
	same("config.json's config", got["config"], want["config"])
	for _, k := range []string{"module", "class_name", "registered_name"} {
		if got[k] != want[k] {
			t.Errorf("config.json's %s is %v, Keras' %v", k, got[k], want[k])
		}
	}
	gl, wl := got["config"].(map[string]any)["layers"].([]any), want["config"].(map[string]any)["layers"].([]any)
	if len(gl) != len(wl) {
		t.Fatalf("%d layers, Keras' %d", len(gl), len(wl))
	}
	for i := range wl {
		g, w := gl[i].(map[string]any), wl[i].(map[string]any)
		what := "layer " + jsonOf(w["class_name"])
		same(what, g, w)
		same(what+"'s config", g["config"], w["config"])
		for _, k := range []string{"module", "class_name", "build_config"} {
			if !sameJSON(g[k], w[k]) {
				t.Errorf("%s's %s is %s, Keras' %s", what, k, jsonOf(g[k]), jsonOf(w[k]))
			}
		}
		gc, wc := g["config"].(map[string]any), w["config"].(map[string]any)
		for _, k := range []string{"name", "units", "activation", "use_bias", "rate", "negative_slope", "batch_shape", "dtype"} {
			if !sameJSON(gc[k], wc[k]) && k != "dtype" {
				t.Errorf("%s's %s is %s, Keras' %s", what, k, jsonOf(gc[k]), jsonOf(wc[k]))
			}
		}
		if i > 0 {
			// Keras numbers the policy objects its layers share
			// (shared_object_id); each layer here has its own.
			wd := maps.Clone(wc["dtype"].(map[string]any))
			delete(wd, "shared_object_id")
			same(what+"'s dtype", gc["dtype"], wd)
		}
		if k, ok := wc["kernel_initializer"]; ok {
			same(what+"'s kernel_initializer", gc["kernel_initializer"], k)
		}
	}
	gcc, wcc := got["compile_config"].(map[string]any), want["compile_config"].(map[string]any)
	same("compile_config", gcc, wcc)
	same("compile_config's optimizer", gcc["optimizer"], wcc["optimizer"])
	same("compile_config's optimizer's config", gcc["optimizer"].(map[string]any)["config"], wcc["optimizer"].(map[string]any)["config"])
}

// plainLayer is a layer without a config: a layer of another package.
type plainLayer struct{ layers.Layer }

// SaveKeras refuses, naming the layer and its class, what Keras 3 cannot
// hold as gokeras computes it, and Save then writes nothing.
func TestSaveKerasRefuses(t *testing.T) {
	keras3, both := []string{"m.keras"}, []string{"m.keras", "m.h5"}
	cases := []struct {
		name  string
		files []string // the names that refuse it
		make  func(t *testing.T) *Sequential
		save  []SaveOption
		want  []string
	}{
		{"Keras 2's hard_sigmoid", keras3, func(t *testing.T) *Sequential {
			return NewSequential(layers.Input(3), layers.Dense(2, layers.HardSigmoid, layers.Named("gate")))
		}, nil, []string{`"gate"`, "Dense", "hard_sigmoid"}},
		{"an LSTM's hard_sigmoid", keras3, func(t *testing.T) *Sequential {
			return NewSequential(layers.Input(2, 3), layers.LSTM(2, layers.RecurrentActivation(layers.HardSigmoid)))
		}, nil, []string{`"lstm"`, "LSTM", "recurrent_activation", "hard_sigmoid"}},
		{"gelu's tanh form", both, func(t *testing.T) *Sequential {
			return NewSequential(layers.Input(3), layers.NewActivation(layers.GELUApproximate, layers.Named("act")))
		}, nil, []string{`"act"`, "Activation", "gelu_approximate"}},
		{"a layer without a config", both, func(t *testing.T) *Sequential {
			return NewSequential(layers.Input(3), &plainLayer{layers.Dense(2, layers.Named("mine"))})
		}, nil, []string{`"mine"`, "no Keras config"}},
		{"a checkpoint", both, func(t *testing.T) *Sequential {
			return NewSequential(layers.Input(3), layers.Dense(2))
		}, []SaveOption{AtCheckpoint(Checkpoint{Epoch: 1})}, []string{"AtCheckpoint", ".safetensors"}},
	}
	for _, c := range cases {
		for _, file := range c.files {
			t.Run(c.name+" "+file, func(t *testing.T) {
				m := c.make(t)
				path := filepath.Join(t.TempDir(), file)
				err := m.Save(path, c.save...)
				if err == nil {
					t.Fatal("saved")
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %s", err, w)
					}
				}
				if _, serr := os.Stat(path); !os.IsNotExist(serr) {
					t.Error("a refused model left a file")
				}
			})
		}
	}
	// Keras 2 computes hard_sigmoid as gokeras does: its file holds it.
	m := NewSequential(layers.Input(3), layers.Dense(2, layers.HardSigmoid))
	if err := m.Build(3); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveKerasH5(io.Discard); err != nil {
		t.Errorf("a hard_sigmoid model to Keras 2's file: %v", err)
	}
}

// TestKerasArchiveInH5py writes archives of every model of the round-trip
// test and has scripts/check-keras-archive.py compare them, read with
// h5py, with the archive Keras 3.9.2 wrote (testdata/keras): members,
// metadata.json, config.json's keys and nesting, and model.weights.h5's
// groups, names and variable shapes.
func TestKerasArchiveInH5py(t *testing.T) {
	py := h5pyPython3(t)
	dir := t.TempDir()
	args := checkArchiveArgs()
	save := func(name string, m *Sequential, shape []int, compile bool) {
		t.Helper()
		if compile {
			opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}, &metrics.TopKCategoricalAccuracy{K: 2}}, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
		} else if err := m.Build(shape...); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.keras", len(args)))
		if err := m.Save(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		args = append(args, path)
	}
	for i, c := range kerasArchiveModels {
		save(c.name, c.make(t), c.shape, i%2 == 0)
	}
	for i, c := range functionalModels {
		save(c.name, c.make(t), c.shape, i%2 == 1)
	}
	checkArchives(t, py, args)
}

// h5pyPython3 returns a python3 that imports h5py and numpy, or skips (CI
// installs python3-h5py: .ci/run).
func h5pyPython3(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import h5py, numpy").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with h5py and numpy (apt-get install python3-h5py)")
	return ""
}

// checkArchiveArgs are the arguments of scripts/check-keras-archive.py
// before the archives it checks: the script and the archive Keras wrote.
func checkArchiveArgs() []string {
	return []string{filepath.Join("..", "scripts", "check-keras-archive.py"), filepath.Join("testdata", "keras", "flownet_final_model.keras")}
}

// checkArchives runs scripts/check-keras-archive.py.
func checkArchives(t *testing.T, py string, args []string) {
	t.Helper()
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("%s", out)
}

// TestKerasArchiveEveryLayer saves a model of each layer class gokeras
// has (not already in kerasArchiveModels) to a .keras archive and a Keras
// 2 .h5 model file and loads them back: the same configs, weights and predictions, or, for what Keras 3
// cannot hold, an error naming the layer. Every class of layers.ClassNames
// must be in the table, so a new layer class cannot be left out.
func TestKerasArchiveEveryLayer(t *testing.T) {
	cases := []struct {
		classes []string
		shape   []int
		vocab   int // the inputs are integers below it, for an Embedding
		make    func() *Sequential
	}{
		{[]string{"Embedding", "GlobalAveragePooling1D"}, []int{5}, 7, func() *Sequential {
			return NewSequential(layers.Input(5), layers.Embedding(7, 3), layers.GlobalAveragePooling1D(), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"TimeDistributed"}, []int{4, 3}, 0, func() *Sequential {
			return NewSequential(layers.Input(4, 3), layers.TimeDistributed(layers.Dense(2, layers.Tanh)), layers.Flatten(), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"Bidirectional"}, []int{5, 2}, 0, func() *Sequential {
			return NewSequential(layers.Input(5, 2), layers.Bidirectional(layers.LSTM(3, layers.ReturnSequences()), layers.MergeMode("ave")),
				layers.Bidirectional(layers.GRU(2)), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"Masking", "LSTM"}, []int{5, 2}, 0, func() *Sequential {
			return NewSequential(layers.Input(5, 2), layers.Masking(0), layers.LSTM(4), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"Embedding(mask_zero)", "GRU", "GlobalAveragePooling1D"}, []int{5}, 7, func() *Sequential {
			return NewSequential(layers.Input(5), layers.Embedding(7, 3, layers.MaskZero(true)), layers.GRU(4, layers.ReturnSequences()),
				layers.GlobalAveragePooling1D(), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"Reshape", "Conv1D", "MaxPooling1D", "AveragePooling1D", "GlobalMaxPooling1D", "LayerNormalization"}, []int{12}, 0, func() *Sequential {
			return NewSequential(layers.Input(12), layers.Reshape([]int{6, 2}), layers.Conv1D(3, 2, layers.Padding("same")),
				layers.MaxPooling1D(), layers.AveragePooling1D(layers.Strides(1), layers.Padding("same")),
				layers.LayerNormalization(), layers.GlobalMaxPooling1D(), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"Permute"}, []int{3, 4}, 0, func() *Sequential {
			return NewSequential(layers.Input(3, 4), layers.Permute([]int{2, 1}), layers.Conv1D(2, 2), layers.Flatten(), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"ZeroPadding2D", "Cropping2D", "UpSampling2D", "GlobalMaxPooling2D", "GlobalAveragePooling2D"}, []int{4, 4, 2}, 0, func() *Sequential {
			return NewSequential(layers.Input(4, 4, 2), layers.ZeroPadding2D(1, 0, 2, 1), layers.Cropping2D(0, 1, 1, 1),
				layers.UpSampling2D(2, 1), layers.GlobalMaxPooling2D(), layers.Dense(3, layers.Softmax))
		}},
		{[]string{"Identity", "ReLU", "PReLU", "Rescaling", "Normalization", "Activation"}, []int{4}, 0, func() *Sequential {
			// An adapted Normalization has weights (Keras 3 keeps its
			// count as a scalar); one given its statistics has none.
			norm := layers.Normalization()
			if err := norm.Adapt(saveData(t, 16, []int{4}, 0, 3, false, 4).(data.Inputs), 4); err != nil {
				t.Fatal(err)
			}
			return NewSequential(layers.Input(4), layers.Rescaling(0.5, -1), norm, layers.Identity(),
				layers.Normalization(layers.MeanVariance([]float64{0.5}, []float64{2})),
				layers.Dense(5), layers.NewReLU(), layers.Dense(4), layers.NewPReLU(), layers.NewActivation(layers.Tanh),
				layers.Dense(3, layers.Softmax))
		}},
		{[]string{"MultiHeadAttention", "Attention", "AdditiveAttention"}, []int{12}, 0, func() *Sequential {
			in := Input(12)
			x := Apply(layers.Reshape([]int{6, 2}), in)
			x = Apply(layers.Attention(layers.UseScale(), layers.ScoreMode("concat")), x, x)
			x = Apply(layers.AdditiveAttention(), x, x)
			a := Apply(layers.MultiHeadAttention(2, 3, layers.UseCausalMask()), x, x)
			return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), Apply(layers.GlobalAveragePooling1D(), a)))
		}},
		{[]string{"Resizing", "CenterCrop", "RandomFlip", "RandomTranslation", "RandomZoom", "RandomRotation", "RandomBrightness", "RandomContrast", "RandomCrop"}, []int{6, 6, 3}, 0, func() *Sequential {
			return NewSequential(layers.Input(6, 6, 3), layers.RandomFlip("horizontal", layers.Seed(1)),
				layers.RandomTranslation(0.1, 0.1, layers.Seed(2)), layers.RandomZoom(0.1, layers.Seed(3)),
				layers.RandomRotation(0.1, layers.Seed(4)), layers.RandomBrightness(0.1, layers.Seed(5)),
				layers.RandomContrast(0.1, layers.Seed(6)), layers.Resizing(5, 5), layers.RandomCrop(4, 4, layers.Seed(7)),
				layers.CenterCrop(3, 3), layers.GlobalAveragePooling2D(), layers.Dense(3, layers.Softmax))
		}},
	}
	merges := []struct {
		class string
		layer func() layers.Layer
	}{
		{"Subtract", func() layers.Layer { return layers.Subtract() }},
		{"Multiply", func() layers.Layer { return layers.Multiply() }},
		{"Average", func() layers.Layer { return layers.Average() }},
		{"Maximum", func() layers.Layer { return layers.Maximum() }},
		{"Minimum", func() layers.Layer { return layers.Minimum() }},
		{"Dot", func() layers.Layer { return layers.Dot(-1) }},
	}
	covered := map[string]bool{"InputLayer": true}
	for _, c := range kerasArchiveModels {
		for _, l := range c.make(t).Layers() {
			covered[l.Type()] = true
		}
	}
	for _, c := range functionalModels {
		for _, l := range c.make(t).Layers() {
			covered[l.Type()] = true
		}
	}
	dir := t.TempDir()
	archives := checkArchiveArgs()
	h5s := checkKeras2Args()
	check := func(t *testing.T, m *Sequential, shape []int, vocab int) {
		t.Helper()
		opt, err := optim.NewRMSprop(optim.RMSpropConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.CategoricalAccuracy{}}, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		ds := saveData(t, 16, shape, vocab, 3, false, 4)
		fitOnce(t, m, ds)
		// Keras 3's archive, and Keras 2's model file.
		path := filepath.Join(dir, fmt.Sprintf("%d.keras", len(archives)))
		h5 := filepath.Join(dir, fmt.Sprintf("%d.h5", len(archives)))
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		if err := m.Save(h5); err != nil {
			t.Fatal(err)
		}
		archives, h5s = append(archives, path), append(h5s, h5)
		for _, p := range []string{path, h5} {
			loaded, err := LoadModel(p, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			checkSameModel(t, m, loaded, ds)
		}
	}
	for _, c := range cases {
		t.Run(strings.Join(c.classes, ","), func(t *testing.T) {
			m := c.make()
			for _, l := range m.Layers() {
				covered[l.Type()] = true
			}
			check(t, m, c.shape, c.vocab)
		})
	}
	for _, c := range merges {
		t.Run(c.class, func(t *testing.T) {
			in := Input(4)
			a := Apply(layers.Dense(4, layers.Tanh), in)
			b := Apply(layers.Dense(4, layers.ReLU), in)
			x := Apply(c.layer(), a, b)
			m := mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), x))
			for _, l := range m.Layers() {
				covered[l.Type()] = true
			}
			check(t, m, []int{4}, 0)
		})
	}
	for _, class := range layers.ClassNames() {
		if !covered[class] {
			t.Errorf("no model of this test has a %s layer: add one", class)
		}
	}
	// Their archives in h5py, as TestKerasArchiveInH5py checks its own.
	t.Run("h5py", func(t *testing.T) { checkArchives(t, h5pyPython3(t), archives) })
	t.Run("h5py Keras 2", func(t *testing.T) { checkArchives(t, h5pyPython3(t), h5s) })
}

// checkKeras2Args are the arguments of scripts/check-keras2-model.py
// before the files it checks: the script and the model file Keras 2.10
// wrote.
func checkKeras2Args() []string {
	return []string{filepath.Join("..", "scripts", "check-keras2-model.py"), filepath.Join("testdata", "keras", "keras2circom_model.h5")}
}

// kerasOrderModel has branches whose layers Keras 3 orders otherwise than
// they were made: "first" is made before "deep", but "deep" is deeper.
func kerasOrderModel(t *testing.T) *Sequential {
	in := Input(4)
	in.input.SetName("in")
	a := Apply(layers.Dense(3, layers.Named("first")), in)
	b := Apply(layers.Dense(3, layers.Named("second")), Apply(layers.Dense(5, layers.Named("deep")), in))
	return mustModel(t, in, Apply(layers.Add(layers.Named("add")), a, b))
}

// Keras 3 numbers a functional model's layers in its Functional.layers
// order, which map_graph makes: by hand, the walk from the output meets
// add, first, in, second, deep; depths are add 0, first and second 1,
// deep 2, in 3 (its longest path, through deep); so in, deep, first,
// second, add, and deep is dense, first dense_1, second dense_2.
func TestKerasOrder(t *testing.T) {
	m := kerasOrderModel(t)
	var got []string
	for _, l := range m.kerasOrder() {
		got = append(got, l.Name())
	}
	if want := []string{"in", "deep", "first", "second", "add"}; !slices.Equal(got, want) {
		t.Errorf("Keras order %v, want %v", got, want)
	}
	want := map[string]string{"in": "input_layer", "deep": "dense", "first": "dense_1", "second": "dense_2", "add": "add"}
	if n := len(m.kerasNames()); n != len(want) {
		t.Errorf("%d layers named, want %d", n, len(want))
	}
	for l, name := range m.kerasNames() {
		if name != want[l.Name()] {
			t.Errorf("layer %s is Keras' %s, want %s", l.Name(), name, want[l.Name()])
		}
	}
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.keras")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
		t.Error("the loaded model has other weights")
	}
	t.Run("h5py", func(t *testing.T) { checkArchives(t, h5pyPython3(t), append(checkArchiveArgs(), path)) })
}

// TestKeras2ModelRoundTrip saves trained models, Sequential and
// functional, to Keras 2 .h5 model files and loads them back: the same
// layers and compile settings, weights bit for bit, the same predictions
// and evaluation.
func TestKeras2ModelRoundTrip(t *testing.T) {
	type model struct {
		name  string
		shape []int
		make  func(t *testing.T) *Sequential
	}
	all := []model{{"branches Keras orders otherwise", []int{4}, func(t *testing.T) *Sequential {
		in := Input(4)
		a := Apply(layers.Dense(3, layers.Named("first")), in)
		b := Apply(layers.Dense(3, layers.Named("second")), Apply(layers.Dense(5, layers.Named("deep")), in))
		return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), Apply(layers.Add(), a, b)))
	}}}
	for _, c := range kerasArchiveModels {
		all = append(all, model(c))
	}
	for _, c := range functionalModels {
		all = append(all, model{"functional: " + c.name, c.shape, c.make})
	}
	dir := t.TempDir()
	files := checkKeras2Args()
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			m := c.make(t)
			opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ds := saveData(t, 24, c.shape, 0, 3, false, 4)
			fitOnce(t, m, ds)
			path := filepath.Join(dir, fmt.Sprintf("%d.h5", len(files)))
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
			loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			if got, want := summaryOf(t, loaded), summaryOf(t, m); got != want {
				t.Errorf("the loaded model's summary is\n%s\nthe saved one's\n%s", got, want)
			}
			checkSameModel(t, m, loaded, ds)
		})
	}
	t.Run("h5py", func(t *testing.T) { checkArchives(t, h5pyPython3(t), files) })
}

// A learning rate schedule, which Keras 3 serializes with its module,
// and clipping come back from both Keras files as they were given.
func TestKerasFilesKeepTheOptimizer(t *testing.T) {
	for _, file := range []string{"m.keras", "m.h5"} {
		t.Run(file, func(t *testing.T) {
			m := NewSequential(layers.Input(3), layers.Dense(2, layers.Softmax))
			opt, err := optim.NewSGD(optim.SGDConfig{Momentum: 0.5, Nesterov: true, Options: optim.Options{
				ClipNorm: 2, Schedule: optim.ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 10, DecayRate: 0.5, Staircase: true},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.BinaryCrossentropy{LabelSmoothing: 0.25}, []metrics.Metric{&metrics.AUC{}}, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			path := filepath.Join(t.TempDir(), file)
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			if got, want := modelDescription(t, loaded), modelDescription(t, m); got != want {
				t.Errorf("the loaded model is described as\n%s\nthe saved one as\n%s", got, want)
			}
		})
	}
}

// Keras files are checked before any work, written whole or not at all,
// and read from an fs.FS as from a path.
func TestKerasFilesPathsAndSources(t *testing.T) {
	m := kerasArchiveModels[0].make(t)
	if err := m.Build(6); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"m.keras", "m.h5"} {
		missing := filepath.Join(dir, "no such folder", name)
		if err := m.Save(missing); err == nil || !strings.Contains(err.Error(), "no such folder") {
			t.Errorf("Save to a missing folder: %v", err)
		}
		// A file there already stays as it was when the model cannot be
		// saved.
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("before"), 0o644); err != nil {
			t.Fatal(err)
		}
		bad := NewSequential(layers.Input(3), layers.NewActivation(layers.GELUApproximate))
		if err := bad.Build(3); err != nil {
			t.Fatal(err)
		}
		if err := bad.Save(path); err == nil {
			t.Errorf("%s: saved a gelu_approximate model", name)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "before" {
			t.Errorf("%s: a refused save changed the file there: %q, %v", name, b, err)
		}
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := LoadModelFS(fstest.MapFS{"embedded/" + name: {Data: b}}, "embedded/"+name)
		if err != nil {
			t.Fatalf("%s from an fs.FS: %v", name, err)
		}
		if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
			t.Errorf("%s from an fs.FS has other weights", name)
		}
	}
	var nilModel *Sequential
	if err := nilModel.SaveKeras(io.Discard); !errors.Is(err, ErrNilModel) {
		t.Errorf("SaveKeras of a nil model: %v", err)
	}
	if err := m.SaveKeras(nil); err == nil {
		t.Error("SaveKeras to a nil writer: no error")
	}
	if err := m.SaveKerasH5(nil); err == nil {
		t.Error("SaveKerasH5 to a nil writer: no error")
	}
}

// The Adam state Keras 3.9 saved in the FlowNet archive is restored:
// the step count and each weight's momentum and velocity, from
// optimizer/vars as h5py lists them (read here with package hdf5).
func TestLoadModelRestoresKerasAdam(t *testing.T) {
	path := filepath.Join("testdata", "keras", "flownet_final_model.keras")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h5 := archiveMember(t, b, kerasArchiveWeights)
	f, err := hdf5.Read(bytes.NewReader(h5), int64(len(h5)))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := f.Root().Group("optimizer/vars")
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) []float32 {
		d, err := vars.Dataset(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Float32()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	m, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	st := m.Optimizer().(optim.Stateful).State()
	if want := int64(value("0")[0]); st.Iterations != want || want == 0 {
		t.Errorf("the loaded Adam is at step %d, the file's at %d", st.Iterations, want)
	}
	// Variables 2 and 3 are the first Dense kernel's momentum and
	// velocity, 4 and 5 its bias's.
	for i, slot := range []struct{ slot, weight string }{{"m", "dense/kernel"}, {"v", "dense/kernel"}, {"m", "dense/bias"}, {"v", "dense/bias"}} {
		if got, want := st.Slots[slot.slot][slot.weight], value(strconv.Itoa(i+2)); !sameBits(got, want) {
			t.Errorf("slot %s of %s differs from optimizer/vars/%d", slot.slot, slot.weight, i+2)
		}
	}
}

// A model of several outputs keeps, through both Keras files, each
// output's loss, loss weight and metrics, as Keras writes them: lists in
// the order of the outputs.
func TestKerasFilesKeepOutputSettings(t *testing.T) {
	for _, file := range []string{"m.keras", "m.h5"} {
		t.Run(file, func(t *testing.T) {
			in := Input(3)
			h := Apply(layers.Dense(4, layers.ReLU), in)
			m, err := NewModel([]*Tensor{in}, []*Tensor{Apply(layers.Dense(2, layers.Softmax, layers.Named("a")), h), Apply(layers.Dense(1, layers.Named("b")), h)})
			if err != nil {
				t.Fatal(err)
			}
			opt, err := optim.NewAdam(optim.AdamConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, nil, nil, OutputLosses(losses.CategoricalCrossentropy{}, losses.MeanSquaredError{}), LossWeights(1, 0.5),
				MetricsFor("a", &metrics.Accuracy{}), MetricsFor("b", &metrics.MeanAbsoluteError{}), OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			path := filepath.Join(t.TempDir(), file)
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			settings := func(m *Sequential) string {
				var out []string
				for _, h := range m.compiled.heads {
					c, err := losses.ConfigOf(h.loss)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, fmt.Sprintf("%s: %s × %v", h.name, jsonOf(c), h.weight))
				}
				return strings.Join(append(out, m.compiled.metricNames...), "; ")
			}
			if got, want := settings(loaded), settings(m); got != want {
				t.Errorf("loaded with %s\nsaved with %s", got, want)
			}
			if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
				t.Error("the loaded model has other weights")
			}
		})
	}
}
