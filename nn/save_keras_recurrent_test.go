package nn_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// keras2RecurrentJSON is a Keras 2.15 Sequential config (model.to_json())
// of an LSTM, a GRU and a SimpleRNN, each argument as Keras writes it.
const keras2RecurrentJSON = `{"class_name": "Sequential", "config": {"name": "sequential", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 5, 3], "dtype": "float32", "sparse": false, "ragged": false, "name": "lstm_input"}},
 {"class_name": "LSTM", "config": {"name": "lstm", "trainable": true, "dtype": "float32", "return_sequences": true, "return_state": false,
  "go_backwards": false, "stateful": false, "unroll": false, "time_major": false, "units": 4, "activation": "tanh",
  "recurrent_activation": "sigmoid", "use_bias": true,
  "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
  "recurrent_initializer": {"module": "keras.initializers", "class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}, "registered_name": null},
  "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null},
  "unit_forget_bias": true, "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null,
  "activity_regularizer": null, "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null,
  "dropout": 0.0, "recurrent_dropout": 0.0, "implementation": 2}},
 {"class_name": "GRU", "config": {"name": "gru", "trainable": true, "dtype": "float32", "return_sequences": true, "return_state": false,
  "go_backwards": true, "stateful": false, "unroll": false, "time_major": false, "units": 3, "activation": "tanh",
  "recurrent_activation": "sigmoid", "use_bias": true,
  "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
  "recurrent_initializer": {"module": "keras.initializers", "class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}, "registered_name": null},
  "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null},
  "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null,
  "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null, "dropout": 0.0, "recurrent_dropout": 0.0,
  "implementation": 2, "reset_after": true}},
 {"class_name": "SimpleRNN", "config": {"name": "simple_rnn", "trainable": true, "dtype": "float32", "return_sequences": false,
  "return_state": false, "go_backwards": false, "stateful": false, "unroll": false, "time_major": false, "units": 2,
  "activation": "tanh", "use_bias": true,
  "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
  "recurrent_initializer": {"module": "keras.initializers", "class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}, "registered_name": null},
  "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null},
  "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null,
  "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null, "dropout": 0.0, "recurrent_dropout": 0.0}}
]}, "keras_version": "2.15.0", "backend": "tensorflow"}`

// keras3LSTMJSON is a Keras 3 Sequential config of an LSTM, as Keras 3.9
// writes one (dtype policies, seed, zero_output_for_mask, build configs).
const keras3LSTMJSON = `{"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": true,
 "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null},
 "layers": [
  {"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 7, 2], "dtype": "float32", "sparse": false, "name": "input_layer"}, "registered_name": null},
  {"module": "keras.layers", "class_name": "LSTM", "config": {"name": "lstm", "trainable": true,
   "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null},
   "return_sequences": false, "return_state": false, "go_backwards": true, "stateful": false, "unroll": false, "zero_output_for_mask": false,
   "units": 5, "activation": "tanh", "recurrent_activation": "sigmoid", "use_bias": true,
   "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null},
   "recurrent_initializer": {"module": "keras.initializers", "class_name": "Orthogonal", "config": {"seed": null, "gain": 1.0}, "registered_name": null},
   "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null},
   "unit_forget_bias": true, "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null,
   "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null, "dropout": 0.0, "recurrent_dropout": 0.0, "seed": null},
   "registered_name": null, "build_config": {"input_shape": [null, 7, 2]}}],
 "build_input_shape": [null, 7, 2]}, "registered_name": null, "build_config": {"input_shape": [null, 7, 2]}}`

// TestKeras3LSTMConfig: a Keras 3 config of an LSTM makes it.
func TestKeras3LSTMConfig(t *testing.T) {
	m, err := nn.ModelFromJSON([]byte(keras3LSTMJSON))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ls := m.Layers()
	if len(ls) != 1 || ls[0].Type() != "LSTM" || ls[0].Name() != "lstm" {
		t.Fatalf("layers %v, want the LSTM", ls)
	}
	c, err := layers.ConfigOf(ls[0])
	if err != nil {
		t.Fatal(err)
	}
	if c.Config["units"] != 5 || c.Config["go_backwards"] != true {
		t.Errorf("config %v", c.Config)
	}
	if got := m.CountParams(); got != 4*(2*5+5*5+5) {
		t.Errorf("%d parameters, want %d", got, 4*(2*5+5*5+5))
	}
}

