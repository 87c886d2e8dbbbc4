package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// cellKind is the recurrence a RecurrentLayer runs.
type cellKind int

const (
	simpleRNNCell cellKind = iota
	lstmCell
	gruCell
)

// gates is how many blocks of units the kernels have: Keras' order is
// i, f, c, o for LSTM and z, r, h for GRU.
func (k cellKind) gates() int {
	switch k {
	case lstmCell:
		return 4
	case gruCell:
		return 3
	}
	return 1
}

func (k cellKind) class() string {
	switch k {
	case lstmCell:
		return "LSTM"
	case gruCell:
		return "GRU"
	}
	return "SimpleRNN"
}

// RecurrentOption configures a SimpleRNN, LSTM or GRU layer: its
// activation (an Activation is one), RecurrentActivation,
// RecurrentInitializer, ReturnSequences, GoBackwards,
// WithoutUnitForgetBias, InputDropout, RecurrentDropout, Seed, a
// WeightOption (WithoutBias, KernelInitializer,
// BiasInitializer, the regularizers of the kernel, the bias and the
// output) or any Option, such as Named.
type RecurrentOption interface{ applyRecurrent(*RecurrentLayer) }

func (a Activation) applyRecurrent(l *RecurrentLayer)   { l.activation = a }
func (f WeightOption) applyRecurrent(l *RecurrentLayer) { f(&l.weights) }
func (o nameOption) applyRecurrent(l *RecurrentLayer)   { o.applyLayer(&l.named) }

type recurrentOption func(*RecurrentLayer)

func (f recurrentOption) applyRecurrent(l *RecurrentLayer) { f(l) }

// RecurrentActivation sets the activation of an LSTM's or GRU's gates
// (Keras' recurrent_activation, sigmoid by default).
func RecurrentActivation(a Activation) RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.recurrentActivation = a })
}

// RecurrentInitializer sets how a recurrent layer's recurrent kernel
// starts (Keras' recurrent_initializer, Orthogonal(1) by default).
func RecurrentInitializer(i Initializer) RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.recurrentInit = i })
}

// ReturnSequences makes a recurrent layer output its state at every
// step, (batch, timesteps, units), instead of the last one, (batch,
// units): Keras' return_sequences=True. A model may end on such a
// sequence (after a Dense or TimeDistributed(Dense) for the classes of
// each step): its loss and metrics are then computed at each step, as
// Keras computes them (see package nn).
func ReturnSequences() RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.returnSequences = true })
}

// GoBackwards makes a recurrent layer read its sequence from the last
// step to the first, Keras' go_backwards=True; with ReturnSequences its
// outputs are in the order it computes them, the last step's first, as
// Keras returns them.
func GoBackwards() RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.goBackwards = true })
}

// ReturnState makes a recurrent layer output its last states after its
// output, Keras' return_state=True: an LSTM's call outputs [output, h, c],
// a GRU's and a SimpleRNN's [output, h], each state (batch, units). In a
// functional model, nn.ApplyAll returns them all.
func ReturnState() RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.returnState = true })
}

// ZeroOutputForMask makes a recurrent layer with ReturnSequences output
// zeros at the steps a mask skips, Keras' zero_output_for_mask=True;
// by default (false) such a step repeats the output before it. A
// Bidirectional layer sets it on its halves with return_sequences, as
// Keras does.
func ZeroOutputForMask(on bool) RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.zeroOutputForMask = on })
}

// ResetAfter sets where a GRU applies its reset gate (Keras'
// reset_after): true, the default, to the recurrent kernel's product
// (r·(h·R_h + b_rec), with a bias of (2, 3·units)), as Keras 2.3 and
// later and PyTorch do; false, Keras 2.0 to 2.2's default, before it
// ((r·h)·R_h, with a bias of 3·units). Other layers ignore it.
func ResetAfter(on bool) RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.resetAfter = on })
}

// InputDropout makes a recurrent layer drop the given fraction of its
// input features while the model trains (Fit), Keras' dropout argument:
// one mask of 0 and 1/(1-rate) per sequence, over (batch, features) and
// the same at every step, multiplies the inputs before their product
// with the kernel. Without RecurrentDropout all the gates share that
// mask (Keras' implementation 2); with it, as Keras then computes the
// cell (implementation 1), each gate of an LSTM or GRU draws its own.
// Evaluate and Predict drop nothing.
func InputDropout(rate float64) RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.dropout = rate })
}

// RecurrentDropout makes a recurrent layer drop the given fraction of
// its state's units on their way through the recurrent kernel while the
// model trains (Fit), Keras' recurrent_dropout argument: one mask of 0
// and 1/(1-rate) per sequence and gate, over (batch, units) and the same
// at every step, multiplies the previous state h before each gate's
// product with the recurrent kernel. The state the cell carries is not
// dropped: an LSTM's cell state, and a GRU's z·h, keep h as it is.
// Evaluate and Predict drop nothing. A GRU with ResetAfter(false) does
// not take it yet.
func RecurrentDropout(rate float64) RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.recurrentDropout = rate })
}

// WithoutUnitForgetBias makes an LSTM start its forget gate's bias from
// the bias initializer like the others' (Keras' unit_forget_bias=False);
// by default it starts at 1.
func WithoutUnitForgetBias() RecurrentOption {
	return recurrentOption(func(l *RecurrentLayer) { l.unitForgetBias = false })
}

