package onnx

import (
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
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
// Every layer of package layers is mapped, channels last as in Keras:
// convolutions and poolings run on ONNX's channels-first layout between
// Transpose nodes, with the kernels reordered and "same" padding written
// as explicit pads (the extra row or column at the end, as TensorFlow
// pads); Embedding casts its float32 indices to int64 and gathers; GELU
// is written out with Erf (ONNX's Gelu needs operator set 20). Where
// Predict refuses an index that is not a row of the table, the runtime
// refuses one past the end only: ONNX's Gather counts a negative index
// from the end, and the cast truncates a fraction. A layer defined
// outside package layers has no ONNX mapping: the error names it.
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
	// Each call reads the values its input tensors are in the graph.
	values := map[string]string{v.Input: inputName}
	b := newBuilder(inputName, outputName)
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
		out, err := addCall(b, c.Layer, in)
		if err == nil {
			err = b.err
		}
		if err != nil {
			what := fmt.Sprintf("layer %d (%q)", number[c.Layer], c.Layer.Name())
			if c.Index > 0 {
				what += fmt.Sprintf(", its call %d", c.Index+1)
			}
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		values[c.Output] = out
	}
	x, ok := values[v.Output]
	if !ok {
		return nil, fmt.Errorf("the model's output, tensor %q, is no call's output", v.Output)
	}
	g := b.Finish(x, v.OutputShape, outputName)
	g.Name = v.Name
	kind := "Sequential"
	if v.Functional {
		kind = "functional"
	}
	g.DocString = fmt.Sprintf("The inference graph of the gokeras %s model %q, as its Predict computes it.", kind, v.Name)
	g.Inputs = []wire.ValueInfo{valueInfo(inputName, v.InputShape)}
	g.Outputs = []wire.ValueInfo{valueInfo(outputName, v.OutputShape)}
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

// layersPackage is the import path of package layers, whose layer types
// are the ones Export maps.
var layersPackage = reflect.TypeFor[layers.Config]().PkgPath()

// addCall adds one call of a layer of the model to the graph, reading in:
// one value, or one per input of a layer of several (a merge layer).
func addCall(b *builder, l layers.Layer, in []string) (string, error) {
	t := reflect.TypeOf(l)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	known := strings.Join(layers.ClassNames(), ", ")
	if t.PkgPath() != layersPackage {
		return "", fmt.Errorf("%s layer %q is a %T, which has no ONNX mapping: package export/onnx maps the layers of package layers only (%s); build the model from those to export it",
			l.Type(), l.Name(), l, known)
	}
	if _, ok := l.(layers.MultiInputLayer); ok {
		m, ok := l.(layers.ONNXInputsMapper)
		if !ok {
			return "", fmt.Errorf("layer class %s, a layer of several inputs, has no ONNX mapping yet: give it an ONNXInputs method beside its code in package layers (layers/onnx.go's onnxMerge and onnxConcat map Keras' merge layers)", l.Type())
		}
		return m.ONNXInputs(b, in)
	}
	m, ok := l.(layers.ONNXMapper)
	if !ok {
		return "", fmt.Errorf("layer class %s has no ONNX mapping yet: give it an ONNX method beside its code in package layers, as its other layers have (%s)", l.Type(), known)
	}
	if len(in) != 1 {
		return "", fmt.Errorf("layer class %s takes one input, but the call gives it %d", l.Type(), len(in))
	}
	return m.ONNX(b, in[0])
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
