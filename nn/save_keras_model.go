package nn

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// Keras 3's .keras archive, written: Save to a path ending in .keras, and
// SaveKeras to a writer. The archive is a zip of three members, stored
// uncompressed and in this order, as Keras 3's model.save writes them:
//
//	metadata.json     {"keras_version": ..., "date_saved": "2006-01-02@15:04:05"}
//	config.json       the model: module, class_name ("Sequential" or
//	                  "Functional"), config (name, trainable, layers, and
//	                  a Sequential's build_input_shape or a functional
//	                  model's input_layers and output_layers),
//	                  registered_name, build_config and, once compiled,
//	                  compile_config (optimizer, loss, metrics)
//	model.weights.h5  the weights, in Keras 3's layout (save_keras.go)
//
// Each layer is written as Keras 3 serializes it: {"module":
// "keras.layers", "class_name", "config", "registered_name": null} and, for
// a layer with weights or one that merges several inputs, "build_config"
// {"input_shape"}; its config holds Keras 3's names (LeakyReLU's alpha is
// negative_slope) with trainable and a float32 DTypePolicy, and its
// initializers and regularizers are serialized objects with their module.
// What Keras 3 cannot express as gokeras computes it (Keras 2's
// hard_sigmoid, which Keras 3 redefined; the tanh form of gelu, which its
// Activation layer cannot name; a layer without a config) is an error
// naming the layer and its class: nothing is dropped.
//
// The optimizer's variables go in model.weights.h5's optimizer group, as
// Keras 3 writes them, for every optimizer gokeras has (see
// save_keras_optimizer.go). SetSeed's seed is not written: Keras models have none.

// keras3Version is the Keras release whose .keras layout SaveKeras
// follows (that of the FlowNet archive in testdata/keras), written as the
// archive's keras_version.
const keras3Version = "3.9.2"

// kerasArchiveMetadata is the archive member with the version and date.
const kerasArchiveMetadata = "metadata.json"

// kerasNow is the clock of metadata.json's date_saved (tests fix it).
var kerasNow = time.Now

// isKerasModelPath says whether Save writes path as a Keras 3 archive.
func isKerasModelPath(path string) bool {
	return strings.HasSuffix(strings.ToLower(path), ".keras")
}

// SaveKeras writes the whole model to w as a Keras 3 .keras archive, what
// Save writes to a path ending in .keras: the architecture and compile
// settings (config.json), the Keras version and date (metadata.json) and
// the weights (model.weights.h5), for keras.models.load_model and for
// LoadModelFrom. The optimizer's state is written as Keras 3 lays out
// its variables (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax,
// Nadam), and read back by LoadModel. A layer, loss,
// metric or optimizer that Keras 3 cannot express as gokeras computes it
// is an error naming it. Unlike Save it cannot be atomic: on an error, w
// may hold part of the archive. It writes on every rank of a strategy.
func (m *Sequential) SaveKeras(w io.Writer) error { return m.saveKerasTo(w, m.writeKerasArchive) }

// saveKerasTo is SaveKeras and SaveKerasH5: the model claimed while write
// writes its file to w.
func (m *Sequential) saveKerasTo(w io.Writer, write func(io.Writer) error) error {
	if m == nil {
		return fmt.Errorf("save Keras model: %w", ErrNilModel)
	}
	if w == nil {
		return errors.New("save Keras model: no writer given")
	}
	release, err := m.claim("save Keras model", false)
	if err != nil {
		return err
	}
	defer release()
	if err := write(w); err != nil {
		return fmt.Errorf("save Keras model: %w", err)
	}
	return nil
}

// saveKerasArchive is Save for a path ending in .keras.
func (m *Sequential) saveKerasArchive(path string, o saveOptions) error {
	if o.at != nil {
		return fmt.Errorf("%s: a Keras .keras archive cannot record where training stands (AtCheckpoint): save the checkpoint to a .safetensors name, or save without AtCheckpoint", path)
	}
	// Everything is made before the file is opened: a model Keras cannot
	// hold leaves the path as it was.
	var buf bytes.Buffer
	if err := m.writeKerasArchive(&buf); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := buf.WriteTo(w)
		return err
	})
}

