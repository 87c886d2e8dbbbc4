package nn_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/hdf5"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// The Keras configs below are written the way Keras 2.15 (model_config of
// an .h5 file) and Keras 3 (config.json of a .keras archive) write the
// cifar10-like model of kerasCNN: every argument at its value, the
// initializers, constraints and dtype policies Keras adds.

func keras2Init(class string) string {
	return fmt.Sprintf(`{"module": "keras.initializers", "class_name": %q, "config": {"seed": null}, "registered_name": null}`, class)
}

func keras2LayerConfigs(conv string) []string {
	return []string{
		`{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 6, 6, 3], "dtype": "float32", "sparse": false, "ragged": false, "name": "conv2d_input"}}`,
		`{"class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, "dtype": "float32", "filters": 4, "kernel_size": [3, 3], "strides": [1, 1], "padding": "valid", ` + conv + `"dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true, "kernel_initializer": ` + keras2Init("GlorotUniform") + `, "bias_initializer": ` + keras2Init("Zeros") + `, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}`,
		`{"class_name": "BatchNormalization", "config": {"name": "batch_normalization", "trainable": true, "dtype": "float32", "axis": [3], "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true, "beta_initializer": ` + keras2Init("Zeros") + `, "gamma_initializer": ` + keras2Init("Ones") + `, "moving_mean_initializer": ` + keras2Init("Zeros") + `, "moving_variance_initializer": ` + keras2Init("Ones") + `, "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null}}`,
		`{"class_name": "Flatten", "config": {"name": "flatten", "trainable": true, "dtype": "float32", "data_format": "channels_last"}}`,
		`{"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 5, "activation": "relu", "use_bias": true, "kernel_initializer": ` + keras2Init("GlorotUniform") + `, "bias_initializer": ` + keras2Init("Zeros") + `, "kernel_regularizer": {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.0001}, "registered_name": null}, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}`,
		`{"class_name": "Dropout", "config": {"name": "dropout", "trainable": true, "dtype": "float32", "rate": 0.5, "noise_shape": null, "seed": null}}`,
		`{"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": ` + keras2Init("GlorotUniform") + `, "bias_initializer": ` + keras2Init("Zeros") + `, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}`,
	}
}

func keras2ModelConfig(layersJSON []string) string {
	return `{"class_name": "Sequential", "config": {"name": "sequential", "layers": [` + strings.Join(layersJSON, ", ") +
		`]}, "keras_version": "2.15.0", "backend": "tensorflow"}`
}

