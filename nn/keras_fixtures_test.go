package nn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// Files Keras wrote, taken from public repositories (testdata/keras/README.md
// gives each one's origin and license): gokeras loads their weights into
// the same layers made in Go, and its predictions are those a numpy forward
// pass computes from the file on its own.

// kerasReference is that forward pass. It reads the model's layers from the
// file's model_config attribute (a Keras 2 whole-model file), from the
// architecture JSON given beside a Keras 2 weights file, or from the
// config.json of a Keras 3 .keras archive. A Keras 2 file's weights it
// reads by their Keras names (kernel, bias, gamma, beta, moving_mean,
// moving_variance) under the layer's own name, not by position as gokeras
// matches them; a Keras 3 file's, which have no names, from the group
// Keras 3 names for the layer's class, in the order Keras makes them. It
// prints the predictions, flat, as JSON.
const kerasReference = `
import h5py, io, json, re, sys, zipfile
import numpy as np

path, config_path, shape = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
x = np.array(json.loads(sys.argv[4]), dtype=np.float64).reshape(shape)
keras3 = zipfile.is_zipfile(path)
if keras3:
    # A Keras 3 .keras archive: config.json and model.weights.h5.
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
        f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
else:
    f = h5py.File(path, "r")
    if config_path:
        with open(config_path) as c:
            config = json.load(c)
    else:
        raw = f.attrs["model_config"]
        config = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
group = f["model_weights"] if "model_weights" in f else f
cfg = config["config"]
model_layers = cfg["layers"] if isinstance(cfg, dict) else cfg

def text(s):
    return s.decode() if isinstance(s, bytes) else str(s)

# Keras 3 keeps a layer's variables under layers/<snake-case class>[_n]/vars,
# numbered per class in the order of model.layers (the Input layer not one).
keras3_group, seen = {}, {}
for layer in model_layers:
    if layer["class_name"] == "InputLayer":
        continue
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", layer["class_name"])).lower()
    n = seen.get(snake, 0)
    seen[snake] = n + 1
    keras3_group[layer["config"]["name"]] = snake if n == 0 else snake + "_" + str(n)

def weights(kind, c):
    if not keras3:
        # Keras 2: the datasets weight_names lists, by their names.
        g = group[c["name"]]
        out = {}
        for w in g.attrs["weight_names"]:
            w = text(w)
            out[w.split("/")[-1].split(":")[0]] = np.array(g[w], dtype=np.float64)
        return out
    # Keras 3: vars/<i>, in the order the layer makes its variables.
    if kind == "BatchNormalization":
        names = (["gamma"] if c["scale"] else []) + (["beta"] if c["center"] else []) + ["moving_mean", "moving_variance"]
    else:
        names = ["kernel"] + (["bias"] if c["use_bias"] else [])
    g = f["layers"][keras3_group[c["name"]]]["vars"]
    if len(g) != len(names):
        raise SystemExit(c["name"] + ": " + str(len(g)) + " variables, want " + str(names))
    return {name: np.array(g[str(i)], dtype=np.float64) for i, name in enumerate(names)}

def activation(name, v):
    if name == "linear":
        return v
    if name == "relu":
        return np.maximum(v, 0)
    if name == "tanh":
        return np.tanh(v)
    if name == "softmax":
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    raise SystemExit("activation " + name + " not in the reference")

def conv2d(v, kernel, strides, padding):
    n, h, w, _ = v.shape
    kh, kw, _, filters = kernel.shape
    sh, sw = strides
    if padding == "same":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        v = np.pad(v, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.zeros((n, oh, ow, filters))
    for i in range(oh):
        for j in range(ow):
            patch = v[:, i * sh:i * sh + kh, j * sw:j * sw + kw, :]
            out[:, i, j, :] = np.tensordot(patch, kernel, axes=([1, 2, 3], [0, 1, 2]))
    return out

previous = None
for layer in model_layers:
    kind, c = layer["class_name"], layer["config"]
    inbound = layer.get("inbound_nodes")
    if inbound and isinstance(inbound[0], list) and previous is not None and inbound[0][0][0] != previous:
        raise SystemExit("not a chain of layers: " + c["name"])
    previous = c["name"]
    if kind in ("InputLayer", "Dropout"):
        continue
    if kind == "Flatten":
        x = x.reshape(x.shape[0], -1)
    elif kind == "Activation":
        x = activation(c["activation"], x)
    elif kind == "Dense":
        w = weights(kind, c)
        x = x @ w["kernel"] + (w["bias"] if c["use_bias"] else 0)
        x = activation(c["activation"], x)
    elif kind == "Conv2D":
        if c["data_format"] != "channels_last" or c["dilation_rate"] not in ([1, 1], (1, 1)):
            raise SystemExit("Conv2D options not in the reference")
        w = weights(kind, c)
        x = conv2d(x, w["kernel"], c["strides"], c["padding"]) + (w["bias"] if c["use_bias"] else 0)
        x = activation(c["activation"], x)
    elif kind == "LeakyReLU":
        slope = c["negative_slope"] if "negative_slope" in c else c["alpha"]
        x = np.where(x >= 0, x, slope * x)
    elif kind == "ReLU":
        if c.get("max_value") is not None or c.get("negative_slope", 0) != 0 or c.get("threshold", 0) != 0:
            raise SystemExit("ReLU options not in the reference")
        x = np.maximum(x, 0)
    elif kind in ("MaxPooling2D", "AveragePooling2D"):
        if c["padding"] != "valid" or c["data_format"] != "channels_last":
            raise SystemExit(kind + " options not in the reference")
        (ph, pw), (sh, sw) = c["pool_size"], c["strides"]
        oh, ow = (x.shape[1] - ph) // sh + 1, (x.shape[2] - pw) // sw + 1
        pooled = np.zeros((x.shape[0], oh, ow, x.shape[3]))
        for i in range(oh):
            for j in range(ow):
                window = x[:, i * sh:i * sh + ph, j * sw:j * sw + pw, :]
                pooled[:, i, j, :] = window.max(axis=(1, 2)) if kind == "MaxPooling2D" else window.mean(axis=(1, 2))
        x = pooled
    elif kind == "BatchNormalization":
        if c["axis"] not in (-1, [len(x.shape) - 1], len(x.shape) - 1):
            raise SystemExit("BatchNormalization axis not in the reference")
        w = weights(kind, c)
        x = (x - w["moving_mean"]) / np.sqrt(w["moving_variance"] + c["epsilon"])
        if c["scale"]:
            x = x * w["gamma"]
        if c["center"]:
            x = x + w["beta"]
    else:
        raise SystemExit("layer " + kind + " not in the reference")
print(json.dumps([float(v) for v in x.reshape(-1)]))
`

