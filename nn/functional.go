package nn

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
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
// takes several. A layer applied more than once shares its weights: each
// application computes with the same weights, and their gradient is the
// sum of the applications'. The layer is built when the model is (by
// NewModel's Build), with the model's seed; Apply only checks that it can
// take the tensors' shapes.
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
	case !multi && len(in) > 1:
		out.err = fmt.Errorf("nn.Apply: %s takes one input but was applied to %d: only a merge layer (Add, Concatenate, ...) takes several", what, len(in))
		return out
	case multi:
		out.shape, err = mi.PlanInputs(shapeList)
	default:
		out.shape, weights, err = layers.PlanBuild(l, in[0].shape)
	}
	if err != nil {
		out.err = fmt.Errorf("nn.Apply: %s on %s: %w", what, shapeText(shapeList), err)
		return out
	}
	out.from = &layerCall{layer: l, in: slices.Clone(in), out: out, weights: weights, seq: applied.Add(1)}
	return out
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

// graph is a functional model's graph: its input and output, and its
// layer calls in an order where each comes after the calls it takes its
// inputs from.
type graph struct {
	input, output *Tensor
	calls         []*layerCall
}

// NewModel makes the model that computes outputs from inputs, as Keras'
// Model(inputs, outputs) does: every layer applied on the way from the
// inputs to the outputs is one of its layers, each once, in the order they
// are first applied. Layers without names get Keras' automatic ones
// (dense, dense_1, ...), counted per model.
//
// It returns the first mistake made in making the tensors (see Tensor),
// and refuses a graph that cannot be a model: an output that does not
// come from the inputs (naming the input it needs), an input that no
// output uses, a layer applied to tensors whose shapes need weights of
// different shapes. A model of several inputs or outputs is not supported
// yet.
func NewModel(inputs, outputs []*Tensor) (*Model, error) {
	if len(inputs) == 0 || len(outputs) == 0 {
		return nil, fmt.Errorf("nn.NewModel: %d input(s) and %d output(s) given: a model needs at least one of each", len(inputs), len(outputs))
	}
	if len(inputs) > 1 || len(outputs) > 1 {
		return nil, fmt.Errorf("nn.NewModel: %d inputs and %d outputs given: a model of several inputs or outputs is not supported yet; give one of each", len(inputs), len(outputs))
	}
	in, out := inputs[0], outputs[0]
	for _, t := range []*Tensor{in, out} {
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("nn.NewModel: %w", err)
		}
	}
	if in.input == nil {
		return nil, errors.New("nn.NewModel: the input is not a tensor nn.Input made: a model's inputs are where its data enters")
	}
	// Walk back from the output: every call it needs, each after the
	// calls it needs (depth first, inputs in order).
	g := &graph{input: in, output: out}
	seen := map[*Tensor]bool{}
	var visit func(t *Tensor) error
	visit = func(t *Tensor) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		if t.from == nil {
			if t != in {
				return fmt.Errorf("nn.NewModel: graph disconnected: the output needs an input of shape %s that is not the model's input; give it to NewModel, or apply the layers to the model's input", shapes.String(t.shape))
			}
			return nil
		}
		for _, x := range t.from.in {
			if err := visit(x); err != nil {
				return err
			}
		}
		g.calls = append(g.calls, t.from)
		return nil
	}
	if err := visit(out); err != nil {
		return nil, err
	}
	// The calls in the order they were made: the order Keras names the
	// layers in and lists them (layer_1 made before layer_2), whatever
	// order the walk found them.
	slices.SortFunc(g.calls, func(a, b *layerCall) int { return cmp.Compare(a.seq, b.seq) })
	if !seen[in] {
		return nil, fmt.Errorf("nn.NewModel: the input of shape %s is not used by the output: the output must be computed from it", shapes.String(in.shape))
	}
	if out.from == nil {
		return nil, errors.New("nn.NewModel: the output is the input itself: apply at least one layer")
	}
	m := &Sequential{name: "model", names: map[string]int{}, inputShape: slices.Clone(in.shape), graph: g}
	if in.input.Name() == "" {
		in.input.SetName("input_1") // Keras 2 numbers its inputs from 1
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
	if err := layers.CheckNames(append([]layers.Layer{in.input}, m.layers...)); err != nil {
		return nil, fmt.Errorf("nn.NewModel: %w", err)
	}
	return m, nil
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
