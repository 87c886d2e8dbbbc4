package nn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

// fuzzSavedConfigs saves small models of most layer kinds, compiled and
// not, and returns the model config JSON each file holds: the seeds of
// FuzzModelConfig, as Save writes them today.
func fuzzSavedConfigs(tb testing.TB) []string {
	tb.Helper()
	newAdam := func() optim.Optimizer {
		o, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		if err != nil {
			tb.Fatal(err)
		}
		return o
	}
	newSGD := func() optim.Optimizer {
		o, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9, Nesterov: true})
		if err != nil {
			tb.Fatal(err)
		}
		return o
	}
	models := []struct {
		build func() *Sequential
		opt   func() optim.Optimizer // nil: saved uncompiled
		loss  losses.Loss
		ms    []metrics.Metric
	}{
		{
			build: func() *Sequential {
				m := NewSequential(layers.Input(5),
					layers.Dense(4, layers.ReLU, layers.KernelInitializer(layers.RandomNormal(0.01, 0.2)), layers.BiasInitializer(layers.Ones()),
						layers.KernelRegularizer(layers.L2(0.01)), layers.ActivityRegularizer(layers.L1L2(0.001, 0.003)), layers.Named("hidden")),
					layers.Dropout(0.3, layers.Seed(11)),
					layers.BatchNormalization(layers.Momentum(0.8), layers.Epsilon(0.01)),
					layers.LayerNormalization(layers.WithoutCenter()),
					layers.Dense(3, layers.WithoutBias()),
					layers.NewActivation(layers.Softmax, layers.Named("probs")))
				m.SetSeed(3)
				return m
			},
			opt: newAdam, loss: losses.CategoricalCrossentropy{LabelSmoothing: 0.05}, ms: []metrics.Metric{&metrics.CategoricalAccuracy{}},
		},
		{
			build: func() *Sequential {
				return NewSequential(layers.Input(6, 5, 2),
					layers.Conv2D(3, 3, layers.Padding("same"), layers.Strides(1, 2), layers.ReLU),
					layers.MaxPooling2D(layers.PoolSize(2, 1), layers.Padding("same")),
					layers.Conv2D(2, 2, layers.KernelSize(2, 3), layers.DilationRate(1, 2), layers.WithoutBias(), layers.Padding("same")),
					layers.AveragePooling2D(layers.Padding("same")),
					layers.BatchNormalization(layers.WithoutScale()),
					layers.Flatten(layers.Named("flat")),
					layers.Dense(2, layers.Sigmoid))
			},
			opt: newSGD, loss: losses.MeanSquaredError{}, ms: []metrics.Metric{&metrics.Accuracy{}},
		},
		{
			build: func() *Sequential {
				m := NewSequential(layers.Input(7),
					layers.Embedding(10, 4, layers.Named("words")),
					layers.Conv1D(3, 2, layers.Padding("same"), layers.Tanh),
					layers.MaxPooling1D(),
					layers.Reshape([]int{-1, 3}),
					layers.GlobalAveragePooling1D(),
					layers.Dense(3, layers.Softmax))
				m.SetName("words_model")
				m.SetSeed(1 << 62)
				return m
			},
			opt: newAdam, loss: losses.SparseCategoricalCrossentropy{}, ms: []metrics.Metric{&metrics.SparseCategoricalAccuracy{}},
		},
		{
			build: func() *Sequential {
				return NewSequential(layers.Input(4, 4, 1), layers.Conv2D(2, 2), layers.GlobalMaxPooling2D(), layers.Dense(1))
			},
		},
	}
	dir := tb.TempDir()
	var configs []string
	for i, c := range models {
		m := c.build()
		var opts []SaveOption
		if c.opt != nil {
			if err := m.Compile(c.opt(), c.loss, c.ms, OnDevice("/CPU:0")); err != nil {
				tb.Fatal(err)
			}
		} else {
			opts = append(opts, IncludeOptimizer(false))
		}
		path := filepath.Join(dir, fmt.Sprintf("model%d.safetensors", i))
		if err := m.Save(path, opts...); err != nil {
			tb.Fatal(err)
		}
		meta, err := safetensors.ReadMetadata(path)
		if err != nil {
			tb.Fatal(err)
		}
		configs = append(configs, meta[metaModelConfig])
	}
	return configs
}

