package tfjs

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// shardBytes is the most bytes a weights shard holds, as
// tensorflowjs_converter's default.
const shardBytes = 4 << 20

// kerasVersion is the Keras version the topology says it is, the last
// Keras 2: the form TensorFlow.js reads.
const kerasVersion = "2.15.0"

// Export writes the model to dir (made if it does not exist) as
// dir/model.json and its weight shards. The model must be built (or
// declare its input shape); the weights written are its current ones.
// Everything is checked and made before anything is written; the files
// are written under temporary names and then renamed into place, model.json
// last, and shards an earlier export left there that the new model.json
// does not name are removed.
func Export(m *nn.Model, dir string) error {
	if m == nil {
		return errors.New("export TF.js: no model (nil)")
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return fmt.Errorf("export TF.js: %s is a file: give a folder for model.json and its shards", dir)
	}
	return m.View("export TF.js", func(v nn.ModelView) error {
		doc, shards, err := modelOf(v)
		if err != nil {
			return fmt.Errorf("export TF.js: %w", err)
		}
		js, err := json.MarshalIndent(doc, "", " ")
		if err != nil {
			return fmt.Errorf("export TF.js: %w", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("export TF.js: %w", err)
		}
		files := map[string][]byte{"model.json": js}
		names := []string{}
		for i, data := range shards {
			name := shardName(i, len(shards))
			files[name], names = data, append(names, name)
		}
		names = append(names, "model.json") // renamed last
		// Every file under a temporary name first: a full disk fails
		// before any file of an earlier export is replaced.
		tmp := map[string]string{}
		defer func() {
			for _, t := range tmp {
				os.Remove(t)
			}
		}()
		for _, name := range names {
			f, err := os.CreateTemp(dir, ".tfjs-"+name+"-*")
			if err != nil {
				return fmt.Errorf("export TF.js: %w", err)
			}
			tmp[name] = f.Name()
			_, err = f.Write(files[name])
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("export TF.js: writing %s: %w", filepath.Join(dir, name), err)
			}
		}
		for _, name := range names {
			if err := os.Rename(tmp[name], filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("export TF.js: %w", err)
			}
			delete(tmp, name)
		}
		// Shards of an earlier export of other sizes.
		old, _ := filepath.Glob(filepath.Join(dir, "group*-shard*of*.bin"))
		for _, path := range old {
			if _, ours := files[filepath.Base(path)]; !ours {
				os.Remove(path)
			}
		}
		return nil
	})
}

// Check returns the error Export would return for the model's layers (a
// layer TensorFlow.js lacks, a weight that is not finite) without writing
// anything: a program that exports after training checks before.
func Check(m *nn.Model) error {
	if m == nil {
		return errors.New("export TF.js: no model (nil)")
	}
	return m.View("export TF.js", func(v nn.ModelView) error {
		if _, _, err := modelOf(v); err != nil {
			return fmt.Errorf("export TF.js: %w", err)
		}
		return nil
	})
}

func shardName(i, n int) string { return fmt.Sprintf("group1-shard%dof%d.bin", i+1, n) }

// modelJSON is model.json.
type modelJSON struct {
	Format          string          `json:"format"`
	GeneratedBy     string          `json:"generatedBy"`
	ConvertedBy     string          `json:"convertedBy"`
	ModelTopology   topology        `json:"modelTopology"`
	WeightsManifest []manifestGroup `json:"weightsManifest"`
}

type topology struct {
	KerasVersion string      `json:"keras_version"`
	Backend      string      `json:"backend"`
	ModelConfig  layerConfig `json:"model_config"`
}

// layerConfig is a Keras 2 layer or model entry.
type layerConfig struct {
	ClassName    string         `json:"class_name"`
	Config       map[string]any `json:"config"`
	Name         string         `json:"name,omitempty"`
	InboundNodes []any          `json:"inbound_nodes,omitempty"`
}

type manifestGroup struct {
	Paths   []string         `json:"paths"`
	Weights []manifestWeight `json:"weights"`
}

type manifestWeight struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	Dtype string `json:"dtype"`
}

