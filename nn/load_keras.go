package nn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/safetensors"
)

// Keras model configs: the architecture in a Keras 2 .h5 model file (its
// model_config attribute) or a Keras 3 .keras archive (its config.json),
// made into a gokeras model by LoadModel.
//
// A Keras config says more than gokeras' layers take: every argument at
// its value, Keras 3's module and registered_name beside each class, the
// layer's dtype policy, its constraints. kerasLayer keeps what a gokeras
// layer reads and drops what holds Keras' default (which is what gokeras
// does); anything else, a setting gokeras cannot honour, is an error that
// names the layer, the argument and its value, never silently dropped.
// Initializers are dropped: the weights come from the file.

// metaKerasConfig holds, in a Keras file read by readKerasFile, the JSON of
// its model config (none for a weights file).
const metaKerasConfig = metaPrefix + "keras.config"

// kerasDefaults are arguments of Keras layers that gokeras' layers do not
// take, with the values that mean what gokeras does: a config holding one
// of them at another value is refused.
var kerasDefaults = map[string]any{
	"trainable":             true,
	"data_format":           "channels_last",
	"groups":                1.0,
	"renorm":                false,
	"renorm_clipping":       nil,
	"renorm_momentum":       0.99,
	"synchronized":          false,
	"fused":                 nil,
	"virtual_batch_size":    nil,
	"adjustment":            nil,
	"noise_shape":           nil,
	"sparse":                false,
	"ragged":                false,
	"lora_rank":             nil,
	"lora_alpha":            nil,
	"quantization_config":   nil,
	"activity_regularizer":  nil,
	"kernel_constraint":     nil,
	"bias_constraint":       nil,
	"beta_constraint":       nil,
	"gamma_constraint":      nil,
	"embeddings_constraint": nil,
	"depthwise_constraint":  nil,
	"pointwise_constraint":  nil,
	"input_length":          nil,
}

// kerasModelOf makes the model a Keras model config (JSON) describes, not
// built, and returns the input shape it declares. Sequential models are
// read; functional and subclassed ones are refused, naming their class.
func kerasModelOf(js []byte, path string) (*Sequential, []int, error) {
	var top struct {
		ClassName      string          `json:"class_name"`
		Config         json.RawMessage `json:"config"`
		RegisteredName *string         `json:"registered_name"`
	}
	if err := decodeNumbers(js, &top); err != nil {
		return nil, nil, fmt.Errorf("%s: its Keras model config is not valid JSON: %v", path, err)
	}
	switch top.ClassName {
	case "Sequential":
	case "Functional", "Model":
		return kerasFunctionalOf(top.Config, path)
	default:
		return nil, nil, fmt.Errorf("%s holds a Keras model of class %q (a subclassed model, whose code Keras needs too): gokeras reads Keras Sequential and functional models' configs; make the model in Go and load the file's weights with LoadWeights", path, top.ClassName)
	}
	var seq struct {
		Name   string                       `json:"name"`
		Layers []map[string]json.RawMessage `json:"layers"`
		// build_input_shape: Keras 2's shape of a Sequential built
		// without an input layer.
		BuildInputShape []any `json:"build_input_shape"`
	}
	if err := decodeNumbers(top.Config, &seq); err != nil {
		return nil, nil, fmt.Errorf("%s: its Keras Sequential config is not one gokeras reads: %v", path, err)
	}
	m := NewSequential()
	if seq.Name != "" {
		m.SetName(seq.Name)
	}
	var input []int
	if len(seq.BuildInputShape) > 0 {
		var err error
		if input, err = kerasShape(seq.BuildInputShape); err != nil {
			return nil, nil, fmt.Errorf("%s: build_input_shape: %w", path, err)
		}
	}
	shape := input
	for i, entry := range seq.Layers {
		l, _, in, err := kerasLayer(entry, shape)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: Keras layer %d of model %q: %w", path, i+1, m.name, err)
		}
		if in != nil {
			if shape != nil && !slices.Equal(in, input) {
				return nil, nil, fmt.Errorf("%s: Keras layer %d of model %q declares the input shape %v, but the model's input is %v", path, i+1, m.name, in, input)
			}
			input, shape = in, in
		}
		if l == nil {
			continue // the InputLayer: the model's input shape
		}
		if l.Name() == "" {
			l.SetName(m.autoName(l.Type()))
		}
		m.layers = append(m.layers, l)
		if shape == nil {
			return nil, nil, fmt.Errorf("%s: Keras model %q declares no input shape before layer %d (%s): gokeras needs one to build it", path, m.name, i+1, l.Name())
		}
		if shape, _, err = layers.PlanBuild(l, shape); err != nil {
			return nil, nil, fmt.Errorf("%s: Keras layer %d of model %q: %w", path, i+1, m.name, err)
		}
	}
	if input == nil {
		return nil, nil, fmt.Errorf("%s: Keras model %q declares no input shape", path, m.name)
	}
	return m, input, nil
}