// kerasFixture is a file Keras wrote and the same model made in Go.
type kerasFixture struct {
	file   string // under testdata/keras
	config string // the architecture JSON beside a Keras 2 weights file; "" for a whole-model file
	input  []int  // one example's shape
	images bool   // inputs in [0, 1], as pixels; else in [-2, 2]
	model  func() *nn.Sequential
	// sums holds the sum of each weight's values, in GetWeights' order, as
	// h5py reads them from the file (by their Keras names in a Keras 2
	// file): checked without python.
	sums []float64
	// swap names two weights (indices in GetWeights' order) of the same
	// shape, or one weight twice for its values in reverse order: the
	// control, loaded so, must predict otherwise.
	swap [2]int
}

var kerasFixtures = []kerasFixture{
	{
		// Keras 2.11's whole-model HDF5 file, though named .keras:
		// Dense(4) → relu → Dense(2) → relu.
		file:  "hls4ml_mlp_streaming.keras",
		input: []int{8},
		model: func() *nn.Sequential {
			return nn.NewSequential(layers.Input(8), layers.Dense(4), layers.NewActivation(layers.ReLU),
				layers.Dense(2), layers.NewActivation(layers.ReLU))
		},
		swap: [2]int{0, 0}, // no two weights alike: the first kernel's values reversed
		sums: []float64{2.274139255285263, 0, -1.5265896320343018, 0},
	},
	{
		// Keras 2.0.8's weights file: three Dense → BatchNormalization
		// (epsilon 1e-6) → relu blocks, then Dense(5) → BatchNormalization
		// → softmax.
		file:   "KERAS_3layer_batch_norm_weights.h5",
		config: "KERAS_3layer_batch_norm.json",
		input:  []int{16},
		model: func() *nn.Sequential {
			bn := func() layers.Layer { return layers.BatchNormalization(layers.Epsilon(1e-6)) }
			return nn.NewSequential(layers.Input(16),
				layers.Dense(64), bn(), layers.NewActivation(layers.ReLU),
				layers.Dense(32), bn(), layers.NewActivation(layers.ReLU),
				layers.Dense(32), bn(), layers.NewActivation(layers.ReLU),
				layers.Dense(5), bn(), layers.NewActivation(layers.Softmax))
		},
		swap: [2]int{4, 5}, // bn1's moving mean and moving variance
		sums: []float64{-7.8305237424265215, -0.1435700541951519, 63.09012085199356, 3.6281001614406705, -0.1799050655317842, 34.974318102002144,
			-1.8629450132941656, 0.11649281826248625, 31.81270581483841, 0.8528751791454852, -0.6536662802100182, 5.464245196431875,
			-6.6302022207164555, 0.016879667586181313, 31.527203917503357, -0.2542901386041194, -2.3764791879802942, 5.182906087487936,
			0.13458067322790157, -0.04817292559891939, 10.104764103889465, 0.004257095046341419, 0.17848382471129298, 0.8459318205714226},
	},
	{
		// Keras 2.0.6's weights file of a functional model on 25×25×1
		// images: BatchNormalization → Conv2D(5, 3, strides 3, same, relu)
		// → Dropout → BatchNormalization → Conv2D(2, 5, strides 2, same,
		// relu) → Dropout → Flatten → Dense(10, relu) → Dropout →
		// Dense(5, softmax).
		file:   "jetTagger_Conv2D_Small.h5",
		config: "jetTagger_Conv2D_Small.json",
		input:  []int{25, 25, 1},
		model: func() *nn.Sequential {
			return nn.NewSequential(layers.Input(25, 25, 1),
				layers.BatchNormalization(),
				layers.Conv2D(5, 3, layers.Strides(3), layers.Padding("same"), layers.ReLU),
				layers.Dropout(0.25),
				layers.BatchNormalization(),
				layers.Conv2D(2, 5, layers.Strides(2), layers.Padding("same"), layers.ReLU),
				layers.Dropout(0.25),
				layers.Flatten(),
				layers.Dense(10, layers.ReLU),
				layers.Dropout(0.25),
				layers.Dense(5, layers.Softmax))
		},
		swap: [2]int{8, 9}, // the second BatchNormalization's gamma and beta
		sums: []float64{1.4794021844863892, 0.09424030035734177, 1.6611230373382568, 728.785888671875,
			2.3312498601153493, 0.0006846796022728086, 5.8014527559280396, 0.4619710110127926, 0.6169683635234833, 10.534493803977966,
			-1.9830588508048095, 0.17023957148194313, -122.55236036579299, 2.59030550904572, -8.339427603408694, -0.024973571300506592},
	},
	{
		// Keras 2.10's whole-model file of a functional model on 28×28×1
		// images, with its optimizer's weights: Conv2D(4, 3, no bias) →
		// BatchNormalization → Activation(relu) → MaxPooling2D →
		// Conv2D(8, 3, strides 2) → ReLU → AveragePooling2D → Flatten →
		// Dense(10, softmax).
		file:   "keras2circom_model.h5",
		input:  []int{28, 28, 1},
		images: true,
		model: func() *nn.Sequential {
			return nn.NewSequential(layers.Input(28, 28, 1),
				layers.Conv2D(4, 3, layers.WithoutBias()),
				layers.BatchNormalization(),
				layers.NewActivation(layers.ReLU),
				layers.MaxPooling2D(),
				layers.Conv2D(8, 3, layers.Strides(2)),
				layers.NewReLU(),
				layers.AveragePooling2D(),
				layers.Flatten(),
				layers.Dense(10, layers.Softmax))
		},
		swap: [2]int{3, 4}, // BatchNormalization's moving mean and moving variance
		sums: []float64{0.5079157250002027, 7.6736061573028564, 0.27773001976311207, 0.0715214773081243, 0.2516510672867298,
			5.6237475466914475, 1.8310345709323883, -28.82985445120721, 0.17034889396745712},
	},
	{
		// Keras 3.9's .keras archive of a Sequential on 2 inputs:
		// Dense(128, relu) → Dropout(0.2) → Dense(64) → LeakyReLU(0.2) →
		// Dense(32) → LeakyReLU(0.2) → Dense(2).
		file:  "flownet_final_model.keras",
		input: []int{2},
		model: func() *nn.Sequential {
			return nn.NewSequential(layers.Input(2),
				layers.Dense(128, layers.ReLU), layers.Dropout(0.2),
				layers.Dense(64), layers.NewLeakyReLU(0.2),
				layers.Dense(32), layers.NewLeakyReLU(0.2),
				layers.Dense(2))
		},
		swap: [2]int{2, 2}, // no two weights alike: the second kernel's values reversed
		sums: []float64{-42.9487799606286, -20.34185863379389, -239.2584146002264, 3.1739387521520257, -8.938430374990276,
			0.4007784260902554, 0.04693840350955725, 0.3207348957657814},
	},
}