// modelOf makes model.json and the shards of v.
func modelOf(v nn.ModelView) (*modelJSON, [][]byte, error) {
	if err := v.CheckFinite(); err != nil {
		return nil, nil, err
	}
	cfgs := map[layers.Layer]map[string]any{}
	for i, lv := range v.Layers {
		c, err := layerEntry(lv)
		if err != nil {
			return nil, nil, fmt.Errorf("layer %d (%q): %w", i+1, lv.Layer.Name(), err)
		}
		cfgs[lv.Layer] = c
	}
	var model layerConfig
	if v.Functional {
		model = functional(v, cfgs)
	} else {
		model = sequential(v, cfgs)
	}
	version := "gokeras"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range append(bi.Deps, &bi.Main) {
			if d != nil && d.Path == "github.com/gokeras/gokeras" && d.Version != "" {
				version += " " + d.Version
			}
		}
	}
	doc := &modelJSON{
		Format: "layers-model", GeneratedBy: "gokeras", ConvertedBy: version,
		ModelTopology: topology{KerasVersion: kerasVersion, Backend: "tensorflow", ModelConfig: model},
	}
	// The weights, in the layers' order, cut into shards.
	var all []byte
	var weights []manifestWeight
	for _, lv := range v.Layers {
		for _, p := range lv.Layer.Params() {
			weights = append(weights, manifestWeight{Name: lv.Layer.Name() + "/" + p.Name, Shape: p.Value.Shape().Clone(), Dtype: "float32"})
			for _, x := range p.Value.Data().([]float32) {
				all = binary.LittleEndian.AppendUint32(all, math.Float32bits(x))
			}
		}
	}
	var shards [][]byte
	for len(all) > shardBytes {
		shards, all = append(shards, all[:shardBytes]), all[shardBytes:]
	}
	shards = append(shards, all)
	group := manifestGroup{Weights: weights}
	if weights == nil {
		group.Weights = []manifestWeight{}
	}
	for i := range shards {
		group.Paths = append(group.Paths, shardName(i, len(shards)))
	}
	doc.WeightsManifest = []manifestGroup{group}
	return doc, shards, nil
}

// tfjsLacks are the activations of package layers that TensorFlow.js
// cannot load by name (it has elu, selu, softplus, softsign, hardSigmoid,
// swish and gelu, but no exponential, leaky_relu or approximate gelu under
// a name gokeras writes).
var tfjsLacks = map[string]bool{"exponential": true, "leaky_relu": true, "gelu_approximate": true}

