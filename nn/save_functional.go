package nn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/layers"
)

// A functional model's document (see Save) is Keras 3's functional
// config: the one generation of Keras the rest of the document already
// follows. The document of a Sequential is Keras 3's names (compile_config,
// an InputLayer's batch_shape) with each object written as
// {"class_name", "config"}, the form Keras 3 writes in its legacy (H5)
// configs and reads back in its .keras ones; a functional model's is that
// too, laid out as Keras 3's Functional.get_config lays it out:
//
//	{"format_version": 2, "class_name": "Functional",
//	 "config": {"name": "model", "trainable": true, "seed": 7,
//	  "layers": [
//	   {"class_name": "InputLayer", "config": {"batch_shape": [null, 4], "name": "input_1"},
//	    "name": "input_1", "inbound_nodes": []},
//	   {"class_name": "Dense", "config": {...}, "name": "dense",
//	    "inbound_nodes": [
//	     {"args": [{"class_name": "__keras_tensor__",
//	                "config": {"shape": [null, 4], "dtype": "float32", "keras_history": ["input_1", 0, 0]}}],
//	      "kwargs": {}},
//	     {"args": [{"class_name": "__keras_tensor__",
//	                "config": {"shape": [null, 4], "dtype": "float32", "keras_history": ["dense", 0, 0]}}],
//	      "kwargs": {}}]},
//	   {"class_name": "Add", "config": {...}, "name": "add",
//	    "inbound_nodes": [{"args": [[{...keras_history ["dense", 0, 0]}, {...["dense", 1, 0]}]], "kwargs": {}}]}],
//	  "input_layers": [["input_1", 0, 0]],
//	  "output_layers": [["add", 0, 0]]},
//	 "compile_config": ..., "include_optimizer": ...}
//
// Each layer, its InputLayer first, then in the model's order (Layers),
// lists its calls ("inbound nodes") in the order the model computes them:
// a shared layer has several. A call's one positional argument is the
// tensor it takes, or the list of them for a merge layer (Keras calls
// Add()([a, b]) on a list); a tensor is a "__keras_tensor__" whose
// keras_history names the layer, the call (node index) and the output
// (tensor index, always 0: each call outputs one tensor) it comes from.
// input_layers and output_layers name the model's input and output the
// same way, as lists (Keras also writes a lone [name, node, tensor] for a
// model made of one unlisted input; LoadModel reads both). kwargs is
// always {}: Keras 3 writes {"mask": null} for a layer whose call takes a
// mask (BatchNormalization), which LoadModel reads too, and refuses any
// other keyword argument.
//
// Keras 2 (tf.keras) wrote the same layers with inbound nodes as nested
// lists, [[["input_1", 0, 0, {}]]], and no trainable; the Keras 3 form is
// written instead because the document is Keras 3's everywhere else, and
// Keras 3 reads it in both its loaders. Only "seed" is gokeras' own, as in
// a Sequential's config (SetSeed's seed, null without one).
//
// The file's model format version (gokeras.version and format_version) is
// 2 for a functional model and stays 1 for a Sequential, whose files keep
// their bytes: a gokeras that reads only version 1 then says that a newer
// gokeras wrote the file, instead of failing on a class it does not know.

const (
	// sequentialFormatVersion is the model format version of a Sequential's
	// file; modelFormatVersion, the newest LoadModel reads, is that of a
	// functional model's.
	sequentialFormatVersion = 1
	functionalFormatVersion = 2
	functionalClass         = "Functional"
	kerasTensorClass        = "__keras_tensor__"
	tensorDtype             = "float32"
)

// functionalConfig is the config of a functional model's document.
type functionalConfig struct {
	Name string `json:"name"`
	// Trainable is Keras' model-wide trainable flag: always true, as
	// gokeras freezes no whole model; nil when read from a document
	// without it.
	Trainable *bool             `json:"trainable"`
	Seed      *uint64           `json:"seed"`
	Layers    []functionalLayer `json:"layers"`
	// InputLayers and OutputLayers name the model's input and output.
	InputLayers  tensorRefs `json:"input_layers"`
	OutputLayers tensorRefs `json:"output_layers"`
}

// functionalLayer is a layer of a functional model's config: its
// layers.Config, its name, and its calls.
type functionalLayer struct {
	ClassName    string         `json:"class_name"`
	Config       map[string]any `json:"config"`
	Name         string         `json:"name"`
	InboundNodes []inboundNode  `json:"inbound_nodes"`
}