// kerasFixtureInputs makes n examples of the given shape, spread over
// [lo, hi], none alike.
func kerasFixtureInputs(n int, shape []int, lo, hi float64) []float32 {
	size := n
	for _, d := range shape {
		size *= d
	}
	x := make([]float32, size)
	for i := range x {
		x[i] = float32(lo + (hi-lo)*(1+math.Sin(0.7*float64(i)+0.3*float64(i*i%17)))/2)
	}
	return x
}

// Each file loads, without python: every weight of the model made in Go
// gets the values the file holds for it (their sums as h5py reads them).
func TestKerasFixturesLoad(t *testing.T) {
	for _, fx := range kerasFixtures {
		t.Run(fx.file, func(t *testing.T) {
			m := fx.model()
			if err := m.Build(fx.input...); err != nil {
				t.Fatal(err)
			}
			if err := m.LoadWeights(filepath.Join("testdata", "keras", fx.file)); err != nil {
				t.Fatal(err)
			}
			ws, err := m.GetWeights()
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != len(fx.sums) {
				t.Fatalf("%d weights, the file holds %d", len(ws), len(fx.sums))
			}
			for i, w := range ws {
				sum := 0.0
				for _, v := range w.Data().([]float32) {
					sum += float64(v)
				}
				if math.Abs(sum-fx.sums[i]) > 1e-9*math.Max(1, math.Abs(fx.sums[i])) {
					t.Errorf("weight %d %v sums to %v, the file's to %v", i, w.Shape(), sum, fx.sums[i])
				}
			}
		})
	}
}