// RecurrentLayer is a recurrent layer, Keras' SimpleRNN, LSTM or GRU: it
// reads sequences (batch, timesteps, features) one step after another
// from a zero state. Its weights are Keras': a kernel (features,
// gates·units) for the inputs, a recurrent_kernel (units, gates·units)
// for the state and a bias (gates·units; GRU's (2, 3·units), the input's
// bias then the recurrent one, as Keras' reset_after=True keeps them;
// 3·units with ResetAfter(false)),
// the gates side by side in Keras' order (i, f, c, o for LSTM; z, r, h
// for GRU), so that Keras' weights files load.
//
// The inputs of all steps are multiplied by the kernel in one product;
// then one Recurrence op runs the steps, each adding its state times the
// recurrent kernel. While the model trains, InputDropout and
// RecurrentDropout drop units of the inputs and of the state on their way
// into those products, with masks drawn once per sequence.
type RecurrentLayer struct {
	named
	weights
	cell                            cellKind
	units                           int
	activation, recurrentActivation Activation
	recurrentInit                   Initializer
	unitForgetBias, resetAfter      bool
	returnSequences, goBackwards    bool
	returnState, zeroOutputForMask  bool
	kernel, recurrent, bias         *Param
	// dropout and recurrentDropout are Keras' rates; seed (when seeded)
	// fixes key, from which the masks are drawn at each training step.
	dropout, recurrentDropout float64
	seed, key                 uint64
	seeded                    bool
}

func newRecurrent(cell cellKind, units int, opts []RecurrentOption) *RecurrentLayer {
	l := &RecurrentLayer{cell: cell, units: units, weights: defaultWeights(), activation: Tanh, recurrentActivation: Sigmoid,
		recurrentInit: Orthogonal(1), unitForgetBias: cell == lstmCell, resetAfter: true}
	for _, o := range opts {
		if o != nil {
			o.applyRecurrent(l)
		}
	}
	return l
}

// SimpleRNN makes a fully connected recurrent layer, like
// keras.layers.SimpleRNN: h = activation(x·kernel + h·recurrent_kernel +
// bias), tanh by default.
func SimpleRNN(units int, opts ...RecurrentOption) *RecurrentLayer {
	return newRecurrent(simpleRNNCell, units, opts)
}

// LSTM makes a long short-term memory layer, like keras.layers.LSTM
// (Keras 2's defaults: tanh activation, sigmoid recurrent activation,
// unit_forget_bias): with z = x·kernel + h·recurrent_kernel + bias cut
// into i, f, c, o, the cell state becomes c = σ(f)·c + σ(i)·tanh(c) and
// the output h = σ(o)·tanh(c).
func LSTM(units int, opts ...RecurrentOption) *RecurrentLayer {
	return newRecurrent(lstmCell, units, opts)
}

// GRU makes a gated recurrent unit layer, like keras.layers.GRU with
// Keras 2's defaults (reset_after=True, tanh activation, sigmoid
// recurrent activation): with x·kernel + b_in cut into x_z, x_r, x_h and
// h·recurrent_kernel + b_rec into r_z, r_r, r_h, z = σ(x_z + r_z), r =
// σ(x_r + r_r), ĥ = tanh(x_h + r·r_h) and the new state is z·h +
// (1-z)·ĥ. It computes what PyTorch's nn.GRU computes, given the same
// weights.
func GRU(units int, opts ...RecurrentOption) *RecurrentLayer {
	return newRecurrent(gruCell, units, opts)
}

// Type returns "SimpleRNN", "LSTM" or "GRU".
func (l *RecurrentLayer) Type() string { return l.cell.class() }

// Units is the size of the state and of each step's output.
func (l *RecurrentLayer) Units() int { return l.units }

// KerasCell is the name of the cell Keras 2 keeps the layer's weights in
// ("lstm_cell": lstm/lstm_cell/kernel:0), and Keras 3 under the
// attribute "cell" (layers/lstm/cell/vars/0).
func (l *RecurrentLayer) KerasCell() string {
	switch l.cell {
	case lstmCell:
		return "lstm_cell"
	case gruCell:
		return "gru_cell"
	}
	return "simple_rnn_cell"
}

// CheckConfig checks the layer's arguments.
func (l *RecurrentLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("%s layer: %w", l.Type(), l.nameErr)
	}
	if l.units <= 0 {
		return fmt.Errorf("%s layer %q: units must be a positive integer, got %d", l.Type(), l.name, l.units)
	}
	for _, a := range []Activation{l.activation, l.recurrentActivation} {
		if a.act == ops.Softmax {
			return fmt.Errorf("%s layer %q: softmax is no activation of a recurrent layer (it works on whole rows): use tanh, sigmoid or another elementwise activation", l.Type(), l.name)
		}
	}
	if l.kernelInit == nil || l.recurrentInit == nil || l.biasInit == nil {
		return fmt.Errorf("%s layer %q: an initializer is nil", l.Type(), l.name)
	}
	for _, r := range []struct {
		arg  string
		rate float64
	}{{"dropout", l.dropout}, {"recurrent_dropout", l.recurrentDropout}} {
		if !(r.rate >= 0 && r.rate < 1) {
			return fmt.Errorf("%s layer %q: %s must be a fraction in [0, 1), got %v", l.Type(), l.name, r.arg, r.rate)
		}
	}
	if l.recurrentDropout > 0 && l.cell == gruCell && !l.resetAfter {
		return fmt.Errorf("%s layer %q: recurrent_dropout is not supported for a GRU with reset_after=False yet: use reset_after=True (Keras 2's default) or no recurrent dropout", l.Type(), l.name)
	}
	return nil
}

// UsesStep reports whether the layer drops anything while it trains,
// and so needs the training step.
func (l *RecurrentLayer) UsesStep() bool { return l.dropout > 0 || l.recurrentDropout > 0 }

