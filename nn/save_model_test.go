package nn

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// saveData makes n samples of the given shape, uniform in [0, 1) (whole
// numbers in [0, vocab) when vocab > 0, for an Embedding), labelled with
// one of classes classes drawn from the inputs' sum: one-hot rows, or the
// class index when sparse.
func saveData(t testing.TB, n int, shape []int, vocab, classes int, sparse bool, seed uint64) data.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	size := shapes.Size(shape)
	x := make([]float32, n*size)
	labelCols := classes
	if sparse {
		labelCols = 1
	}
	y := make([]float32, n*labelCols)
	for i := range n {
		var sum float32
		for j := range size {
			v := rng.Float32()
			if vocab > 0 {
				v = float32(rng.IntN(vocab))
			}
			x[i*size+j] = v
			sum += v
		}
		class := int(sum*7) % classes
		if sparse {
			y[i] = float32(class)
		} else {
			y[i*classes+class] = 1
		}
	}
	d, err := data.TensorData(
		tensor.New(tensor.WithShape(append([]int{n}, shape...)...), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(n, labelCols), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// modelDescription is everything Save writes about a model but its
// weights, from the packages' ConfigOf: what a loaded model must repeat.
func modelDescription(t testing.TB, m *Sequential) string {
	t.Helper()
	desc := map[string]any{"name": m.Name(), "input_shape": m.InputShape(), "output_shape": m.OutputShape()}
	var ls []any
	for _, l := range m.Layers() {
		c, err := layers.ConfigOf(l)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, c)
	}
	desc["layers"] = ls
	if m.compiled != nil {
		opt, err := optim.ConfigOf(m.compiled.optimizer)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := losses.ConfigOf(m.compiled.heads[0].loss)
		if err != nil {
			t.Fatal(err)
		}
		var ms []any
		for _, mt := range m.compiled.metrics {
			c, err := metrics.ConfigOf(mt)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, c)
		}
		desc["optimizer"], desc["loss"], desc["metrics"] = opt, loss, ms
		desc["device"] = m.compiled.device.String()
	}
	js, err := json.Marshal(desc)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// allWeights is the model's weights, one after another.
func allWeights(t testing.TB, m *Sequential) []float32 {
	t.Helper()
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	var all []float32
	for _, w := range ws {
		all = append(all, w.Data().([]float32)...)
	}
	return all
}

// sameBits reports whether a and b hold the same float32s, bit for bit.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// checkSameModel checks that loaded repeats m: its description, its
// weights, its predictions and, when compiled, its evaluation.
func checkSameModel(t *testing.T, m, loaded *Sequential, ds data.Dataset) {
	t.Helper()
	if got, want := modelDescription(t, loaded), modelDescription(t, m); got != want {
		t.Errorf("the loaded model is described as\n%s\nthe saved one as\n%s", got, want)
	}
	if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
		t.Error("the loaded model has other weights")
	}
	ctx := context.Background()
	want, err := m.PredictTensor(ctx, ds, BatchSize(7))
	if err != nil {
		t.Fatal(err)
	}
	got, err := loaded.PredictTensor(ctx, ds, BatchSize(7))
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(got.Data().([]float32), want.Data().([]float32)) {
		t.Errorf("the loaded model predicts\n%v\nthe saved one\n%v", got.Data(), want.Data())
	}
	wantEval, err := m.Evaluate(ctx, ds, BatchSize(7), Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	gotEval, err := loaded.Evaluate(ctx, ds, BatchSize(7), Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(gotEval) != len(wantEval) {
		t.Errorf("the loaded model evaluates to %v, the saved one to %v", gotEval, wantEval)
	}
	for k, v := range wantEval {
		if g, ok := gotEval[k]; !ok || math.Float64bits(g) != math.Float64bits(v) {
			t.Errorf("%s: the loaded model evaluates to %v, the saved one to %v", k, gotEval, wantEval)
			break
		}
	}
}

// fitOnce trains m for one epoch with a fixed shuffle and returns the loss.
func fitOnce(t *testing.T, m *Sequential, ds data.Dataset) float64 {
	t.Helper()
	h, err := m.Fit(context.Background(), ds, Epochs(1), BatchSize(8), Seed(5), Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	return h.Get("loss")[0]
}

// saveAndLoad saves m to a new file, loads it on the CPU and returns it.
func saveAndLoad(t *testing.T, m *Sequential, opts ...SaveOption) *Sequential {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := m.Save(path, opts...); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadModel(path, CompileOptions(OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

// checkTrainsOn trains m and loaded one more epoch each and checks that
// they stay the same, bit for bit.
func checkTrainsOn(t *testing.T, m, loaded *Sequential, ds data.Dataset) {
	t.Helper()
	want, got := fitOnce(t, m, ds), fitOnce(t, loaded, ds)
	if math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("one more epoch: the loaded model's loss is %v, the saved one's %v", got, want)
	}
	if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
		t.Error("one more epoch: the loaded model ends with other weights than the saved one")
	}
	if got, want := loaded.Optimizer().Iterations(), m.Optimizer().Iterations(); got != want {
		t.Errorf("one more epoch: the loaded optimizer is at step %d, the saved one at %d", got, want)
	}
}

func mustOpt[T optim.Optimizer](t testing.TB) func(T, error) optim.Optimizer {
	return func(o T, err error) optim.Optimizer {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
}

// TestSaveLoadModelLayers saves and loads, after some training, models
// made of every layer type with other options than the defaults, and
// checks that the loaded model is the same: configs, weights, predictions,
// evaluation, and one more epoch of training, bit for bit on the CPU.
func TestSaveLoadModelLayers(t *testing.T) {
	l2 := layers.L2(0.01)
	cases := []struct {
		name        string
		layers      func() []layers.Layer
		input       []int
		vocab       int
		classes     int
		sparse      bool
		seeded      bool
		noTrainMore bool
	}{
		{
			name: "dense, dropout, normalizations, activation",
			layers: func() []layers.Layer {
				return []layers.Layer{
					layers.Dense(8, layers.ReLU, layers.KernelInitializer(layers.RandomNormal(0.01, 0.2)), layers.BiasInitializer(layers.Ones()),
						layers.KernelRegularizer(l2), layers.BiasRegularizer(layers.L1(0.002)), layers.ActivityRegularizer(layers.L1L2(0.001, 0.003)),
						layers.Named("hidden")),
					layers.Dropout(0.3, layers.Seed(11)),
					layers.BatchNormalization(layers.Momentum(0.8), layers.Epsilon(0.01)),
					layers.Dense(6, layers.Tanh, layers.WithoutBias(), layers.KernelInitializer(layers.RandomUniform(-0.3, 0.3))),
					layers.Dropout(0.2), // its key comes from the model's seed
					layers.LayerNormalization(layers.WithoutCenter(), layers.Epsilon(1e-4)),
					layers.Dense(3),
					layers.NewActivation(layers.Softmax, layers.Named("probs")),
				}
			},
			input: []int{5}, classes: 3, seeded: true,
		},
		{
			name: "2D convolutions and poolings",
			layers: func() []layers.Layer {
				return []layers.Layer{
					layers.Conv2D(4, 3, layers.Padding("same"), layers.Strides(1, 2), layers.ReLU, layers.BiasInitializer(layers.RandomNormal(0, 0.1))),
					layers.MaxPooling2D(layers.PoolSize(2, 1), layers.Strides(1), layers.Padding("same")),
					layers.Conv2D(3, 2, layers.KernelSize(2, 3), layers.DilationRate(1, 2), layers.Sigmoid, layers.KernelRegularizer(layers.L1(0.01))),
					layers.AveragePooling2D(layers.PoolSize(2), layers.Padding("same")),
					layers.BatchNormalization(layers.WithoutScale()),
					layers.Dropout(0.25), // an unseeded model: its key comes from the clock
					layers.GlobalMaxPooling2D(layers.Named("gmax")),
					layers.Dense(2, layers.Softmax),
				}
			},
			input: []int{8, 9, 2}, classes: 2,
		},
		{
			name: "2D global average pooling",
			layers: func() []layers.Layer {
				return []layers.Layer{
					layers.Conv2D(3, 2, layers.WithoutBias()),
					layers.GlobalAveragePooling2D(),
					layers.Dense(2, layers.Sigmoid),
				}
			},
			input: []int{4, 4, 1}, classes: 2,
		},
		{
			name: "embedding, 1D convolution and poolings",
			layers: func() []layers.Layer {
				return []layers.Layer{
					layers.Embedding(12, 4, layers.EmbeddingsInitializer(layers.RandomUniform(-0.2, 0.2)), layers.Named("words")),
					layers.Conv1D(5, 3, layers.Padding("same"), layers.DilationRate(2), layers.ReLU),
					layers.MaxPooling1D(layers.PoolSize(3), layers.Strides(1)),
					layers.AveragePooling1D(layers.Padding("same")),
					layers.Conv1D(4, 2, layers.Strides(2), layers.Tanh),
					layers.GlobalMaxPooling1D(),
					layers.Dense(3, layers.Softmax),
				}
			},
			input: []int{10}, vocab: 12, classes: 3, sparse: true,
		},
		{
			name: "1D global average pooling, reshape, flatten",
			layers: func() []layers.Layer {
				return []layers.Layer{
					layers.Reshape([]int{-1, 3}, layers.Named("steps")),
					layers.Conv1D(2, 2),
					layers.GlobalAveragePooling1D(),
					layers.Reshape([]int{1, 2}),
					layers.Flatten(layers.Named("flat")),
					layers.Dense(2, layers.Softmax),
				}
			},
			input: []int{12}, classes: 2,
		},
		{
			name: "an InputLayer among the layers",
			layers: func() []layers.Layer {
				return []layers.Layer{layers.Input(4).With(layers.Named("first")), layers.Dense(2, layers.Sigmoid)}
			},
			input: []int{4}, classes: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := saveData(t, 30, c.input, c.vocab, c.classes, c.sparse, 1)
			m := NewSequential(append([]layers.Layer{layers.Input(c.input...)}, c.layers()...)...)
			m.SetName("under_test")
			if c.seeded {
				m.SetSeed(3)
			}
			loss := losses.Loss(losses.CategoricalCrossentropy{LabelSmoothing: 0.05})
			ms := []metrics.Metric{&metrics.CategoricalAccuracy{}}
			if c.sparse {
				loss, ms = losses.SparseCategoricalCrossentropy{}, []metrics.Metric{&metrics.SparseCategoricalAccuracy{}}
			}
			opt := mustOpt[*optim.Adam](t)(optim.NewAdam(optim.AdamConfig{LearningRate: 0.01}))
			if err := m.Compile(opt, loss, ms, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			fitOnce(t, m, ds)
			loaded := saveAndLoad(t, m)
			checkSameModel(t, m, loaded, ds)
			checkTrainsOn(t, m, loaded, ds)
		})
	}
}

// TestSaveLoadModelActivations round-trips every activation, in a Dense
// layer and as a layer of its own.
func TestSaveLoadModelActivations(t *testing.T) {
	for _, name := range []string{"linear", "relu", "sigmoid", "tanh", "softmax"} {
		t.Run(name, func(t *testing.T) {
			act, err := layers.GetActivation(name)
			if err != nil {
				t.Fatal(err)
			}
			m := NewSequential(layers.Input(4), layers.Dense(3, act), layers.NewActivation(act))
			if err := m.Compile(mustOpt[*optim.SGD](t)(optim.NewSGD(optim.SGDConfig{})), losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			loaded := saveAndLoad(t, m)
			for i, l := range loaded.Layers() {
				c, err := layers.ConfigOf(l)
				if err != nil {
					t.Fatal(err)
				}
				if got := c.Config["activation"]; got != name {
					t.Errorf("layer %d of the loaded model has activation %v, want %s", i+1, got, name)
				}
			}
			checkSameModel(t, m, loaded, saveData(t, 9, []int{4}, 0, 3, false, 2))
		})
	}
}

// TestSaveLoadModelLosses round-trips every loss, with arguments where it
// takes some, and checks the evaluation; a few train on.
func TestSaveLoadModelLosses(t *testing.T) {
	cases := []struct {
		loss      losses.Loss
		logits    bool // the model outputs logits
		sparse    bool
		trainMore bool
	}{
		{loss: losses.CategoricalCrossentropy{LabelSmoothing: 0.2}, trainMore: true},
		{loss: losses.CategoricalCrossentropy{FromLogits: true}, logits: true},
		{loss: losses.SparseCategoricalCrossentropy{FromLogits: true}, logits: true, sparse: true, trainMore: true},
		{loss: losses.SparseCategoricalCrossentropy{}, sparse: true},
		{loss: losses.BinaryCrossentropy{LabelSmoothing: 0.1}},
		{loss: losses.BinaryCrossentropy{FromLogits: true, LabelSmoothing: 0.3}, logits: true},
		{loss: losses.MeanSquaredError{}},
		{loss: losses.MeanAbsoluteError{}},
		{loss: losses.MeanAbsolutePercentageError{}},
		{loss: losses.MeanSquaredLogarithmicError{}},
		{loss: losses.Huber{Delta: 0.25}, trainMore: true},
		{loss: losses.LogCosh{}},
		{loss: losses.KLDivergence{}},
		{loss: losses.Poisson{}},
		{loss: losses.Hinge{}},
		{loss: losses.SquaredHinge{}},
		{loss: losses.CategoricalHinge{}},
		{loss: losses.CosineSimilarity{}},
	}
	for _, c := range cases {
		cfg, err := losses.ConfigOf(c.loss)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(cfg.ClassName, func(t *testing.T) {
			act := layers.Softmax
			if c.logits {
				act = layers.Linear
			}
			m := NewSequential(layers.Input(4), layers.Dense(3, act))
			if err := m.Compile(mustOpt[*optim.SGD](t)(optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})), c.loss, nil, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			ds := saveData(t, 20, []int{4}, 0, 3, c.sparse, 3)
			loaded := saveAndLoad(t, m)
			if got := loaded.compiled.heads[0].loss; got != c.loss {
				t.Errorf("loaded loss %#v, want %#v", got, c.loss)
			}
			checkSameModel(t, m, loaded, ds)
			if c.trainMore {
				checkTrainsOn(t, m, loaded, ds)
			}
		})
	}
}

// TestSaveLoadModelMetrics round-trips every metric, with arguments where
// it takes some, and checks that the evaluation reports the same figures
// under the same names.
func TestSaveLoadModelMetrics(t *testing.T) {
	get := func(name string) metrics.Metric {
		m, err := metrics.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	one := 1
	cases := []struct {
		name    string
		sparse  bool
		metrics []metrics.Metric
	}{
		{"one-hot labels", false, []metrics.Metric{
			get("acc"), &metrics.CategoricalAccuracy{}, &metrics.BinaryAccuracy{Threshold: 0.3},
			&metrics.TopKCategoricalAccuracy{K: 2}, &metrics.Precision{Threshold: 0.4, ClassID: &one},
			&metrics.Recall{TopK: 2}, &metrics.AUC{Curve: "PR", NumThresholds: 50, SummationMethod: "minoring", MultiLabel: true},
			&metrics.F1Score{Average: "weighted", Threshold: 0.35}, get("mae"), &metrics.MeanAbsoluteError{}, get("mse"), &metrics.RootMeanSquaredError{},
		}},
		{"class indices", true, []metrics.Metric{
			&metrics.Accuracy{}, &metrics.SparseCategoricalAccuracy{}, &metrics.SparseTopKCategoricalAccuracy{K: 2},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewSequential(layers.Input(4), layers.Dense(3, layers.Softmax))
			loss := losses.Loss(losses.CategoricalCrossentropy{})
			if c.sparse {
				loss = losses.SparseCategoricalCrossentropy{}
			}
			if err := m.Compile(mustOpt[*optim.SGD](t)(optim.NewSGD(optim.SGDConfig{})), loss, c.metrics, OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			loaded := saveAndLoad(t, m)
			var names []string
			for _, mt := range loaded.compiled.metrics {
				names = append(names, mt.Name())
			}
			var want []string
			for _, mt := range c.metrics {
				want = append(want, mt.Name())
			}
			if !slices.Equal(names, want) {
				t.Errorf("the loaded model reports %v, want %v", names, want)
			}
			checkSameModel(t, m, loaded, saveData(t, 25, []int{4}, 0, 3, c.sparse, 4))
		})
	}
}

// TestSaveLoadModelOptimizers round-trips every optimizer with other
// settings than the defaults, a schedule among them, after two epochs of
// training: the loaded model trains on exactly as the saved one, the
// optimizer's step count and slots restored.
func TestSaveLoadModelOptimizers(t *testing.T) {
	clip := optim.Options{ClipNorm: 1.5, ClipValue: 0.8}
	cases := map[string]func() (optim.Optimizer, error){
		"SGD": func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.8, Nesterov: true, Options: clip})
		},
		"SGD with a schedule": func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{Momentum: 0.5, Options: optim.Options{
				Schedule: optim.ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 3, DecayRate: 0.7, Staircase: true}}})
		},
		"Adam": func() (optim.Optimizer, error) {
			return optim.NewAdam(optim.AdamConfig{LearningRate: 0.02, Beta1: optim.F(0.8), Beta2: optim.F(0.99), Epsilon: optim.F(1e-5), AMSGrad: true,
				Options: optim.Options{WeightDecay: 0.01, Schedule: optim.CosineDecay{InitialLearningRate: 0.01, DecaySteps: 10, Alpha: 0.1, WarmupTarget: 0.03, WarmupSteps: 2}}})
		},
		"AdamW": func() (optim.Optimizer, error) {
			return optim.NewAdamW(optim.AdamConfig{LearningRate: 0.01, Options: optim.Options{WeightDecay: 0.05, ClipValue: 0.5}})
		},
		"RMSprop": func() (optim.Optimizer, error) {
			return optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 0.01, Rho: optim.F(0.8), Momentum: 0.3, Centered: true,
				Options: optim.Options{Schedule: optim.PiecewiseConstantDecay{Boundaries: []int64{2, 5}, Values: []float64{0.02, 0.01, 0.005}}}})
		},
		"Adagrad": func() (optim.Optimizer, error) {
			return optim.NewAdagrad(optim.AdagradConfig{LearningRate: 0.05, InitialAccumulatorValue: optim.F(0.2), Epsilon: optim.F(1e-6),
				Options: optim.Options{Schedule: optim.InverseTimeDecay{InitialLearningRate: 0.05, DecaySteps: 2, DecayRate: 0.5}}})
		},
		"Adadelta": func() (optim.Optimizer, error) {
			return optim.NewAdadelta(optim.AdadeltaConfig{LearningRate: 1, Rho: optim.F(0.9),
				Options: optim.Options{Schedule: optim.PolynomialDecay{InitialLearningRate: 1, DecaySteps: 8, EndLearningRate: 0.1, Power: 2, Cycle: true}}})
		},
		"Adamax": func() (optim.Optimizer, error) {
			return optim.NewAdamax(optim.AdamaxConfig{LearningRate: 0.01, Beta1: optim.F(0.7), Beta2: optim.F(0.95),
				Options: optim.Options{Schedule: optim.CosineDecayRestarts{InitialLearningRate: 0.02, FirstDecaySteps: 3, TMul: 1.5, MMul: 0.9, Alpha: 0.05}}})
		},
		"Nadam": func() (optim.Optimizer, error) {
			return optim.NewNadam(optim.NadamConfig{LearningRate: 0.01, Epsilon: optim.F(1e-6), Options: optim.Options{ClipNorm: 2}})
		},
	}
	ds := saveData(t, 30, []int{5}, 0, 3, false, 5)
	newModel := func(t *testing.T, newOpt func() (optim.Optimizer, error)) *Sequential {
		opt, err := newOpt()
		if err != nil {
			t.Fatal(err)
		}
		m := NewSequential(layers.Input(5), layers.Dense(6, layers.Tanh), layers.Dense(3, layers.Softmax))
		m.SetSeed(8)
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for name, newOpt := range cases {
		t.Run(name, func(t *testing.T) {
			m := newModel(t, newOpt)
			fitOnce(t, m, ds)
			fitOnce(t, m, ds)
			loaded := saveAndLoad(t, m)
			if got, want := loaded.Optimizer().Iterations(), m.Optimizer().Iterations(); got != want || got == 0 {
				t.Errorf("the loaded optimizer is at step %d, want %d", got, want)
			}
			if got, want := loaded.Optimizer().LearningRate(), m.Optimizer().LearningRate(); got != want {
				t.Errorf("the loaded optimizer's learning rate is %v, want %v", got, want)
			}
			checkSameModel(t, m, loaded, ds)
			checkTrainsOn(t, m, loaded, ds)
		})
	}
	t.Run("without the optimizer's state", func(t *testing.T) {
		m := newModel(t, cases["Adam"])
		fitOnce(t, m, ds)
		loaded := saveAndLoad(t, m, IncludeOptimizer(false))
		if got := loaded.Optimizer().Iterations(); got != 0 {
			t.Errorf("the loaded optimizer is at step %d, want a new one, at 0", got)
		}
		fresh := newModel(t, cases["Adam"])
		if err := fresh.SetWeights(mustWeights(t, m)); err != nil {
			t.Fatal(err)
		}
		checkSameModel(t, m, loaded, ds)
		// A new optimizer of the same settings on the same weights.
		checkTrainsOn(t, fresh, loaded, ds)
	})
}

func mustWeights(t *testing.T, m *Sequential) []*tensor.Dense {
	t.Helper()
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestSaveLoadModelUncompiled saves a model that was never compiled, and
// loads a compiled one without compiling it.
func TestSaveLoadModelUncompiled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	m := NewSequential(layers.Input(3), layers.Dense(2, layers.ReLU))
	m.SetSeed(1)
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.compiled != nil {
		t.Error("a model saved uncompiled was loaded compiled")
	}
	if got, want := modelDescription(t, loaded), modelDescription(t, m); got != want {
		t.Errorf("loaded %s, want %s", got, want)
	}
	if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
		t.Error("the loaded model has other weights")
	}

	if err := m.Compile(mustOpt[*optim.Adam](t)(optim.NewAdam(optim.AdamConfig{})), losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err = LoadModel(path, LoadCompiled(false))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.compiled != nil {
		t.Error("LoadCompiled(false) compiled the model")
	}
	if !sameBits(allWeights(t, loaded), allWeights(t, m)) {
		t.Error("the loaded model has other weights")
	}
}