// TestKerasRecurrentConfig: a Keras 2 config of the three recurrent
// layers makes them with its arguments and Keras' weight shapes; a
// dropout gokeras does not do yet is refused, naming it.
func TestKerasRecurrentConfig(t *testing.T) {
	m, err := nn.ModelFromJSON([]byte(keras2RecurrentJSON))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got []string
	for _, l := range m.Layers() {
		c, err := layers.ConfigOf(l)
		if err != nil {
			t.Fatal(err)
		}
		var shapes []string
		for _, p := range l.Params() {
			shapes = append(shapes, strings.Trim(strings.ReplaceAll(jsonText(t, []int(p.Value.Shape())), ",", "x"), "[]"))
		}
		got = append(got, strings.Join([]string{l.Name(), l.Type(), jsonText(t, c.Config["return_sequences"]), jsonText(t, c.Config["go_backwards"]),
			strings.Join(shapes, " ")}, " "))
	}
	want := []string{
		"lstm LSTM true false 3x16 4x16 16",
		"gru GRU true true 4x9 3x9 2x9",
		"simple_rnn SimpleRNN false false 3x2 2x2 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("layers %q, want %q", got, want)
	}
	// Dropout and recurrent dropout load with their rates, and are
	// written back; a rate outside [0, 1) is refused, naming it.
	dropped := strings.Replace(keras2RecurrentJSON, `"dropout": 0.0, "recurrent_dropout": 0.0, "implementation": 2}}`, `"dropout": 0.5, "recurrent_dropout": 0.25, "implementation": 2}}`, 1)
	dm, err := nn.ModelFromJSON([]byte(dropped))
	if err != nil {
		t.Fatalf("an LSTM with dropout: %v", err)
	}
	defer dm.Close()
	c, err := layers.ConfigOf(dm.Layers()[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonText(t, c.Config["dropout"]) + " " + jsonText(t, c.Config["recurrent_dropout"]); got != "0.5 0.25" {
		t.Errorf("the LSTM's dropout and recurrent_dropout are written as %s, want 0.5 0.25", got)
	}
	bad := strings.Replace(keras2RecurrentJSON, `"dropout": 0.0, "recurrent_dropout": 0.0, "implementation": 2}}`, `"dropout": 1.5, "recurrent_dropout": 0.0, "implementation": 2}}`, 1)
	if _, err := nn.ModelFromJSON([]byte(bad)); err == nil || !strings.Contains(err.Error(), "dropout = 1.5") {
		t.Errorf("an LSTM with dropout 1.5: %v", err)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// recurrentModel is an LSTM, a GRU and a Dense layer.
func recurrentModel(t *testing.T, seed uint64) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Input(5, 3), layers.LSTM(4, layers.ReturnSequences()), layers.GRU(3), layers.Dense(2))
	m.SetSeed(seed)
	if err := m.Build(5, 3); err != nil {
		t.Fatal(err)
	}
	return m
}

// Files h5py writes as Keras lays a recurrent layer's weights out (Keras
// 3: layers/lstm/cell/vars/i; Keras 2: lstm/lstm/lstm_cell/kernel:0)
// load into gokeras' layers, and the files gokeras writes hold them
// there.
func TestKerasRecurrentWeightsFiles(t *testing.T) {
	py := h5pyPython(t)
	dir := t.TempDir()
	m := recurrentModel(t, 1)
	want := flatWeights(t, m)
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	const write = `
import h5py, json, sys
import numpy as np
values = np.array(json.loads(sys.argv[2]), dtype=np.float32)
shapes = [[3, 16], [4, 16], [16], [4, 9], [3, 9], [2, 9], [3, 2], [2]]
arrays, at = [], 0
for s in shapes:
    n = int(np.prod(s))
    arrays.append(values[at:at + n].reshape(s))
    at += n
layers = [("lstm", "lstm_cell", ["kernel", "recurrent_kernel", "bias"], arrays[0:3]),
          ("gru", "gru_cell", ["kernel", "recurrent_kernel", "bias"], arrays[3:6]),
          ("dense", None, ["kernel", "bias"], arrays[6:8])]
with h5py.File(sys.argv[1], "w") as f:
    if sys.argv[3] == "3":
        f.create_group("vars")
        for name, cell, _, arrs in layers:
            g = f.create_group("layers/" + name)
            own = g.create_group("vars")
            v = g.create_group("cell/vars") if cell else own
            for i, a in enumerate(arrs):
                v.create_dataset(str(i), data=a)
    else:
        f.attrs["keras_version"] = b"2.15.0"
        f.attrs["layer_names"] = np.array([n.encode() for n, _, _, _ in layers])
        for name, cell, ws, arrs in layers:
            g = f.create_group(name)
            prefix = name + "/" + (cell + "/" if cell else "")
            g.attrs["weight_names"] = np.array([(prefix + w + ":0").encode() for w in ws])
            for w, a in zip(ws, arrs):
                g.create_dataset(prefix + w + ":0", data=a)
`
	const list = `
import h5py, sys
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(lambda name, obj: print(name) if isinstance(obj, h5py.Dataset) else None)
`
	for _, layout := range []string{"3", "2"} {
		path := filepath.Join(dir, "keras"+layout+".h5")
		runPython(t, py, write, path, string(wantJSON), layout)
		got := recurrentModel(t, 5)
		if err := got.LoadWeights(path); err != nil {
			t.Fatalf("Keras %s layout: %v", layout, err)
		}
		if g := flatWeights(t, got); !slices.Equal(g, want) {
			t.Errorf("Keras %s layout: loaded weights differ from what h5py wrote", layout)
		}
		got.Close()
	}
	for file, places := range map[string][]string{
		"k3.weights.h5": {"layers/dense/vars/0", "layers/dense/vars/1", "layers/gru/cell/vars/0", "layers/gru/cell/vars/1", "layers/gru/cell/vars/2",
			"layers/lstm/cell/vars/0", "layers/lstm/cell/vars/1", "layers/lstm/cell/vars/2"},
		"k2.h5": {"dense/dense/bias:0", "dense/dense/kernel:0", "gru/gru/gru_cell/bias:0", "gru/gru/gru_cell/kernel:0", "gru/gru/gru_cell/recurrent_kernel:0",
			"lstm/lstm/lstm_cell/bias:0", "lstm/lstm/lstm_cell/kernel:0", "lstm/lstm/lstm_cell/recurrent_kernel:0"},
	} {
		path := filepath.Join(dir, file)
		if err := m.SaveWeights(path); err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(string(runPython(t, py, list, path)))
		slices.Sort(got)
		if !slices.Equal(got, places) {
			t.Errorf("%s: h5py finds %q, want %q", file, got, places)
		}
	}
}

// LoadModel reads a Keras 2 whole-model .h5 of an LSTM, a GRU and a
// SimpleRNN and a Keras 3 .keras archive of an LSTM (configs as Keras
// writes them, weights in their cells): the models predict what the same
// layers made in Go predict with those weights.
func TestLoadModelOfKerasRecurrentFiles(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		model        func() *nn.Sequential
		input        []int
	}{
		{"m.h5", keras2RecurrentJSON, func() *nn.Sequential {
			return nn.NewSequential(layers.Input(5, 3), layers.LSTM(4, layers.ReturnSequences()),
				layers.GRU(3, layers.ReturnSequences(), layers.GoBackwards()), layers.SimpleRNN(2))
		}, []int{5, 3}},
		{"m.keras", keras3LSTMJSON, func() *nn.Sequential {
			return nn.NewSequential(layers.Input(7, 2), layers.LSTM(5, layers.GoBackwards()))
		}, []int{7, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.model()
			defer want.Close()
			want.SetSeed(9)
			if err := want.Build(tc.input...); err != nil {
				t.Fatal(err)
			}
			path := kerasFileOf(t, want, tc.name, tc.config)
			got, err := nn.LoadModel(path)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			if g, w := flatWeights(t, got), flatWeights(t, want); !slices.Equal(g, w) {
				t.Fatal("the loaded model's weights differ from the file's")
			}
			n := 4 * tc.input[0] * tc.input[1]
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%7)/3 - 1
			}
			ds, err := data.TensorInputs(tensor.New(tensor.WithShape(4, tc.input[0], tc.input[1]), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			predict := func(m *nn.Sequential) []float32 {
				sgd, err := optim.NewSGD(optim.SGDConfig{})
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
					t.Fatal(err)
				}
				p, err := m.PredictTensor(context.Background(), ds)
				if err != nil {
					t.Fatal(err)
				}
				return p.Data().([]float32)
			}
			if g, w := predict(got), predict(want); !slices.Equal(g, w) {
				t.Errorf("the loaded model predicts %v, want %v", g, w)
			}
		})
	}
}