// recDropKey is the key of the recurrent dropout masks, apart from the
// input dropout's (key).
func (l *RecurrentLayer) recDropKey() uint64 { return l.key ^ 0x9e3779b97f4a7c15 }

// plan is the recurrent layers' shape rule: sequences (timesteps,
// features) make a kernel (features, G·units), a recurrent kernel (units,
// G·units) and a bias, and outputs (units), or (timesteps, units) with
// ReturnSequences.
func (l *RecurrentLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if len(inputShape) != 2 || inputShape[0] <= 0 || inputShape[1] <= 0 {
		return nil, nil, fmt.Errorf("%s layer %q: expects sequences, shape (None, timesteps, features) with a known number of timesteps, but gets %s",
			l.Type(), l.name, shapes.String(inputShape))
	}
	gu := l.cell.gates() * l.units
	ws := []WeightShape{{"kernel", []int{inputShape[1], gu}}, {"recurrent_kernel", []int{l.units, gu}}}
	if l.useBias {
		if l.cell == gruCell && l.resetAfter {
			ws = append(ws, WeightShape{"bias", []int{2, gu}})
		} else {
			ws = append(ws, WeightShape{"bias", []int{gu}})
		}
	}
	out := []int{l.units}
	if l.returnSequences {
		out = []int{inputShape[0], l.units}
	}
	return out, ws, nil
}

// Build creates the kernel, the recurrent kernel and the bias, drawn in
// that order as Keras draws them; an LSTM's forget gate bias starts at 1
// (unit_forget_bias).
func (l *RecurrentLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, ws, err := l.plan(inputShape)
	if err != nil {
		return nil, err
	}
	newParam := func(w WeightShape) *Param {
		return &Param{Name: w.Name, Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(w.Shape...))}
	}
	gu := ws[0].Shape[1]
	l.kernel, l.recurrent, l.bias = newParam(ws[0]), newParam(ws[1]), nil
	l.kernelInit.Fill(l.kernel.Value.Data().([]float32), inputShape[1], gu, rng)
	l.recurrentInit.Fill(l.recurrent.Value.Data().([]float32), l.units, gu, rng)
	if len(ws) == 3 {
		l.bias = newParam(ws[2])
		b := l.bias.Value.Data().([]float32)
		fill := func(part []float32) { l.biasInit.Fill(part, len(part), len(part), rng) }
		if l.cell == lstmCell && l.unitForgetBias {
			u := l.units
			fill(b[:u])
			for i := u; i < 2*u; i++ {
				b[i] = 1
			}
			fill(b[2*u:])
		} else {
			fill(b)
		}
	}
	// The dropout masks' key, drawn after the weights so that a layer
	// without dropout draws what it drew before.
	l.key = l.seed
	if l.UsesStep() && !l.seeded {
		l.key = rng.Uint64()
	}
	return out, nil
}

// Params returns the kernel, the recurrent kernel and, when the layer
// has one, the bias.
func (l *RecurrentLayer) Params() []*Param {
	if l.kernel == nil {
		return nil
	}
	if l.bias == nil {
		return []*Param{l.kernel, l.recurrent}
	}
	return []*Param{l.kernel, l.recurrent, l.bias}
}

// Call adds the recurrence to the graph: one product of all steps' inputs
// with the kernel, then the steps, each the state's product with the
// recurrent kernel and the gates, as one Recurrence op (see call). A
// layer with ReturnState has several outputs: CallOutputs adds it.
func (l *RecurrentLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	if l.returnState {
		return Flow{}, fmt.Errorf("%s layer %q: with return_state it outputs %d tensors, which a Sequential model cannot pass on: make a functional model and take them with nn.ApplyAll",
			l.Type(), l.name, 1+l.stateCount())
	}
	outs, err := l.CallOutputs([]Flow{in}, params)
	if err != nil {
		return Flow{}, err
	}
	return outs[0], nil
}

// ComputesMask is true: a recurrent layer reads its input's mask (a
// masked step keeps the state, and outputs the output of the step
// before, as Keras 2 does) and hands it on with ReturnSequences only;
// its states have none.
func (l *RecurrentLayer) ComputesMask() bool { return true }

// stateCount is how many states the layer carries: 2 for an LSTM (h
// and c), else 1.
func (l *RecurrentLayer) stateCount() int {
	if l.cell == lstmCell {
		return 2
	}
	return 1
}

// StateInputs is how many initial states the layer takes as inputs after
// its sequences: 2 for an LSTM (h, c), else 1 (h).
func (l *RecurrentLayer) StateInputs() int { return l.stateCount() }

// OutputShapes are the shapes of the layer's outputs for sequences of
// the given shape (and, after it, initial states of (units) each, Keras'
// initial_state): its output's and, with ReturnState, each last state's
// (units).
func (l *RecurrentLayer) OutputShapes(inputShapes [][]int) ([][]int, error) {
	if n := len(inputShapes); n != 1 && n != 1+l.stateCount() {
		return nil, fmt.Errorf("%s layer %q takes its sequences and, as initial states, none or %d tensors of shape (None, %d); got %d inputs",
			l.Type(), l.name, l.stateCount(), l.units, n)
	}
	for i, s := range inputShapes[1:] {
		if !slices.Equal(s, []int{l.units}) {
			return nil, fmt.Errorf("%s layer %q: initial state %d has shape %s: want (None, %d), the layer's units", l.Type(), l.name, i, shapes.String(s), l.units)
		}
	}
	if len(inputShapes) > 1 && l.cell == gruCell && !l.resetAfter {
		return nil, fmt.Errorf("%s layer %q: initial states are not supported for a GRU with reset_after=False yet: use reset_after=True (Keras 2's default)", l.Type(), l.name)
	}
	out, _, err := l.plan(inputShapes[0])
	if err != nil {
		return nil, err
	}
	shapes := [][]int{out}
	if l.returnState {
		for range l.stateCount() {
			shapes = append(shapes, []int{l.units})
		}
	}
	return shapes, nil
}