// fuzzMaxParams bounds the size of the models FuzzModelConfig builds.
const fuzzMaxParams = 1 << 14

// FuzzModelConfig feeds arbitrary model config JSON, the document of a
// model file's metadata key gokeras.model_config, to what LoadModel and
// ModelFileFits do with it before any tensor is read: readDocument, then
// modelOf, planWeights and compileSettings. None of them may panic. When
// the document is read and its model made:
//
//   - the model has one layer per layer config, each named;
//   - writing the model's config again, as Save writes it, gives a
//     document that readDocument reads and that describes the same model
//     (layer classes, given names, seed and input shape), and doing it
//     once more gives the same bytes: the config of a loaded model is a
//     fixed point, so a model saved, loaded and saved again keeps its
//     file's config;
//   - compile settings that compileSettings accepts have a config, and it
//     round-trips the same way;
//   - when planWeights accepts the input shape and the model has layers
//     and is small, Build succeeds and makes exactly the weights planned,
//     in order and of the planned shapes (LoadModel checks the file's
//     tensors against the plan before it builds).
//
// The seed corpus is the config of models Save writes (made at the start)
// and testdata/fuzz/FuzzModelConfig; run longer with
//
//	go test -run XXX -fuzz FuzzModelConfig -fuzztime 20s -fuzzminimizetime 0s ./nn
func FuzzModelConfig(f *testing.F) {
	for _, js := range fuzzSavedConfigs(f) {
		f.Add(js)
	}
	const path = "fuzz.safetensors"
	f.Fuzz(func(t *testing.T, js string) {
		doc, m, err := fuzzReadModel(path, js)
		if err != nil {
			return
		}
		if len(m.layers) != len(doc.Config.Layers) {
			t.Fatalf("%d layer configs made %d layers", len(doc.Config.Layers), len(m.layers))
		}
		for i, l := range m.layers {
			if l == nil || l.Name() == "" {
				t.Fatalf("layer %d of the model made has no name (or is nil): %#v", i+1, l)
			}
		}

		// The config again, as Save writes it.
		js2, err := fuzzWriteConfig(m, doc, path)
		if err != nil {
			t.Fatalf("a model made from its config has no config: %v", err)
		}
		doc2, m2, err := fuzzReadModel(path, string(js2))
		if err != nil {
			t.Fatalf("the config a loaded model writes is refused: %v\n%s", err, js2)
		}
		if !slices.Equal(doc2.Config.InputShape, doc.Config.InputShape) || !fuzzSameSeed(doc2.Config.Seed, doc.Config.Seed) {
			t.Fatalf("input shape %v, seed %s read back as %v, %s", doc.Config.InputShape, fuzzSeed(doc.Config.Seed), doc2.Config.InputShape, fuzzSeed(doc2.Config.Seed))
		}
		for i, c := range doc.Config.Layers {
			c2 := doc2.Config.Layers[i]
			if c2.ClassName != c.ClassName {
				t.Fatalf("layer %d: class %q written back as %q", i+1, c.ClassName, c2.ClassName)
			}
			if name, ok := c.Config["name"].(string); ok && name != "" && c2.Config["name"] != name {
				t.Fatalf("layer %d: name %q written back as %v", i+1, name, c2.Config["name"])
			}
		}
		if (doc.CompileConfig == nil) != (doc2.CompileConfig == nil) {
			t.Fatalf("compile config %v written back as %v", doc.CompileConfig, doc2.CompileConfig)
		}
		js3, err := fuzzWriteConfig(m2, doc2, path)
		if err != nil {
			t.Fatalf("the model read back has no config: %v", err)
		}
		if !bytes.Equal(js3, js2) {
			t.Fatalf("the config changes each time it is written and read:\n%s\n%s", js2, js3)
		}

		// The plan LoadModel checks the file against, and the model built.
		input := doc.Config.InputShape
		if len(input) == 0 || slices.ContainsFunc(input, func(d int) bool { return d <= 0 }) {
			return
		}
		plan, names, err := m.planWeights(path, input)
		if err != nil {
			return
		}
		params := 0
		for _, p := range plan {
			n := 1
			for _, d := range p.shape {
				if d <= 0 {
					t.Fatalf("weight of layer %q planned of shape %v", p.layer, p.shape)
				}
				n *= d
				if n > fuzzMaxParams {
					return
				}
			}
			if params += n; params > fuzzMaxParams {
				return
			}
		}
		if len(m.layers) == 0 {
			return // nothing is planned, and Build refuses it: so does LoadModel
		}
		if err := m.Build(input...); err != nil {
			t.Fatalf("planned, but Build fails: %v", err)
		}
		ws := m.weights()
		if len(ws) != len(names) {
			t.Fatalf("planned weights %v, built %d", names, len(ws))
		}
		for i, w := range ws {
			if w.name != names[i] || !slices.Equal(w.value.Shape(), plan[names[i]].shape) {
				t.Fatalf("weight %d planned %s %v, built %s %v", i, names[i], plan[names[i]].shape, w.name, w.value.Shape())
			}
		}
	})
}

