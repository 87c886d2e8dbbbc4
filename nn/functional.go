package nn

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/layers"
)

// Tensor is a symbolic tensor of the functional API, Keras' KerasTensor:
// the input of a model (Input), or the output of a layer applied to
// tensors (Apply). It holds no values: it knows its shape (without the
// batch axis) and the calls it comes from, from which NewModel makes the
// model.
//
// A mistake in making a tensor (a layer that cannot take its inputs'
// shapes, a nil layer) is kept in it and in every tensor made from it,
// and NewModel returns it, so that building a graph needs no error check
// at each call; Err returns it earlier.
type Tensor struct {
	shape []int
	// from is the call that outputs the tensor; nil for an input.
	from *layerCall
	// index is which of its call's outputs the tensor is (Keras' tensor
	// index): 0 but for the later outputs of a layers.MultiOutputLayer.
	index int
	// input is the InputLayer of a model's input.
	input *layers.InputLayer
	err   error
}

// layerCall is one application of a layer to tensors: a node of a
// functional model's graph.
type layerCall struct {
	layer layers.Layer
	in    []*Tensor
	out   *Tensor
	// extra are the outputs after the first of a layer of several
	// (layers.MultiOutputLayer), out being the first.
	extra []*Tensor
	// weights are the weights the layer needs for this call's inputs
	// (PlanBuild's; none for a merge layer).
	weights []layers.WeightShape
	// seq orders the calls as Apply made them: a call comes after every
	// call its inputs come from, so this order is also a graph order, and
	// it is the order Keras names layers in (as the code makes them).
	seq uint64
}

// applied counts the calls Apply has made, for layerCall.seq.
var applied atomic.Uint64

// Input makes the input tensor of a functional model, of samples of the
// given shape (without the batch axis), as keras.Input(shape) does.
func Input(shape ...int) *Tensor {
	t := &Tensor{shape: slices.Clone(shape), input: layers.Input(shape...)}
	if len(shape) == 0 {
		t.err = errors.New("nn.Input: no shape given: say what one sample is, e.g. nn.Input(32, 32, 3)")
	}
	for _, d := range shape {
		if d <= 0 && t.err == nil {
			t.err = fmt.Errorf("nn.Input: shape %v has a non-positive dimension", shape)
		}
	}
	return t
}

// NamedInput is Input with a name, as keras.Input(shape, name=...): the
// name of its InputLayer in Summary and saved files, and of the model's
// input in an ONNX export of several inputs. Unnamed inputs are named
// input_1, input_2, ... by NewModel.
func NamedInput(name string, shape ...int) *Tensor {
	t := Input(shape...)
	if t.err == nil && (name == "" || strings.Contains(name, "/")) {
		t.err = fmt.Errorf("nn.NamedInput: name %q: give a name without \"/\"", name)
	}
	t.input.SetName(name)
	return t
}

// Shape is the tensor's shape, without the batch axis: (32, 32, 3) for
// CIFAR-10 images. The caller owns the slice.
func (t *Tensor) Shape() []int {
	if t == nil {
		return nil
	}
	return slices.Clone(t.shape)
}

// Err is the first mistake made in making the tensor or the tensors it
// comes from, nil if none.
func (t *Tensor) Err() error {
	if t == nil {
		return errors.New("no tensor (nil): make one with nn.Input or nn.Apply")
	}
	return t.err
}

