package nn

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gokeras/gokeras/layers"
)

// ModelView is what a reader of a whole model sees of it, such as an
// exporter (package export/onnx): the model built, its graph of layer
// calls with the shapes of the samples each takes and outputs, and the
// weights on the host, in the layers' Params. View gives one.
//
// Calls is the graph: a Sequential's is a chain, one call per layer, each
// taking the output of the one before; a functional model's (NewModel)
// may apply a layer more than once (a shared layer: its calls compute
// with the same Params) and a merge layer (layers.MultiInputLayer) to
// several tensors. Layers lists each layer once.
type ModelView struct {
	// Name is the model's name.
	Name string
	// InputShape and OutputShape are the shapes of the model's input and
	// output samples (no batch axis); for a model of several inputs or
	// outputs, those of the first (InputShapes and OutputShapes hold all).
	InputShape, OutputShape []int
	// InputShapes and OutputShapes are the shapes of each of the model's
	// inputs and outputs, in order.
	InputShapes, OutputShapes [][]int
	// Layers are the model's layers, each once, in the order of their
	// first call (for a Sequential, the order of its stack).
	Layers []LayerView
	// Calls are the model's layer calls, each after the calls whose
	// outputs it takes.
	Calls []CallView
	// Input and Output name the model's input tensor, which calls read,
	// and its output tensor, a call's Output; for a model of several
	// inputs or outputs, the first (Inputs and Outputs name all).
	Input, Output string
	// Inputs and Outputs name each of the model's inputs and outputs, in
	// order.
	Inputs, Outputs []string
	// Functional reports whether the model is a functional one (NewModel)
	// rather than a stack of layers.
	Functional bool

	m *Sequential
}

// LayerView is one layer of a ModelView: the layer, built, and the shapes
// of the samples its first call takes and outputs (no batch axis). A
// layer of several inputs (layers.MultiInputLayer) has no one InputShape:
// it is nil, and its calls' InputShapes hold them.
type LayerView struct {
	Layer                   layers.Layer
	InputShape, OutputShape []int
}

// CallView is one call of a layer in a ModelView: the layer applied to
// tensors, named by strings, and the shapes of their samples.
type CallView struct {
	Layer layers.Layer
	// Index counts the layer's calls before this one: 0 for its first
	// call, 1 for a shared layer's second, and so on.
	Index int
	// Inputs name the tensors the call takes, in the order the layer was
	// applied to them: the model's Input, or earlier calls' Outputs.
	Inputs []string
	// Output names the tensor the call outputs: the layer's name, a colon
	// and the call's Index ("dense:0", "dense:1").
	Output string
	// Extra name the call's outputs after the first, of a layer of
	// several (layers.MultiOutputLayer: a recurrent layer's last states
	// with ReturnState): Output, a colon and 1, 2, ... ("lstm:0:1").
	Extra []string
	// InputShapes are the shapes of the input samples, one per input;
	// OutputShape that of the output samples (no batch axis).
	InputShapes [][]int
	OutputShape []int
}

// sequentialInput is the name of a Sequential's input tensor in a view;
// a functional model's is its nn.Input's name ("input_1").
const sequentialInput = "input"

// View calls fn with a view of the model: built (from its declared input
// shape, as Save builds it, if it is not built yet), and its weights on
// the host, copied back from the device that trains them if any. While
// fn runs, nothing else uses the model: as GetWeights and Save, View
// called during a Fit, Evaluate or Predict from another goroutine is
// refused with an error that matches ErrBusy, and from Fit's callbacks it
// runs between two steps.
//
// call names what the caller does, as the model's own methods name
// theirs ("export ONNX"): View's errors start with it. fn's error is
// returned as it is. fn reads the layers and their weights in place: it
// must not change them or keep them after it returns, and must not call
// the model's methods that read or write the weights (GetWeights, Save,
// ...), which would wait for View to return.
func (m *Sequential) View(call string, fn func(ModelView) error) error {
	if m == nil {
		return fmt.Errorf("%s: %w", call, ErrNilModel)
	}
	if fn == nil {
		return fmt.Errorf("%s: View needs a function to call", call)
	}
	release, err := m.claim(call, false)
	if err != nil {
		return err
	}
	defer release()
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	if err := m.syncWeights(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return fn(m.view())
}

// view describes the built model: its layers and its graph of calls, read
// through callGraph.
func (m *Sequential) view() ModelView {
	v := ModelView{Name: m.name, InputShapes: m.InputShapes(), OutputShapes: m.OutputShapes(), m: m}
	inputs, calls := m.callGraph()
	names := map[*Tensor]string{}
	shapeOf := map[*Tensor][]int{}
	v.Functional = m.graph != nil
	for i, t := range inputs {
		name := sequentialInput
		if t.input != nil {
			name = t.input.Name()
		}
		v.Inputs = append(v.Inputs, name)
		names[t], shapeOf[t] = name, v.InputShapes[i]
	}
	v.Input, v.InputShape = v.Inputs[0], slices.Clone(v.InputShapes[0])
	v.OutputShape = slices.Clone(v.OutputShapes[0])
	count := map[layers.Layer]int{}
	for _, c := range calls {
		cv := CallView{Layer: c.layer, Index: count[c.layer]}
		count[c.layer]++
		for _, t := range c.in {
			cv.Inputs = append(cv.Inputs, names[t])
			cv.InputShapes = append(cv.InputShapes, slices.Clone(shapeOf[t]))
		}
		out := c.out.shape
		cv.Output = fmt.Sprintf("%s:%d", c.layer.Name(), cv.Index)
		cv.OutputShape = slices.Clone(out)
		names[c.out], shapeOf[c.out] = cv.Output, out
		for i, t := range c.extra {
			names[t], shapeOf[t] = fmt.Sprintf("%s:%d", cv.Output, i+1), slices.Clone(t.shape)
			cv.Extra = append(cv.Extra, names[t])
		}
		if cv.Index == 0 {
			lv := LayerView{Layer: c.layer, OutputShape: slices.Clone(out)}
			if _, multi := c.layer.(layers.MultiInputLayer); !multi && len(cv.InputShapes) == 1 {
				lv.InputShape = slices.Clone(cv.InputShapes[0])
			}
			v.Layers = append(v.Layers, lv)
		}
		v.Calls = append(v.Calls, cv)
	}
	outputs := []*Tensor{calls[len(calls)-1].out}
	if m.graph != nil {
		outputs = m.graph.outputs
	}
	for _, t := range outputs {
		v.Outputs = append(v.Outputs, names[t])
	}
	v.Output = v.Outputs[0]
	return v
}

// CheckFinite returns the error SaveWeights returns for a weight that
// holds a NaN or an infinity, naming the weight and what to do, or nil
// when every weight is finite: a file of such weights would be refused
// when it is loaded, so a writer writes nothing.
func (v ModelView) CheckFinite() error {
	if v.m == nil {
		return errors.New("the ModelView is not a model's: get one from View")
	}
	for _, w := range v.m.weights() {
		data := w.value.Data().([]float32)
		if i := firstNonFinite(data); i >= 0 {
			return v.m.diverged("weight "+w.name, data[i], i)
		}
	}
	return nil
}