// writeKerasArchive writes the model's .keras archive to w.
func (m *Sequential) writeKerasArchive(w io.Writer) error {
	if err := m.ensureBuilt(); err != nil {
		return err
	}
	config, err := m.keras3Config()
	if err != nil {
		return err
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("writing the model's Keras config as JSON: %w", err)
	}
	now := kerasNow()
	meta, err := json.Marshal(map[string]string{"keras_version": keras3Version, "date_saved": now.Format("2006-01-02@15:04:05")})
	if err != nil {
		return err
	}
	var weights bytes.Buffer
	if err := m.writeKerasFile(&weights, kerasLayout3, m.writeKerasOptimizer); err != nil {
		return err
	}
	z := zip.NewWriter(w)
	for _, member := range []struct {
		name string
		body []byte
	}{{kerasArchiveMetadata, meta}, {kerasArchiveConfig, configJSON}, {kerasArchiveWeights, weights.Bytes()}} {
		f, err := z.CreateHeader(&zip.FileHeader{Name: member.name, Method: zip.Store, Modified: now})
		if err != nil {
			return err
		}
		if _, err := f.Write(member.body); err != nil {
			return err
		}
	}
	return z.Close()
}

// keras3Object is a Keras 3 serialized object of a built-in class.
func keras3Object(module, class string, config any) map[string]any {
	return map[string]any{"module": module, "class_name": class, "config": config, "registered_name": nil}
}

// keras3Policy is the float32 DTypePolicy Keras 3 gives every layer.
func keras3Policy() map[string]any {
	return keras3Object("keras", "DTypePolicy", map[string]any{"name": "float32"})
}

// keras3Config is the model's config.json: its class, its layers and,
// when compiled, its compile_config.
func (m *Sequential) keras3Config() (map[string]any, error) {
	if err := layers.CheckNames(m.layers); err != nil {
		return nil, fmt.Errorf("model %q: %w", m.name, err)
	}
	// Each layer's input shapes at its first call (a merge layer's, one
	// per input), for build_config.
	inShapes := map[layers.Layer][][]int{}
	ins, calls := m.callGraph()
	for _, c := range calls {
		if _, ok := inShapes[c.layer]; ok {
			continue
		}
		for _, t := range c.in {
			inShapes[c.layer] = append(inShapes[c.layer], t.shape)
		}
	}
	var top map[string]any
	if m.graph == nil {
		entries := []any{}
		rest := m.layers
		if len(rest) > 0 {
			if il, ok := rest[0].(*layers.InputLayer); ok {
				// A leading InputLayer among the layers is the model's
				// input, as in Keras' Sequential.
				entries = append(entries, keras3InputLayer(il.Name(), m.inputShape))
				rest = rest[1:]
			}
		}
		if len(entries) == 0 {
			entries = append(entries, keras3InputLayer(m.freeName("input_layer"), m.inputShape))
		}
		for _, l := range rest {
			e, err := keras3LayerEntry(l, inShapes[l])
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		}
		shape := kerasBatchShape(m.inputShape)
		top = keras3Object("keras", "Sequential", map[string]any{
			"name": m.name, "trainable": true, "dtype": keras3Policy(),
			"layers": entries, "build_input_shape": shape,
		})
		top["build_config"] = map[string]any{"input_shape": shape}
	} else {
		doc := &modelDocument{Config: modelConfig{Layers: make([]layers.Config, len(m.layers))}}
		if err := m.functionalDocument(doc); err != nil {
			return nil, err
		}
		byName := map[string]layers.Layer{}
		for _, l := range m.layers {
			byName[l.Name()] = l
		}
		for _, t := range ins {
			byName[t.input.Name()] = t.input
		}
		fc := doc.functional
		// The layers in the order Keras 3 lists them (and numbers their
		// weights in): kerasOrder's.
		pos := map[string]int{}
		for i, l := range m.kerasOrder() {
			pos[l.Name()] = i
		}
		fls := slices.Clone(fc.Layers)
		slices.SortStableFunc(fls, func(a, b functionalLayer) int { return pos[a.Name] - pos[b.Name] })
		entries := make([]any, 0, len(fls))
		for _, fl := range fls {
			l := byName[fl.Name]
			var e map[string]any
			if il, ok := l.(*layers.InputLayer); ok {
				e = keras3InputLayer(il.Name(), il.Shape())
			} else {
				var err error
				if e, err = keras3LayerEntry(l, inShapes[l]); err != nil {
					return nil, err
				}
			}
			e["name"] = fl.Name
			e["inbound_nodes"] = fl.InboundNodes
			entries = append(entries, e)
		}
		top = keras3Object("keras.src.models.functional", functionalClass, map[string]any{
			"name": m.name, "trainable": true, "layers": entries,
			"input_layers": fc.InputLayers, "output_layers": fc.OutputLayers,
		})
		top["registered_name"] = functionalClass
		top["build_config"] = map[string]any{"input_shape": nil}
	}
	if m.compiled != nil {
		cc, err := m.keras3CompileConfig()
		if err != nil {
			return nil, err
		}
		top["compile_config"] = cc
	}
	return top, nil
}