// inboundNode is one call of a layer: its positional and keyword
// arguments, as Keras 3's serialize_node writes them. Args holds one
// value: a kerasTensor, or a list of them for a merge layer.
type inboundNode struct {
	Args   []json.RawMessage          `json:"args"`
	Kwargs map[string]json.RawMessage `json:"kwargs"`
}

// kerasTensor is a symbolic tensor as Keras 3 serializes one.
type kerasTensor struct {
	ClassName string            `json:"class_name"`
	Config    kerasTensorConfig `json:"config"`
}

type kerasTensorConfig struct {
	// Shape has the batch axis first, null.
	Shape        []*int    `json:"shape"`
	Dtype        string    `json:"dtype"`
	KerasHistory tensorRef `json:"keras_history"`
}

// tensorRef names a tensor of a functional model: the layer whose call
// outputs it, that call's index among the layer's calls (node index) and
// the output's index among the call's (tensor index). JSON: [layer, node,
// tensor].
type tensorRef struct {
	Layer        string
	Node, Tensor int
}

func (r tensorRef) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{r.Layer, r.Node, r.Tensor})
}

func (r *tensorRef) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 3 {
		return fmt.Errorf("%s is not a tensor's [layer name, node index, tensor index]", b)
	}
	if err := json.Unmarshal(parts[0], &r.Layer); err != nil {
		return fmt.Errorf("%s: the layer name %s is not a string", b, parts[0])
	}
	for i, p := range []*int{&r.Node, &r.Tensor} {
		if err := json.Unmarshal(parts[i+1], p); err != nil || *p < 0 {
			return fmt.Errorf("%s: the %s index %s is not an integer >= 0", b, [2]string{"node", "tensor"}[i], parts[i+1])
		}
	}
	return nil
}

// tensorRefs is a list of tensors, [[layer, node, tensor], ...]; read
// from a lone [layer, node, tensor] too, as Keras writes for a model of
// one tensor that was not given in a list.
type tensorRefs []tensorRef

func (rs *tensorRefs) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("%s is not a list of tensors [layer name, node index, tensor index]", b)
	}
	if len(parts) > 0 && bytes.HasPrefix(bytes.TrimSpace(parts[0]), []byte(`"`)) {
		var r tensorRef
		if err := r.UnmarshalJSON(b); err != nil {
			return err
		}
		*rs = tensorRefs{r}
		return nil
	}
	*rs = nil
	for _, p := range parts {
		var r tensorRef
		if err := r.UnmarshalJSON(p); err != nil {
			return err
		}
		*rs = append(*rs, r)
	}
	return nil
}

// MarshalJSON writes the document, a functional model's config in place
// of a Sequential's when it has one.
func (d modelDocument) MarshalJSON() ([]byte, error) {
	type plain modelDocument // without this method
	if d.functional == nil {
		return json.Marshal(plain(d))
	}
	return json.Marshal(struct {
		FormatVersion    int                    `json:"format_version"`
		ClassName        string                 `json:"class_name"`
		Config           *functionalConfig      `json:"config"`
		CompileConfig    *compileConfigDocument `json:"compile_config"`
		IncludeOptimizer bool                   `json:"include_optimizer"`
	}{d.FormatVersion, d.ClassName, d.functional, d.CompileConfig, d.IncludeOptimizer})
}