// Apply applies a layer to tensors, as calling a Keras layer on Keras
// tensors does, and returns its output. A layer of one input (Dense,
// Conv2D, ...) takes one tensor; a merge layer (Add, Concatenate, ...)
// takes several; a recurrent layer takes its sequences and, optionally,
// its initial states after them (Keras' `LSTM(u)(x, initial_state=[h,
// c])` is Apply(lstm, x, h, c)). A layer applied more than once shares its weights: each
// application computes with the same weights, and their gradient is the
// sum of the applications'. The layer is built when the model is (by
// NewModel's Build), with the model's seed; Apply only checks that it can
// take the tensors' shapes. A layer whose call outputs several tensors (a
// recurrent layer with ReturnState) gives its first; ApplyAll gives them
// all.
func Apply(l layers.Layer, in ...*Tensor) *Tensor {
	out := &Tensor{}
	for _, t := range in {
		if err := t.Err(); err != nil {
			out.err = err
			return out
		}
	}
	if configargs.IsNil(l) {
		out.err = errors.New("nn.Apply: no layer (nil)")
		return out
	}
	what := layerWhat(l)
	if _, ok := l.(*layers.InputLayer); ok {
		out.err = fmt.Errorf("nn.Apply: %s declares a Sequential model's input; a functional model starts from nn.Input", what)
		return out
	}
	shapeList := make([][]int, len(in))
	for i, t := range in {
		shapeList[i] = t.shape
	}
	mi, multi := l.(layers.MultiInputLayer)
	var weights []layers.WeightShape
	var err error
	switch {
	case multi && len(in) < 2:
		out.err = fmt.Errorf("nn.Apply: %s: a merge layer should be called on a list of inputs: it got %d tensor(s), apply it to two or more", what, len(in))
		return out
	case !multi && len(in) == 0:
		out.err = fmt.Errorf("nn.Apply: %s: no input tensor given", what)
		return out
	case !multi && len(in) > 1 && !takesStates(l, len(in)):
		out.err = fmt.Errorf("nn.Apply: %s takes one input but was applied to %d: only a merge layer (Add, Concatenate, ...) takes several, and a recurrent layer its initial states after its sequences", what, len(in))
		return out
	case multi:
		out.shape, weights, err = layers.PlanBuildInputs(mi, shapeList)
	default:
		out.shape, weights, err = layers.PlanBuild(l, in[0].shape)
	}
	if err != nil {
		out.err = fmt.Errorf("nn.Apply: %s on %s: %w", what, shapeText(shapeList), err)
		return out
	}
	out.from = &layerCall{layer: l, in: slices.Clone(in), out: out, weights: weights, seq: applied.Add(1)}
	if mo, ok := l.(layers.MultiOutputLayer); ok {
		all, err := mo.OutputShapes(shapeList)
		if err != nil {
			out.err, out.from = fmt.Errorf("nn.Apply: %s on %s: %w", what, shapeText(shapeList), err), nil
			return out
		}
		for i, s := range all[1:] {
			out.from.extra = append(out.from.extra, &Tensor{shape: s, from: out.from, index: i + 1})
		}
	}
	return out
}

// ApplyAll is Apply for a layer whose call outputs several tensors (a
// layers.MultiOutputLayer, such as a recurrent layer with ReturnState),
// as `output, h, c = LSTM(units, return_state=True)(x)` in Keras: it
// returns them all, in the layer's order; for other layers, the one
// output Apply returns. A mistake is kept in each tensor, as Apply does.
func ApplyAll(l layers.Layer, in ...*Tensor) []*Tensor {
	out := Apply(l, in...)
	if out.from == nil {
		return []*Tensor{out}
	}
	return append([]*Tensor{out}, out.from.extra...)
}

// outputs are the call's outputs, the first then the others.
func (c *layerCall) outputs() []*Tensor {
	return append([]*Tensor{c.out}, c.extra...)
}

// takesStates says whether l takes n inputs: its input and its initial
// states (a layers.StateInputLayer, Keras' initial_state).
func takesStates(l layers.Layer, n int) bool {
	s, ok := l.(layers.StateInputLayer)
	return ok && n == 1+s.StateInputs()
}

// layerWhat names a layer in an error: its name when it has one, else its
// type.
func layerWhat(l layers.Layer) string {
	if n := l.Name(); n != "" {
		return fmt.Sprintf("layer %q (%s)", n, l.Type())
	}
	return fmt.Sprintf("a %s layer", l.Type())
}

func shapeText(list [][]int) string {
	s := ""
	for i, sh := range list {
		if i > 0 {
			s += " and "
		}
		s += "input " + shapes.String(sh)
	}
	return s
}

// graph is a functional model's graph: its inputs and outputs, and its
// layer calls in an order where each comes after the calls it takes its
// inputs from.
type graph struct {
	inputs, outputs []*Tensor
	calls           []*layerCall
}

