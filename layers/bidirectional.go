package layers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BidirectionalLayer runs a recurrent layer over its sequences forwards
// and a copy of it backwards, and merges their outputs, like
// keras.layers.Bidirectional. Its weights are the forward layer's, then
// the backward one's, named as Keras names them
// (forward_lstm/lstm_cell/kernel, backward_lstm/lstm_cell/kernel, ...).
// With return_sequences the backward layer's outputs are put back in the
// order of the steps before the merge, as Keras does; given a mask, both
// halves then output zero at the masked steps (Keras forces
// zero_output_for_mask on them). With return_state
// the call outputs the merged output, then the forward layer's states,
// then the backward one's; with merge mode None (MergeMode("")) the
// forward and backward outputs are two outputs.
type BidirectionalLayer struct {
	named
	layer             *RecurrentLayer // the layer given, as its config says
	forward, backward *RecurrentLayer
	mergeMode         string
	params            []*Param
}

// BidirectionalOption configures a Bidirectional layer: MergeMode, or
// any Option, such as Named.
type BidirectionalOption interface{ applyBidirectional(*BidirectionalLayer) }

func (o nameOption) applyBidirectional(l *BidirectionalLayer) { o.applyLayer(&l.named) }

type mergeModeOption string

func (m mergeModeOption) applyBidirectional(l *BidirectionalLayer) { l.mergeMode = string(m) }

// MergeMode sets how a Bidirectional layer combines the forward and
// backward outputs (Keras' merge_mode): "concat" (the default, side by
// side), "sum", "mul", "ave", or "" (Keras' None: both, as two outputs).
func MergeMode(mode string) BidirectionalOption { return mergeModeOption(mode) }

// Bidirectional wraps a SimpleRNN, LSTM or GRU, Keras'
// Bidirectional(layer, merge_mode="concat").
func Bidirectional(layer *RecurrentLayer, opts ...BidirectionalOption) *BidirectionalLayer {
	l := &BidirectionalLayer{layer: layer, mergeMode: "concat"}
	for _, o := range opts {
		if o != nil {
			o.applyBidirectional(l)
		}
	}
	return l
}

// Type returns "Bidirectional".
func (l *BidirectionalLayer) Type() string { return "Bidirectional" }

// Layer is the wrapped layer, as given (its config is Bidirectional's
// "layer").
func (l *BidirectionalLayer) Layer() *RecurrentLayer { return l.layer }

// MergeModeName is the merge mode, "" for Keras' None.
func (l *BidirectionalLayer) MergeModeName() string { return l.mergeMode }

// CheckConfig checks the wrapped layer and the merge mode.
func (l *BidirectionalLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("bidirectional layer: %w", l.nameErr)
	}
	if l.layer == nil {
		return fmt.Errorf("bidirectional layer %q: no layer given: wrap a SimpleRNN, LSTM or GRU", l.name)
	}
	switch l.mergeMode {
	case "concat", "sum", "mul", "ave", "":
	default:
		return fmt.Errorf("bidirectional layer %q: merge mode %q: use \"concat\", \"sum\", \"mul\", \"ave\" or \"\" (Keras' None)", l.name, l.mergeMode)
	}
	return l.layer.CheckConfig()
}

// innerName is the wrapped layer's name, its class' snake-case name
// ("lstm") when it has none.
func (l *BidirectionalLayer) innerName() string {
	if n := l.layer.Name(); n != "" {
		return n
	}
	return map[cellKind]string{simpleRNNCell: "simple_rnn", lstmCell: "lstm", gruCell: "gru"}[l.layer.cell]
}

// halves makes the forward layer and the backward one (go_backwards
// flipped), copies of the wrapped layer, named as Keras names them.
func (l *BidirectionalLayer) halves() (fw, bw *RecurrentLayer) {
	fw, bw = new(RecurrentLayer), new(RecurrentLayer)
	*fw, *bw = *l.layer, *l.layer
	fw.kernel, fw.recurrent, fw.bias = nil, nil, nil
	bw.kernel, bw.recurrent, bw.bias = nil, nil, nil
	bw.goBackwards = !bw.goBackwards
	// Keras' Bidirectional: zero output at masked steps with
	// return_sequences.
	fw.zeroOutputForMask, bw.zeroOutputForMask = l.layer.returnSequences, l.layer.returnSequences
	fw.name, bw.name = "forward_"+l.innerName(), "backward_"+l.innerName()
	// Each half drops units of its own: unseeded, each draws its key from
	// the model's seed; seeded, the backward one's seed is set apart.
	bw.seed ^= 0xb1d1c7e5a3f0d2c9
	return fw, bw
}