// functionalDocument makes doc, the document of m with its layers'
// configs (doc.Config.Layers, in m's order), the document of m's graph.
func (m *Sequential) functionalDocument(doc *modelDocument) error {
	g := m.graph
	trainable := true
	fc := &functionalConfig{Name: m.name, Trainable: &trainable, Seed: doc.Config.Seed}
	// Each tensor by the call that outputs it; each layer's calls.
	refs := map[*Tensor]tensorRef{}
	for _, in := range g.inputs {
		inCfg, err := layers.ConfigOf(in.input)
		if err != nil {
			return fmt.Errorf("input layer %q: %w", in.input.Name(), err)
		}
		fc.Layers = append(fc.Layers, functionalLayer{ClassName: inCfg.ClassName, Config: inCfg.Config, Name: in.input.Name(), InboundNodes: []inboundNode{}})
		refs[in] = tensorRef{Layer: in.input.Name()}
	}
	nodes := map[layers.Layer][]inboundNode{}
	var err error
	for _, c := range g.calls {
		ts := make([]json.RawMessage, len(c.in))
		for i, t := range c.in {
			if ts[i], err = json.Marshal(kerasTensor{kerasTensorClass, kerasTensorConfig{batchShape(t.shape), tensorDtype, refs[t]}}); err != nil {
				return err
			}
		}
		node := inboundNode{Args: ts[:1], Kwargs: map[string]json.RawMessage{}}
		if kc, ok := c.layer.(layers.KerasCaller); ok {
			if node, err = kerasCallNode(kc, ts); err != nil {
				return err
			}
		} else if _, multi := c.layer.(layers.MultiInputLayer); multi {
			arg, err := json.Marshal(ts)
			if err != nil {
				return err
			}
			node.Args = []json.RawMessage{arg}
		} else if len(ts) > 1 { // a recurrent layer's initial states, as Keras 3 writes them
			states, err := json.Marshal(ts[1:])
			if err != nil {
				return err
			}
			node.Kwargs["initial_state"] = states
		}
		for i, t := range c.outputs() {
			refs[t] = tensorRef{Layer: c.layer.Name(), Node: len(nodes[c.layer]), Tensor: i}
		}
		nodes[c.layer] = append(nodes[c.layer], node)
	}
	for i, l := range m.layers {
		c := doc.Config.Layers[i]
		fc.Layers = append(fc.Layers, functionalLayer{ClassName: c.ClassName, Config: c.Config, Name: l.Name(), InboundNodes: nodes[l]})
	}
	for _, in := range g.inputs {
		fc.InputLayers = append(fc.InputLayers, refs[in])
	}
	for _, out := range g.outputs {
		fc.OutputLayers = append(fc.OutputLayers, refs[out])
	}
	doc.FormatVersion = functionalFormatVersion
	doc.ClassName = functionalClass
	doc.Config.InputShape = slices.Clone(m.inputShape)
	doc.functional = fc
	return nil
}

// decodeStrict decodes one JSON value as readDocument does: every digit
// of a number kept, no unknown field, nothing after it.
func decodeStrict(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more after the JSON value")
	}
	return nil
}

// functionalEntry is a layer of a functional config being made again:
// the layer, and the tensor each of its calls outputs once made.
type functionalEntry struct {
	index int // in the config's layers
	data  *functionalLayer
	layer layers.Layer
	input *Tensor   // an InputLayer's tensor
	outs  []*Tensor // each call's output, nil until made
	busy  []bool    // the calls being made, to find cycles
}

