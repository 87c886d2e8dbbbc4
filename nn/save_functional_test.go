package nn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
	"gorgonia.org/gorgonia"
)

// mergeLayer makes a merge layer of package layers from its config, or
// skips the test in a gokeras that has none yet.
func mergeLayer(t *testing.T, class string, args map[string]any) layers.Layer {
	t.Helper()
	l, err := layers.FromConfig(layers.Config{ClassName: class, Config: args})
	if err != nil {
		if strings.Contains(err.Error(), "unknown layer class") {
			t.Skipf("this gokeras has no %s layer yet", class)
		}
		t.Fatal(err)
	}
	return l
}

func mustModel(t *testing.T, in, out *Tensor) *Sequential {
	t.Helper()
	m, err := NewModel([]*Tensor{in}, []*Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// functionalModels are functional models of every kind of graph the
// format writes: a layer called twice in a row, a layer shared at two
// depths, branches joined by merge layers.
var functionalModels = []struct {
	name  string
	shape []int
	make  func(t *testing.T) *Sequential
}{
	{"a layer called twice", []int{6}, func(t *testing.T) *Sequential {
		in := Input(6)
		shared := layers.Dense(6, layers.Tanh, layers.Named("shared"))
		x := Apply(shared, Apply(shared, in))
		x = Apply(layers.Dropout(0.25), x)
		return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), x))
	}},
	{"a layer shared at two depths", []int{6}, func(t *testing.T) *Sequential {
		// a(b(a(x))), the case Keras' loader queues nodes for.
		in := Input(6)
		a, b := layers.Dense(6, layers.ReLU), layers.Dense(6, layers.Tanh)
		x := Apply(a, Apply(b, Apply(a, in)))
		return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), x))
	}},
	{"the output a shared layer's second call", []int{3}, func(t *testing.T) *Sequential {
		in := Input(3)
		shared := layers.Dense(3, layers.Softmax)
		return mustModel(t, in, Apply(shared, Apply(layers.Dense(3), Apply(shared, in))))
	}},
	{"convolutions and a normalization", []int{5, 5, 2}, func(t *testing.T) *Sequential {
		in := Input(5, 5, 2)
		conv := layers.Conv2D(2, 3, layers.Padding("same"), layers.ReLU)
		x := Apply(conv, Apply(conv, in))
		x = Apply(layers.BatchNormalization(), x)
		x = Apply(layers.Flatten(), x)
		return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), x))
	}},
	{"branches added", []int{6}, func(t *testing.T) *Sequential {
		in := Input(6)
		shared := layers.Dense(5, layers.Tanh)
		a := Apply(shared, in)
		b := Apply(shared, Apply(layers.Dense(6, layers.ReLU), in))
		x := Apply(mergeLayer(t, "Add", nil), a, b)
		return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), x))
	}},
	{"branches concatenated", []int{6}, func(t *testing.T) *Sequential {
		in := Input(6)
		a := Apply(layers.Dense(4, layers.ReLU), in)
		b := Apply(layers.Dense(2, layers.Tanh), in)
		x := Apply(mergeLayer(t, "Concatenate", map[string]any{"axis": -1}), a, b, in)
		return mustModel(t, in, Apply(layers.Dense(3, layers.Softmax), x))
	}},
}

func summaryOf(t *testing.T, m *Sequential) string {
	t.Helper()
	var b strings.Builder
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSaveLoadFunctionalModel saves functional models after some
// training, loads them and checks that the loaded model is the same: its
// configs, weights, predictions and evaluation bit for bit, its Summary,
// one more epoch of training bit for bit, and the file it saves.
func TestSaveLoadFunctionalModel(t *testing.T) {
	for _, c := range functionalModels {
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

			dir := t.TempDir()
			path := filepath.Join(dir, "model.safetensors")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			if loaded.graph == nil {
				t.Fatal("the loaded model is not a functional model")
			}
			if got, want := summaryOf(t, loaded), summaryOf(t, m); got != want {
				t.Errorf("the loaded model's summary is\n%s\nthe saved one's\n%s", got, want)
			}
			checkSameModel(t, m, loaded, ds)

			// Saved again, the loaded model writes the same file.
			again := filepath.Join(dir, "again.safetensors")
			if err := loaded.Save(again); err != nil {
				t.Fatal(err)
			}
			a, errA := os.ReadFile(path)
			b, errB := os.ReadFile(again)
			if err := errors.Join(errA, errB); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Error("the loaded model, saved again, writes another file")
			}
			checkTrainsOn(t, m, loaded, ds)
		})
	}
}