// UsesStep is the wrapped layer's: whether it drops anything while it
// trains.
func (l *BidirectionalLayer) UsesStep() bool { return l.layer != nil && l.layer.UsesStep() }

// plan: the wrapped layer's output, its units doubled by concat; the
// forward layer's weights, then the backward one's, named
// forward_lstm/lstm_cell/kernel and so on.
func (l *BidirectionalLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, nil, err
	}
	out, ws, err := l.layer.plan(inputShape)
	if err != nil {
		return nil, nil, fmt.Errorf("bidirectional layer %q: %w", l.name, err)
	}
	out = slices.Clone(out)
	if l.mergeMode == "concat" {
		out[len(out)-1] *= 2
	}
	fw, bw := l.halves()
	var all []WeightShape
	for _, h := range []*RecurrentLayer{fw, bw} {
		for _, w := range ws {
			all = append(all, WeightShape{h.name + "/" + h.KerasCell() + "/" + w.Name, slices.Clone(w.Shape)})
		}
	}
	return out, all, nil
}

// Build builds the forward layer, then the backward one.
func (l *BidirectionalLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	out, ws, err := l.plan(inputShape)
	if err != nil {
		return nil, err
	}
	l.forward, l.backward = l.halves()
	l.params = nil
	for _, h := range []*RecurrentLayer{l.forward, l.backward} {
		if _, err := h.Build(inputShape, rng); err != nil {
			return nil, fmt.Errorf("bidirectional layer %q: %w", l.name, err)
		}
		for _, p := range h.Params() {
			w := ws[len(l.params)]
			l.params = append(l.params, &Param{Name: w.Name, Value: p.Value})
		}
	}
	return out, nil
}

// Params are the forward layer's weights, then the backward one's.
func (l *BidirectionalLayer) Params() []*Param { return l.params }

// KerasVariable is where Keras 3 keeps weight i: in the forward or
// backward layer's cell (forward_layer/cell/vars/0).
func (l *BidirectionalLayer) KerasVariable(i int) string {
	half := len(l.params) / 2
	if i < half {
		return fmt.Sprintf("forward_layer/cell/vars/%d", i)
	}
	return fmt.Sprintf("backward_layer/cell/vars/%d", i-half)
}

// OutputShapes: the merged output (both with merge mode None) and, with
// the wrapped layer's return_state, the forward then the backward states.
func (l *BidirectionalLayer) OutputShapes(inputShapes [][]int) ([][]int, error) {
	if len(inputShapes) != 1 {
		return nil, fmt.Errorf("bidirectional layer %q takes one input, got %d", l.name, len(inputShapes))
	}
	out, _, err := l.plan(inputShapes[0])
	if err != nil {
		return nil, err
	}
	outs := [][]int{out}
	if l.mergeMode == "" {
		outs = append(outs, slices.Clone(out))
	}
	if l.layer.returnState {
		for range 2 * l.layer.stateCount() {
			outs = append(outs, []int{l.layer.units})
		}
	}
	return outs, nil
}

// ComputesMask is true: the wrapped layers read the mask, and the output
// carries it on with return_sequences.
func (l *BidirectionalLayer) ComputesMask() bool { return true }

// Call adds the layer; with return_state (or merge mode None), which
// output several tensors, a functional model calls CallOutputs.
func (l *BidirectionalLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	if l.layer.returnState || l.mergeMode == "" {
		return Flow{}, fmt.Errorf("bidirectional layer %q outputs several tensors (return_state or merge mode None), which a Sequential model cannot pass on: make a functional model and take them with nn.ApplyAll", l.name)
	}
	outs, err := l.CallOutputs([]Flow{in}, params)
	if err != nil {
		return Flow{}, err
	}
	return outs[0], nil
}