func TestKerasFixturesPredictAsNumpy(t *testing.T) {
	py := h5pyPython(t)
	for _, fx := range kerasFixtures {
		t.Run(fx.file, func(t *testing.T) {
			path := filepath.Join("testdata", "keras", fx.file)
			config := ""
			if fx.config != "" {
				config = filepath.Join("testdata", "keras", fx.config)
			}
			const n = 4
			lo, hi := -2.0, 2.0
			if fx.images {
				lo, hi = 0, 1
			}
			x := kerasFixtureInputs(n, fx.input, lo, hi)
			shape := append([]int{n}, fx.input...)
			shapeJSON, err := json.Marshal(shape)
			if err != nil {
				t.Fatal(err)
			}
			xJSON, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			var want []float64
			if err := json.Unmarshal(runPython(t, py, kerasReference, path, config, string(shapeJSON), string(xJSON)), &want); err != nil {
				t.Fatal(err)
			}

			m := fx.model()
			if err := m.Build(fx.input...); err != nil {
				t.Fatal(err)
			}
			if err := m.LoadWeights(path); err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			predict := func() []float32 {
				t.Helper()
				in, err := data.TensorInputs(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...))))
				if err != nil {
					t.Fatal(err)
				}
				p, err := m.Predict(context.Background(), in)
				if err != nil {
					t.Fatal(err)
				}
				return p.Values()
			}
			got := predict()
			if len(got) != len(want) {
				t.Fatalf("%d predictions, numpy computes %d", len(got), len(want))
			}
			for i := range want {
				if !closeToNumpy(got[i], want[i]) {
					t.Errorf("prediction %d is %v, numpy computes %v from the file", i, got[i], want[i])
				}
			}
			t.Logf("predictions %v", got)

			// The control: the same weights, two of them swapped, predict
			// otherwise, so that the check above would catch a loader that
			// put a weight in the wrong place.
			ws, err := m.GetWeights()
			if err != nil {
				t.Fatal(err)
			}
			a, b := fx.swap[0], fx.swap[1]
			if !slices.Equal(ws[a].Shape(), ws[b].Shape()) {
				t.Fatalf("the control swaps weights %d %v and %d %v: not the same shape", a, ws[a].Shape(), b, ws[b].Shape())
			}
			control := fmt.Sprintf("weights %d and %d swapped", a, b)
			if a == b {
				slices.Reverse(ws[a].Data().([]float32))
				control = fmt.Sprintf("weight %d's values reversed", a)
			} else {
				ws[a], ws[b] = ws[b], ws[a]
			}
			if err := m.SetWeights(ws); err != nil {
				t.Fatal(err)
			}
			differ := 0
			for i, v := range predict() {
				if !closeToNumpy(v, want[i]) {
					differ++
				}
			}
			if differ == 0 {
				t.Errorf("with %s the predictions still match numpy's: the check proves nothing", control)
			} else {
				t.Logf("control: with %s, %d of %d predictions differ from numpy's", control, differ, len(want))
			}
		})
	}
}