// CallOutputs adds the layer to the graph (see Call) and returns its
// output and, with ReturnState, its last states: h, and an LSTM's c.
func (l *RecurrentLayer) CallOutputs(ins []Flow, params []*gorgonia.Node) ([]Flow, error) {
	what := fmt.Sprintf("%s layer %q", l.Type(), l.name)
	if want := len(l.Params()); want == 0 || len(params) != want {
		return nil, fmt.Errorf("%s: got %d weight nodes for %d weights (was the layer built?)", what, len(params), want)
	}
	if n := len(ins); n != 1 && n != 1+l.stateCount() {
		return nil, fmt.Errorf("%s: takes its sequences and none or %d initial states, got %d inputs", what, l.stateCount(), n)
	}
	nodes, err := l.callStates(ins[0], ins[1:], params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	outs := make([]Flow, len(nodes))
	for i, n := range nodes {
		outs[i] = Flow{Node: n, NeedsGrad: true}
	}
	if l.returnSequences {
		outs[0].Mask = ins[0].Mask // the steps stay those of the input
	}
	kernelBias := []*gorgonia.Node{params[0]}
	if len(params) == 3 {
		kernelBias = append(kernelBias, params[2])
	}
	if outs[0].Losses, err = l.weights.penalties(kernelBias, nodes[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return outs, nil
}

// callStates adds the fused recurrence and cuts its output, with
// ReturnState, into the output and the last states.
func (l *RecurrentLayer) callStates(in Flow, init []Flow, params []*gorgonia.Node) ([]*gorgonia.Node, error) {
	out, err := l.callFrom(in, init, params)
	if err != nil || !l.returnState {
		return []*gorgonia.Node{out}, err
	}
	s := in.Node.Shape()
	batch, steps := s[0], s[1]
	first := []int{batch, l.units}
	if l.returnSequences {
		first = []int{batch, steps, l.units}
	}
	bu := batch * l.units
	parts := []int{bu}
	if l.returnSequences {
		parts[0] *= steps
	}
	for range l.stateCount() {
		parts = append(parts, bu)
	}
	total := 0
	for _, n := range parts {
		total += n
	}
	// The output (1, total) as one row of an image, cut along its width
	// (Crop2D, whose gradient pads).
	row, err := ops.Reshape(out, []int{1, 1, total, 1}, true)
	if err != nil {
		return nil, err
	}
	nodes := make([]*gorgonia.Node, len(parts))
	at := 0
	for i, n := range parts {
		shape := []int{batch, l.units}
		if i == 0 {
			shape = first
		}
		if nodes[i], err = cropTo(row, shape, 0, 0, at, total-at-n); err != nil {
			return nil, err
		}
		at += n
	}
	return nodes, nil
}

// call adds the layer: the inputs' projection, then the steps, as one
// Recurrence op (fused), or unrolled over time in ops of their own (what
// the tests check the op against).
func (l *RecurrentLayer) call(in Flow, params []*gorgonia.Node, fused bool) (*gorgonia.Node, error) {
	if fused {
		return l.callFrom(in, nil, params)
	}
	return l.callOps(in, nil, params, false)
}

// callFrom is the fused call from initial states init (none: zero).
func (l *RecurrentLayer) callFrom(in Flow, init []Flow, params []*gorgonia.Node) (*gorgonia.Node, error) {
	return l.callOps(in, init, params, true)
}

func (l *RecurrentLayer) callOps(in Flow, init []Flow, params []*gorgonia.Node, fused bool) (*gorgonia.Node, error) {
	s := in.Node.Shape()
	if len(s) != 3 {
		return nil, fmt.Errorf("input of shape %v: want sequences (batch, timesteps, features)", s)
	}
	batch, steps := s[0], s[1]
	gu := l.cell.gates() * l.units
	kernel, rec := params[0], params[1]
	var inBias, recBias *gorgonia.Node
	if len(params) == 3 {
		inBias = params[2]
		if l.cell == gruCell && l.resetAfter {
			rows, err := ops.Reshape(params[2], []int{1, 2, 1, gu}, true)
			if err != nil {
				return nil, err
			}
			if inBias, err = cropTo(rows, []int{gu}, 0, 1, 0, 0); err != nil {
				return nil, err
			}
			if recBias, err = cropTo(rows, []int{gu}, 1, 0, 0, 0); err != nil {
				return nil, err
			}
		}
	}
	training := in.Training && l.UsesStep()
	if training && in.Step == nil {
		return nil, errNoStep
	}
	var proj *gorgonia.Node
	var err error
	if training && l.dropout > 0 {
		proj, err = l.droppedProjection(in, kernel, inBias)
	} else {
		proj, err = l.projection(in.Node, kernel, inBias, in.NeedsGrad)
	}
	if err != nil {
		return nil, err
	}
	if fused {
		proj, err := ops.Reshape(proj, []int{batch, steps, gu}, true)
		if err != nil {
			return nil, err
		}
		cell := map[cellKind]ops.RecurrenceCell{simpleRNNCell: ops.RNNCell, lstmCell: ops.LSTMCell, gruCell: ops.GRUCell}[l.cell]
		if l.cell == gruCell && !l.resetAfter {
			cell = ops.GRUBeforeCell
		}
		var mask *gorgonia.Node
		if in.Mask != nil {
			if mask, err = ops.Reshape(in.Mask, []int{batch, steps}, false); err != nil {
				return nil, fmt.Errorf("mask of shape %v for sequences of shape %v: %w", in.Mask.Shape(), s, err)
			}
			if cell == ops.GRUBeforeCell {
				return nil, fmt.Errorf("a mask is not supported by a GRU with reset_after=False yet: use reset_after=True (Keras 2's default), or no mask")
			}
		}
		ri := ops.RecurrenceInputs{RecBias: recBias, Mask: mask}
		if training && l.recurrentDropout > 0 {
			// One mask per gate, (batch, G·units), the same at every step.
			ones := constantNode(in.Node.Graph(), in.Node.Dtype(), fmt.Sprintf("%s_recurrent_dropout_ones_%d", l.name, batch), []int{batch, gu}, 1)
			if ri.RecDrop, err = ops.Dropout(ones, in.Step, ops.DropoutParams{Rate: l.recurrentDropout, Key: l.recDropKey()}); err != nil {
				return nil, err
			}
		}
		for i, f := range init {
			st, err := ops.Reshape(f.Node, []int{batch, l.units}, true)
			if err != nil {
				return nil, fmt.Errorf("initial state %d of shape %v: %w", i, f.Node.Shape(), err)
			}
			if i == 0 {
				ri.H0 = st
			} else {
				ri.C0 = st
			}
		}
		return ops.RecurrenceWith(proj, rec, ri, ops.RecurrenceParams{Cell: cell, Batch: batch, Steps: steps, Units: l.units,
			Act: l.activation.act, Alpha: ops.DefaultAlpha(l.activation.act),
			RecAct: l.recurrentActivation.act, RecAlpha: ops.DefaultAlpha(l.recurrentActivation.act),
			Backwards: l.goBackwards, Sequences: l.returnSequences, States: l.returnState, ZeroMasked: mask != nil && l.zeroOutputForMask})
	}
	if in.Mask != nil {
		return nil, fmt.Errorf("the unrolled recurrence takes no mask")
	}
	if training && l.recurrentDropout > 0 {
		return nil, fmt.Errorf("the unrolled recurrence takes no recurrent dropout")
	}
	seq, err := ops.Reshape(proj, []int{batch, steps, 1, gu}, true)
	if err != nil {
		return nil, err
	}
	xs, err := timeSteps(seq, steps)
	if err != nil {
		return nil, err
	}
	c := recurrence{l: l, rec: rec, recBias: recBias}
	if l.cell == gruCell && !l.resetAfter {
		// The recurrent kernel's z and r columns, and its h columns,
		// which multiply the state after the reset.
		blocks, err := ops.Reshape(rec, []int{1, l.units, 3, l.units}, true)
		if err != nil {
			return nil, err
		}
		if c.rec, err = cropTo(blocks, []int{l.units, 2 * l.units}, 0, 0, 0, 1); err != nil {
			return nil, err
		}
		if c.recH, err = cropTo(blocks, []int{l.units, l.units}, 0, 0, 2, 0); err != nil {
			return nil, err
		}
	}
	outs := make([]*gorgonia.Node, 0, steps)
	var h, cell *gorgonia.Node
	for k := range steps {
		t := k
		if l.goBackwards {
			t = steps - 1 - k
		}
		xp, err := ops.Reshape(xs[t], []int{batch, gu}, true)
		if err != nil {
			return nil, err
		}
		if h, cell, err = c.step(xp, h, cell); err != nil {
			return nil, fmt.Errorf("step %d: %w", k, err)
		}
		outs = append(outs, h)
	}
	if !l.returnSequences {
		return h, nil
	}
	for k, o := range outs {
		if outs[k], err = ops.Reshape(o, []int{batch, 1, l.units}, true); err != nil {
			return nil, err
		}
	}
	return ops.Concatenate(1, outs...)
}

// projection is the inputs' product with the kernel, plus the input
// bias (when not nil): (batch·steps, G·units).
func (l *RecurrentLayer) projection(x, kernel, inBias *gorgonia.Node, needsGrad bool) (*gorgonia.Node, error) {
	s := x.Shape()
	flat, err := ops.Reshape(x, []int{s[0] * s[1], s[2]}, needsGrad)
	if err != nil {
		return nil, err
	}
	return ops.Affine(flat, kernel, inBias, needsGrad)
}

// droppedProjection is projection under input dropout, as Keras' cells
// compute it: with no recurrent dropout, one mask (batch, 1, features)
// multiplies the inputs of every step and gate; with recurrent dropout,
// each gate g has its own mask m_g, and the projection's block of
// columns g is (x·m_g) times the kernel's block g.
func (l *RecurrentLayer) droppedProjection(in Flow, kernel, inBias *gorgonia.Node) (*gorgonia.Node, error) {
	s := in.Node.Shape()
	batch, features := s[0], s[2]
	masks := 1
	if l.recurrentDropout > 0 {
		masks = l.cell.gates()
	}
	ones := constantNode(in.Node.Graph(), in.Node.Dtype(), fmt.Sprintf("%s_dropout_ones_%d", l.name, batch), []int{batch, masks, features}, 1)
	drop, err := ops.Dropout(ones, in.Step, ops.DropoutParams{Rate: l.dropout, Key: l.key})
	if err != nil {
		return nil, err
	}
	if masks == 1 {
		x, err := ops.Multiply(in.Node, drop)
		if err != nil {
			return nil, err
		}
		return l.projection(x, kernel, inBias, true)
	}
	// Gate g's mask, (batch, 1, features), and kernel block, (features,
	// units); the blocks' projections side by side, then the bias.
	dropImg, err := ops.Reshape(drop, []int{batch, masks, features, 1}, false)
	if err != nil {
		return nil, err
	}
	blocks, err := ops.Reshape(kernel, []int{1, features, masks, l.units}, true)
	if err != nil {
		return nil, err
	}
	parts := make([]*gorgonia.Node, masks)
	for g := range masks {
		m, err := cropTo(dropImg, []int{batch, 1, features}, g, masks-1-g, 0, 0)
		if err != nil {
			return nil, err
		}
		x, err := ops.Multiply(in.Node, m)
		if err != nil {
			return nil, err
		}
		k, err := cropTo(blocks, []int{features, l.units}, 0, 0, g, masks-1-g)
		if err != nil {
			return nil, err
		}
		if parts[g], err = l.projection(x, k, nil, true); err != nil {
			return nil, err
		}
	}
	proj, err := ops.Concatenate(1, parts...)
	if err != nil || inBias == nil {
		return proj, err
	}
	b, err := ops.Reshape(inBias, []int{1, masks * l.units}, true)
	if err != nil {
		return nil, err
	}
	return ops.Add(proj, b)
}

// cropTo crops images x (batch, height, width, channels) by Crop2D's
// top, bottom, left and right, and gives the result the given shape.
func cropTo(x *gorgonia.Node, shape []int, top, bottom, left, right int) (*gorgonia.Node, error) {
	y, err := ops.Crop2D(x, top, bottom, left, right)
	if err != nil {
		return nil, err
	}
	return ops.Reshape(y, shape, true)
}

// timeSteps cuts seq, (batch, n, 1, values), into its n steps (batch, 1,
// 1, values), halving it again and again: the gradient of seq then sums
// each level's pieces, about log2(n) times its size, where cutting each
// step out of the whole would sum n gradients of its whole size.
func timeSteps(seq *gorgonia.Node, n int) ([]*gorgonia.Node, error) {
	if n == 1 {
		return []*gorgonia.Node{seq}, nil
	}
	mid := n / 2
	first, err := ops.Crop2D(seq, 0, n-mid, 0, 0)
	if err != nil {
		return nil, err
	}
	second, err := ops.Crop2D(seq, mid, 0, 0, 0)
	if err != nil {
		return nil, err
	}
	a, err := timeSteps(first, mid)
	if err != nil {
		return nil, err
	}
	b, err := timeSteps(second, n-mid)
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

// recurrence adds one step of a layer's recurrence to the graph.
type recurrence struct {
	l       *RecurrentLayer
	rec     *gorgonia.Node // the recurrent kernel
	recBias *gorgonia.Node // GRU's recurrent bias, or nil
	// recH is the h columns of the recurrent kernel of a GRU without
	// reset_after, whose rec then holds its z and r columns.
	recH *gorgonia.Node
}

// gate is block k of the gates z, (rows, G·units).
func (c recurrence) gate(z *gorgonia.Node, k int) (*gorgonia.Node, error) {
	u := c.l.units
	rows, g := z.Shape()[0], z.Shape()[1]/u
	blocks, err := ops.Reshape(z, []int{rows, 1, g, u}, true)
	if err != nil {
		return nil, err
	}
	return cropTo(blocks, []int{rows, u}, 0, 0, k, g-1-k)
}

// activate applies a (the identity for linear).
func activate(a Activation, x *gorgonia.Node) (*gorgonia.Node, error) {
	if a.act == ops.Linear {
		return x, nil
	}
	return ops.Activate(a.act, x)
}

// step returns the state after the inputs' projection xp (batch, G·units),
// from the state h (and an LSTM's cell state c), nil at the first step:
// a zero state.
func (c recurrence) step(xp, h, cell *gorgonia.Node) (hNext, cellNext *gorgonia.Node, err error) {
	l := c.l
	// inner is h·recurrent_kernel (+ GRU's recurrent bias): nil for a
	// zero state without a recurrent bias.
	var inner *gorgonia.Node
	switch {
	case h != nil:
		if inner, err = ops.Affine(h, c.rec, c.recBias, true); err != nil {
			return nil, nil, err
		}
	case c.recBias != nil:
		if inner, err = ops.Reshape(c.recBias, []int{1, c.recBias.Shape()[0]}, true); err != nil {
			return nil, nil, err
		}
	}
	if l.cell == gruCell && c.recH != nil {
		return c.gruResetBefore(xp, h, inner)
	}
	if l.cell == gruCell {
		return c.gru(xp, h, inner)
	}
	z := xp
	if inner != nil {
		if z, err = ops.Add(xp, inner); err != nil {
			return nil, nil, err
		}
	}
	if l.cell == simpleRNNCell {
		hNext, err = activate(l.activation, z)
		return hNext, nil, err
	}
	// LSTM: i, f, c, o.
	gates := make([]*gorgonia.Node, 4)
	for k, act := range []Activation{l.recurrentActivation, l.recurrentActivation, l.activation, l.recurrentActivation} {
		if k == 1 && cell == nil {
			continue // the forget gate of a zero cell state
		}
		zk, err := c.gate(z, k)
		if err != nil {
			return nil, nil, err
		}
		if gates[k], err = activate(act, zk); err != nil {
			return nil, nil, err
		}
	}
	if cellNext, err = ops.Multiply(gates[0], gates[2]); err != nil {
		return nil, nil, err
	}
	if cell != nil {
		kept, err := ops.Multiply(gates[1], cell)
		if err != nil {
			return nil, nil, err
		}
		if cellNext, err = ops.Add(kept, cellNext); err != nil {
			return nil, nil, err
		}
	}
	ac, err := activate(l.activation, cellNext)
	if err != nil {
		return nil, nil, err
	}
	hNext, err = ops.Multiply(gates[3], ac)
	return hNext, cellNext, err
}

// gru is GRU's step (reset_after=True): inner is h·recurrent_kernel +
// the recurrent bias, nil for a zero state without a bias.
func (c recurrence) gru(xp, h, inner *gorgonia.Node) (*gorgonia.Node, *gorgonia.Node, error) {
	l := c.l
	sum := xp
	var err error
	if inner != nil {
		if sum, err = ops.Add(xp, inner); err != nil {
			return nil, nil, err
		}
	}
	zz, err := c.gate(sum, 0)
	if err != nil {
		return nil, nil, err
	}
	z, err := activate(l.recurrentActivation, zz)
	if err != nil {
		return nil, nil, err
	}
	xh, err := c.gate(xp, 2)
	if err != nil {
		return nil, nil, err
	}
	if inner != nil {
		zr, err := c.gate(sum, 1)
		if err != nil {
			return nil, nil, err
		}
		r, err := activate(l.recurrentActivation, zr)
		if err != nil {
			return nil, nil, err
		}
		rh, err := c.gate(inner, 2)
		if err != nil {
			return nil, nil, err
		}
		reset, err := ops.Multiply(r, rh)
		if err != nil {
			return nil, nil, err
		}
		if xh, err = ops.Add(xh, reset); err != nil {
			return nil, nil, err
		}
	}
	cand, err := activate(l.activation, xh)
	if err != nil {
		return nil, nil, err
	}
	return c.mix(z, h, cand)
}

// gruResetBefore is GRU's step without reset_after: inner is
// h·(the z and r columns of the recurrent kernel), nil for a zero state;
// ĥ = tanh(x_h + (r·h)·R_h).
func (c recurrence) gruResetBefore(xp, h, inner *gorgonia.Node) (*gorgonia.Node, *gorgonia.Node, error) {
	l := c.l
	gates := make([]*gorgonia.Node, 2)
	for k := range gates {
		if k == 1 && h == nil {
			continue // the reset gate of a zero state
		}
		zk, err := c.gate(xp, k)
		if err != nil {
			return nil, nil, err
		}
		if inner != nil {
			rk, err := c.gate(inner, k)
			if err != nil {
				return nil, nil, err
			}
			if zk, err = ops.Add(zk, rk); err != nil {
				return nil, nil, err
			}
		}
		if gates[k], err = activate(l.recurrentActivation, zk); err != nil {
			return nil, nil, err
		}
	}
	xh, err := c.gate(xp, 2)
	if err != nil {
		return nil, nil, err
	}
	if h != nil {
		reset, err := ops.Multiply(gates[1], h)
		if err != nil {
			return nil, nil, err
		}
		rh, err := ops.Affine(reset, c.recH, nil, true)
		if err != nil {
			return nil, nil, err
		}
		if xh, err = ops.Add(xh, rh); err != nil {
			return nil, nil, err
		}
	}
	cand, err := activate(l.activation, xh)
	if err != nil {
		return nil, nil, err
	}
	return c.mix(gates[0], h, cand)
}

// mix is GRU's new state z·h + (1-z)·ĥ, computed as ĥ + z·(h - ĥ); with a
// zero state (h nil), ĥ - z·ĥ.
func (c recurrence) mix(z, h, cand *gorgonia.Node) (*gorgonia.Node, *gorgonia.Node, error) {
	var diff *gorgonia.Node
	var err error
	if h == nil {
		if diff, err = ops.Scale(cand, -1); err != nil {
			return nil, nil, err
		}
	} else if diff, err = ops.Subtract(h, cand); err != nil {
		return nil, nil, err
	}
	kept, err := ops.Multiply(z, diff)
	if err != nil {
		return nil, nil, err
	}
	hNext, err := ops.Add(cand, kept)
	return hNext, nil, err
}

// Config returns "SimpleRNN", "LSTM" or "GRU" with Keras' arguments:
// name, units, activation, recurrent_activation (LSTM, GRU), use_bias,
// the initializers and regularizers, unit_forget_bias (LSTM), reset_after
// (GRU), return_sequences, return_state, go_backwards, and the arguments
// dropout and recurrent_dropout, seed when Seed was given, and the
// arguments gokeras takes at Keras' defaults only (stateful and unroll
// false).
func (l *RecurrentLayer) Config() (Config, error) {
	what := fmt.Sprintf("%s layer %q", l.Type(), l.name)
	args := map[string]any{"name": l.name, "units": l.units, "activation": l.activation.String(),
		"return_sequences": l.returnSequences, "go_backwards": l.goBackwards, "return_state": l.returnState, "stateful": false, "unroll": false,
		"dropout": l.dropout, "recurrent_dropout": l.recurrentDropout, "recurrent_regularizer": nil}
	if l.seeded {
		args["seed"] = l.seed // Keras 3's; Keras 2's recurrent layers take none
	}
	if l.zeroOutputForMask {
		args["zero_output_for_mask"] = true // Keras 2 writes it only when set
	}
	if err := l.weights.config(args); err != nil {
		return Config{}, fmt.Errorf("%s: %w", what, err)
	}
	rec, err := InitializerConfig(l.recurrentInit)
	if err != nil {
		return Config{}, fmt.Errorf("%s: recurrent_initializer: %w", what, err)
	}
	args["recurrent_initializer"] = rec
	switch l.cell {
	case lstmCell:
		args["recurrent_activation"] = l.recurrentActivation.String()
		args["unit_forget_bias"] = l.unitForgetBias
	case gruCell:
		args["recurrent_activation"] = l.recurrentActivation.String()
		args["reset_after"] = l.resetAfter
	}
	return Config{ClassName: l.Type(), Config: args}, nil
}

// recurrentFromConfig reads a Keras SimpleRNN, LSTM or GRU config. The
// arguments of what gokeras does not do yet (stateful, time_major,
// recurrent_regularizer; recurrent_dropout of a GRU with
// reset_after=False) are taken at Keras' defaults only; those that change
// nothing computed (implementation, unroll) at any value. dropout and
// recurrent_dropout are fractions in [0, 1); seed, an integer or null.
func recurrentFromConfig(cell cellKind) func(args map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		a := struct {
			baseArgs
			Units                *int    `json:"units"`
			Activation           *string `json:"activation"`
			RecurrentActivation  *string `json:"recurrent_activation"`
			RecurrentInitializer *Config `json:"recurrent_initializer"`
			RecurrentRegularizer *Config `json:"recurrent_regularizer"`
			weightArgs
			UnitForgetBias    *bool   `json:"unit_forget_bias"`
			ResetAfter        *bool   `json:"reset_after"`
			Dropout           float64 `json:"dropout"`
			RecurrentDropout  float64 `json:"recurrent_dropout"`
			ReturnSequences   bool    `json:"return_sequences"`
			ReturnState       bool    `json:"return_state"`
			GoBackwards       bool    `json:"go_backwards"`
			Stateful          bool    `json:"stateful"`
			TimeMajor         bool    `json:"time_major"`
			Unroll            bool    `json:"unroll"`
			Implementation    *int    `json:"implementation"`
			ZeroOutputForMask bool    `json:"zero_output_for_mask"`
			Seed              *uint64 `json:"seed"`
		}{weightArgs: weightArgs{UseBias: true}}
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		if a.Units == nil {
			return nil, missing("units")
		}
		notYet := func(arg, value, want string) error {
			return fmt.Errorf("argument %s = %s: gokeras' %s takes %s only for now (Keras' default); make the model without it", arg, value, cell.class(), want)
		}
		for _, r := range []struct {
			arg  string
			rate float64
		}{{"dropout", a.Dropout}, {"recurrent_dropout", a.RecurrentDropout}} {
			if !(r.rate >= 0 && r.rate < 1) {
				return nil, fmt.Errorf("argument %s = %v: a fraction of the units to drop must be in [0, 1)", r.arg, r.rate)
			}
		}
		switch {
		case a.RecurrentDropout != 0 && cell == gruCell && a.ResetAfter != nil && !*a.ResetAfter:
			return nil, notYet("recurrent_dropout", fmt.Sprint(a.RecurrentDropout), "0 with reset_after=False")
		case a.Stateful:
			return nil, notYet("stateful", "true", "false")
		case a.TimeMajor:
			return nil, notYet("time_major", "true", "false")
		case a.RecurrentRegularizer != nil:
			return nil, notYet("recurrent_regularizer", a.RecurrentRegularizer.ClassName, "None")
		case a.ResetAfter != nil && cell != gruCell:
			return nil, fmt.Errorf("unknown argument \"reset_after\": only GRU takes it")
		case a.UnitForgetBias != nil && cell != lstmCell:
			return nil, fmt.Errorf("unknown argument \"unit_forget_bias\": only LSTM takes it")
		case a.RecurrentActivation != nil && cell == simpleRNNCell:
			return nil, fmt.Errorf("unknown argument \"recurrent_activation\": SimpleRNN has no gates")
		}
		var opts []RecurrentOption
		if a.Activation != nil {
			act, err := GetActivation(*a.Activation)
			if err != nil {
				return nil, fmt.Errorf("activation: %w", err)
			}
			opts = append(opts, act)
		}
		if a.RecurrentActivation != nil {
			act, err := GetActivation(*a.RecurrentActivation)
			if err != nil {
				return nil, fmt.Errorf("recurrent_activation: %w", err)
			}
			opts = append(opts, RecurrentActivation(act))
		}
		if a.RecurrentInitializer != nil {
			init, err := InitializerFromConfig(*a.RecurrentInitializer)
			if err != nil {
				return nil, fmt.Errorf("recurrent_initializer: %w", err)
			}
			opts = append(opts, RecurrentInitializer(init))
		}
		wopts, err := a.options()
		if err != nil {
			return nil, err
		}
		for _, o := range wopts {
			opts = append(opts, o)
		}
		if a.UnitForgetBias != nil && !*a.UnitForgetBias {
			opts = append(opts, WithoutUnitForgetBias())
		}
		if a.ResetAfter != nil {
			opts = append(opts, ResetAfter(*a.ResetAfter))
		}
		if a.ReturnSequences {
			opts = append(opts, ReturnSequences())
		}
		if a.GoBackwards {
			opts = append(opts, GoBackwards())
		}
		if a.ReturnState {
			opts = append(opts, ReturnState())
		}
		if a.ZeroOutputForMask {
			opts = append(opts, ZeroOutputForMask(true))
		}
		if a.Dropout != 0 {
			opts = append(opts, InputDropout(a.Dropout))
		}
		if a.RecurrentDropout != 0 {
			opts = append(opts, RecurrentDropout(a.RecurrentDropout))
		}
		if a.Seed != nil {
			opts = append(opts, Seed(*a.Seed))
		}
		for _, o := range a.nameOptions() {
			opts = append(opts, o)
		}
		return newRecurrent(cell, *a.Units, opts), nil
	}
}