// kerasLayer makes the gokeras layer of a Keras layer entry ({"class_name",
// "config", and in Keras 3 "module", "registered_name", "build_config"})
// whose input has the sample shape in (nil when not known yet). It returns
// the input shape the entry declares, if any, and a nil layer for an
// InputLayer.
func kerasLayer(entry map[string]json.RawMessage, in []int) (layers.Layer, layers.Config, []int, error) {
	var class string
	if err := json.Unmarshal(entry["class_name"], &class); err != nil || class == "" {
		return nil, layers.Config{}, nil, errors.New("no class_name")
	}
	var registered *string
	if raw, ok := entry["registered_name"]; ok {
		_ = json.Unmarshal(raw, &registered)
	}
	if registered != nil && *registered != "" && *registered != class && !strings.HasPrefix(*registered, "keras") {
		return nil, layers.Config{}, nil, fmt.Errorf("layer class %q (registered as %q) is a custom layer, whose Python code Keras needs to load it too: gokeras has no such layer", class, *registered)
	}
	var cfg map[string]any
	if err := decodeNumbers(entry["config"], &cfg); err != nil {
		return nil, layers.Config{}, nil, fmt.Errorf("%s: config: %v", class, err)
	}
	name, _ := cfg["name"].(string)
	what := fmt.Sprintf("%s layer %q", class, name)
	// The input shape, on an InputLayer or (Keras 2) on the first layer.
	var declared []int
	for _, key := range []string{"batch_shape", "batch_input_shape"} {
		if v, ok := cfg[key]; ok {
			list, _ := v.([]any)
			s, err := kerasShape(list)
			if err != nil {
				return nil, layers.Config{}, nil, fmt.Errorf("%s: %s: %w", what, key, err)
			}
			declared = s
			delete(cfg, key)
		}
	}
	if class == "InputLayer" {
		if declared == nil {
			return nil, layers.Config{}, nil, fmt.Errorf("%s declares no batch_shape", what)
		}
		in := layers.Input(declared...)
		if name != "" {
			in.SetName(name)
		}
		c, err := layers.ConfigOf(in)
		if err != nil {
			return nil, layers.Config{}, nil, err
		}
		return nil, c, declared, checkDType(what, cfg["dtype"])
	}
	if declared != nil {
		in = declared
	}
	if err := checkDType(what, cfg["dtype"]); err != nil {
		return nil, layers.Config{}, nil, err
	}
	delete(cfg, "dtype")
	for key, v := range cfg {
		switch {
		case strings.HasSuffix(key, "_initializer"):
			delete(cfg, key) // the weights come from the file
		case strings.HasSuffix(key, "_regularizer") && v != nil:
			cfg[key] = kerasObject(v)
		case key == "activation":
			if obj, ok := v.(map[string]any); ok {
				// Keras 3 may write a built-in activation as an object
				// whose config is its name.
				if s, ok := obj["config"].(string); ok {
					cfg[key] = s
				}
			}
		}
	}
	if ax, ok := cfg["axis"]; ok && (class == "BatchNormalization" || class == "LayerNormalization") {
		last, err := lastAxis(ax, in)
		if err != nil {
			return nil, layers.Config{}, nil, fmt.Errorf("%s: %w", what, err)
		}
		if last {
			cfg["axis"] = -1.0
		}
	}
	if inner, ok := cfg["layer"].(map[string]any); ok && (class == "Bidirectional" || class == "TimeDistributed") {
		// The wrapped layer's entry, read as a layer's.
		js, err := json.Marshal(inner)
		if err != nil {
			return nil, layers.Config{}, nil, err
		}
		var entry map[string]json.RawMessage
		if err := json.Unmarshal(js, &entry); err != nil {
			return nil, layers.Config{}, nil, fmt.Errorf("%s: layer: %v", what, err)
		}
		il, _, _, err := kerasLayer(entry, in)
		if err != nil {
			return nil, layers.Config{}, nil, fmt.Errorf("%s: layer: %w", what, err)
		}
		ic, err := layers.ConfigOf(il)
		if err != nil {
			return nil, layers.Config{}, nil, fmt.Errorf("%s: layer: %w", what, err)
		}
		cfg["layer"] = map[string]any{"class_name": ic.ClassName, "config": ic.Config}
	}
	var l layers.Layer
	c := layers.Config{ClassName: class, Config: cfg}
	err := withoutDefaults(cfg, kerasLayerDefault, class, func() (err error) {
		l, err = layers.FromConfig(c)
		return err
	})
	if err != nil {
		return nil, layers.Config{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	return l, c, declared, nil
}

// kerasLayerDefault is the value of a Keras layer argument gokeras' layers
// do not take that means what they do: kerasDefaults', and none for any
// regularizer or constraint.
func kerasLayerDefault(key string) (any, bool) {
	if want, ok := kerasDefaults[key]; ok {
		return want, true
	}
	if strings.HasSuffix(key, "_regularizer") || strings.HasSuffix(key, "_constraint") {
		return nil, true
	}
	return nil, false
}

// kerasFunctionalOf makes the functional model a Keras functional config
// describes: each layer's config read as kerasLayer reads it, and the
// graph made again by functionalModelOf, which checks it as it checks
// gokeras' own files (Keras 3 writes the same inbound nodes; Keras 2's are
// rewritten so, without the shapes they do not record).
func kerasFunctionalOf(js []byte, path string) (*Sequential, []int, error) {
	var raw struct {
		Name         string                       `json:"name"`
		Layers       []map[string]json.RawMessage `json:"layers"`
		InputLayers  json.RawMessage              `json:"input_layers"`
		OutputLayers json.RawMessage              `json:"output_layers"`
	}
	if err := decodeNumbers(js, &raw); err != nil {
		return nil, nil, fmt.Errorf("%s: its Keras functional config is not one gokeras reads: %v", path, err)
	}
	type layerDoc struct {
		ClassName    string          `json:"class_name"`
		Config       map[string]any  `json:"config"`
		Name         string          `json:"name"`
		InboundNodes json.RawMessage `json:"inbound_nodes"`
	}
	doc := struct {
		Name         string          `json:"name"`
		Layers       []layerDoc      `json:"layers"`
		InputLayers  json.RawMessage `json:"input_layers"`
		OutputLayers json.RawMessage `json:"output_layers"`
	}{Name: raw.Name, InputLayers: raw.InputLayers, OutputLayers: raw.OutputLayers}
	shapes := map[string][]int{} // each layer's output, as far as known
	for i, entry := range raw.Layers {
		var name string
		_ = json.Unmarshal(entry["name"], &name)
		nodes := entry["inbound_nodes"]
		if keras2Nodes(nodes) {
			var err error
			if nodes, err = keras3Nodes(nodes); err != nil {
				return nil, nil, fmt.Errorf("%s: layer %q of Keras functional model %q: inbound nodes: %w", path, name, raw.Name, err)
			}
		}
		// The input's shape, where the layers before have given it: a
		// normalization's axis is read against it.
		var ins [][]int
		for _, from := range firstCallInputs(nodes) {
			if s, ok := shapes[from]; ok {
				ins = append(ins, s)
			}
		}
		var in []int
		if len(ins) > 0 {
			in = ins[0]
		}
		l, c, declared, err := kerasLayer(entry, in)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: Keras layer %d (%q) of model %q: %w", path, i+1, name, raw.Name, err)
		}
		switch mi, multi := l.(layers.MultiInputLayer); {
		case declared != nil && l == nil:
			shapes[name] = declared
		case multi && len(ins) > 1:
			if out, err := mi.PlanInputs(ins); err == nil {
				shapes[name] = out
			}
		case l != nil && in != nil:
			if out, _, err := layers.PlanBuild(l, in); err == nil {
				shapes[name] = out
			}
		}
		if len(nodes) == 0 {
			nodes = json.RawMessage("[]")
		}
		doc.Layers = append(doc.Layers, layerDoc{c.ClassName, c.Config, name, nodes})
	}
	gjs, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var fc functionalConfig
	if err := decodeStrict(gjs, &fc); err != nil {
		return nil, nil, fmt.Errorf("%s: its Keras functional config is not one gokeras reads: %v", path, err)
	}
	md := &modelDocument{ClassName: functionalClass, functional: &fc, Config: modelConfig{Name: fc.Name}}
	m, err := functionalModelOf(md, path)
	if err != nil {
		return nil, nil, err
	}
	return m, md.Config.InputShape, nil
}

// firstCallInputs names the layers whose outputs the first of a layer's
// calls (Keras 3 inbound nodes) takes, nil when it cannot tell.
func firstCallInputs(nodes json.RawMessage) []string {
	type tensor struct {
		Config struct {
			KerasHistory []json.RawMessage `json:"keras_history"`
		} `json:"config"`
	}
	var calls []struct {
		Args []json.RawMessage `json:"args"`
	}
	if json.Unmarshal(nodes, &calls) != nil || len(calls) == 0 || len(calls[0].Args) == 0 {
		return nil
	}
	var ts []tensor
	arg := bytes.TrimSpace(calls[0].Args[0])
	if bytes.HasPrefix(arg, []byte("[")) {
		if json.Unmarshal(arg, &ts) != nil {
			return nil
		}
	} else {
		var t tensor
		if json.Unmarshal(arg, &t) != nil {
			return nil
		}
		ts = []tensor{t}
	}
	var names []string
	for _, t := range ts {
		var name string
		if len(t.Config.KerasHistory) == 0 || json.Unmarshal(t.Config.KerasHistory[0], &name) != nil {
			return nil
		}
		names = append(names, name)
	}
	return names
}

// keras2Nodes says whether inbound nodes are Keras 2's, a list of lists
// ([[...], ...]), where Keras 3's are a list of objects.
func keras2Nodes(js json.RawMessage) bool {
	rest := bytes.TrimSpace(js)
	if !bytes.HasPrefix(rest, []byte("[")) {
		return false
	}
	return bytes.HasPrefix(bytes.TrimSpace(rest[1:]), []byte("["))
}

// keras3Nodes rewrites a layer's Keras 2 inbound nodes ([[["dense", 0, 0,
// {}], ...], ...]: each call a list of its input tensors, with keyword
// arguments) as Keras 3 writes them: each call's args one keras tensor,
// or a list of them for several inputs, and its kwargs. Keras 2 records
// no shapes: the tensors have none, and the graph's shapes are those its
// layers make.
func keras3Nodes(js []byte) (json.RawMessage, error) {
	var calls [][][]json.RawMessage
	if err := decodeNumbers(js, &calls); err != nil {
		return nil, fmt.Errorf("not Keras 2's [[[layer, node, tensor, kwargs], ...], ...]: %v", err)
	}
	type tensor struct {
		ClassName string `json:"class_name"`
		Config    struct {
			Shape        []*int          `json:"shape"`
			Dtype        string          `json:"dtype"`
			KerasHistory json.RawMessage `json:"keras_history"`
		} `json:"config"`
	}
	type node struct {
		Args   []any                      `json:"args"`
		Kwargs map[string]json.RawMessage `json:"kwargs"`
	}
	var out []node
	for _, call := range calls {
		n := node{Kwargs: map[string]json.RawMessage{}}
		var ins []tensor
		for _, in := range call {
			if len(in) != 3 && len(in) != 4 {
				return nil, fmt.Errorf("an input %s is not [layer, node, tensor, kwargs]", jsonOf(in))
			}
			var t tensor
			t.ClassName, t.Config.Dtype = kerasTensorClass, tensorDtype
			history, err := json.Marshal(in[:3])
			if err != nil {
				return nil, err
			}
			t.Config.KerasHistory = history
			ins = append(ins, t)
			if len(in) == 4 {
				var kw map[string]json.RawMessage
				if err := json.Unmarshal(in[3], &kw); err != nil {
					return nil, fmt.Errorf("the keyword arguments %s are not an object", in[3])
				}
				for k, v := range kw {
					n.Kwargs[k] = v
				}
			}
		}
		switch len(ins) {
		case 0:
			return nil, errors.New("a call without inputs")
		case 1:
			n.Args = []any{ins[0]}
		default:
			n.Args = []any{ins}
		}
		out = append(out, n)
	}
	return json.Marshal(out)
}

// checkDType accepts a layer's dtype when it is float32, as a name or a
// Keras 3 DTypePolicy (Keras 2: Policy) object.
func checkDType(what string, v any) error {
	switch d := v.(type) {
	case nil:
		return nil
	case string:
		if d == "float32" {
			return nil
		}
	case map[string]any:
		if c, ok := d["config"].(map[string]any); ok && c["name"] == "float32" {
			return nil
		}
	}
	return fmt.Errorf("%s: dtype %s: gokeras computes in float32 only (mixed precision policies are not read)", what, jsonOf(v))
}

// kerasObject strips Keras 3's module and registered_name from a
// serialized object (a regularizer), leaving class_name and config.
func kerasObject(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	return map[string]any{"class_name": obj["class_name"], "config": obj["config"]}
}

// lastAxis says whether axis (an int, or a list of one) is the last axis
// of a sample shape in (as -1, or counted with the batch axis).
func lastAxis(axis any, in []int) (bool, error) {
	if list, ok := axis.([]any); ok {
		if len(list) != 1 {
			return false, fmt.Errorf("axis %s: gokeras normalizes over one axis, the last", jsonOf(axis))
		}
		axis = list[0]
	}
	a, ok := number(axis)
	if !ok {
		return false, fmt.Errorf("axis %s is not an integer", jsonOf(axis))
	}
	if a == -1 || (in != nil && a == float64(len(in))) {
		return true, nil
	}
	return false, fmt.Errorf("axis %s is not the last axis of its input %v (channels_first data?): gokeras normalizes over the last axis only", jsonOf(axis), in)
}

// kerasShape reads a Keras batch shape ([null, 28, 28, 1]) into a sample
// shape ([28, 28, 1]).
func kerasShape(list []any) ([]int, error) {
	if len(list) < 2 {
		return nil, fmt.Errorf("%s is not a batch shape with a sample shape", jsonOf(list))
	}
	var s []int
	for _, d := range list[1:] {
		n, ok := number(d)
		if !ok || n < 1 || n != float64(int(n)) {
			return nil, fmt.Errorf("%s: gokeras needs every dimension but the batch known", jsonOf(list))
		}
		s = append(s, int(n))
	}
	return s, nil
}

// number reads a JSON number decoded with UseNumber, or a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// unknownArgument returns the argument a FromConfig error says it does not
// know (configargs' "unknown argument \"x\"").
func unknownArgument(err error) (string, bool) {
	msg := err.Error()
	i := strings.Index(msg, "unknown argument ")
	if i < 0 {
		return "", false
	}
	rest := msg[i+len("unknown argument "):]
	if !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	end := strings.IndexByte(rest[1:], '"')
	if end < 0 {
		return "", false
	}
	return rest[1 : 1+end], true
}

// sameJSON compares two values as JSON: a json.Number 1 equals 1.0.
func sameJSON(a, b any) bool {
	var x, y any
	if json.Unmarshal([]byte(jsonOf(a)), &x) != nil || json.Unmarshal([]byte(jsonOf(b)), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func kerasDefaultText(known bool, v any) string {
	if !known {
		return "not a setting gokeras has"
	}
	return jsonOf(v)
}

// decodeNumbers decodes JSON keeping numbers as json.Number.
func decodeNumbers(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	return dec.Decode(v)
}

// describeKeras is describe for a Keras file: the model its config
// describes, or an error for a weights-only file.
func describeKeras(meta map[string]string, path string) (described, error) {
	js, ok := meta[metaKerasConfig]
	if !ok {
		return described{}, fmt.Errorf("%s is a Keras weights file, without the model's config: make the model in Go and load it with LoadWeights", path)
	}
	m, input, err := kerasModelOf([]byte(js), path)
	if err != nil {
		return described{}, err
	}
	plan, err := m.describedPlan(path, input)
	if err != nil {
		return described{}, err
	}
	doc := &modelDocument{ClassName: "Sequential", Config: modelConfig{Name: m.name, InputShape: input}}
	compile := meta[metaKerasCompile] // Keras 2's training_config
	var top struct {
		CompileConfig json.RawMessage `json:"compile_config"`
	}
	if json.Unmarshal([]byte(js), &top) == nil && !isNull(top.CompileConfig) {
		compile = string(top.CompileConfig) // Keras 3's, beside the config
	}
	return described{doc: doc, m: m, plan: plan, kerasCompile: compile}, nil
}

// compileKeras compiles m, loaded from a Keras or TensorFlow.js file, with
// the file's training settings (JSON), as Keras' load_model does: unless
// told not to (LoadCompiled(false)), and when they name a loss.
func (m *Sequential) compileKeras(ctx context.Context, settings, where string, o loadOptions) (*Sequential, error) {
	if settings == "" || !o.compile {
		return m, nil
	}
	opt, loss, ms, opts, ok, err := kerasCompile(settings, where, m.OutputNames()...)
	if err != nil || !ok {
		return m, err
	}
	if err := m.CompileContext(ctx, opt, loss, ms, append(opts, o.compileOptions...)...); err != nil {
		return nil, fmt.Errorf("%s: compiling with its training settings: %w", where, err)
	}
	return m, nil
}

// loadKerasWeights builds m, made from a Keras file's config, for input
// and copies the file's weights in (compileKeras compiles it after).
func (m *Sequential) loadKerasWeights(f *safetensors.File, path string, input []int) (*Sequential, error) {
	if err := m.Build(input...); err != nil {
		return nil, fmt.Errorf("%s: building the Keras model: %w", path, err)
	}
	ts, err := m.kerasTensors(f, path)
	if err != nil {
		return nil, err
	}
	f.Tensors = ts
	src, err := m.builtPlan().check(f, path)
	if err != nil {
		return nil, err
	}
	if err := m.copyWeights(src); err != nil {
		return nil, err
	}
	return m, nil
}

// ModelFromJSON makes the model a Keras model config describes, what
// Keras' model.to_json() writes and keras.models.model_from_json reads: a
// Sequential or functional model of the layers gokeras has, read as
// LoadModel reads a Keras file's config, and built. As with
// model_from_json in Keras, load the trained weights next (LoadWeights, a
// Keras .h5 or .weights.h5 file); the config's initializers are not read,
// so until then the layers hold gokeras' default initial weights (Keras'
// defaults: GlorotUniform kernels, zero biases). The model is not
// compiled.
func ModelFromJSON(js []byte) (*Model, error) {
	m, input, err := kerasModelOf(js, "the model JSON")
	if err != nil {
		return nil, fmt.Errorf("model from JSON: %w", err)
	}
	if err := m.Build(input...); err != nil {
		return nil, fmt.Errorf("model from JSON: building the model: %w", err)
	}
	return m, nil
}