// closeToNumpy says whether a float32 prediction is within 1e-5 of numpy's
// float64 one, relative (absolute below 1e-2, where a relative bound asks
// more than float32 sums of a few hundred terms give).
func closeToNumpy(got float32, want float64) bool {
	return math.Abs(float64(got)-want) <= 1e-5*math.Max(math.Abs(want), 1e-2)
}

// The whole-model files among the fixtures (Keras 2 .h5 model files, a
// Keras 3 .keras archive) load with LoadModel alone, their architecture
// read from the file: the same layers as made in Go, and the predictions
// numpy computes from the file.
func TestLoadModelOfKerasFixturesPredictsAsNumpy(t *testing.T) {
	py := h5pyPython(t)
	for _, fx := range kerasFixtures {
		if fx.config != "" {
			continue // a weights file beside its JSON: no model in the file
		}
		t.Run(fx.file, func(t *testing.T) {
			path := filepath.Join("testdata", "keras", fx.file)
			m, err := nn.LoadModel(path)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, l := range m.Layers() {
				got = append(got, l.Type())
			}
			for _, l := range fx.model().Layers() {
				want = append(want, l.Type())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("layers %v, want %v", got, want)
			}
			if !slices.Equal(m.InputShape(), fx.input) {
				t.Fatalf("input shape %v, want %v", m.InputShape(), fx.input)
			}
			if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			const n = 4
			lo, hi := -2.0, 2.0
			if fx.images {
				lo, hi = 0, 1
			}
			x := kerasFixtureInputs(n, fx.input, lo, hi)
			shape := append([]int{n}, fx.input...)
			shapeJSON, _ := json.Marshal(shape)
			xJSON, _ := json.Marshal(x)
			var ref []float64
			if err := json.Unmarshal(runPython(t, py, kerasReference, path, "", string(shapeJSON), string(xJSON)), &ref); err != nil {
				t.Fatal(err)
			}
			in, err := data.TensorInputs(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Values()) != len(ref) {
				t.Fatalf("%d predictions, numpy computes %d", len(p.Values()), len(ref))
			}
			for i, v := range p.Values() {
				if !closeToNumpy(v, ref[i]) {
					t.Errorf("prediction %d is %v, numpy computes %v from the file", i, v, ref[i])
				}
			}
		})
	}
}

