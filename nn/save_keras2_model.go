package nn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/hdf5"
	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/layers"
)

// Keras 2's whole-model HDF5 file, written: Save to a path ending in .h5
// or .hdf5 (but .weights.h5, a weights name). It is what tf.keras 2's
// model.save("m.h5") writes and keras.models.load_model reads (Keras 3
// too, through its legacy loader):
//
//	/                  attributes backend, keras_version, model_config
//	                   (the model's JSON: {"class_name": "Sequential" or
//	                   "Functional", "config"}) and, once compiled,
//	                   training_config (loss, metrics, weighted_metrics,
//	                   loss_weights, optimizer_config)
//	/model_weights     the weights as Keras 2's save_weights lays them out
//	                   (layer_names, each layer's weight_names)
//
// Layers are written with Keras 2's configs: each {"class_name",
// "config"} with trainable and dtype "float32", an InputLayer's
// batch_input_shape, a functional model's inbound nodes as Keras 2's
// nested lists ([[["input_1", 0, 0, {}]]]). The optimizer's state is not
// written (no optimizer_weights group): a loaded model trains on from
// fresh slots. What Keras 2 cannot express is an error naming the layer:
// the tanh form of gelu, a layer without a config.

// SaveKerasH5 writes the whole model to w as a Keras 2 HDF5 model file,
// what Save writes to a path ending in .h5 or .hdf5: the architecture
// (model_config), the compile settings (training_config) and the weights
// (model_weights), for tf.keras 2's and Keras 3's load_model and for
// LoadModelFrom. The optimizer's state is not written. A layer, loss,
// metric or optimizer that Keras cannot express as gokeras computes it is
// an error naming it. Unlike Save it cannot be atomic: on an error, w may
// hold part of the file. It writes on every rank of a strategy.
func (m *Sequential) SaveKerasH5(w io.Writer) error { return m.saveKerasTo(w, m.writeKeras2Model) }

// writeKeras2Model writes the model's Keras 2 HDF5 model file to w.
func (m *Sequential) writeKeras2Model(w io.Writer) error {
	if err := m.ensureBuilt(); err != nil {
		return err
	}
	if err := m.syncWeights(); err != nil {
		return err
	}
	config, err := m.keras2Config()
	if err != nil {
		return err
	}
	js, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("writing the model's Keras config as JSON: %w", err)
	}
	f := hdf5.NewWriter()
	root := f.Root()
	root.Attr("backend", "tensorflow").Attr("keras_version", keras2Version).Attr("model_config", string(js))
	if m.compiled != nil {
		tc, err := m.keras2TrainingConfig()
		if err != nil {
			return err
		}
		tjs, err := json.Marshal(tc)
		if err != nil {
			return err
		}
		root.Attr("training_config", string(tjs))
	}
	if err := m.writeKeras2Weights(root.Group("model_weights")); err != nil {
		return err
	}
	if _, err := f.WriteTo(w); err != nil {
		if errors.Is(err, hdf5.ErrWrite) {
			return fmt.Errorf("the model does not fit a Keras 2 .h5 file as gokeras writes it (%w): save it to a .keras name instead", err)
		}
		return err
	}
	return nil
}

// saveKeras2Model is Save for a path ending in .h5 or .hdf5.
func (m *Sequential) saveKeras2Model(path string, o saveOptions) error {
	if o.at != nil {
		return fmt.Errorf("%s: a Keras .h5 model file cannot record where training stands (AtCheckpoint): save the checkpoint to a .safetensors name, or save without AtCheckpoint", path)
	}
	var buf bytes.Buffer
	if err := m.writeKeras2Model(&buf); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := buf.WriteTo(w)
		return err
	})
}

// keras2Config is the model_config of a Keras 2 model file.
func (m *Sequential) keras2Config() (map[string]any, error) {
	if err := layers.CheckNames(m.layers); err != nil {
		return nil, fmt.Errorf("model %q: %w", m.name, err)
	}
	if m.graph == nil {
		entries := []any{}
		rest := m.layers
		// Keras 2 names a Sequential's input after its first layer.
		name := m.freeName("input_1")
		if il, ok := firstInput(rest); ok {
			name, rest = il.Name(), rest[1:]
		} else if len(rest) > 0 {
			name = m.freeName(rest[0].Name() + "_input")
		}
		entries = append(entries, keras2InputLayer(name, m.inputShape))
		for _, l := range rest {
			e, err := keras2LayerEntry(l)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		}
		return map[string]any{"class_name": "Sequential", "config": map[string]any{"name": m.name, "layers": entries}}, nil
	}
	doc := &modelDocument{Config: modelConfig{Layers: make([]layers.Config, len(m.layers))}}
	if err := m.functionalDocument(doc); err != nil {
		return nil, err
	}
	byName := map[string]layers.Layer{}
	for _, l := range m.layers {
		byName[l.Name()] = l
	}
	for _, t := range m.graph.inputs {
		byName[t.input.Name()] = t.input
	}
	pos := map[string]int{}
	for i, l := range m.kerasOrder() {
		pos[l.Name()] = i
	}
	fls := slices.Clone(doc.functional.Layers)
	slices.SortStableFunc(fls, func(a, b functionalLayer) int { return pos[a.Name] - pos[b.Name] })
	entries := make([]any, 0, len(fls))
	for _, fl := range fls {
		var e map[string]any
		if il, ok := byName[fl.Name].(*layers.InputLayer); ok {
			e = keras2InputLayer(il.Name(), il.Shape())
		} else {
			var err error
			if e, err = keras2LayerEntry(byName[fl.Name]); err != nil {
				return nil, err
			}
		}
		nodes := []any{}
		for _, n := range fl.InboundNodes {
			var ins []kerasTensor
			arg := bytes.TrimSpace(n.Args[0])
			if kc, ok := byName[fl.Name].(layers.KerasCaller); ok {
				call, err := keras2CallOf(kc, n)
				if err != nil {
					return nil, err
				}
				nodes = append(nodes, call)
				continue
			}
			if bytes.HasPrefix(arg, []byte("[")) {
				if err := json.Unmarshal(arg, &ins); err != nil {
					return nil, err
				}
			} else {
				var kt kerasTensor
				if err := json.Unmarshal(arg, &kt); err != nil {
					return nil, err
				}
				ins = []kerasTensor{kt}
			}
			if v, ok := n.Kwargs["initial_state"]; ok && string(bytes.TrimSpace(v)) != "null" {
				// Keras 2 lists a recurrent layer's initial states as
				// inputs after its sequences.
				var states []kerasTensor
				if err := json.Unmarshal(v, &states); err != nil {
					return nil, err
				}
				ins = append(ins, states...)
			}
			call := []any{}
			for _, kt := range ins {
				r := kt.Config.KerasHistory
				call = append(call, []any{r.Layer, r.Node, r.Tensor, map[string]any{}})
			}
			nodes = append(nodes, call)
		}
		e["name"] = fl.Name
		e["inbound_nodes"] = nodes
		entries = append(entries, e)
	}
	fc := doc.functional
	return map[string]any{"class_name": functionalClass, "config": map[string]any{
		"name": m.name, "layers": entries, "input_layers": fc.InputLayers, "output_layers": fc.OutputLayers,
	}}, nil
}