// freeName is name, or name_1, name_2, ... the first that no layer of m
// has.
func (m *Sequential) freeName(name string) string {
	taken := map[string]bool{}
	for _, l := range m.layers {
		taken[l.Name()] = true
	}
	for i, n := 1, name; ; i++ {
		if !taken[n] {
			return n
		}
		n = fmt.Sprintf("%s_%d", name, i)
	}
}

// kerasBatchShape is a sample shape as Keras writes a batch shape: the
// batch axis first, null.
func kerasBatchShape(shape []int) []any {
	out := []any{nil}
	for _, d := range shape {
		out = append(out, d)
	}
	return out
}

// keras3InputLayer is an InputLayer's entry.
func keras3InputLayer(name string, shape []int) map[string]any {
	return keras3Object("keras.layers", "InputLayer", map[string]any{
		"batch_shape": kerasBatchShape(shape), "dtype": "float32", "sparse": false, "ragged": false, "name": name,
	})
}

// keras3Renamed are the arguments Keras 3 renamed, by class.
var keras3Renamed = map[string]map[string]string{
	"LeakyReLU": {"alpha": "negative_slope"},
}

// keras3DataFormat are the classes whose Keras 3 config has data_format,
// which Save writes as channels_last, gokeras' only layout, rather than
// leave it to the reader's keras.config.image_data_format().
var keras3DataFormat = []string{
	"Conv1D", "Conv2D", "MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D",
	"GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "Flatten",
}

// kerasExtraArgs adds to a layer's config the arguments Keras' config of
// its class has (Keras 2's and 3's alike) and gokeras' layers do not
// take, at the values that mean what gokeras computes.
func kerasExtraArgs(class string, cfg map[string]any) {
	switch class {
	case "Conv1D", "Conv2D":
		cfg["groups"] = 1
	case "BatchNormalization", "LayerNormalization":
		cfg["beta_regularizer"], cfg["gamma_regularizer"] = nil, nil
	}
}