// fuzzReadModel is what LoadModel does with a model config before it
// reads the tensors.
func fuzzReadModel(path, js string) (*modelDocument, *Sequential, error) {
	version := "1"
	if strings.Contains(js, `"format_version":2`) { // a functional model's
		version = "2"
	}
	meta := map[string]string{metaKind: kindModel, metaVersion: version, metaModelConfig: js}
	doc, err := readDocument(meta, path)
	if err != nil {
		return nil, nil, err
	}
	m, err := modelOf(doc, path)
	if err != nil {
		return nil, nil, err
	}
	return doc, m, nil
}

// fuzzWriteConfig is the config Save writes for the model LoadModel makes
// of doc: its architecture from m (not built), its input shape from doc,
// and its compile settings as compileSettings makes them. An error is a
// bug: what was read must have a config.
func fuzzWriteConfig(m *Sequential, doc *modelDocument, path string) ([]byte, error) {
	d, err := m.document(false)
	if err != nil {
		return nil, err
	}
	d.Config.InputShape = doc.Config.InputShape
	d.IncludeOptimizer = doc.IncludeOptimizer
	if cc := doc.CompileConfig; cc != nil {
		opt, loss, ms, outputs, err := compileSettings(cc, m.OutputNames(), path)
		if err != nil || outputs != nil {
			// LoadModel refuses it, or it is a model of several outputs,
			// whose settings are options: the architecture still
			// round-trips.
			d.CompileConfig = cc
		} else {
			d.CompileConfig = &compileConfigDocument{Metrics: []metrics.Config{}}
			if d.CompileConfig.Optimizer, err = optim.ConfigOf(opt); err != nil {
				return nil, fmt.Errorf("the optimizer: %w", err)
			}
			if d.CompileConfig.Loss, err = losses.ConfigOf(loss); err != nil {
				return nil, fmt.Errorf("the loss: %w", err)
			}
			for _, mt := range ms {
				c, err := metrics.ConfigOf(mt)
				if err != nil {
					return nil, fmt.Errorf("a metric: %w", err)
				}
				d.CompileConfig.Metrics = append(d.CompileConfig.Metrics, c)
			}
		}
	}
	return json.Marshal(d)
}

func fuzzSameSeed(a, b *uint64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func fuzzSeed(s *uint64) string {
	if s == nil {
		return "none"
	}
	return strconv.FormatUint(*s, 10)
}
