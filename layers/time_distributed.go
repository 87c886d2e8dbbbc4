package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// TimeDistributedLayer applies a layer to every step of a sequence, like
// keras.layers.TimeDistributed: samples (steps, ...) are cut into steps,
// the layer maps each step's (...) as it maps a sample, with the same
// weights, and the results are stacked again, (steps, ...'). Its weights
// are the wrapped layer's. The mask of its input, if any, is handed on.
type TimeDistributedLayer struct {
	named
	layer Layer
	steps int
}

// TimeDistributed wraps a layer of one input and one output (Dense,
// Conv2D, Dropout, ...): Keras' TimeDistributed(layer).
func TimeDistributed(layer Layer, opts ...Option) *TimeDistributedLayer {
	l := &TimeDistributedLayer{layer: layer}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "TimeDistributed".
func (l *TimeDistributedLayer) Type() string { return "TimeDistributed" }

// Layer is the wrapped layer.
func (l *TimeDistributedLayer) Layer() Layer { return l.layer }

// CheckConfig refuses a layer of several inputs or outputs, or none.
func (l *TimeDistributedLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("time distributed layer: %w", l.nameErr)
	}
	switch w := l.layer.(type) {
	case nil:
		return fmt.Errorf("time distributed layer %q: no layer given", l.name)
	case MultiInputLayer:
		return fmt.Errorf("time distributed layer %q: a %s layer takes several inputs: TimeDistributed wraps a layer of one input and one output", l.name, w.Type())
	case *InputLayer:
		return fmt.Errorf("time distributed layer %q: an InputLayer declares a model's input: wrap a layer that computes", l.name)
	case *RecurrentLayer:
		if w.returnState {
			return fmt.Errorf("time distributed layer %q: a %s layer with return_state outputs several tensors: TimeDistributed wraps a layer of one output", l.name, w.Type())
		}
	case *BidirectionalLayer:
		return fmt.Errorf("time distributed layer %q: TimeDistributed does not wrap Bidirectional yet: apply Bidirectional to the sequences of each step another way", l.name)
	}
	if c, ok := l.layer.(ConfigChecker); ok {
		return c.CheckConfig()
	}
	return nil
}

// plan: the wrapped layer's plan on one step, the steps put back in front.
func (l *TimeDistributedLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, nil, err
	}
	if len(inputShape) < 2 {
		return nil, nil, fmt.Errorf("time distributed layer %q: expects samples of at least two axes, (steps, ...), but gets %s", l.name, shapes.String(inputShape))
	}
	out, ws, err := PlanBuild(l.layer, inputShape[1:])
	if err != nil {
		return nil, nil, fmt.Errorf("time distributed layer %q: %w", l.name, err)
	}
	return append([]int{inputShape[0]}, out...), ws, nil
}

// Build builds the wrapped layer on one step's shape.
func (l *TimeDistributedLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if _, _, err := l.plan(inputShape); err != nil {
		return nil, err
	}
	out, err := l.layer.Build(slices.Clone(inputShape[1:]), rng)
	if err != nil {
		return nil, fmt.Errorf("time distributed layer %q: %w", l.name, err)
	}
	l.steps = inputShape[0]
	return append([]int{inputShape[0]}, out...), nil
}

// Params are the wrapped layer's weights.
func (l *TimeDistributedLayer) Params() []*Param { return l.layer.Params() }

// KerasVariable is where Keras 3 keeps weight i: in the wrapped layer,
// layer/vars/i.
func (l *TimeDistributedLayer) KerasVariable(i int) string { return fmt.Sprintf("layer/vars/%d", i) }

// UsesStep is the wrapped layer's (Dropout's draws).
func (l *TimeDistributedLayer) UsesStep() bool {
	u, ok := l.layer.(StepUser)
	return ok && u.UsesStep()
}

// Call folds the steps into the batch, (batch·steps, ...), calls the
// wrapped layer and unfolds its output, (batch, steps, ...').
func (l *TimeDistributedLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("time distributed layer %q", l.name)
	s := in.Node.Shape()
	if len(s) < 3 {
		return Flow{}, fmt.Errorf("%s: input of shape %v: want (batch, steps, ...)", what, s)
	}
	folded, err := ops.Reshape(in.Node, append([]int{s[0] * s[1]}, s[2:]...), in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	inner := in
	inner.Node, inner.Logits, inner.Mask, inner.Losses = folded, nil, nil, nil
	out, err := l.layer.Call(inner, params)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	os := out.Node.Shape()
	y, err := ops.Reshape(out.Node, append([]int{s[0], s[1]}, os[1:]...), out.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	f := Flow{Node: y, NeedsGrad: out.NeedsGrad, Losses: out.Losses}
	if out.Logits != nil {
		if f.Logits, err = ops.Reshape(out.Logits, append([]int{s[0], s[1]}, out.Logits.Shape()[1:]...), out.NeedsGrad); err != nil {
			return Flow{}, fmt.Errorf("%s: %w", what, err)
		}
	}
	return f, nil
}

// Config returns "TimeDistributed" with name and the wrapped layer's
// config.
func (l *TimeDistributedLayer) Config() (Config, error) {
	if l.layer == nil {
		return Config{}, fmt.Errorf("time distributed layer %q: no layer", l.name)
	}
	inner, err := ConfigOf(l.layer)
	if err != nil {
		return Config{}, fmt.Errorf("time distributed layer %q: %w", l.name, err)
	}
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name,
		"layer": map[string]any{"class_name": inner.ClassName, "config": inner.Config}}}, nil
}

func init() { layerClasses["TimeDistributed"] = timeDistributedFromConfig }

func timeDistributedFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Layer *Config `json:"layer"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Layer == nil {
		return nil, missing("layer")
	}
	inner, err := FromConfig(*a.Layer)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return TimeDistributed(inner, a.nameOptions()...), nil
}

// ONNX adds the layer to an ONNX graph as Predict computes it: the steps
// folded into the batch (Reshape to (batch·steps, ...)), the wrapped
// layer's mapping on them, and the steps unfolded again (Reshape to
// (batch, steps, ...')). A wrapped layer without an ONNX mapping is
// refused, named.
func (l *TimeDistributedLayer) ONNX(g ONNXGraph, in string) (string, error) {
	what := fmt.Sprintf("time distributed layer %q", l.name)
	m, ok := l.layer.(ONNXMapper)
	if !ok || l.layer == nil {
		return "", fmt.Errorf("%s: its layer %T has no ONNX mapping", what, l.layer)
	}
	shape := g.InputShape()
	if len(shape) < 2 {
		return "", fmt.Errorf("%s: input samples of shape %v: want (steps, ...)", what, shape)
	}
	out, _, err := PlanBuild(l.layer, shape[1:])
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	folded := g.Node("Reshape", []string{g.ChannelsLast(in), g.Int64s("shape", append([]int64{-1}, int64s(shape[1:])...)...)})
	restore := g.Within(folded, shape[1:])
	y, err := m.ONNX(g, folded)
	if err == nil {
		// The wrapped layer's output, channels last: of its input's rank
		// where it holds its channels first (a convolution's, a pooling's).
		y = g.ChannelsLast(y)
	}
	restore()
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return g.Node("Reshape", []string{y, g.Int64s("shape", append([]int64{-1, int64(shape[0])}, int64s(out)...)...)}), nil
}
