package nn

import (
	"errors"
	"math"
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
)

// savedModelFile saves a small trained model, its optimizer's state
// included, and returns the file's path.
func savedModelFile(t *testing.T) (string, *Sequential) {
	t.Helper()
	opt, err := optim.NewAdam(optim.AdamConfig{Options: optim.Options{
		Schedule: optim.ExponentialDecay{InitialLearningRate: 0.01, DecaySteps: 5, DecayRate: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	m := NewSequential(layers.Input(4), layers.Dense(6, layers.ReLU), layers.Dense(3, layers.Softmax))
	if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	fitOnce(t, m, saveData(t, 16, []int{4}, 0, 3, false, 6))
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	return path, m
}

// TestLoadModelErrors checks that each way a model file can be wrong is an
// error that names the cause and the fix, and that the good file loads.
func TestLoadModelErrors(t *testing.T) {
	good, model := savedModelFile(t)
	f, err := safetensors.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// editConfig replaces old with new in the model's JSON config; old
	// must be there.
	editConfig := func(old, new string) func(*testing.T, *safetensors.File) {
		return func(t *testing.T, f *safetensors.File) {
			js := f.Metadata[metaModelConfig]
			if !strings.Contains(js, old) {
				t.Fatalf("the model config has no %q:\n%s", old, js)
			}
			f.Metadata[metaModelConfig] = strings.Replace(js, old, new, 1)
		}
	}
	editTensor := func(name string, edit func(*safetensors.Tensor)) func(*testing.T, *safetensors.File) {
		return func(t *testing.T, f *safetensors.File) {
			i := slices.IndexFunc(f.Tensors, func(x safetensors.Tensor) bool { return x.Name == name })
			if i < 0 {
				t.Fatalf("the file has no tensor %q: %v", name, f.Names())
			}
			edit(&f.Tensors[i])
		}
	}
	cases := []struct {
		name string
		edit func(*testing.T, *safetensors.File)
		file func(*testing.T) string // instead of an edited copy of the good file
		want []string
	}{
		{name: "a newer format version",
			edit: func(_ *testing.T, f *safetensors.File) { f.Metadata[metaVersion] = "3" },
			want: []string{"newer gokeras", "model format version 3", "reads model format version 2", "update gokeras"}},
		{name: "a version that is no number",
			edit: func(_ *testing.T, f *safetensors.File) { f.Metadata[metaVersion] = "one" },
			want: []string{`gokeras.version is "one"`, "save the model again"}},
		{name: "a weights file",
			file: func(t *testing.T) string {
				path := filepath.Join(t.TempDir(), "w.safetensors")
				if err := model.SaveWeights(path); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: []string{"weights only", "LoadWeights", "Save"}},
		{name: "a checkpoint",
			file: func(t *testing.T) string {
				path := filepath.Join(t.TempDir(), "ck.safetensors")
				if err := model.SaveCheckpoint(path, Checkpoint{Epoch: 1}); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: []string{"training checkpoint", "LoadCheckpoint"}},
		{name: "a safetensors file of another program",
			edit: func(_ *testing.T, f *safetensors.File) { f.Metadata = nil },
			want: []string{"not a gokeras model", "Save"}},
		{name: "no model config",
			edit: func(_ *testing.T, f *safetensors.File) { delete(f.Metadata, metaModelConfig) },
			want: []string{"no model config", "save the model again"}},
		{name: "corrupt JSON",
			edit: func(_ *testing.T, f *safetensors.File) {
				f.Metadata[metaModelConfig] = f.Metadata[metaModelConfig][:40]
			},
			want: []string{"model config", "not valid", "damaged", "save the model again"}},
		{name: "JSON of another format version",
			edit: editConfig(`"format_version":1`, `"format_version":3`),
			want: []string{"format_version 3", "version 1", "save the model again"}},
		{name: "an unknown layer class",
			edit: editConfig(`"class_name":"Dense"`, `"class_name":"Dense3D"`),
			want: []string{"layer 1", `unknown layer class "Dense3D"`, "the known layer classes are Activation, ", "BatchNormalization, ", "Conv1D, ", "newer gokeras", "update gokeras"}},
		{name: "an unknown layer argument",
			edit: editConfig(`"units":6`, `"units":6,"colour":"red"`),
			want: []string{"layer 1", `unknown argument "colour"`}},
		{name: "a layer argument of the wrong type",
			edit: editConfig(`"units":6`, `"units":"six"`),
			want: []string{"layer 1", `argument "units" is a JSON string`}},
		{name: "a bad layer argument",
			edit: editConfig(`"units":6`, `"units":-6`),
			want: []string{"units must be a positive integer, got -6"}},
		{name: "a huge layer the file has no weights for",
			edit: editConfig(`"units":6`, `"units":1099511627776`),
			want: []string{`tensor "dense/kernel" has shape (4, 6)`, `layer "dense"`, "makes shape (4, 1099511627776)", "save the model again"}},
		{name: "a huge input the file has no weights for",
			edit: editConfig(`"input_shape":[4]`, `"input_shape":[4000000000000]`),
			want: []string{`tensor "dense/kernel" has shape (4, 6)`, "makes shape (4000000000000, 6)", "save the model again"}},
		{name: "an input shape that is not one",
			edit: editConfig(`"input_shape":[4]`, `"input_shape":[0]`),
			want: []string{"input_shape [0] is not a shape", "save the model again"}},
		{name: "an input the weights do not fit",
			edit: editConfig(`"input_shape":[4]`, `"input_shape":[4,2]`),
			want: []string{`tensor "dense/kernel" has shape (4, 6)`, "the file is not this model's"}},
		{name: "two layers of one name",
			edit: editConfig(`"name":"dense_1"`, `"name":"dense"`),
			want: []string{`both named "dense"`, "save the model again"}},
		{name: "an unknown loss class",
			edit: editConfig(`"class_name":"CategoricalCrossentropy"`, `"class_name":"FocalLoss"`),
			want: []string{"the loss", `unknown loss class "FocalLoss"`, "BinaryCrossentropy", "update gokeras"}},
		{name: "an unknown metric class",
			edit: editConfig(`"class_name":"accuracy"`, `"class_name":"Accurate"`),
			want: []string{"metric 1", `unknown metric class "Accurate"`, "AUC", "update gokeras"}},
		{name: "an unknown optimizer class",
			edit: editConfig(`"class_name":"Adam"`, `"class_name":"Lion"`),
			want: []string{"the optimizer", `unknown optimizer class "Lion"`, "RMSprop", "update gokeras"}},
		{name: "an unknown schedule class",
			edit: editConfig(`"class_name":"ExponentialDecay"`, `"class_name":"StepDecay"`),
			want: []string{"learning_rate", `unknown schedule class "StepDecay"`, "CosineDecay", "update gokeras"}},
		{name: "a missing weight",
			edit: func(_ *testing.T, f *safetensors.File) {
				f.Tensors = slices.DeleteFunc(f.Tensors, func(x safetensors.Tensor) bool { return x.Name == "dense/bias" })
			},
			want: []string{`no tensor "dense/bias"`, `layer "dense"`, "save the model again"}},
		{name: "an extra weight",
			edit: func(_ *testing.T, f *safetensors.File) {
				f.Tensors = append(f.Tensors, safetensors.Tensor{Name: "dense_2/kernel", Shape: []int{1}, Data: []float32{1}})
			},
			want: []string{`"dense_2/kernel"`, "none of the layers", "dense/kernel, dense/bias, dense_1/kernel, dense_1/bias", "save the model again"}},
		{name: "a weight of the wrong shape",
			edit: editTensor("dense/bias", func(x *safetensors.Tensor) { x.Shape = []int{2, 3} }),
			want: []string{`"dense/bias" has shape (2, 3)`, `layer "dense"`, "makes shape (6", "save the model again"}},
		{name: "a weight that is not finite",
			edit: editTensor("dense_1/kernel", func(x *safetensors.Tensor) { x.Data[4] = float32(math.Inf(1)) }),
			want: []string{"weight dense_1/kernel holds +Inf at index 4", "diverged"}},
		{name: "an optimizer slot that is not finite",
			edit: editTensor("optimizer/dense/kernel/m", func(x *safetensors.Tensor) { x.Data[1] = float32(math.NaN()) }),
			want: []string{"optimizer slot m of dense/kernel holds NaN at index 1", "diverged"}},
		{name: "an optimizer slot of an unknown weight",
			edit: editTensor("optimizer/dense/kernel/m", func(x *safetensors.Tensor) { x.Name = "optimizer/dense_9/kernel/m" }),
			want: []string{`weight "dense_9/kernel"`, "save the model again"}},
		{name: "optimizer state the config denies",
			edit: editConfig(`"include_optimizer":true`, `"include_optimizer":false`),
			want: []string{"optimizer tensors", "include_optimizer false", "save the model again"}},
		{name: "the state of another optimizer",
			edit: func(_ *testing.T, f *safetensors.File) { f.Metadata[metaOptimizer] = "SGD" },
			want: []string{"state of the SGD optimizer", "config is of Adam", "save the model again"}},
		{name: "a step count that is no number",
			edit: func(_ *testing.T, f *safetensors.File) { f.Metadata[metaIterations] = "-" },
			want: []string{`gokeras.optimizer.iterations is "-"`, "save the model again"}},
		// Read by the reader of optimizer state checkpoints use: the
		// same refusals (see TestLoadRefusesDamagedOptimizerState).
		{name: "an optimizer slot missing",
			edit: func(_ *testing.T, f *safetensors.File) {
				f.Tensors = slices.DeleteFunc(f.Tensors, func(x safetensors.Tensor) bool { return x.Name == "optimizer/dense_1/bias/v" })
			},
			want: []string{"optimizer slot v of dense_1/bias is missing, though Adam took", "save the model again"}},
		{name: "a negative second moment",
			edit: editTensor("optimizer/dense/kernel/v", func(x *safetensors.Tensor) { x.Data[3] = -0.25 }),
			want: []string{"optimizer slot v of dense/kernel holds -0.25 at index 3, but it accumulates squares", "save the model again"}},
		{name: "a step count past any training",
			edit: func(_ *testing.T, f *safetensors.File) { f.Metadata[metaIterations] = "9223372036854775807" },
			want: []string{"9223372036854775807 iterations is more than", "save the model again"}},
		{name: "an optimizer slot of the wrong size",
			edit: editTensor("optimizer/dense/bias/m", func(x *safetensors.Tensor) { x.Shape, x.Data = []int{2}, x.Data[:2] }),
			want: []string{`optimizer state "optimizer/dense/bias/m" has 2 values`, `weight "dense/bias" has 6 in the model it describes`, "save the model again"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var path string
			if c.file != nil {
				path = c.file(t)
			} else {
				g, err := safetensors.ReadFile(good)
				if err != nil {
					t.Fatal(err)
				}
				c.edit(t, g)
				path = filepath.Join(t.TempDir(), "bad.safetensors")
				if err := safetensors.WriteFile(path, g.Tensors, g.Metadata); err != nil {
					t.Fatal(err)
				}
			}
			m, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
			if err == nil {
				t.Fatalf("LoadModel loaded it: %v", m.Layers())
			}
			for _, w := range append([]string{"load model: ", path}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
	t.Run("the good file", func(t *testing.T) {
		if _, err := LoadModel(good, CompileOptions(OnDevice("/CPU:0"))); err != nil {
			t.Fatal(err)
		}
		if len(f.Metadata[metaModelConfig]) == 0 {
			t.Fatal("no model config written")
		}
	})
	t.Run("no file", func(t *testing.T) {
		_, err := LoadModel(filepath.Join(t.TempDir(), "none.safetensors"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("got %v, want an error matching os.ErrNotExist", err)
		}
	})
}

type (
	opaqueLayer       struct{ layers.Layer }
	opaqueInitializer struct{ layers.Initializer }
	opaqueLoss        struct{ losses.Loss }
	opaqueMetric      struct{ metrics.Metric }
	opaqueOptimizer   struct{ optim.Optimizer }
)

// TestSaveModelErrors checks that what Save cannot write is an error that
// names it, and that it leaves the file there as it was.
func TestSaveModelErrors(t *testing.T) {
	adam := func(t *testing.T) optim.Optimizer {
		o, err := optim.NewAdam(optim.AdamConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	compiled := func(t *testing.T, opt optim.Optimizer, loss losses.Loss, ms []metrics.Metric, ls ...layers.Layer) *Sequential {
		m := NewSequential(append([]layers.Layer{layers.Input(3)}, ls...)...)
		if err := m.Compile(opt, loss, ms, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		return m
	}
	dir := t.TempDir()
	cases := []struct {
		name  string
		model func(t *testing.T) *Sequential
		path  string
		opts  []SaveOption
		want  []string
	}{
		{name: "a nil model", model: func(*testing.T) *Sequential { return nil }, want: []string{ErrNilModel.Error()}},
		{name: "a directory", path: dir, model: func(t *testing.T) *Sequential {
			return compiled(t, adam(t), losses.MeanSquaredError{}, nil, layers.Dense(2))
		}, want: []string{dir}},
		{name: "a missing folder", path: filepath.Join(dir, "no", "m.safetensors"), model: func(t *testing.T) *Sequential {
			return compiled(t, adam(t), losses.MeanSquaredError{}, nil, layers.Dense(2))
		}, want: []string{filepath.Join(dir, "no")}},
		{name: "an unbuilt model", model: func(*testing.T) *Sequential { return NewSequential(layers.Dense(2)) },
			want: []string{"not built", "Build"}},
		{name: "a layer of another package", model: func(t *testing.T) *Sequential {
			return compiled(t, adam(t), losses.MeanSquaredError{}, nil, opaqueLayer{layers.Dense(2)})
		}, want: []string{"layer 1", "nn.opaqueLayer", "has no config", "SaveWeights"}},
		{name: "an initializer of another package", model: func(t *testing.T) *Sequential {
			return compiled(t, adam(t), losses.MeanSquaredError{}, nil, layers.Dense(2, layers.KernelInitializer(opaqueInitializer{layers.Ones()})))
		}, want: []string{"layer 1", "kernel_initializer", "nn.opaqueInitializer", "has no config"}},
		{name: "a loss of another package", model: func(t *testing.T) *Sequential {
			return compiled(t, adam(t), opaqueLoss{losses.MeanSquaredError{}}, nil, layers.Dense(2))
		}, want: []string{"the loss", "nn.opaqueLoss", "has no config"}},
		{name: "a metric of another package", model: func(t *testing.T) *Sequential {
			return compiled(t, adam(t), losses.MeanSquaredError{}, []metrics.Metric{opaqueMetric{&metrics.Accuracy{}}}, layers.Dense(2))
		}, want: []string{"metric 1", "nn.opaqueMetric", "has no config"}},
		{name: "an optimizer of another package", model: func(t *testing.T) *Sequential {
			return compiled(t, opaqueOptimizer{adam(t)}, losses.MeanSquaredError{}, nil, layers.Dense(2))
		}, want: []string{"the optimizer", "nn.opaqueOptimizer", "has no config"}},
		{name: "a weight that is not finite", model: func(t *testing.T) *Sequential {
			m := compiled(t, adam(t), losses.MeanSquaredError{}, nil, layers.Dense(2))
			m.layers[0].Params()[0].Value.Data().([]float32)[3] = float32(math.NaN())
			return m
		}, want: []string{"weight dense/kernel holds NaN at index 3", "training diverged", "unchanged"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			if path == "" {
				path = filepath.Join(t.TempDir(), "m.safetensors")
				if err := os.WriteFile(path, []byte("the previous file"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := c.model(t).Save(path, c.opts...)
			if err == nil {
				t.Fatal("Save wrote the file")
			}
			for _, w := range append([]string{"save model: "}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if c.path == "" {
				if got, err := os.ReadFile(path); err != nil || string(got) != "the previous file" {
					t.Errorf("the file there became %q (%v)", got, err)
				}
			}
		})
	}
}

// TestSaveModelFileLayout checks what the file holds: the weights under
// SaveWeights' names, readable by LoadWeights, the optimizer's slots as a
// checkpoint names them, and the metadata Save documents.
func TestSaveModelFileLayout(t *testing.T) {
	path, m := savedModelFile(t)
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dense/bias", "dense/kernel", "dense_1/bias", "dense_1/kernel",
		"optimizer/dense/bias/m", "optimizer/dense/bias/v", "optimizer/dense/kernel/m", "optimizer/dense/kernel/v",
		"optimizer/dense_1/bias/m", "optimizer/dense_1/bias/v", "optimizer/dense_1/kernel/m", "optimizer/dense_1/kernel/v",
	}
	if got := f.Names(); !slices.Equal(got, want) {
		t.Errorf("tensors %v, want %v", got, want)
	}
	for k, v := range map[string]string{
		"gokeras.kind": "model", "gokeras.version": "1", "gokeras.model": "sequential", "gokeras.optimizer": "Adam",
		"gokeras.optimizer.iterations": "2", // 16 samples in batches of 8
	} {
		if f.Metadata[k] != v {
			t.Errorf("metadata %s is %q, want %q", k, f.Metadata[k], v)
		}
	}
	js, err := ReadModelConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"format_version": 1`, `"class_name": "Sequential"`, `"input_shape": [`, `"class_name": "Dense"`,
		`"units": 6`, `"compile_config": {`, `"class_name": "ExponentialDecay"`, `"include_optimizer": true`} {
		if !strings.Contains(string(js), w) {
			t.Errorf("the model config does not hold %s:\n%s", w, js)
		}
	}
	other := NewSequential(layers.Input(4), layers.Dense(6, layers.ReLU), layers.Dense(3, layers.Softmax))
	if err := other.LoadWeights(path); err != nil {
		t.Fatalf("LoadWeights of a model file: %v", err)
	}
	if !sameBits(allWeights(t, other), allWeights(t, m)) {
		t.Error("LoadWeights of a model file read other weights")
	}

	// Without the optimizer: no slots, no optimizer metadata.
	if err := m.Save(path, IncludeOptimizer(false)); err != nil {
		t.Fatal(err)
	}
	if f, err = safetensors.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if got := f.Names(); !slices.Equal(got, want[:4]) {
		t.Errorf("IncludeOptimizer(false): tensors %v, want %v", got, want[:4])
	}
	if _, ok := f.Metadata[metaOptimizer]; ok {
		t.Error("IncludeOptimizer(false) wrote the optimizer's name")
	}
	if js, err := ReadModelConfig(path); err != nil || !strings.Contains(string(js), `"include_optimizer": false`) {
		t.Errorf("IncludeOptimizer(false): the config says %s (%v)", js, err)
	}
}

// TestCheckpointLoaderNamesAModelFile checks that a model file given where
// a checkpoint is wanted is named for what it is.
func TestCheckpointLoaderNamesAModelFile(t *testing.T) {
	m := NewSequential(layers.Input(3), layers.Dense(2))
	m.SetSeed(1)
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	_, err = m.LoadCheckpoint(path)
	if err == nil || !strings.Contains(err.Error(), "is a whole model written by Save") || !strings.Contains(err.Error(), "nn.LoadModel") {
		t.Errorf("LoadCheckpoint of a model file: %v", err)
	}
}