// cancelOnBatch cancels a Fit's context at the end of one batch of one
// epoch, as a Ctrl-C arriving during that step would.
type cancelOnBatch struct {
	CallbackBase
	epoch, batch, current int
	cancel                context.CancelFunc
}

func (c *cancelOnBatch) OnEpochBegin(e int, _ Logs) error { c.current = e; return nil }
func (c *cancelOnBatch) OnTrainBatchEnd(b int, _ Logs) error {
	if c.current == c.epoch && b == c.batch {
		c.cancel()
	}
	return nil
}

// TestResumeFunctionalModel interrupts the training of a functional model
// (a shared layer, Dropout) mid-epoch and resumes it from a whole-model
// file (LoadModel) and from a checkpoint (LoadCheckpoint into the model
// made again in code, with the same seed, which Dropout's masks come from,
// and other weights): both end with the weights of the run that never
// stopped, bit for bit.
func TestResumeFunctionalModel(t *testing.T) {
	ds := saveData(t, 100, []int{6}, 0, 3, false, 8) // 7 steps of 16, the last of 4
	newModel := func(t *testing.T, seed uint64) *Sequential {
		m := functionalModels[0].make(t)
		m.SetSeed(seed)
		opt, err := optim.NewAdam(optim.AdamConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		return m
	}
	fit := func(ctx context.Context, m *Sequential, opts ...Option) error {
		_, err := m.Fit(ctx, ds, append([]Option{Epochs(3), BatchSize(16), Seed(7), Verbose(0)}, opts...)...)
		return err
	}
	whole := newModel(t, 1)
	defer whole.Close()
	if err := fit(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	want := allWeights(t, whole)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := newModel(t, 1)
	defer first.Close()
	err := fit(ctx, first, Callbacks(&cancelOnBatch{epoch: 1, batch: 3, cancel: cancel}))
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Epoch != 1 || ie.Step != 4 {
		t.Fatalf("interrupted Fit returned %v, want an *InterruptedError at epoch 1, step 4", err)
	}
	dir := t.TempDir()
	modelPath, ckPath := filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "ck.safetensors")
	if err := first.Save(modelPath); err != nil {
		t.Fatal(err)
	}
	if err := first.SaveCheckpoint(ckPath, Checkpoint{Epoch: ie.Epoch, Step: ie.Step}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		resume func(t *testing.T) *Sequential
	}{
		{"from the model file", func(t *testing.T) *Sequential {
			m, err := LoadModel(modelPath, CompileOptions(OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
		{"from a checkpoint", func(t *testing.T) *Sequential {
			// The same seed, for Dropout's masks, but other weights: all
			// must come from the checkpoint.
			m := newModel(t, 1)
			ws, err := m.GetWeights()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				for i := range w.Data().([]float32) {
					w.Data().([]float32)[i] = 0.5
				}
			}
			if err := m.SetWeights(ws); err != nil {
				t.Fatal(err)
			}
			if _, err := m.LoadCheckpoint(ckPath); err != nil {
				t.Fatal(err)
			}
			return m
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.resume(t)
			defer m.Close()
			if err := fit(context.Background(), m, InitialEpoch(ie.Epoch), InitialStep(ie.Step)); err != nil {
				t.Fatal(err)
			}
			if !sameBits(allWeights(t, m), want) {
				t.Error("the resumed run ended with other weights than the uninterrupted one")
			}
		})
	}
}

// goldenFunctionalModel is the model of testdata/functional_model.json: an
// input, a layer called twice, and an output layer.
func goldenFunctionalModel(t *testing.T) *Sequential {
	in := Input(4)
	shared := layers.Dense(4, layers.Tanh, layers.Named("shared"))
	m := mustModel(t, in, Apply(layers.Dense(2, layers.Softmax), Apply(shared, Apply(shared, in))))
	m.SetSeed(3)
	return m
}

// TestFunctionalConfigGolden checks the document Save writes for a small
// functional model byte for byte against testdata/functional_model.json
// (go test -run TestFunctionalConfigGolden -update ./nn rewrites it, for a
// change of format made on purpose).
func TestFunctionalConfigGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := goldenFunctionalModel(t).Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadModelConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const golden = "testdata/functional_model.json"
	if *updateFixtures {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Save wrote the config\n%s\nwant (%s)\n%s", got, golden, want)
	}
	meta, err := safetensors.ReadMetadata(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta[metaVersion] != "2" || meta[metaKind] != "model" || meta[metaModel] != "model" {
		t.Errorf("metadata %v, want model format version 2 of model %q", meta, "model")
	}
}

// keras3Config is the config Keras 3's Functional.get_config gives for
// goldenFunctionalModel made in Python, as functional.py and
// serialization_lib.py write it:
//
//	inp = keras.Input((4,), name="input_1")
//	shared = keras.layers.Dense(4, activation="tanh", name="shared")
//	out = keras.layers.Dense(2, activation="softmax", name="dense")(shared(shared(inp)))
//	keras.Model([inp], [out], name="model").get_config()
//
// The layers' own configs are cut to a few arguments (they are package
// layers' to compare, not this test's).
const keras3Config = `{"name": "model", "trainable": true,
 "layers": [
  {"module": "keras.layers", "class_name": "InputLayer",
   "config": {"batch_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_1", "optional": false},
   "registered_name": null, "name": "input_1", "inbound_nodes": []},
  {"module": "keras.layers", "class_name": "Dense",
   "config": {"name": "shared", "trainable": true, "units": 4, "activation": "tanh", "use_bias": true},
   "registered_name": null, "build_config": {"input_shape": [null, 4]}, "name": "shared",
   "inbound_nodes": [
    {"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 4], "dtype": "float32", "keras_history": ["input_1", 0, 0]}}], "kwargs": {}},
    {"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 4], "dtype": "float32", "keras_history": ["shared", 0, 0]}}], "kwargs": {}}]},
  {"module": "keras.layers", "class_name": "Dense",
   "config": {"name": "dense", "trainable": true, "units": 2, "activation": "softmax", "use_bias": true},
   "registered_name": null, "build_config": {"input_shape": [null, 4]}, "name": "dense",
   "inbound_nodes": [
    {"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 4], "dtype": "float32", "keras_history": ["shared", 1, 0]}}], "kwargs": {}}]}],
 "input_layers": [["input_1", 0, 0]],
 "output_layers": [["dense", 0, 0]]}`

// TestFunctionalConfigIsKeras3s compares the structure of the config Save
// writes with Keras 3's (keras3Config): the same keys but for what
// gokeras leaves out of each layer (module, registered_name and
// build_config, as Keras 3's legacy form leaves them out) and adds (the
// seed); the same graph, value for value: layers by class and name in
// order, their inbound nodes, input_layers and output_layers.
func TestFunctionalConfigIsKeras3s(t *testing.T) {
	doc, err := goldenFunctionalModel(t).document(false)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var ours struct {
		ClassName string         `json:"class_name"`
		Config    map[string]any `json:"config"`
	}
	var keras map[string]any
	if err := errors.Join(json.Unmarshal(js, &ours), json.Unmarshal([]byte(keras3Config), &keras)); err != nil {
		t.Fatal(err)
	}
	if ours.ClassName != "Functional" {
		t.Errorf("class_name %q, want Keras' Functional", ours.ClassName)
	}
	keysOf := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	without := func(ks []string, drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(ks), func(k string) bool { return slices.Contains(drop, k) })
	}
	if got, want := without(keysOf(ours.Config), "seed"), keysOf(keras); !slices.Equal(got, want) {
		t.Errorf("config keys %v (seed aside), Keras 3's %v", got, want)
	}
	for _, k := range []string{"name", "trainable", "input_layers", "output_layers"} {
		if !jsonEqual(t, ours.Config[k], keras[k]) {
			t.Errorf("%s is %v, Keras 3's %v", k, ours.Config[k], keras[k])
		}
	}
	ourLayers, kerasLayers := ours.Config["layers"].([]any), keras["layers"].([]any)
	if len(ourLayers) != len(kerasLayers) {
		t.Fatalf("%d layers, Keras 3 %d", len(ourLayers), len(kerasLayers))
	}
	for i := range ourLayers {
		o, k := ourLayers[i].(map[string]any), kerasLayers[i].(map[string]any)
		if got, want := keysOf(o), without(keysOf(k), "module", "registered_name", "build_config"); !slices.Equal(got, want) {
			t.Errorf("layer %d: keys %v, Keras 3's %v (module, registered_name and build_config aside)", i+1, got, want)
		}
		for _, key := range []string{"class_name", "name", "inbound_nodes"} {
			if !jsonEqual(t, o[key], k[key]) {
				t.Errorf("layer %d: %s is %v, Keras 3's %v", i+1, key, o[key], k[key])
			}
		}
		if o["name"] != o["config"].(map[string]any)["name"] {
			t.Errorf("layer %d: named %v, its config %v", i+1, o["name"], o["config"].(map[string]any)["name"])
		}
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	if err := errors.Join(errX, errY); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// sumLayer is a merge layer of this test, with a config: what Save
// writes of a merge layer's call, whatever package layers' merge layers.
type sumLayer struct{ name string }

func (l *sumLayer) Name() string                           { return l.name }
func (l *sumLayer) SetName(name string)                    { l.name = name }
func (l *sumLayer) Type() string                           { return "Add" }
func (l *sumLayer) Build([]int, *rand.Rand) ([]int, error) { return nil, errors.New("a merge layer") }
func (l *sumLayer) Params() []*layers.Param                { return nil }
func (l *sumLayer) Call(layers.Flow, []*gorgonia.Node) (layers.Flow, error) {
	return layers.Flow{}, errors.New("a merge layer")
}
func (l *sumLayer) PlanInputs(in [][]int) ([]int, error)                { return in[0], nil }
func (l *sumLayer) BuildInputs(in [][]int, _ *rand.Rand) ([]int, error) { return in[0], nil }
func (l *sumLayer) CallInputs([]layers.Flow, []*gorgonia.Node) (layers.Flow, error) {
	return layers.Flow{}, errors.New("not computed in this test")
}
func (l *sumLayer) Config() (layers.Config, error) {
	return layers.Config{ClassName: "Add", Config: map[string]any{"name": l.name}}, nil
}

// TestFunctionalMergeNodes checks how a merge layer's call is written: one
// argument, the list of the tensors it takes, as Keras calls
// Add()([a, b]).
func TestFunctionalMergeNodes(t *testing.T) {
	in := Input(3)
	a := Apply(layers.Dense(3, layers.Named("a")), in)
	m := mustModel(t, in, Apply(&sumLayer{name: "add"}, a, in))
	doc, err := m.document(false)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class_name":"Add","config":{"name":"add"},"name":"add","inbound_nodes":[{"args":[[` +
		`{"class_name":"__keras_tensor__","config":{"shape":[null,3],"dtype":"float32","keras_history":["a",0,0]}},` +
		`{"class_name":"__keras_tensor__","config":{"shape":[null,3],"dtype":"float32","keras_history":["input_1",0,0]}}]],"kwargs":{}}]}]`
	if !strings.Contains(string(js), want) {
		t.Errorf("the merge layer is written\n%s\nwant it to hold\n%s", js, want)
	}
}

// functionalModelFile saves a small trained functional model (a layer
// called twice), its optimizer's state included, and returns the path.
func functionalModelFile(t *testing.T) string {
	t.Helper()
	m := goldenFunctionalModel(t)
	opt, err := optim.NewAdam(optim.AdamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fitOnce(t, m, saveData(t, 16, []int{4}, 0, 2, false, 6))
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadFunctionalModelErrors checks that each way a functional model's
// config can describe no model is refused with an error naming the layer
// and what to do, before any weight is read; and that the variants of
// the format Keras writes are read.
func TestLoadFunctionalModelErrors(t *testing.T) {
	good := functionalModelFile(t)
	// replace edits the config's JSON text: old must be there.
	replace := func(old, new string) func(*testing.T, *safetensors.File) {
		return func(t *testing.T, f *safetensors.File) {
			js := f.Metadata[metaModelConfig]
			if !strings.Contains(js, old) {
				t.Fatalf("the model config has no %q:\n%s", old, js)
			}
			f.Metadata[metaModelConfig] = strings.Replace(js, old, new, 1)
		}
	}
	// edit edits the config's JSON value (its "config").
	edit := func(change func(c map[string]any)) func(*testing.T, *safetensors.File) {
		return func(t *testing.T, f *safetensors.File) {
			dec := json.NewDecoder(strings.NewReader(f.Metadata[metaModelConfig]))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			change(doc["config"].(map[string]any))
			js, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			f.Metadata[metaModelConfig] = string(js)
		}
	}
	layer := func(c map[string]any, name string) map[string]any {
		for _, l := range c["layers"].([]any) {
			if l := l.(map[string]any); l["name"] == name {
				return l
			}
		}
		panic("no layer " + name)
	}
	node := func(c map[string]any, name string, k int) map[string]any {
		return layer(c, name)["inbound_nodes"].([]any)[k].(map[string]any)
	}
	tensorFrom := func(ref ...any) map[string]any {
		return map[string]any{"class_name": "__keras_tensor__", "config": map[string]any{"shape": []any{nil, 4}, "dtype": "float32", "keras_history": ref}}
	}
	addLayer := func(name string, nodes ...any) func(c map[string]any) {
		return func(c map[string]any) {
			if nodes == nil {
				nodes = []any{}
			}
			c["layers"] = append(c["layers"].([]any), map[string]any{"class_name": "Dense", "config": map[string]any{"units": 2, "name": name}, "name": name, "inbound_nodes": nodes})
		}
	}
	refused := []struct {
		name string
		edit func(*testing.T, *safetensors.File)
		want []string
	}{
		{"an unknown layer class", replace(`"class_name":"Dense"`, `"class_name":"Dense3D"`),
			[]string{`layer "shared"`, `unknown layer class "Dense3D"`, "update gokeras"}},
		{"a call of a layer the config does not have", replace(`["shared",1,0]`, `["shraed",1,0]`),
			[]string{`input 0 of call 0 of layer "dense" names layer "shraed", which the config does not have (its layers: input_1, shared, dense)`, "save the model again"}},
		{"an output of a layer the config does not have", replace(`"output_layers":[["dense",0,0]]`, `"output_layers":[["ghost",0,0]]`),
			[]string{`output_layers names layer "ghost"`, "save the model again"}},
		{"a node index out of range", replace(`["shared",1,0]`, `["shared",2,0]`),
			[]string{`names ["shared", 2, 0], but layer "shared" has 2 calls (node indices 0 to 1)`, "save the model again"}},
		{"a node index out of an input's range", replace(`["input_1",0,0]`, `["input_1",1,0]`),
			[]string{`names ["input_1", 1, 0], but input layer "input_1" has one node, of index 0`, "save the model again"}},
		{"a tensor index out of range", replace(`["shared",1,0]`, `["shared",1,1]`),
			[]string{`names ["shared", 1, 1], but each call of layer "shared" outputs 1 tensor(s), of tensor indices 0 to 0`}},
		{"a negative node index", replace(`["shared",1,0]`, `["shared",-1,0]`),
			[]string{`call 0 of layer "dense": its argument is not a tensor`, "the node index -1 is not an integer >= 0", "save the model again"}},
		{"a cycle", replace(`["input_1",0,0]`, `["shared",1,0]`),
			[]string{`form a cycle (call 1 of layer "shared" → call 0 of layer "shared" → call 1 of layer "shared")`, "save the model again"}},
		{"a layer never called", edit(addLayer("lonely")),
			[]string{`layer "lonely" has no inbound nodes`, "save the model again"}},
		{"a call that does not lead to the output", edit(addLayer("extra", map[string]any{"args": []any{tensorFrom("shared", 1, 0)}, "kwargs": map[string]any{}})),
			[]string{`call 0 of layer "extra" does not lead to an output`, "save the model again"}},
		{"a cycle off the output's path", edit(addLayer("loop", map[string]any{"args": []any{tensorFrom("loop", 0, 0)}, "kwargs": map[string]any{}})),
			[]string{`form a cycle (call 0 of layer "loop" → call 0 of layer "loop")`}},
		{"an input given twice", replace(`"input_layers":[["input_1",0,0]]`, `"input_layers":[["input_1",0,0],["input_1",0,0]]`),
			[]string{"inputs 0 and 1 are the same tensor", "save the model again"}},
		{"no output", replace(`"output_layers":[["dense",0,0]]`, `"output_layers":[]`),
			[]string{"output_layers 0", "save the model again"}},
		{"an input that is no input layer", replace(`"input_layers":[["input_1",0,0]]`, `"input_layers":[["shared",0,0]]`),
			[]string{`input_layers names layer "shared", a Dense, not an InputLayer`}},
		{"a second input layer", edit(func(c map[string]any) {
			c["layers"] = append(c["layers"].([]any), map[string]any{"class_name": "InputLayer", "config": map[string]any{"batch_shape": []any{nil, 4}, "name": "input_2"}, "name": "input_2", "inbound_nodes": []any{}})
		}), []string{`input layer "input_2" is not one of the model's inputs`, "save the model again"}},
		{"an input layer called", edit(func(c map[string]any) {
			layer(c, "input_1")["inbound_nodes"] = []any{node(c, "shared", 0)}
		}), []string{`input layer "input_1" has 1 inbound nodes`}},
		{"a keyword argument", replace(`"kwargs":{}`, `"kwargs":{"training":true}`),
			[]string{`call 0 of layer "shared" has keyword arguments (training)`, "take none"}},
		{"two positional arguments", edit(func(c map[string]any) {
			n := node(c, "dense", 0)
			n["args"] = append(n["args"].([]any), n["args"].([]any)[0])
		}), []string{`call 0 of layer "dense" has 2 positional arguments`}},
		{"a list of tensors for a layer of one input", edit(func(c map[string]any) {
			n := node(c, "dense", 0)
			n["args"] = []any{n["args"]}
		}), []string{`call 0 of layer "dense" is given a list of tensors, but a Dense layer takes one tensor`}},
		{"a tensor of another shape than its layer outputs", replace(`"shape":[null,4],"dtype":"float32","keras_history":["shared",1,0]`, `"shape":[null,5],"dtype":"float32","keras_history":["shared",1,0]`),
			[]string{`input 0 of call 0 of layer "dense" is declared of shape (None, 5), but ["shared", 1, 0] outputs (None, 4)`}},
		{"another dtype", replace(`"dtype":"float32"`, `"dtype":"float16"`),
			[]string{`has dtype "float16": gokeras computes in float32`}},
		{"a tensor that is not a Keras tensor", replace(`"class_name":"__keras_tensor__"`, `"class_name":"__tensor__"`),
			[]string{`is a "__tensor__", not a "__keras_tensor__"`}},
		{"an unknown field in a tensor", replace(`"dtype":"float32"`, `"dtype":"float32","sparse":false`),
			[]string{`its argument is not a tensor`, `unknown field "sparse"`}},
		{"a frozen model", replace(`"trainable":true`, `"trainable":false`),
			[]string{"trainable false", "does not freeze a whole model"}},
		{"an unknown field", replace(`"trainable":true`, `"trainable":true,"colour":"red"`),
			[]string{"not valid", `unknown field "colour"`, "save the model again"}},
		{"a layer named otherwise than its config", replace(`"name":"dense","inbound_nodes"`, `"name":"dense_9","inbound_nodes"`),
			[]string{`layer 3 of the config is named "dense_9", but its config names it "dense"`}},
		{"two layers of one name", edit(func(c map[string]any) {
			l := layer(c, "dense")
			l["name"] = "shared"
			l["config"].(map[string]any)["name"] = "shared"
		}), []string{"layers 2 and 3 of the config are both named \"shared\""}},
		{"a layer without a name", replace(`"name":"dense","inbound_nodes"`, `"name":"","inbound_nodes"`),
			[]string{"layer 3 of the config has no name"}},
		{"a functional model in model format version 1", func(t *testing.T, f *safetensors.File) {
			f.Metadata[metaVersion] = "1"
			replace(`"format_version":2`, `"format_version":1`)(t, f)
		}, []string{"of class Functional", "model format version 1, which has no functional models", "save the model again"}},
		{"an unknown model class", replace(`"class_name":"Functional"`, `"class_name":"Graph"`),
			[]string{`class_name "Graph"`, "Sequential, Functional"}},
		{"a newer model format", func(_ *testing.T, f *safetensors.File) { f.Metadata[metaVersion] = "3" },
			[]string{"newer gokeras", "model format version 3", "update gokeras"}},
		{"a shared layer's weight missing", func(_ *testing.T, f *safetensors.File) {
			f.Tensors = slices.DeleteFunc(f.Tensors, func(x safetensors.Tensor) bool { return x.Name == "shared/kernel" })
		}, []string{`no tensor "shared/kernel"`, `layer "shared"`, "save the model again"}},
		{"a huge layer the file has no weights for", replace(`"units":2`, `"units":1099511627776`),
			[]string{`tensor "dense/kernel" has shape (4, 2)`, `layer "dense" as its config describes it makes shape (4, 1099511627776)`, "save the model again"}},
	}
	load := func(t *testing.T, change func(*testing.T, *safetensors.File)) (*Sequential, string, error) {
		f, err := safetensors.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		change(t, f)
		path := filepath.Join(t.TempDir(), "bad.safetensors")
		if err := safetensors.WriteFile(path, f.Tensors, f.Metadata); err != nil {
			t.Fatal(err)
		}
		m, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
		return m, path, err
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			m, path, err := load(t, c.edit)
			if err == nil {
				m.Close()
				t.Fatalf("LoadModel loaded it: %v", m.Layers())
			}
			for _, w := range append([]string{"load model: ", path}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
	// What Keras 3 writes otherwise than Save, read the same.
	for _, c := range []struct {
		name string
		edit func(*testing.T, *safetensors.File)
	}{
		{"the good file", func(*testing.T, *safetensors.File) {}},
		{"a null mask", replace(`"kwargs":{}`, `"kwargs":{"mask":null}`)},
		{"a lone input", replace(`"input_layers":[["input_1",0,0]]`, `"input_layers":["input_1",0,0]`)},
		{"no trainable", replace(`"trainable":true,`, ``)},
		{"the layers in another order", edit(func(c map[string]any) {
			slices.Reverse(c["layers"].([]any))
		})},
	} {
		t.Run("reads "+c.name, func(t *testing.T) {
			m, _, err := load(t, c.edit)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if names := []string{m.layers[0].Name(), m.layers[1].Name()}; !slices.Equal(names, []string{"shared", "dense"}) {
				t.Errorf("layers %v, want shared, dense", names)
			}
			if math.IsNaN(float64(allWeights(t, m)[0])) {
				t.Error("no weights")
			}
		})
	}
}