// functionalModelOf makes the functional model doc describes, not built,
// as Keras' functional_from_config does: every layer from its config,
// then each call once the calls it takes its inputs from are made (with
// Apply), then the model from its input and output (NewModel). It
// refuses what is no model: an unknown layer, a call of a layer or node
// the config does not have, a cycle, a call that does not lead to the
// output. It completes doc.Config with the model's input shape and its
// layers' configs, in its order.
func functionalModelOf(doc *modelDocument, path string) (*Sequential, error) {
	fc := doc.functional
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%s: model %q: %s; %s", path, fc.Name, fmt.Sprintf(format, args...), saveAgain)
	}
	if fc.Trainable != nil && !*fc.Trainable {
		return nil, fmt.Errorf("%s: model %q has trainable false, but gokeras does not freeze a whole model: save the model again from gokeras, or set trainable to true in the file to load it trainable", path, fc.Name)
	}
	entries := map[string]*functionalEntry{}
	var names []string
	for i := range fc.Layers {
		ld := &fc.Layers[i]
		if ld.Name == "" {
			return nil, damaged("layer %d of the config has no name", i+1)
		}
		if prev, ok := entries[ld.Name]; ok {
			return nil, damaged("layers %d and %d of the config are both named %q", prev.index+1, i+1, ld.Name)
		}
		l, err := layers.FromConfig(layers.Config{ClassName: ld.ClassName, Config: ld.Config})
		if err != nil {
			return nil, fmt.Errorf("%s: layer %q of model %q: %w: was the file written by a newer gokeras (then update gokeras), or edited (then save the model again)?", path, ld.Name, fc.Name, err)
		}
		if l.Name() == "" {
			l.SetName(ld.Name)
		} else if l.Name() != ld.Name {
			return nil, damaged("layer %d of the config is named %q, but its config names it %q", i+1, ld.Name, l.Name())
		}
		e := &functionalEntry{index: i, data: ld, layer: l}
		if il, ok := l.(*layers.InputLayer); ok {
			if len(ld.InboundNodes) != 0 {
				return nil, damaged("input layer %q has %d inbound nodes: an input takes none", ld.Name, len(ld.InboundNodes))
			}
			e.input = Input(il.Shape()...)
			if err := e.input.Err(); err != nil {
				return nil, damaged("input layer %q: %v", ld.Name, err)
			}
			e.input.input = il
			e.outs = []*Tensor{e.input}
		} else {
			if len(ld.InboundNodes) == 0 {
				return nil, damaged("layer %q has no inbound nodes: it is never called, so it computes nothing of the output", ld.Name)
			}
			e.outs = make([]*Tensor, len(ld.InboundNodes))
			e.busy = make([]bool, len(ld.InboundNodes))
		}
		entries[ld.Name] = e
		names = append(names, ld.Name)
	}

	var made func(ref tensorRef, where string, via []string) (*Tensor, error)
	// call makes call k of e, after the calls it takes its inputs from;
	// via is the calls being made that need it, to name a cycle.
	call := func(e *functionalEntry, k int, via []string) (*Tensor, error) {
		if e.outs[k] != nil {
			return e.outs[k], nil
		}
		here := fmt.Sprintf("call %d of layer %q", k, e.data.Name)
		if e.busy[k] {
			i := slices.Index(via, here)
			return nil, damaged("the layers' calls form a cycle (%s → %s): each call must take its inputs from calls made before it", strings.Join(via[i:], " → "), here)
		}
		e.busy[k] = true
		node := e.data.InboundNodes[k]
		var kts []kerasTensor
		kc, caller := e.layer.(layers.KerasCaller)
		if caller {
			var err error
			if kts, err = kerasCallTensors(kc, node); err != nil {
				return nil, damaged("%s: %v", here, err)
			}
		} else if len(node.Args) != 1 {
			return nil, damaged("%s has %d positional arguments: a gokeras layer takes one, a tensor (a list of tensors for a merge layer)", here, len(node.Args))
		}
		_, statesIn := e.layer.(layers.StateInputLayer)
		var states []kerasTensor // a recurrent layer's initial_state
		for key, v := range node.Kwargs {
			if statesIn && key == "initial_state" && string(bytes.TrimSpace(v)) != "null" {
				if err := decodeStrict(v, &states); err != nil {
					return nil, damaged("%s: its initial_state is not a list of tensors: %v", here, err)
				}
				continue
			}
			// Keras 3 writes a null mask for the layers whose call takes
			// one (BatchNormalization): no mask, as gokeras computes.
			if !caller && ((key != "mask" && key != "initial_state") || string(bytes.TrimSpace(v)) != "null") {
				return nil, damaged("%s has keyword arguments (%s): gokeras layers take none (but a null mask)", here, strings.Join(slices.Sorted(maps.Keys(node.Kwargs)), ", "))
			}
		}
		arg := bytes.TrimSpace(node.Args[0])
		_, multi := e.layer.(layers.MultiInputLayer)
		switch {
		case caller:
		case bytes.HasPrefix(arg, []byte("[")) && (multi || statesIn):
			// A merge layer's inputs; a recurrent layer's sequences, then
			// its initial states (Keras 2's way).
			if err := decodeStrict(arg, &kts); err != nil {
				return nil, damaged("%s: its argument is not a list of tensors: %v", here, err)
			}
		case bytes.HasPrefix(arg, []byte("[")):
			return nil, damaged("%s is given a list of tensors, but a %s layer takes one tensor: only a merge layer takes a list", here, e.layer.Type())
		default:
			var kt kerasTensor
			if err := decodeStrict(arg, &kt); err != nil {
				return nil, damaged("%s: its argument is not a tensor: %v", here, err)
			}
			kts = []kerasTensor{kt}
		}
		kts = append(kts, states...)
		ins := make([]*Tensor, len(kts))
		for i, kt := range kts {
			what := fmt.Sprintf("input %d of %s", i, here)
			if kt.ClassName != kerasTensorClass {
				return nil, damaged("%s is a %q, not a %q", what, kt.ClassName, kerasTensorClass)
			}
			if kt.Config.Dtype != tensorDtype {
				return nil, damaged("%s has dtype %q: gokeras computes in %s", what, kt.Config.Dtype, tensorDtype)
			}
			t, err := made(kt.Config.KerasHistory, what, append(slices.Clip(via), here))
			if err != nil {
				return nil, err
			}
			// Keras 2's configs record no shapes (kerasFunctionalOf): the
			// layers' own then stand.
			if want := batchShape(t.shape); kt.Config.Shape != nil && !slices.EqualFunc(kt.Config.Shape, want, sameDim) {
				return nil, damaged("%s is declared of shape %s, but %s outputs %s", what, dimsText(kt.Config.Shape), refText(kt.Config.KerasHistory), dimsText(want))
			}
			ins[i] = t
		}
		out := Apply(e.layer, ins...)
		if err := out.Err(); err != nil {
			return nil, damaged("%s: %v", here, err)
		}
		e.outs[k] = out
		return out, nil
	}
	made = func(ref tensorRef, where string, via []string) (*Tensor, error) {
		e, ok := entries[ref.Layer]
		switch {
		case !ok:
			return nil, damaged("%s names layer %q, which the config does not have (its layers: %s)", where, ref.Layer, strings.Join(names, ", "))
		case e.input != nil && ref.Node != 0:
			return nil, damaged("%s names %s, but input layer %q has one node, of index 0", where, refText(ref), ref.Layer)
		case ref.Node >= len(e.outs):
			return nil, damaged("%s names %s, but layer %q has %s (node indices 0 to %d)", where, refText(ref), ref.Layer, calls(len(e.outs)), len(e.outs)-1)
		case e.input != nil && ref.Tensor != 0:
			return nil, damaged("%s names %s, but input layer %q outputs one tensor, of tensor index 0", where, refText(ref), ref.Layer)
		case e.input != nil:
			return e.input, nil
		}
		t, err := call(e, ref.Node, via)
		if err != nil || ref.Tensor == 0 {
			return t, err
		}
		if t.from == nil || ref.Tensor > len(t.from.extra) {
			n := 1
			if t.from != nil {
				n += len(t.from.extra)
			}
			return nil, damaged("%s names %s, but each call of layer %q outputs %d tensor(s), of tensor indices 0 to %d", where, refText(ref), ref.Layer, n, n-1)
		}
		return t.from.extra[ref.Tensor-1], nil
	}

	if len(fc.InputLayers) == 0 || len(fc.OutputLayers) == 0 {
		return nil, damaged("input_layers names %d tensors and output_layers %d: a model has an input and an output", len(fc.InputLayers), len(fc.OutputLayers))
	}
	var ins, outs []*Tensor
	isInput := map[*Tensor]bool{}
	for i, ref := range fc.InputLayers {
		if e, ok := entries[ref.Layer]; ok && e.input == nil {
			return nil, damaged("input_layers names layer %q, a %s, not an InputLayer", ref.Layer, e.layer.Type())
		}
		in, err := made(ref, fmt.Sprintf("input %d of input_layers", i), nil)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
		isInput[in] = true
	}
	for i, ref := range fc.OutputLayers {
		out, err := made(ref, fmt.Sprintf("output %d of output_layers", i), nil)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	// Every call, as Keras makes them all: a cycle off the outputs' paths
	// is one too.
	for _, name := range names {
		e := entries[name]
		if e.input != nil && !isInput[e.input] {
			return nil, damaged("input layer %q is not one of the model's inputs (input_layers): every input layer is an input of the model", name)
		}
		for k := range e.outs {
			if e.input == nil {
				if _, err := call(e, k, nil); err != nil {
					return nil, err
				}
			}
		}
	}
	m, err := NewModel(ins, outs)
	if err != nil {
		return nil, damaged("%v", err)
	}
	used := map[*Tensor]bool{}
	for _, c := range m.graph.calls {
		used[c.out] = true
	}
	for _, name := range names {
		for k, t := range entries[name].outs {
			if !used[t] && !isInput[t] {
				return nil, damaged("call %d of layer %q does not lead to an output: a model's config holds only the calls that compute its outputs", k, name)
			}
		}
	}
	if fc.Name != "" {
		m.SetName(fc.Name)
	}
	if fc.Seed != nil {
		m.SetSeed(*fc.Seed)
	}
	doc.Config = modelConfig{Name: m.name, InputShape: slices.Clone(m.inputShape), Seed: fc.Seed, Layers: []layers.Config{}}
	for _, l := range m.layers {
		ld := entries[l.Name()].data
		doc.Config.Layers = append(doc.Config.Layers, layers.Config{ClassName: ld.ClassName, Config: ld.Config})
	}
	return m, nil
}