// CallOutputs runs both layers and merges their outputs.
func (l *BidirectionalLayer) CallOutputs(ins []Flow, params []*gorgonia.Node) ([]Flow, error) {
	what := fmt.Sprintf("bidirectional layer %q", l.name)
	if l.forward == nil || len(params) != len(l.params) {
		return nil, fmt.Errorf("%s: got %d weight nodes for %d weights (was the layer built?)", what, len(params), len(l.params))
	}
	if len(ins) != 1 {
		return nil, fmt.Errorf("%s: takes one input, got %d", what, len(ins))
	}
	half := len(params) / 2
	fw, err := l.forward.CallOutputs(ins, params[:half])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	bw, err := l.backward.CallOutputs(ins, params[half:])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	y, yRev := fw[0].Node, bw[0].Node
	if l.layer.returnSequences { // the backward outputs in the order of the steps
		if yRev, err = reverseSteps(yRev); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	var outs []Flow
	losses := append(slices.Clone(fw[0].Losses), bw[0].Losses...)
	if l.mergeMode == "" {
		outs = []Flow{{Node: y, NeedsGrad: true, Losses: losses}, {Node: yRev, NeedsGrad: true}}
	} else {
		var merged *gorgonia.Node
		switch l.mergeMode {
		case "concat":
			merged, err = ops.Concatenate(-1, y, yRev)
		case "sum":
			merged, err = ops.Add(y, yRev)
		case "mul":
			merged, err = ops.Multiply(y, yRev)
		case "ave":
			if merged, err = ops.Add(y, yRev); err == nil {
				merged, err = ops.Scale(merged, 0.5)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: merging (%s): %w", what, l.mergeMode, err)
		}
		outs = []Flow{{Node: merged, NeedsGrad: true, Losses: losses}}
	}
	if l.layer.returnSequences {
		for i := range outs {
			outs[i].Mask = ins[0].Mask
		}
	}
	outs = append(outs, fw[1:]...)
	return append(outs, bw[1:]...), nil
}

// reverseSteps reverses sequences y (batch, steps, units) in time: the
// product of each sample with the exchange matrix, exact (each value
// times 1 plus zeros).
func reverseSteps(y *gorgonia.Node) (*gorgonia.Node, error) {
	s := y.Shape()
	batch, steps := s[0], s[1]
	p := make([]float64, batch*steps*steps)
	for b := range batch {
		for k := range steps {
			p[(b*steps+k)*steps+steps-1-k] = 1
		}
	}
	var v any = p
	if y.Dtype() == tensor.Float32 {
		p32 := make([]float32, len(p))
		for i, x := range p {
			p32[i] = float32(x)
		}
		v = p32
	}
	perm := gorgonia.NewTensor(y.Graph(), y.Dtype(), 3, gorgonia.WithShape(batch, steps, steps), gorgonia.WithName(fmt.Sprintf("reverse_steps_%d_%d", batch, steps)),
		gorgonia.WithValue(tensor.New(tensor.WithShape(batch, steps, steps), tensor.WithBacking(v))))
	return ops.BatchDot(perm, y, 2, 1)
}

// Config returns "Bidirectional" with name, merge_mode (null for "") and
// the wrapped layer's config.
func (l *BidirectionalLayer) Config() (Config, error) {
	if l.layer == nil {
		return Config{}, fmt.Errorf("bidirectional layer %q: no layer", l.name)
	}
	inner, err := l.layer.Config()
	if err != nil {
		return Config{}, fmt.Errorf("bidirectional layer %q: %w", l.name, err)
	}
	if inner.Config["name"] == "" {
		inner.Config["name"] = l.innerName()
	}
	var mode any = l.mergeMode
	if l.mergeMode == "" {
		mode = nil
	}
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "merge_mode": mode,
		"layer": map[string]any{"class_name": inner.ClassName, "config": inner.Config}}}, nil
}

// Registered here, not in layerClasses' literal: reading the wrapped
// layer's config goes through FromConfig, which reads layerClasses.
func init() { layerClasses["Bidirectional"] = bidirectionalFromConfig }

func bidirectionalFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		MergeMode     *string         `json:"merge_mode"`
		Layer         *Config         `json:"layer"`
		BackwardLayer json.RawMessage `json:"backward_layer"`
	}
	a.MergeMode = new(string)
	*a.MergeMode = "concat"
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Layer == nil {
		return nil, missing("layer")
	}
	if len(a.BackwardLayer) > 0 && string(a.BackwardLayer) != "null" {
		return nil, fmt.Errorf("argument backward_layer: gokeras makes the backward layer from the forward one only: save the model without a backward_layer of its own")
	}
	inner, err := FromConfig(*a.Layer)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	rec, ok := inner.(*RecurrentLayer)
	if !ok {
		return nil, fmt.Errorf("layer: a %s: Bidirectional wraps a SimpleRNN, LSTM or GRU", inner.Type())
	}
	mode := ""
	if a.MergeMode != nil {
		mode = *a.MergeMode
	}
	opts := []BidirectionalOption{MergeMode(mode)}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Bidirectional(rec, opts...), nil
}
