package onnx

import (
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// The names of the exported graph's input and output, and of its batch
// dimension.
const (
	inputName  = "input"
	outputName = "output"
	batchName  = "batch"
)

// call names the export in errors, as the model's methods name theirs.
const call = "export ONNX"

// Export writes the model's inference graph to w as an ONNX model (IR
// version 8, operator set 17): what Predict computes, for any number of
// samples. Dropout is left out, as Predict leaves it out, and
// BatchNormalization normalizes with its moving statistics.
//
// The graph's input, "input", is a float32 tensor of shape (batch, the
// model's input shape), the values Predict's Inputs gather: the model's
// own input, after any scaling the data does (data.Pixels and the CIFAR-10
// loader divide by 255 as they gather, so the ONNX model takes the scaled
// values, as the gokeras model does). Its output, "output", is float32 of
// shape (batch, the model's output shape), what Predict returns. The
// batch dimension is symbolic ("batch").
//
// A model of several inputs or outputs (nn.NewModel) has one graph input
// per model input and one graph output per model output, in the model's
// order (InputShapes, OutputShapes, OutputNames), each of its own shape:
// an input is named after its Input layer ("input_1", "input_2", as
// NewModel numbers them), an output after the layer that computes it
// (OutputNames: "class", "value"). A layer that computes two outputs (a
// shared layer, applied twice) names the second as Keras 2 does,
// "dense_1", then "dense_2", skipping a name the graph already has. This
// holds for a model of one input and several outputs, or several inputs
// and one output, too; only a model of one of each keeps "input" and
// "output". The outputs hold what PredictOutputs returns; an output that
// other layers read is still one value, which their nodes read, and one
// whose layer passes a value through (Dropout of an input or of another
// output) is an Identity node of it.
//
// Every layer of package layers is mapped, channels last as in Keras:
// convolutions and poolings run on ONNX's channels-first layout between
// Transpose nodes, with the kernels reordered and "same" padding written
// as explicit pads (the extra row or column at the end, as TensorFlow
// pads); Embedding casts its float32 indices to int64 and gathers; GELU
// is written out with Erf (ONNX's Gelu needs operator set 20). Where
// Predict refuses an index that is not a row of the table, the runtime
// refuses one past the end only: ONNX's Gather counts a negative index
// from the end, and the cast truncates a fraction. SimpleRNN, LSTM and
// GRU are ONNX's RNN, LSTM and GRU operators (their gates in ONNX's
// order, go_backwards as the reverse direction), Bidirectional one per
// direction and the merge; a layer with return_state has its last states
// as further outputs of its call, and initial states given to a layer
// are the operator's initial_h and initial_c. Refused, naming the layer:
// masks (Masking, Embedding with mask_zero: ONNX's sequence_lens can only
// cut a sequence's end) and a recurrent activation the operators lack.
// TimeDistributed folds the steps into the batch (Reshape), maps the
// layer it wraps, and unfolds them. A layer defined outside package
// layers has no ONNX mapping: the error names it.
//
// A functional model (nn.NewModel) exports as its graph of layer calls:
// a layer applied more than once (a shared layer) adds its nodes at each
// call and its weights once, one initializer that the calls' nodes read
// ("dense/kernel"; the second call's nodes are "dense/Gemm_1"); a layer of
// several inputs (a merge layer, layers.MultiInputLayer) maps through its
// ONNXInputs method (layers.ONNXInputsMapper), and one without it is
// refused, named.
//
// The model must be built, or declare its input shape. Weights holding a
// NaN or an infinity are not written, as SaveWeights refuses them, nor is
// a model larger than one ONNX file can hold (2 GiB): nothing is written
// to w then. It runs as the model's GetWeights does: during a Fit from
// another goroutine it is refused with an error matching nn.ErrBusy.
func Export(m *nn.Sequential, w io.Writer) error {
	if m == nil {
		return fmt.Errorf("%s: %w", call, nn.ErrNilModel)
	}
	if w == nil {
		return fmt.Errorf("%s: no writer (nil): give Export where to write the model, or use ExportFile", call)
	}
	return m.View(call, func(v nn.ModelView) error {
		model, err := modelOf(v)
		if err == nil {
			err = model.Write(w)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", call, err)
		}
		return nil
	})
}

// ExportFile writes the model's inference graph to path as an ONNX model,
// as Export writes it. The path is checked first, so that a directory or
// a missing folder fails before anything else; the file is replaced
// atomically, and where the export fails the file there, if any, is left
// as it was.
func ExportFile(m *nn.Sequential, path string) error {
	if m == nil {
		return fmt.Errorf("%s: %w", call, nn.ErrNilModel)
	}
	if err := atomicfile.Check(path); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return m.View(call, func(v nn.ModelView) error {
		model, err := modelOf(v)
		if err == nil {
			err = atomicfile.Write(path, model.Write)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", call, err)
		}
		return nil
	})
}

// maxBytes is the largest ONNX file Export writes: a protobuf message is
// at most 2 GiB (2^31-1 bytes), and ONNX Runtime and onnx.checker refuse a
// larger model file. (A variable so that a test can lower it.)
var maxBytes int64 = 1<<31 - 1

// tooLarge is the error for a model that does not fit in one ONNX file.
func tooLarge(model string, n int64, what string) error {
	return fmt.Errorf("model %q takes %d bytes %s, more than the %d (2 GiB) a protobuf message, and so an ONNX file, can hold: "+
		"ONNX keeps larger weights in external data files, which gokeras does not write yet; export a smaller model, "+
		"or save this one with Save or SaveWeights (safetensors has no such limit)", model, n, what, maxBytes)
}

// countingWriter counts the bytes written to it.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// modelOf builds the ONNX model of the model's inference graph, and
// checks that one file can hold it.
func modelOf(v nn.ModelView) (*wire.Model, error) {
	params := 0
	for _, l := range v.Layers {
		for _, p := range l.Layer.Params() {
			params += p.Size()
		}
	}
	if n := 4 * int64(params); n > maxBytes {
		return nil, tooLarge(v.Name, n, "of weights")
	}
	if err := v.CheckFinite(); err != nil {
		return nil, err
	}
	// The layers' numbers, for errors: a Sequential's place in the stack.
	number := map[layers.Layer]int{}
	for i, l := range v.Layers {
		number[l.Layer] = i + 1
	}
	ins, outs := graphNames(v)
	// Each call reads the values its input tensors are in the graph.
	values := map[string]string{}
	for i, t := range v.Inputs {
		values[t] = ins[i]
	}
	b := newBuilder(slices.Concat(ins, outs)...)
	for _, c := range v.Calls {
		in := make([]string, len(c.Inputs))
		for j, t := range c.Inputs {
			x, ok := values[t]
			if !ok {
				return nil, fmt.Errorf("layer %d (%q) reads tensor %q, which no call before it outputs", number[c.Layer], c.Layer.Name(), t)
			}
			in[j] = x
		}
		b.Begin(c.Layer.Name(), in, c.InputShapes)
		outs, err := addCall(b, c.Layer, in)
		if err == nil {
			err = b.err
		}
		if err == nil && len(outs) != 1+len(c.Extra) {
			err = fmt.Errorf("its ONNX mapping gives %d outputs, but the call has %d", len(outs), 1+len(c.Extra))
		}
		if err != nil {
			what := fmt.Sprintf("layer %d (%q)", number[c.Layer], c.Layer.Name())
			if c.Index > 0 {
				what += fmt.Sprintf(", its call %d", c.Index+1)
			}
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		values[c.Output] = outs[0]
		for i, t := range c.Extra {
			values[t] = outs[i+1]
		}
	}
	xs := make([]string, len(v.Outputs))
	for i, t := range v.Outputs {
		x, ok := values[t]
		if !ok {
			return nil, fmt.Errorf("the model's output %d, tensor %q, is no call's output", i+1, t)
		}
		xs[i] = x
	}
	g := b.Finish(xs, v.OutputShapes, outs)
	g.Name = v.Name
	kind := "Sequential"
	if v.Functional {
		kind = "functional"
	}
	g.DocString = fmt.Sprintf("The inference graph of the gokeras %s model %q, as its Predict computes it.", kind, v.Name)
	for i, name := range ins {
		g.Inputs = append(g.Inputs, valueInfo(name, v.InputShapes[i]))
	}
	for i, name := range outs {
		g.Outputs = append(g.Outputs, valueInfo(name, v.OutputShapes[i]))
	}
	model := &wire.Model{
		IRVersion:       wire.IRVersion,
		Opsets:          []wire.OpsetID{{Version: wire.OpsetVersion}},
		ProducerName:    "gokeras",
		ProducerVersion: producerVersion(),
		Graph:           g,
	}
	var size countingWriter
	if err := model.Write(&size); err != nil {
		return nil, err
	}
	if int64(size) > maxBytes {
		return nil, tooLarge(v.Name, int64(size), "as an ONNX file")
	}
	return model, nil
}

// graphNames names the graph's inputs and outputs, in the model's order:
// "input" and "output" for a model of one input and one output; for any
// other, each input after its Input layer ("input_1", "input_2") and each
// output after the layer that computes it ("class", "value"), as Keras'
// input_names and output_names. Two outputs of one layer (a shared
// layer's two calls, or a recurrent layer's output and its last states
// with return_state) are told apart as Keras 2 does: the second is
// "dense_1", the third "dense_2", each skipping a name the graph's
// inputs or outputs already have.
func graphNames(v nn.ModelView) (ins, outs []string) {
	if len(v.Inputs) == 1 && len(v.Outputs) == 1 {
		return []string{inputName}, []string{outputName}
	}
	ins = slices.Clone(v.Inputs)
	used := map[string]bool{}
	for _, name := range ins {
		used[name] = true
	}
	layerOf := map[string]string{} // a call's output tensor: its layer's name
	for _, c := range v.Calls {
		layerOf[c.Output] = c.Layer.Name()
		for _, t := range c.Extra {
			layerOf[t] = c.Layer.Name()
		}
	}
	count := map[string]int{}
	for _, t := range v.Outputs {
		layer := layerOf[t]
		name := layer
		for used[name] {
			count[layer]++
			name = fmt.Sprintf("%s_%d", layer, count[layer])
		}
		used[name] = true
		outs = append(outs, name)
	}
	return ins, outs
}

// layersPackage is the import path of package layers, whose layer types
// are the ones Export maps.
var layersPackage = reflect.TypeFor[layers.Config]().PkgPath()

// addCall adds one call of a layer of the model to the graph, reading in:
// one value, or one per input of a layer of several (a merge layer, a
// recurrent layer given its initial states). It returns the values of
// the call's outputs: one, or more for a layer of several (a recurrent
// layer with return_state).
func addCall(b *builder, l layers.Layer, in []string) ([]string, error) {
	t := reflect.TypeOf(l)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	known := strings.Join(layers.ClassNames(), ", ")
	if t.PkgPath() != layersPackage {
		return nil, fmt.Errorf("%s layer %q is a %T, which has no ONNX mapping: package export/onnx maps the layers of package layers only (%s); build the model from those to export it",
			l.Type(), l.Name(), l, known)
	}
	one := func(out string, err error) ([]string, error) {
		if err != nil {
			return nil, err
		}
		return []string{out}, nil
	}
	if _, ok := l.(layers.MultiInputLayer); ok {
		m, ok := l.(layers.ONNXInputsMapper)
		if !ok {
			return nil, fmt.Errorf("layer class %s, a layer of several inputs, has no ONNX mapping yet: give it an ONNXInputs method beside its code in package layers (layers/onnx.go's onnxMerge and onnxConcat map Keras' merge layers)", l.Type())
		}
		return one(m.ONNXInputs(b, in))
	}
	if m, ok := l.(layers.ONNXOutputsMapper); ok {
		return m.ONNXOutputs(b, in)
	}
	m, ok := l.(layers.ONNXMapper)
	if !ok {
		return nil, fmt.Errorf("layer class %s has no ONNX mapping yet: give it an ONNX method beside its code in package layers, as its other layers have (%s)", l.Type(), known)
	}
	if len(in) != 1 {
		return nil, fmt.Errorf("layer class %s takes one input, but the call gives it %d", l.Type(), len(in))
	}
	return one(m.ONNX(b, in[0]))
}

// valueInfo describes a float32 value of the given sample shape, batch
// first.
func valueInfo(name string, sample []int) wire.ValueInfo {
	dims := []wire.Dim{{Param: batchName}}
	for _, d := range sample {
		dims = append(dims, wire.Dim{Value: int64(d)})
	}
	return wire.ValueInfo{Name: name, ElemType: wire.Float, Dims: dims}
}

// producerVersion is gokeras' module version, as the build knows it.
func producerVersion() string {
	const module = "github.com/gokeras/gokeras"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if info.Main.Path == module {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == module {
			return d.Version
		}
	}
	return ""
}