// NewModel makes the model that computes outputs from inputs, as Keras'
// Model(inputs, outputs) does: every layer applied on the way from the
// inputs to the outputs is one of its layers, each once, in the order they
// are first applied. Layers without names get Keras' automatic ones
// (dense, dense_1, ...), counted per model, and inputs without names
// input_1, input_2, ... in the order given.
//
// A model of several inputs trains on data whose samples have one part per
// input, in the order of inputs (data.InputTuple, data.FuncParts); one of
// several outputs on labels with one part per output (data.LabelTuple),
// with a loss per output (Compile, LossFor, LossWeights) and logs named
// after the outputs' layers as Keras names them (dense_1_loss,
// dense_1_accuracy).
//
// It returns the first mistake made in making the tensors (see Tensor),
// and refuses a graph that cannot be a model: an output that does not
// come from the inputs (naming the input it needs), an input that no
// output uses, an input or output given twice, a layer applied to tensors
// whose shapes need weights of different shapes.
func NewModel(inputs, outputs []*Tensor) (*Model, error) {
	if len(inputs) == 0 || len(outputs) == 0 {
		return nil, fmt.Errorf("nn.NewModel: %d input(s) and %d output(s) given: a model needs at least one of each", len(inputs), len(outputs))
	}
	for i, t := range slices.Concat(inputs, outputs) {
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("nn.NewModel: %s: %w", ioWhat(i, len(inputs)), err)
		}
	}
	isInput := map[*Tensor]int{}
	for i, in := range inputs {
		if in.input == nil {
			return nil, fmt.Errorf("nn.NewModel: input %d is not a tensor nn.Input made: a model's inputs are where its data enters", i)
		}
		if j, ok := isInput[in]; ok {
			return nil, fmt.Errorf("nn.NewModel: inputs %d and %d are the same tensor: give each input once", j, i)
		}
		isInput[in] = i
	}
	isOutput := map[*Tensor]int{}
	for i, out := range outputs {
		if j, ok := isOutput[out]; ok {
			return nil, fmt.Errorf("nn.NewModel: outputs %d and %d are the same tensor: give each output once", j, i)
		}
		isOutput[out] = i
		if out.from == nil {
			return nil, fmt.Errorf("nn.NewModel: output %d is an input itself: apply at least one layer", i)
		}
	}
	// Walk back from each output: every call it needs, each after the
	// calls it needs (depth first, inputs in order).
	g := &graph{inputs: slices.Clone(inputs), outputs: slices.Clone(outputs)}
	seen := map[*Tensor]bool{}
	called := map[*layerCall]bool{} // a call of several outputs is one call
	var visit func(t *Tensor, output int) error
	visit = func(t *Tensor, output int) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		if t.from == nil {
			if _, ok := isInput[t]; !ok {
				return fmt.Errorf("nn.NewModel: graph disconnected: output %d needs an input of shape %s that is not one of the model's inputs; give it to NewModel, or apply the layers to the model's inputs", output, shapes.String(t.shape))
			}
			return nil
		}
		if called[t.from] {
			return nil
		}
		called[t.from] = true
		for _, x := range t.from.in {
			if err := visit(x, output); err != nil {
				return err
			}
		}
		g.calls = append(g.calls, t.from)
		return nil
	}
	for i, out := range outputs {
		if err := visit(out, i); err != nil {
			return nil, err
		}
	}
	// The calls in the order they were made: the order Keras names the
	// layers in and lists them (layer_1 made before layer_2), whatever
	// order the walk found them.
	slices.SortFunc(g.calls, func(a, b *layerCall) int { return cmp.Compare(a.seq, b.seq) })
	for i, in := range inputs {
		if !seen[in] {
			return nil, fmt.Errorf("nn.NewModel: input %d (shape %s) is not used by any output: every input must feed an output; drop it or apply layers to it", i, shapes.String(in.shape))
		}
	}
	m := &Sequential{name: "model", names: map[string]int{}, graph: g}
	m.setInputShapes()
	ins := make([]layers.Layer, len(inputs))
	for i, in := range inputs {
		if in.input.Name() == "" {
			in.input.SetName(fmt.Sprintf("input_%d", i+1)) // Keras 2 numbers its inputs from 1
		}
		ins[i] = in.input
	}
	// The layers, each once, in the order of their first call; the weights
	// a layer's calls need must be the same.
	first := map[layers.Layer][]layers.WeightShape{}
	for _, c := range g.calls {
		ws := c.weights
		if prev, ok := first[c.layer]; ok {
			if !sameWeights(prev, ws) {
				return nil, fmt.Errorf("nn.NewModel: %s is applied to tensors whose shapes need weights of different shapes (%s and %s): a shared layer computes with one set of weights",
					layerWhat(c.layer), weightsText(prev), weightsText(ws))
			}
			continue
		}
		first[c.layer] = ws
		if c.layer.Name() == "" {
			c.layer.SetName(m.autoName(c.layer.Type()))
		}
		m.layers = append(m.layers, c.layer)
	}
	if err := layers.CheckNames(append(ins, m.layers...)); err != nil {
		return nil, fmt.Errorf("nn.NewModel: %w", err)
	}
	return m, nil
}

// ioWhat names the i-th of NewModel's tensors, inputs then outputs.
func ioWhat(i, inputs int) string {
	if i < inputs {
		return fmt.Sprintf("input %d", i)
	}
	return fmt.Sprintf("output %d", i-inputs)
}

// setInputShapes sets a functional model's input shapes from its graph:
// with one input, the samples the data gives are that input's; with
// several, each sample is the inputs' values one after another, a row of
// their sizes' sum (data.InputTuple), which the model splits.
func (m *Sequential) setInputShapes() {
	g := m.graph
	if len(g.inputs) == 1 {
		m.inputShape = slices.Clone(g.inputs[0].shape)
		m.inputParts = nil
		return
	}
	m.inputParts = make([][]int, len(g.inputs))
	total := 0
	for i, in := range g.inputs {
		m.inputParts[i] = slices.Clone(in.shape)
		total += shapes.Size(in.shape)
	}
	m.inputShape = []int{total}
}

func sameWeights(a, b []layers.WeightShape) bool {
	return slices.EqualFunc(a, b, func(x, y layers.WeightShape) bool { return x.Name == y.Name && slices.Equal(x.Shape, y.Shape) })
}

func weightsText(ws []layers.WeightShape) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %v", w.Name, w.Shape)
	}
	return "[" + s + "]"
}