// firstInput is a Sequential's leading InputLayer, if it has one.
func firstInput(ls []layers.Layer) (*layers.InputLayer, bool) {
	if len(ls) == 0 {
		return nil, false
	}
	il, ok := ls[0].(*layers.InputLayer)
	return il, ok
}

// keras2InputLayer is an InputLayer's entry in Keras 2's config.
func keras2InputLayer(name string, shape []int) map[string]any {
	return map[string]any{"class_name": "InputLayer", "config": map[string]any{
		"batch_input_shape": kerasBatchShape(shape), "dtype": "float32", "sparse": false, "ragged": false, "name": name,
	}}
}

// keras2LayerEntry is layer l's entry in Keras 2's config.
func keras2LayerEntry(l layers.Layer) (map[string]any, error) {
	c, err := layers.ConfigOf(l)
	if err != nil {
		return nil, fmt.Errorf("layer %q (%s) has no Keras config: %w", l.Name(), l.Type(), err)
	}
	cfg := maps.Clone(c.Config)
	kerasExtraArgs(c.ClassName, cfg)
	for key, v := range cfg {
		switch {
		case key == "activation" || key == "recurrent_activation":
			if name, _ := v.(string); name == "gelu_approximate" {
				return nil, fmt.Errorf(`layer %q (%s): %s "gelu_approximate" (gelu with approximate=True) has no name in Keras' configs, which would read it as the exact gelu: save with Save to a .safetensors name, or use "gelu"`, l.Name(), c.ClassName, key)
			}
		case strings.HasSuffix(key, "_regularizer") && key != "activity_regularizer":
			cfg[strings.TrimSuffix(key, "_regularizer")+"_constraint"] = nil
		}
	}
	if slices.Contains(keras3DataFormat, c.ClassName) {
		cfg["data_format"] = "channels_last"
	}
	cfg["name"] = l.Name()
	cfg["trainable"] = true
	cfg["dtype"] = "float32"
	return map[string]any{"class_name": c.ClassName, "config": cfg}, nil
}

// keras2TrainingConfig is the training_config of a Keras 2 model file.
func (m *Sequential) keras2TrainingConfig() (map[string]any, error) {
	// Keras 2's serialized objects have no module.
	plain := func(_, class string, config any) map[string]any {
		return map[string]any{"class_name": class, "config": config}
	}
	oc, loss, weights, ms, err := m.kerasCompiled("auto", plain)
	if err != nil {
		return nil, err
	}
	oc.Config["name"] = oc.ClassName
	for k, v := range map[string]any{"is_legacy_optimizer": false, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": nil, "jit_compile": false} {
		oc.Config[k] = v
	}
	return map[string]any{
		"loss":             loss,
		"metrics":          ms,
		"weighted_metrics": nil,
		"loss_weights":     weights,
		"optimizer_config": plain("", oc.ClassName, oc.Config),
	}, nil
}

// keras2CallOf is a call of a layers.KerasCaller as Keras 2 writes it:
// its first input, whose keyword arguments hold the other inputs by name
// (as [layer, node, tensor]) and the call's other arguments.
func keras2CallOf(kc layers.KerasCaller, n inboundNode) ([]any, error) {
	all, npos, _ := kc.KerasCall(2)
	kw := map[string]any{}
	var first tensorRef
	for i, a := range n.Args {
		var kt kerasTensor
		if err := json.Unmarshal(a, &kt); err != nil {
			return nil, err
		}
		if i == 0 {
			first = kt.Config.KerasHistory
			continue
		}
		if i < npos {
			kw[all[i]] = kt.Config.KerasHistory
		}
	}
	for k, v := range n.Kwargs {
		var kt kerasTensor
		if bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) && json.Unmarshal(v, &kt) == nil && kt.ClassName == kerasTensorClass {
			kw[k] = kt.Config.KerasHistory
			continue
		}
		kw[k] = v
	}
	return []any{[]any{first.Layer, first.Node, first.Tensor, kw}}, nil
}