// layerEntry is a layer's config as TensorFlow.js reads it.
func layerEntry(lv nn.LayerView) (map[string]any, error) {
	l := lv.Layer
	c, err := layers.ConfigOf(l)
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{}
	for k, v := range c.Config {
		cfg[k] = v
	}
	if act, ok := cfg["activation"].(string); ok && tfjsLacks[act] {
		return nil, fmt.Errorf("TensorFlow.js has no %s activation: export the model to ONNX instead", act)
	}
	switch c.ClassName {
	case "Subtract":
		return nil, errors.New("TensorFlow.js has no Subtract layer: export the model to ONNX instead, or write a - b as Add of a and b times -1")
	case "Normalization":
		return nil, errors.New("TensorFlow.js has no Normalization layer: export the model to ONNX instead")
	case "SimpleRNN", "LSTM", "GRU", "Bidirectional":
		// Not checked against TensorFlow.js' recurrent layers yet (their
		// weights' names and GRU's reset_after, which its GRU refuses),
		// nor, so, Bidirectional, which wraps one.
		return nil, fmt.Errorf("exporting a %s layer to TensorFlow.js is not supported yet: save the model with Save, or its weights with SaveWeights (Keras' format), or export it to ONNX", c.ClassName)
	case "Resizing", "CenterCrop", "RandomCrop":
		// TensorFlow.js' Resizing resizes with align_corners (not Keras'
		// half-pixel centres), its CenterCrop resizes a smaller image
		// without cropping it to the aspect first, and it has no
		// RandomCrop: it would not predict what the model predicts.
		return nil, fmt.Errorf("TensorFlow.js' layers do not resize images as Keras' %s does (its Resizing aligns corners): export the model to ONNX instead", c.ClassName)
	case "Identity", "RandomFlip", "RandomTranslation", "RandomZoom", "RandomRotation", "RandomBrightness", "RandomContrast":
		// TensorFlow.js has no Identity layer (its "Identity" is an
		// initializer): a linear Activation passes the values as they are,
		// as Identity and, in inference, the random augmentation layers
		// do.
		c.ClassName, cfg = "Activation", map[string]any{"activation": "linear"}
	case "ELU":
		if a, ok := cfg["alpha"].(float64); ok && a != 1 {
			return nil, fmt.Errorf("TensorFlow.js' ELU layer takes alpha 1 only, this one has %v: export the model to ONNX instead", a)
		}
	case "Reshape":
		// TensorFlow.js leaves a -1 of the target shape unknown: give the
		// shape the layer computes.
		cfg["target_shape"] = anyInts(lv.OutputShape)
	}
	for _, k := range []string{"kernel_regularizer", "bias_regularizer", "activity_regularizer", "embeddings_regularizer",
		"beta_regularizer", "gamma_regularizer", "alpha_regularizer"} {
		if _, ok := cfg[k]; ok {
			cfg[k] = nil
		}
	}
	if c.ClassName == "Dropout" {
		cfg["seed"] = nil
	}
	cfg["name"] = l.Name()
	cfg["trainable"] = true
	cfg["dtype"] = "float32"
	return map[string]any{"class_name": c.ClassName, "config": cfg}, nil
}

// inputEntry is the InputLayer of an input of shape, named name.
func inputEntry(name string, shape []int) map[string]any {
	batch := append([]any{nil}, anyInts(shape)...)
	return map[string]any{"class_name": "InputLayer", "config": map[string]any{
		"batch_input_shape": batch, "dtype": "float32", "sparse": false, "ragged": false, "name": name}}
}

func anyInts(xs []int) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// sequential is a Sequential's topology: an InputLayer, then its layers.
func sequential(v nn.ModelView, cfgs map[layers.Layer]map[string]any) layerConfig {
	list := []any{inputEntry(v.Name+"_input", v.InputShape)}
	for _, lv := range v.Layers {
		list = append(list, cfgs[lv.Layer])
	}
	return layerConfig{ClassName: "Sequential", Config: map[string]any{"name": v.Name, "layers": list}}
}

// functional is a functional model's topology, as Keras 2's
// Functional.get_config writes it: each layer with its calls as inbound
// nodes of [layer, node index, tensor index, kwargs] lists.
func functional(v nn.ModelView, cfgs map[layers.Layer]map[string]any) layerConfig {
	ref := map[string][]any{} // each tensor as [layer, node, tensor]
	var list []any
	for i, name := range v.Inputs {
		ref[name] = []any{name, 0, 0}
		e := inputEntry(name, v.InputShapes[i])
		e["name"], e["inbound_nodes"] = name, []any{}
		list = append(list, e)
	}
	nodes := map[layers.Layer][]any{}
	for _, c := range v.Calls {
		var args []any
		for _, t := range c.Inputs {
			args = append(args, append(append([]any{}, ref[t]...), map[string]any{}))
		}
		nodes[c.Layer] = append(nodes[c.Layer], args)
		ref[c.Output] = []any{c.Layer.Name(), c.Index, 0}
	}
	for _, lv := range v.Layers {
		e := cfgs[lv.Layer]
		e["name"], e["inbound_nodes"] = lv.Layer.Name(), nodes[lv.Layer]
		list = append(list, e)
	}
	var ins, outs []any
	for _, name := range v.Inputs {
		ins = append(ins, ref[name])
	}
	for _, name := range v.Outputs {
		outs = append(outs, ref[name])
	}
	return layerConfig{ClassName: "Functional", Config: map[string]any{
		"name": v.Name, "layers": list, "input_layers": ins, "output_layers": outs}}
}