// keras3Config rewrites the Keras 2 layer entries as Keras 3 writes them:
// module and registered_name beside each class, dtype policies, the
// InputLayer's batch_shape, BatchNormalization's axis -1.
func keras3Config(t testing.TB, layersJSON []string) string {
	t.Helper()
	policy := map[string]any{"module": "keras", "class_name": "DTypePolicy", "config": map[string]any{"name": "float32"}, "registered_name": nil}
	var entries []any
	for _, lj := range layersJSON {
		var e map[string]any
		if err := json.Unmarshal([]byte(lj), &e); err != nil {
			t.Fatal(err)
		}
		c := e["config"].(map[string]any)
		if s, ok := c["batch_input_shape"]; ok {
			c["batch_shape"] = s
			delete(c, "batch_input_shape")
		} else {
			c["dtype"] = policy
		}
		if e["class_name"] == "BatchNormalization" {
			c["axis"] = -1
			c["synchronized"] = false
		}
		e["module"], e["registered_name"] = "keras.layers", nil
		entries = append(entries, e)
	}
	doc := map[string]any{"module": "keras", "class_name": "Sequential", "registered_name": nil,
		"config":         map[string]any{"name": "sequential", "trainable": true, "dtype": policy, "layers": entries, "build_input_shape": []any{nil, 6, 6, 3}},
		"build_config":   map[string]any{"input_shape": []any{nil, 6, 6, 3}},
		"compile_config": map[string]any{"optimizer": "adam", "loss": "categorical_crossentropy", "metrics": []any{"accuracy"}}}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// kerasFileOf writes m's weights in the Keras 2 whole-model layout (with
// config) or, for a .keras name, the Keras 3 archive layout.
func kerasFileOf(t testing.TB, m *nn.Sequential, name, config string) string {
	t.Helper()
	dir := t.TempDir()
	weights := filepath.Join(dir, "w.weights.h5")
	if strings.HasSuffix(name, ".h5") {
		weights = filepath.Join(dir, "w.h5")
	}
	if err := m.SaveWeights(weights); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(weights)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if strings.HasSuffix(name, ".keras") {
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		for _, f := range []struct{ name, data string }{
			{"metadata.json", `{"keras_version": "3.6.0", "date_saved": "2026-11-27@21:00:00"}`},
			{"config.json", config},
			{"model.weights.h5", string(raw)},
		} {
			w, err := z.Create(f.name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(f.data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		raw = buf.Bytes()
	} else {
		// A whole-model file: the weights under model_weights, the
		// config in model_config.
		f, err := hdf5.Read(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		w := hdf5.NewWriter()
		root := w.Root()
		root.Attr("keras_version", "2.15.0").Attr("backend", "tensorflow").Attr("model_config", config)
		mw := root.Group("model_weights")
		names, err := f.Root().AttrStrings("layer_names")
		if err != nil {
			t.Fatal(err)
		}
		mw.Attr("layer_names", names).Attr("backend", "tensorflow").Attr("keras_version", "2.15.0")
		for _, layer := range names {
			g, err := f.Root().Group(layer)
			if err != nil {
				t.Fatal(err)
			}
			wn, err := g.AttrStrings("weight_names")
			if err != nil {
				t.Fatal(err)
			}
			lg := mw.Group(layer)
			lg.Attr("weight_names", wn)
			for _, n := range wn {
				d, err := g.Dataset(n)
				if err != nil {
					t.Fatal(err)
				}
				v, err := d.Float32()
				if err != nil {
					t.Fatal(err)
				}
				parts := strings.Split(n, "/") // layer/weight:0, or layer/cell/weight:0
				at := lg
				for _, part := range parts[:len(parts)-1] {
					at = at.Group(part)
				}
				at.Dataset(parts[len(parts)-1], d.Shape(), v)
			}
		}
		root.Group("optimizer_weights")
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		raw = buf.Bytes()
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// LoadModel makes a Keras Sequential model from a Keras 2 .h5 model file
// and from a Keras 3 .keras archive: the same layers, names and weights.
func TestLoadModelOfKerasFiles(t *testing.T) {
	want := kerasCNN(t, 1)
	for _, tc := range []struct{ name, config string }{
		{"m.h5", keras2ModelConfig(keras2LayerConfigs(`"data_format": "channels_last", `))},
		{"m.keras", keras3Config(t, keras2LayerConfigs(`"data_format": "channels_last", `))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := kerasFileOf(t, want, tc.name, tc.config)
			got, err := nn.LoadModel(path)
			if err != nil {
				t.Fatal(err)
			}
			var types, names []string
			for _, l := range got.Layers() {
				types, names = append(types, l.Type()), append(names, l.Name())
			}
			if g, w := strings.Join(types, " "), "Conv2D BatchNormalization Flatten Dense Dropout Dense"; g != w {
				t.Errorf("layers %s, want %s", g, w)
			}
			if g, w := strings.Join(names, " "), "conv2d batch_normalization flatten dense dropout dense_1"; g != w {
				t.Errorf("layer names %s, want %s", g, w)
			}
			if s := got.InputShape(); len(s) != 3 || s[0] != 6 || s[2] != 3 {
				t.Errorf("input shape %v, want [6 6 3]", s)
			}
			// kerasCNN has no Dropout: compare the weights, in order.
			sameWeights(t, got, want)
		})
	}
}

// Keras settings gokeras cannot honour are refused naming the layer, the
// argument and its value; so are functional, subclassed and custom-layer
// models, and weights-only files.
func TestLoadModelRefusesWhatKerasFilesSayGokerasCannotDo(t *testing.T) {
	m := kerasCNN(t, 1)
	base := keras2LayerConfigs(`"data_format": "channels_last", `)
	withLayer := func(i int, lj string) []string {
		ls := append([]string(nil), base...)
		ls[i] = lj
		return ls
	}
	tests := []struct {
		name, config string
		want         []string
	}{
		{"channels_first", keras2ModelConfig(keras2LayerConfigs(`"data_format": "channels_first", `)),
			[]string{`Conv2D layer "conv2d"`, "data_format", `"channels_first"`}},
		{"constraint", keras2ModelConfig(withLayer(1, strings.Replace(base[1], `"kernel_constraint": null`, `"kernel_constraint": {"class_name": "MaxNorm", "config": {"max_value": 2}}`, 1))),
			[]string{"kernel_constraint", "MaxNorm"}},
		{"mixed precision", keras2ModelConfig(withLayer(4, strings.Replace(base[4], `"dtype": "float32"`, `"dtype": "mixed_float16"`, 1))),
			[]string{`Dense layer "dense"`, "mixed_float16", "float32"}},
		{"custom layer", keras2ModelConfig(withLayer(5, `{"module": null, "class_name": "MyNoise", "config": {"name": "my_noise"}, "registered_name": "my_package>MyNoise"}`)),
			[]string{"MyNoise", "custom layer"}},
		{"unknown class", keras2ModelConfig(withLayer(5, `{"class_name": "GaussianNoise", "config": {"name": "noise", "stddev": 0.1}}`)),
			[]string{"GaussianNoise"}},
		{"subclassed", `{"class_name": "MyModel", "config": {"name": "my_model"}}`,
			[]string{`"MyModel"`, "subclassed"}},
		{"channels_first batch normalization", keras2ModelConfig(withLayer(2, strings.Replace(base[2], `"axis": [3]`, `"axis": [1]`, 1))),
			[]string{"axis", "last axis"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := kerasFileOf(t, m, "m.h5", tc.config)
			_, err := nn.LoadModel(path)
			if err == nil {
				t.Fatal("loaded")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// The subclassed model Keras 3.15 wrote (testdata/keras).
	_, err := nn.LoadModel(filepath.Join("testdata", "keras", "pre_pr22362_nested_container.keras"))
	if err == nil || !strings.Contains(err.Error(), "NestedDenseModel") {
		t.Errorf("a subclassed Keras model: error %v, want one naming its class", err)
	}
}

// keras3Functional is kerasCNN's layers as a Keras 3 functional config:
// each layer's name and inbound nodes, its input a keras tensor with the
// shape and history Keras records.
func keras3Functional(t testing.TB, kwargs string) string {
	t.Helper()
	var seq map[string]any
	if err := json.Unmarshal([]byte(keras3Config(t, keras2LayerConfigs(`"data_format": "channels_last", `))), &seq); err != nil {
		t.Fatal(err)
	}
	entries := seq["config"].(map[string]any)["layers"].([]any)
	shapes := [][]any{{nil, 6, 6, 3}, {nil, 4, 4, 4}, {nil, 4, 4, 4}, {nil, 64}, {nil, 5}, {nil, 5}}
	var ls []any
	prev := ""
	for i, e := range entries {
		entry := e.(map[string]any)
		name := entry["config"].(map[string]any)["name"].(string)
		entry["name"] = name
		entry["inbound_nodes"] = []any{}
		if i > 0 {
			var kw map[string]any
			if err := json.Unmarshal([]byte(kwargs), &kw); err != nil {
				t.Fatal(err)
			}
			entry["inbound_nodes"] = []any{map[string]any{
				"args": []any{map[string]any{"class_name": "__keras_tensor__", "config": map[string]any{
					"shape": shapes[i-1], "dtype": "float32", "keras_history": []any{prev, 0, 0}}}},
				"kwargs": kw}}
		}
		prev = name
		ls = append(ls, entry)
	}
	doc := map[string]any{"module": "keras", "class_name": "Functional", "registered_name": "Functional",
		"config": map[string]any{"name": "functional", "trainable": true, "layers": ls,
			"input_layers": []any{"conv2d_input", 0, 0}, "output_layers": []any{prev, 0, 0}}}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// LoadModel makes a Keras 3 functional model again from its .keras file:
// the graph from the inbound nodes, the weights by class and position.
func TestLoadModelOfAKerasFunctionalArchive(t *testing.T) {
	want := kerasCNN(t, 1)
	path := kerasFileOf(t, want, "f.keras", keras3Functional(t, `{}`))
	got, err := nn.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if names := got.OutputNames(); len(names) != 1 || names[0] != "dense_1" {
		t.Errorf("outputs %v, want [dense_1]", names)
	}
	sameWeights(t, got, want)
	// A call with keyword arguments gokeras' layers do not take.
	path = kerasFileOf(t, want, "k.keras", keras3Functional(t, `{"training": true}`))
	if _, err := nn.LoadModel(path); err == nil || !strings.Contains(err.Error(), "keyword arguments (training)") {
		t.Errorf("a call with training=True: error %v, want one naming the argument", err)
	}
}

// A Keras 2 functional config with two branches merged by Add: the
// inbound nodes rewritten as Keras 3's (a merge takes a list), the graph
// and weights those of the same model made in Go.
func TestLoadModelOfAKeras2FunctionalFile(t *testing.T) {
	in := nn.NamedInput("input_1", 4)
	a := nn.Apply(layers.Dense(3, layers.Named("a")), in)
	b := nn.Apply(layers.Dense(3, layers.Named("b"), layers.ReLU), in)
	sum := nn.Apply(layers.Add(layers.Named("add")), a, b)
	out := nn.Apply(layers.Dense(2, layers.Named("out"), layers.Softmax), sum)
	want, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	if err := want.Build(4); err != nil {
		t.Fatal(err)
	}
	dense := func(name string, units int, act, inbound string) string {
		return `{"class_name": "Dense", "name": "` + name + `", "config": {"name": "` + name + `", "trainable": true, "dtype": "float32", "units": ` +
			fmt.Sprint(units) + `, "activation": "` + act + `", "use_bias": true, "kernel_initializer": ` + keras2Init("GlorotUniform") +
			`, "bias_initializer": ` + keras2Init("Zeros") + `, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, ` +
			`"kernel_constraint": null, "bias_constraint": null}, "inbound_nodes": [[` + inbound + `]]}`
	}
	config := `{"class_name": "Functional", "config": {"name": "model", "layers": [` +
		`{"class_name": "InputLayer", "name": "input_1", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_1"}, "inbound_nodes": []}, ` +
		dense("a", 3, "linear", `["input_1", 0, 0, {}]`) + `, ` + dense("b", 3, "relu", `["input_1", 0, 0, {}]`) + `, ` +
		`{"class_name": "Add", "name": "add", "config": {"name": "add", "trainable": true, "dtype": "float32"}, "inbound_nodes": [[["a", 0, 0, {}], ["b", 0, 0, {}]]]}, ` +
		dense("out", 2, "softmax", `["add", 0, 0, {}]`) +
		`], "input_layers": [["input_1", 0, 0]], "output_layers": [["out", 0, 0]]}, "keras_version": "2.15.0", "backend": "tensorflow"}`
	path := kerasFileOf(t, want, "f.h5", config)
	got, err := nn.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, l := range got.Layers() {
		types = append(types, l.Type()+":"+l.Name())
	}
	t.Log(types)
	sameWeights(t, got, want)
	for _, m := range []*nn.Sequential{want, got} {
		if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
	}
	x, err := data.TensorInputs(tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float32{1, -2, 0.5, 3, -1, 0, 2, 1})))
	if err != nil {
		t.Fatal(err)
	}
	pw, err := want.Predict(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := got.Predict(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pw.Values(), pg.Values()) {
		t.Errorf("predictions %v, the model made in Go gives %v", pg.Values(), pw.Values())
	}
}