// keras3LayerEntry is layer l's entry in config.json's layers; in is
// the shapes of its first call's inputs.
func keras3LayerEntry(l layers.Layer, in [][]int) (map[string]any, error) {
	c, err := layers.ConfigOf(l)
	if err != nil {
		return nil, fmt.Errorf("layer %q (%s) has no Keras config: %w", l.Name(), l.Type(), err)
	}
	what := fmt.Sprintf("layer %q (%s)", l.Name(), c.ClassName)
	cfg := maps.Clone(c.Config)
	kerasExtraArgs(c.ClassName, cfg)
	for key, v := range cfg {
		switch {
		case key == "activation" || key == "recurrent_activation":
			name, err := keras3Activation(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", what, key, err)
			}
			cfg[key] = name
		case strings.HasSuffix(key, "_initializer") && v != nil:
			cfg[key] = keras3Serialized("keras.initializers", v)
		case key == "activity_regularizer" && v == nil:
			delete(cfg, key) // Keras 3 writes it only when set
		case strings.HasSuffix(key, "_regularizer"):
			// Keras 3 has a constraint beside each weight's
			// regularizer; gokeras has none.
			cfg[strings.TrimSuffix(key, "_regularizer")+"_constraint"] = nil
			if v != nil {
				cfg[key] = keras3Serialized("keras.regularizers", v)
			}
		}
	}
	for from, to := range keras3Renamed[c.ClassName] {
		if v, ok := cfg[from]; ok {
			delete(cfg, from)
			cfg[to] = v
		}
	}
	if slices.Contains(keras3DataFormat, c.ClassName) {
		cfg["data_format"] = "channels_last"
	}
	switch c.ClassName {
	case "Dropout":
		cfg["noise_shape"] = nil
	case "BatchNormalization":
		cfg["synchronized"] = false
	}
	var wrapped layers.Layer
	switch w := l.(type) {
	case *layers.BidirectionalLayer:
		wrapped = w.Layer()
	case *layers.TimeDistributedLayer:
		wrapped = w.Layer()
	}
	if wrapped != nil {
		// The wrapped layer, serialized as Keras 3 serializes it.
		inner, err := keras3LayerEntry(wrapped, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		inner["config"].(map[string]any)["name"] = c.Config["layer"].(map[string]any)["config"].(map[string]any)["name"]
		cfg["layer"] = inner
	}
	cfg["name"] = l.Name()
	cfg["trainable"] = true
	cfg["dtype"] = keras3Policy()
	e := keras3Object("keras.layers", c.ClassName, cfg)
	_, multi := l.(layers.MultiInputLayer)
	switch {
	case multi && len(in) > 0:
		shapes := make([]any, len(in))
		for i, s := range in {
			shapes[i] = kerasBatchShape(s)
		}
		e["build_config"] = map[string]any{"input_shape": shapes}
	case len(l.Params()) > 0 && len(in) > 0:
		e["build_config"] = map[string]any{"input_shape": kerasBatchShape(in[0])}
	}
	return e, nil
}

// keras3Activation is an activation's name as Keras 3 reads it, or an
// error for the ones Keras 3 computes otherwise or cannot name.
func keras3Activation(v any) (string, error) {
	name, _ := v.(string)
	switch name {
	case "hard_sigmoid":
		return "", errors.New(`"hard_sigmoid" is Keras 2's clip(0.2·x + 0.5, 0, 1), but Keras 3's hard_sigmoid is clip(x/6 + 0.5, 0, 1): a .keras file would compute something else; save with Save to a .safetensors name, or use another activation`)
	case "gelu_approximate":
		return "", errors.New(`"gelu_approximate" (gelu with approximate=True) has no name in Keras 3's configs, which would read it as the exact gelu: save with Save to a .safetensors name, or use "gelu"`)
	case "swish":
		return "silu", nil // Keras 3's name for it
	case "":
		return "linear", nil
	}
	return name, nil
}

// keras3Serialized is a {"class_name", "config"} object (an initializer,
// a regularizer) serialized as Keras 3 writes it, with its module.
func keras3Serialized(module string, v any) any {
	switch obj := v.(type) {
	case map[string]any:
		return keras3Object(module, fmt.Sprint(obj["class_name"]), obj["config"])
	default:
		// A layers.Initializer or Regularizer's Config value: through
		// JSON to its class_name and config.
		js, err := json.Marshal(v)
		if err != nil {
			return v
		}
		var o struct {
			ClassName string         `json:"class_name"`
			Config    map[string]any `json:"config"`
		}
		if json.Unmarshal(js, &o) != nil || o.ClassName == "" {
			return v
		}
		if o.Config == nil {
			o.Config = map[string]any{}
		}
		return keras3Object(module, o.ClassName, o.Config)
	}
}

// kerasCompiled is what a compiled model's settings hold, serialized as
// Keras does: the optimizer's class and config (without Keras' extra
// arguments, which each format adds), the loss (a serialized object with
// its name and reduction), the loss weights (nil when all are 1) and the
// metrics ("accuracy" by name, others serialized with a float32 dtype). A
// model of several outputs has, as Keras writes compile(loss=[...],
// loss_weights=[...], metrics=[[...], ...]), a list of losses, a list of
// weights and a list of metrics per output. serialize makes a serialized
// object of a module, class and config.
func (m *Sequential) kerasCompiled(reduction string, serialize func(module, class string, config any) map[string]any) (oc optim.Config, loss any, weights any, ms []any, err error) {
	cc := m.compiled
	if oc, err = optim.ConfigOf(cc.optimizer); err != nil {
		return optim.Config{}, nil, nil, nil, fmt.Errorf("the optimizer: %w", err)
	}
	oc.Config = maps.Clone(oc.Config)
	if lr, ok := oc.Config["learning_rate"].(optim.Config); ok {
		oc.Config["learning_rate"] = serialize("keras.optimizers.schedules", lr.ClassName, lr.Config)
	}
	var ls, ws []any
	unweighted := true
	for _, h := range cc.heads {
		lc, err := losses.ConfigOf(h.loss)
		if err != nil {
			return optim.Config{}, nil, nil, nil, fmt.Errorf("the loss of output %q: %w", h.name, err)
		}
		lcfg := maps.Clone(lc.Config)
		if lcfg == nil {
			lcfg = map[string]any{}
		}
		lcfg["name"] = snakeCase(lc.ClassName)
		lcfg["reduction"] = reduction
		ls = append(ls, serialize("keras.losses", lc.ClassName, lcfg))
		ws = append(ws, h.weight)
		unweighted = unweighted && h.weight == 1
	}
	perOutput := make([][]any, len(cc.heads))
	for i, mt := range cc.metrics {
		if _, ok := mt.(*outputLoss); ok {
			continue
		}
		c, err := metrics.ConfigOf(mt)
		if err != nil {
			return optim.Config{}, nil, nil, nil, fmt.Errorf("metric %s: %w", cc.metricNames[i], err)
		}
		var v any = "accuracy" // as Keras writes compile(metrics=["accuracy"])
		if _, ok := mt.(*metrics.Accuracy); !ok {
			mcfg := maps.Clone(c.Config)
			mcfg["dtype"] = "float32"
			v = serialize("keras.metrics", c.ClassName, mcfg)
		}
		perOutput[cc.metricOut[i]] = append(perOutput[cc.metricOut[i]], v)
	}
	if len(cc.heads) == 1 {
		loss, ms = ls[0], perOutput[0]
	} else {
		loss = ls
		for _, list := range perOutput {
			if list == nil {
				list = []any{}
			}
			ms = append(ms, list)
		}
	}
	if !unweighted {
		weights = ws
	}
	return oc, loss, weights, ms, nil
}

// keras3CompileConfig is the compile_config Keras 3 writes beside the
// model: the optimizer, loss and metrics as Keras serializes them.
func (m *Sequential) keras3CompileConfig() (map[string]any, error) {
	oc, loss, weights, ms, err := m.kerasCompiled("sum_over_batch_size", keras3Object)
	if err != nil {
		return nil, err
	}
	oc.Config["name"] = strings.ToLower(oc.ClassName)
	for k, v := range map[string]any{"use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": nil, "loss_scale_factor": nil, "gradient_accumulation_steps": nil} {
		if _, ok := oc.Config[k]; !ok {
			oc.Config[k] = v
		}
	}
	return map[string]any{
		"optimizer":           keras3Object("keras.optimizers", oc.ClassName, oc.Config),
		"loss":                loss,
		"loss_weights":        weights,
		"metrics":             ms,
		"weighted_metrics":    nil,
		"run_eagerly":         false,
		"steps_per_execution": 1,
		"jit_compile":         false,
	}, nil
}