// LoadModel compiles a Keras file's model with the file's training
// settings, as Keras' load_model does: keras2circom's with Adam (its
// learning rate and betas as Keras wrote them), categorical cross-entropy
// and Keras 2's "acc"; FlowNet's (Keras 3) with Adam and mean squared
// error; hls4ml's file names no loss and stays uncompiled, as every model
// does with LoadCompiled(false). The loss Evaluate reports is the one the
// file names, computed here from Predict's output.
func TestLoadModelCompilesAsTheKerasFileSays(t *testing.T) {
	dir := filepath.Join("testdata", "keras")
	tests := []struct {
		file    string
		input   []int
		outputs int
		opt     string
		metric  string // "" for none
		loss    func(p, y []float32) float64
	}{
		{"keras2circom_model.h5", []int{28, 28, 1}, 10, "Adam", "acc", func(p, y []float32) float64 {
			var sum float64
			for i := range p {
				if y[i] == 1 {
					sum -= math.Log(float64(p[i]))
				}
			}
			return sum
		}},
		{"flownet_final_model.keras", []int{2}, 2, "Adam", "", func(p, y []float32) float64 {
			var sum float64
			for i := range p {
				d := float64(p[i]) - float64(y[i])
				sum += d * d / 2 // a mean over the 2 outputs
			}
			return sum
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m, err := nn.LoadModel(filepath.Join(dir, tc.file), nn.CompileOptions(nn.OnDevice("/CPU:0")))
			if err != nil {
				t.Fatal(err)
			}
			opt := m.Optimizer()
			if opt == nil {
				t.Fatal("not compiled")
			}
			if opt.Name() != tc.opt || math.Abs(opt.LearningRate()-0.001) > 1e-9 {
				t.Errorf("optimizer %s, learning rate %v; want %s, 0.001", opt.Name(), opt.LearningRate(), tc.opt)
			}
			const n = 3
			x := kerasFixtureInputs(n, tc.input, 0, 1)
			y := make([]float32, n*tc.outputs)
			for i := 0; i < n; i++ {
				y[i*tc.outputs+i%tc.outputs] = 1
			}
			shape := append([]int{n}, tc.input...)
			ds, err := data.TensorData(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)),
				tensor.New(tensor.WithShape(n, tc.outputs), tensor.WithBacking(y)))
			if err != nil {
				t.Fatal(err)
			}
			logs, err := m.Evaluate(context.Background(), ds, nn.Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(context.Background(), ds)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.loss(p.Values(), y) / n
			if math.Abs(logs["loss"]-want) > 1e-5*math.Max(1, want) {
				t.Errorf("Evaluate's loss %v, the file's loss of Predict's output %v", logs["loss"], want)
			}
			if _, ok := logs[tc.metric]; tc.metric != "" && !ok {
				t.Errorf("logs %v have no %q", logs, tc.metric)
			}
			if tc.metric == "" && len(logs) != 1 {
				t.Errorf("logs %v: want the loss alone", logs)
			}
		})
	}
	m, err := nn.LoadModel(filepath.Join(dir, "hls4ml_mlp_streaming.keras"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Optimizer() != nil {
		t.Error("a file that names no loss: compiled")
	}
	m, err = nn.LoadModel(filepath.Join(dir, "keras2circom_model.h5"), nn.LoadCompiled(false))
	if err != nil {
		t.Fatal(err)
	}
	if m.Optimizer() != nil {
		t.Error("LoadCompiled(false): compiled")
	}
}

// The architecture JSON beside a weights file (Keras 2.0's model.to_json():
// functional "Model" configs) makes the model with ModelFromJSON, as
// model_from_json does in Keras; with the file's weights loaded it predicts
// what numpy computes, and has the layers made in Go.
func TestModelFromJSONOfKerasFixtures(t *testing.T) {
	py := h5pyPython(t)
	for _, fx := range kerasFixtures {
		if fx.config == "" {
			continue
		}
		t.Run(fx.config, func(t *testing.T) {
			config := filepath.Join("testdata", "keras", fx.config)
			path := filepath.Join("testdata", "keras", fx.file)
			js, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			m, err := nn.ModelFromJSON(js)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, l := range m.Layers() {
				if l.Type() != "InputLayer" {
					got = append(got, l.Type())
				}
			}
			for _, l := range fx.model().Layers() {
				want = append(want, l.Type())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("layers %v, want %v", got, want)
			}
			if err := m.LoadWeights(path); err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(newSGD(t, 0.1), losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			const n = 4
			lo, hi := -2.0, 2.0
			if fx.images {
				lo, hi = 0, 1
			}
			x := kerasFixtureInputs(n, fx.input, lo, hi)
			shape := append([]int{n}, fx.input...)
			shapeJSON, _ := json.Marshal(shape)
			xJSON, _ := json.Marshal(x)
			var ref []float64
			if err := json.Unmarshal(runPython(t, py, kerasReference, path, config, string(shapeJSON), string(xJSON)), &ref); err != nil {
				t.Fatal(err)
			}
			in, err := data.TensorInputs(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range p.Values() {
				if !closeToNumpy(v, ref[i]) {
					t.Errorf("prediction %d is %v, numpy computes %v from the files", i, v, ref[i])
				}
			}
		})
	}
}