// batchShape is a sample shape with the batch axis first, nil.
func batchShape(shape []int) []*int {
	out := []*int{nil}
	for _, d := range shape {
		out = append(out, &d)
	}
	return out
}

func sameDim(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// dimsText writes a batch shape as Python prints a tuple: (None, 4).
func dimsText(dims []*int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = "None"
		if d != nil {
			s[i] = fmt.Sprint(*d)
		}
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func refText(r tensorRef) string {
	return fmt.Sprintf("[%q, %d, %d]", r.Layer, r.Node, r.Tensor)
}

func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}

// kerasCallNode is the inbound node of a call of a layer whose Keras call
// takes its inputs as separate arguments (layers.KerasCaller): the first
// ones positional, the others by keyword, with the call's other keyword
// arguments.
func kerasCallNode(kc layers.KerasCaller, ts []json.RawMessage) (inboundNode, error) {
	names, positional, flags := kc.KerasCall(len(ts))
	if len(names) != len(ts) || positional > len(ts) {
		return inboundNode{}, fmt.Errorf("layer %q names %d call arguments for %d inputs", kc.Name(), len(names), len(ts))
	}
	node := inboundNode{Args: slices.Clone(ts[:positional]), Kwargs: map[string]json.RawMessage{}}
	for i := positional; i < len(ts); i++ {
		node.Kwargs[names[i]] = ts[i]
	}
	for k, v := range flags {
		js, err := json.Marshal(v)
		if err != nil {
			return inboundNode{}, err
		}
		node.Kwargs[k] = js
	}
	return node, nil
}

// kerasCallTensors reads a saved call of a layers.KerasCaller: its
// positional arguments, each a tensor, and its keyword arguments, each a
// tensor (Keras 3's, or Keras 2's [layer, node, tensor]) or another value
// (null ones, the defaults, left out); it sets the layer up for them and
// returns the tensors in the order the layer takes them.
func kerasCallTensors(kc layers.KerasCaller, node inboundNode) ([]kerasTensor, error) {
	named := map[string]kerasTensor{}
	var names []string
	flags := map[string]any{}
	all, npos, _ := kc.KerasCall(2)
	positional := all[:npos]
	if len(node.Args) > len(positional) {
		return nil, fmt.Errorf("%d positional arguments: a %s layer takes at most %d (%s), then keyword arguments", len(node.Args), kc.Type(), len(positional), strings.Join(positional, ", "))
	}
	for i, a := range node.Args {
		var kt kerasTensor
		if err := decodeStrict(a, &kt); err != nil {
			return nil, fmt.Errorf("its argument %s is not a tensor: %v", positional[i], err)
		}
		named[positional[i]] = kt
		names = append(names, positional[i])
	}
	for _, k := range slices.Sorted(maps.Keys(node.Kwargs)) {
		v := bytes.TrimSpace(node.Kwargs[k])
		var kt kerasTensor
		var ref tensorRef
		switch {
		case string(v) == "null":
			continue
		case bytes.HasPrefix(v, []byte("{")) && decodeStrict(v, &kt) == nil:
		case bytes.HasPrefix(v, []byte("[")) && json.Unmarshal(v, &ref) == nil:
			kt = kerasTensor{ClassName: kerasTensorClass, Config: kerasTensorConfig{Dtype: tensorDtype, KerasHistory: ref}}
		default:
			var x any
			if err := json.Unmarshal(v, &x); err != nil {
				return nil, fmt.Errorf("keyword argument %s: %v", k, err)
			}
			flags[k] = x
			continue
		}
		named[k] = kt
		names = append(names, k)
	}
	order, err := kc.SetKerasCall(names, flags)
	if err != nil {
		return nil, err
	}
	kts := make([]kerasTensor, len(order))
	for i, n := range order {
		kts[i] = named[n]
	}
	return kts, nil
}
