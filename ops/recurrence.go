package ops

import (
	"fmt"
	"hash"
	"runtime"

	"github.com/chewxy/hm"
	mat "github.com/gokeras/gokeras/internal/kernels/matrix"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RecurrenceCell is the cell a Recurrence op runs at each step.
type RecurrenceCell int

const (
	// RNNCell: h = act(x + h·R).
	RNNCell RecurrenceCell = iota + 1
	// LSTMCell: gates i, f, c, o of x + h·R; c = σ(f)·c + σ(i)·act(c̃),
	// h = σ(o)·act(c), σ the recurrent activation.
	LSTMCell
	// GRUCell (Keras' reset_after=True): with x cut into x_z, x_r, x_h
	// and h·R + b into r_z, r_r, r_h: z = σ(x_z + r_z), r = σ(x_r + r_r),
	// ĥ = act(x_h + r·r_h), h = ĥ + z·(h - ĥ).
	GRUCell
	// GRUBeforeCell (Keras' reset_after=False, Keras 2.0 to 2.2's GRU):
	// z = σ(x_z + h·R_z), r = σ(x_r + h·R_r), ĥ = act(x_h + (r·h)·R_h),
	// h = ĥ + z·(h - ĥ), R_z, R_r and R_h the recurrent kernel's blocks of
	// columns. It takes no recurrent bias.
	GRUBeforeCell
)

var cellNames = [...]string{RNNCell: "rnn", LSTMCell: "lstm", GRUCell: "gru", GRUBeforeCell: "gru_reset_before"}

func (c RecurrenceCell) String() string {
	if c <= 0 || int(c) >= len(cellNames) {
		return fmt.Sprintf("RecurrenceCell(%d)", int(c))
	}
	return cellNames[c]
}

// RecurrenceParams describe a Recurrence op.
type RecurrenceParams struct {
	Cell                RecurrenceCell
	Batch, Steps, Units int
	// Act is the cell's activation, RecAct its gates' (LSTM, GRU), each
	// with its alpha (ELU's, LeakyReLU's).
	Act, RecAct     Activation
	Alpha, RecAlpha float64
	// Backwards reads the steps from the last; Sequences outputs the
	// state after every step, in the order they are read, else the last.
	Backwards, Sequences bool
	// RecBias: a GRU's recurrent bias is the op's third input.
	RecBias bool
	// Init: the state starts from inputs, h0 (Batch, Units) and an
	// LSTM's cell state c0 (Batch, Units), after the recurrent bias;
	// else from zero.
	Init bool
	// Masked: the last input is a mask (Batch, Steps), 0 at the steps to
	// skip: a skipped step keeps the state (h, and an LSTM's c) it is
	// given, and its output is the output of the step before (zero before
	// the first step read), as Keras 2's recurrent layers do with a mask.
	Masked bool
	// ZeroMasked, with Masked and Sequences: the output at a skipped
	// step is zero instead (Keras' zero_output_for_mask=True, which
	// Bidirectional sets with return_sequences).
	ZeroMasked bool
	// RecDropped: the last input is a recurrent dropout mask (Batch,
	// G·Units): gate g's pre-activation takes the previous state h times
	// the mask's block g of columns (h·m_g) through the recurrent kernel,
	// as Keras' cells do with recurrent_dropout (one mask per gate, the
	// same at every step). Nothing else reads the masked state: an LSTM's
	// cell state and a GRU's z·h keep h as it is. A GRU with reset_after
	// false takes none.
	RecDropped bool
	// States: the output is (1, n), the output the op has without it
	// (flattened) followed by the last state h and an LSTM's cell state
	// c, (Batch, Units) each: Keras' return_state.
	States bool
	// Saved is set by a machine's plan, never by Recurrence: the
	// workspace a RecurrenceGrad kernel gets already holds the planes of
	// the Recurrence it is the gradient of, which it then does not run
	// again.
	Saved bool
}

// Gates is how many blocks of Units the projections have: 1, 4 or 3.
func (p RecurrenceParams) Gates() int {
	switch p.Cell {
	case LSTMCell:
		return 4
	case GRUCell, GRUBeforeCell:
		return 3
	}
	return 1
}

// Planes is how many (Batch, Units) values of each step the forward pass
// keeps for the backward pass, each a plane of Steps·Batch·Units values
// at the start of the workspace, a step's (Batch, Units) after another's:
// RNN: the pre-activation, h; LSTM: the pre-activations of i, f, c, o,
// their activations, c, act(c), h; GRU: the pre-activations of z, r, h,
// their activations, r_h (the state's product plus the recurrent bias),
// h. The state h is the last plane.
func (p RecurrenceParams) Planes() int {
	switch p.Cell {
	case LSTMCell:
		return 11 // pre-activations i, f, c, o; their activations; c; act(c); h
	case GRUCell:
		return 8 // pre-activations z, r, h; their activations; r_h; h
	case GRUBeforeCell:
		return 8 // pre-activations z, r, h; their activations; r·h; h
	}
	return 2 // pre-activation; h
}

// hPlane is the plane that holds the state h.
func (p RecurrenceParams) hPlane() int { return p.Planes() - 1 }

// WorkOffsets are where a workspace's per-step buffers start, after the
// planes: z (Batch, G·Units), the state's product with the recurrent
// kernel (plus the recurrent bias); dz, the gradient of the gates'
// pre-activations on the recurrent side, as z; dh and dc (Batch, Units),
// the gradients carried to the previous step's h and c. Scratch of the
// CPU's kernel follows.
func (p RecurrenceParams) WorkOffsets() (z, dz, dh, dc int) {
	bu, g := p.Batch*p.Units, p.Gates()
	z = p.Planes() * p.Steps * bu
	dz = z + g*bu
	dh = dz + g*bu
	return z, dz, dh, dh + bu
}

// Out is the output's shape: (Batch, Steps, Units) with Sequences, else
// (Batch, Units); with States, (1, OutValues() + StateCount()·Batch·Units).
func (p RecurrenceParams) Out() []int {
	if p.States {
		return []int{1, p.OutValues() + p.StateCount()*p.Batch*p.Units}
	}
	if p.Sequences {
		return []int{p.Batch, p.Steps, p.Units}
	}
	return []int{p.Batch, p.Units}
}

// OutValues is how many values the output has before the states:
// Batch·Steps·Units with Sequences, else Batch·Units.
func (p RecurrenceParams) OutValues() int {
	if p.Sequences {
		return p.Batch * p.Steps * p.Units
	}
	return p.Batch * p.Units
}

// StateCount is how many states the cell carries: 2 for an LSTM (h and
// c), else 1.
func (p RecurrenceParams) StateCount() int {
	if p.Cell == LSTMCell {
		return 2
	}
	return 1
}

// Inputs are the positions of the op's optional inputs among its inputs,
// -1 for those it does not take: the recurrent bias, the initial states
// h0 and c0, and the mask.
func (p RecurrenceParams) Inputs() (recBias, h0, c0, mask int) {
	recBias, h0, c0, mask = -1, -1, -1, -1
	n := 2
	if p.RecBias {
		recBias, n = n, n+1
	}
	if p.Init {
		h0, n = n, n+1
		if p.Cell == LSTMCell {
			c0, n = n, n+1
		}
	}
	if p.Masked {
		mask = n
	}
	return recBias, h0, c0, mask
}

// Workspace is how many values the op's kernels use besides their inputs
// and output: what each step keeps for the backward pass, and the
// products and carried gradients of one step.
func (p RecurrenceParams) Workspace() int {
	bu := p.Batch * p.Units
	g := p.Gates()
	n := p.Planes()*p.Steps*bu + 2*g*bu + 2*bu + 2*g*bu
	if p.Cell == GRUBeforeCell {
		n += 6*p.Units*p.Units + bu
	}
	if p.RecDropped {
		n += g*bu + 2*g*p.Units*p.Units + 3*bu // RecDropOffsets
	}
	if p.Masked {
		n += 2 * bu // the CPU's kernel keeps the skipped samples' dh and dc
	}
	return n
}

// RecDropOffsets are where a workspace keeps, with RecDropped, after the
// per-step buffers of WorkOffsets and the CPU's scratch: the gates' masks
// one after another (G planes of (Batch, Units)), the recurrent kernel's
// blocks of columns one after another (G matrices (Units, Units)), a
// gate's product or its gradient (Batch, Units), the masked state (Batch,
// Units), a gradient of the state (Batch, Units), and the gradients of
// the kernel's blocks (G matrices (Units, Units)).
func (p RecurrenceParams) RecDropOffsets() (masks, blocks, prod, hm, dhm, dblocks int) {
	bu, g, uu := p.Batch*p.Units, p.Gates(), p.Units*p.Units
	_, _, _, dc := p.WorkOffsets()
	masks = dc + bu + 2*g*bu
	blocks = masks + g*bu
	prod = blocks + g*uu
	hm = prod + bu
	dhm = hm + bu
	return masks, blocks, prod, hm, dhm, dhm + bu
}

// RecDropInput is the position of the recurrent dropout mask among the
// op's inputs, -1 without RecDropped: after all the others.
func (p RecurrenceParams) RecDropInput() int {
	if !p.RecDropped {
		return -1
	}
	return len(p.InShapes()) - 1
}

// GRUBeforeOffsets are where a GRUBeforeCell's workspace keeps, after the
// CPU's scratch: its recurrent kernel's z and r columns (Units, 2·Units)
// and h columns (Units, Units), the gradient of r·h (Batch, Units), and
// the gradients of the two blocks of the kernel, (Units, 2·Units) and
// (Units, Units). Its z of WorkOffsets holds the state's product with the
// z and r columns (Batch, 2·Units), then (r·h)'s with the h columns
// (Batch, Units); its dz, the gradients of the z and r pre-activations
// (Batch, 2·Units), then of the h pre-activation (Batch, Units).
func (p RecurrenceParams) GRUBeforeOffsets() (rzr, rh, drh, drzr, drhk int) {
	u, bu := p.Units, p.Batch*p.Units
	_, _, _, dc := p.WorkOffsets()
	rzr = dc + bu + 2*p.Gates()*bu
	rh = rzr + 2*u*u
	drh = rh + u*u
	drzr = drh + bu
	return rzr, rh, drh, drzr, drzr + 2*u*u
}

// GradParts are the sizes of the parts of RecurrenceGrad's output: the
// gradients of the projections (Batch·Steps·G·Units), of the recurrent
// kernel (Units·G·Units), with RecBias of the recurrent bias, and with
// Init of h0 and an LSTM's c0 (Batch·Units each). The mask has none.
func (p RecurrenceParams) GradParts() []int {
	gu := p.Gates() * p.Units
	parts := []int{p.Batch * p.Steps * gu, p.Units * gu}
	if p.RecBias {
		parts = append(parts, gu)
	}
	if p.Init {
		for range p.StateCount() {
			parts = append(parts, p.Batch*p.Units)
		}
	}
	return parts
}

func (p RecurrenceParams) String() string {
	s := fmt.Sprintf("%v units=%d batch=%d steps=%d act=%v(%g) rec=%v(%g) backwards=%t sequences=%t recbias=%t init=%t masked=%t zeromasked=%t states=%t",
		p.Cell, p.Units, p.Batch, p.Steps, p.Act, p.Alpha, p.RecAct, p.RecAlpha, p.Backwards, p.Sequences, p.RecBias, p.Init, p.Masked, p.ZeroMasked, p.States)
	if p.RecDropped {
		s += " recdropped=true"
	}
	return s
}

// Recurrence adds the node running a recurrent layer's steps: proj is the
// inputs' projection of every step, (batch, steps, G·units) (the inputs
// times the kernel, plus the input bias), rec the recurrent kernel
// (units, G·units) and recBias, a GRU's recurrent bias (G·units) or nil.
// From a zero state, each step adds the state times rec to its projection
// and applies p.Cell; the output is p.Out(). Its gradient is one
// RecurrenceGrad node, which runs the steps again and back, cut into the
// gradients of proj, rec and recBias.
func Recurrence(proj, rec, recBias *gorgonia.Node, p RecurrenceParams) (*gorgonia.Node, error) {
	return RecurrenceWith(proj, rec, RecurrenceInputs{RecBias: recBias}, p)
}

// RecurrenceInputs are a Recurrence's optional inputs, nil when absent:
// a GRU's recurrent bias (G·units), the initial state H0 (batch, units)
// and an LSTM's initial cell state C0 (given with H0), and a mask (batch,
// steps) of ones and zeros (see RecurrenceParams.Masked), and a
// recurrent dropout mask RecDrop (batch, G·units) (see
// RecurrenceParams.RecDropped).
type RecurrenceInputs struct {
	RecBias, H0, C0, Mask, RecDrop *gorgonia.Node
}

// RecurrenceWith is Recurrence with initial states and a mask: it sets
// p.RecBias, p.Init and p.Masked from which of in are given (p.States
// is the caller's).
func RecurrenceWith(proj, rec *gorgonia.Node, in RecurrenceInputs, p RecurrenceParams) (*gorgonia.Node, error) {
	p.RecBias, p.Init, p.Masked, p.RecDropped = in.RecBias != nil, in.H0 != nil, in.Mask != nil, in.RecDrop != nil
	if err := p.check(proj.Shape(), rec.Shape(), in); err != nil {
		return nil, err
	}
	args := []*gorgonia.Node{proj, rec}
	for _, n := range []*gorgonia.Node{in.RecBias, in.H0, in.C0, in.Mask, in.RecDrop} {
		if n != nil {
			args = append(args, n)
		}
	}
	return gorgonia.ApplyOp(recurrenceOp{p: p}, args...)
}

func (p RecurrenceParams) check(proj, rec tensor.Shape, in RecurrenceInputs) error {
	if p.Cell <= 0 || int(p.Cell) >= len(cellNames) {
		return fmt.Errorf("recurrence: unknown cell %d", int(p.Cell))
	}
	gu := p.Gates() * p.Units
	if p.Batch <= 0 || p.Steps <= 0 || p.Units <= 0 || !proj.Eq(tensor.Shape{p.Batch, p.Steps, gu}) || !rec.Eq(tensor.Shape{p.Units, gu}) {
		return fmt.Errorf("recurrence %v: projections of shape %v and a recurrent kernel of shape %v: want (%d, %d, %d) and (%d, %d)",
			p.Cell, proj, rec, p.Batch, p.Steps, gu, p.Units, gu)
	}
	if in.RecBias != nil && (p.Cell != GRUCell || !in.RecBias.Shape().Eq(tensor.Shape{gu})) {
		return fmt.Errorf("recurrence %v: a recurrent bias of shape %v: only a GRU takes one, of shape (%d)", p.Cell, in.RecBias.Shape(), gu)
	}
	if p.Act == Softmax || p.RecAct == Softmax {
		return fmt.Errorf("recurrence %v: softmax is no elementwise activation", p.Cell)
	}
	if p.Cell == GRUBeforeCell && p.RecDropped {
		return fmt.Errorf("recurrence %v: recurrent dropout is not supported for a GRU with reset_after=False yet: use reset_after=True (Keras 2's default)", p.Cell)
	}
	if p.Cell == GRUBeforeCell && (p.Init || p.Masked || p.States) {
		return fmt.Errorf("recurrence %v: initial states, masks and returned states are not supported for a GRU with reset_after=False yet: use reset_after=True (Keras 2's default)", p.Cell)
	}
	state := tensor.Shape{p.Batch, p.Units}
	switch {
	case in.H0 != nil && !in.H0.Shape().Eq(state):
		return fmt.Errorf("recurrence %v: an initial state of shape %v: want (%d, %d)", p.Cell, in.H0.Shape(), p.Batch, p.Units)
	case (in.C0 != nil) != (in.H0 != nil && p.Cell == LSTMCell):
		return fmt.Errorf("recurrence %v: an LSTM takes both initial states h and c, other cells only h", p.Cell)
	case in.C0 != nil && !in.C0.Shape().Eq(state):
		return fmt.Errorf("recurrence %v: an initial cell state of shape %v: want (%d, %d)", p.Cell, in.C0.Shape(), p.Batch, p.Units)
	case in.Mask != nil && !in.Mask.Shape().Eq(tensor.Shape{p.Batch, p.Steps}):
		return fmt.Errorf("recurrence %v: a mask of shape %v: want (%d, %d)", p.Cell, in.Mask.Shape(), p.Batch, p.Steps)
	case in.RecDrop != nil && !in.RecDrop.Shape().Eq(tensor.Shape{p.Batch, gu}):
		return fmt.Errorf("recurrence %v: a recurrent dropout mask of shape %v: want (%d, %d)", p.Cell, in.RecDrop.Shape(), p.Batch, gu)
	}
	return nil
}

// recurrenceOp runs the steps; recurrenceGradOp runs them again and back.
type recurrenceOp struct {
	common
	p RecurrenceParams
}

func (op recurrenceOp) String() string        { return fmt.Sprintf("Recurrence{%v}", op.p) }
func (op recurrenceOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op recurrenceOp) Hashcode() uint32      { return hashOf(op) }

func (op recurrenceOp) Arity() int { return len(op.p.InShapes()) }

// inTypes are the types of a Recurrence's inputs.
func (p RecurrenceParams) inTypes(a hm.TypeVariable) []hm.Type {
	var ts []hm.Type
	for _, s := range p.InShapes() {
		ts = append(ts, gorgonia.TensorType{Dims: len(s), Of: a})
	}
	return ts
}

func (op recurrenceOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(append(op.p.inTypes(a), gorgonia.TensorType{Dims: len(op.p.Out()), Of: a})...)
}

// InShapes are the shapes of a Recurrence's inputs: the projections
// (Batch, Steps, G·Units), the recurrent kernel (Units, G·Units), with
// RecBias the recurrent bias (G·Units), with Init the initial state h0
// and an LSTM's c0 (Batch, Units), with Masked the mask (Batch, Steps),
// with RecDropped the recurrent dropout mask (Batch, G·Units).
func (p RecurrenceParams) InShapes() [][]int {
	gu := p.Gates() * p.Units
	s := [][]int{{p.Batch, p.Steps, gu}, {p.Units, gu}}
	if p.RecBias {
		s = append(s, []int{gu})
	}
	if p.Init {
		for range p.StateCount() {
			s = append(s, []int{p.Batch, p.Units})
		}
	}
	if p.Masked {
		s = append(s, []int{p.Batch, p.Steps})
	}
	if p.RecDropped {
		s = append(s, []int{p.Batch, gu})
	}
	return s
}

func (op recurrenceOp) inShapes() [][]int { return op.p.InShapes() }

func (op recurrenceOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.inShapes()...); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Out()), nil
}

func (op recurrenceOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.inShapes()...)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Out()...)
	switch od := out.Data().(type) {
	case []float32:
		recurrenceForward(op.p, recInputs(op.p, values[float32](ds)), od, make([]float32, op.p.Workspace()))
	case []float64:
		recurrenceForward(op.p, recInputs(op.p, values[float64](ds)), od, make([]float64, op.p.Workspace()))
	}
	return out, nil
}

// values are the inputs' values.
func values[T float](ds []*tensor.Dense) [][]T {
	in := make([][]T, len(ds))
	for i, d := range ds {
		in[i] = d.Data().([]T)
	}
	return in
}

// recIn are a Recurrence's inputs, nil for the ones it does not take.
type recIn[T float] struct {
	proj, rec, rb, h0, c0, mask, rd []T
}

// recInputs names the op's inputs in, given in InShapes' order.
func recInputs[T float](p RecurrenceParams, in [][]T) recIn[T] {
	r := recIn[T]{proj: in[0], rec: in[1]}
	rb, h0, c0, mask := p.Inputs()
	at := func(i int) []T {
		if i < 0 {
			return nil
		}
		return in[i]
	}
	r.rb, r.h0, r.c0, r.mask, r.rd = at(rb), at(h0), at(c0), at(mask), at(p.RecDropInput())
	return r
}

// DiffWRT: every input but the masks.
func (op recurrenceOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	_, _, _, mask := op.p.Inputs()
	for _, i := range []int{mask, op.p.RecDropInput()} {
		if i >= 0 && i < n {
			d[i] = false
		}
	}
	return d
}

// SymDiff: one RecurrenceGrad node, (1, Σ parts), cut into its parts.
func (op recurrenceOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g, err := gorgonia.ApplyOp(recurrenceGradOp{p: op.p}, append(append(gorgonia.Nodes(nil), inputs...), grad)...)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	parts := op.p.GradParts()
	grads := make(gorgonia.Nodes, len(inputs))
	for i := range parts {
		piece, err := ColumnsOf(g, parts, i)
		if err != nil {
			return nil, fmt.Errorf("%v: gradient: %w", op, err)
		}
		if grads[i], err = Reshape(piece, inputs[i].Shape().Clone(), true); err != nil {
			return nil, fmt.Errorf("%v: gradient: %w", op, err)
		}
	}
	return grads, nil
}

// recurrenceGradOp: the Recurrence's inputs, then dy → (1, Σ
// GradParts): the gradients of proj, rec, recBias, h0 and c0, one after
// another.
type recurrenceGradOp struct {
	common
	p RecurrenceParams
}

func (op recurrenceGradOp) String() string        { return fmt.Sprintf("RecurrenceGrad{%v}", op.p) }
func (op recurrenceGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op recurrenceGradOp) Hashcode() uint32      { return hashOf(op) }
func (op recurrenceGradOp) Arity() int            { return recurrenceOp(op).Arity() + 1 }

func (op recurrenceGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := append(op.p.inTypes(a), gorgonia.TensorType{Dims: len(op.p.Out()), Of: a}, gorgonia.TensorType{Dims: 2, Of: a})
	return hm.NewFnType(ts...)
}

func (op recurrenceGradOp) size() int {
	n := 0
	for _, v := range op.p.GradParts() {
		n += v
	}
	return n
}

func (op recurrenceGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, append(recurrenceOp(op).inShapes(), op.p.Out())...); err != nil {
		return nil, err
	}
	return tensor.Shape{1, op.size()}, nil
}

func (op recurrenceGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, append(recurrenceOp(op).inShapes(), op.p.Out())...)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), 1, op.size())
	dy := ds[len(ds)-1]
	switch od := out.Data().(type) {
	case []float32:
		in := recInputs(op.p, values[float32](ds[:len(ds)-1]))
		recurrenceBackward(op.p, in, dy.Data().([]float32), od, make([]float32, op.p.Workspace()))
	case []float64:
		in := recInputs(op.p, values[float64](ds[:len(ds)-1]))
		recurrenceBackward(op.p, in, dy.Data().([]float64), od, make([]float64, op.p.Workspace()))
	}
	return out, nil
}

func (op recurrenceGradOp) DiffWRT(n int) []bool { return make([]bool, n) }

func (op recurrenceGradOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%v: no second derivative", op)
}

// RecurrenceForward runs the steps of a Recurrence op without initial
// states or a mask on float32 values: y is p.Out(), ws p.Workspace()
// values, which it overwrites.
func RecurrenceForward(p RecurrenceParams, proj, rec, recBias, y, ws []float32) {
	recurrenceForward(p, recIn[float32]{proj: proj, rec: rec, rb: recBias}, y, ws)
}

// RecurrenceBackward writes into out the gradients a RecurrenceGrad op
// without initial states or a mask computes, given dy, the gradient of
// the output; ws is p.Workspace() values, which it overwrites.
func RecurrenceBackward(p RecurrenceParams, proj, rec, recBias, dy, out, ws []float32) {
	recurrenceBackward(p, recIn[float32]{proj: proj, rec: rec, rb: recBias}, dy, out, ws)
}

// RecurrenceForwardInputs is RecurrenceForward given all the op's inputs
// in, in p.InShapes' order.
func RecurrenceForwardInputs(p RecurrenceParams, in [][]float32, y, ws []float32) {
	recurrenceForward(p, recInputs(p, in), y, ws)
}

// RecurrenceBackwardInputs is RecurrenceBackward given all the op's
// inputs in, in p.InShapes' order.
func RecurrenceBackwardInputs(p RecurrenceParams, in [][]float32, dy, out, ws []float32) {
	recurrenceBackward(p, recInputs(p, in), dy, out, ws)
}

// recurrenceWork cuts a workspace: planes of (Batch, Units) per step,
// then one step's products (z: the state times rec; dz: the gradient of
// the gates' pre-activations on the recurrent side), the carried
// gradients of h and c, and per-gate scratch.
type recurrenceWork[T float] struct {
	p             RecurrenceParams
	planes        []T
	z, dz, dh, dc []T
	gradA, gradB  []T // G·B·U each
	keptH, keptC  []T // Masked: the skipped samples' dh and dc
	// RecDropped: RecDropOffsets' kernel blocks, product, masked state,
	// its gradient and the blocks' gradients.
	blocks, prod, hm, dhm, dblocks []T
	bu, gu, planeN                 int
}

func newRecurrenceWork[T float](p RecurrenceParams, ws []T) recurrenceWork[T] {
	bu, g := p.Batch*p.Units, p.Gates()
	w := recurrenceWork[T]{p: p, bu: bu, gu: g * p.Units, planeN: p.Steps * bu}
	z, dz, dh, dc := p.WorkOffsets()
	w.planes = ws[:z]
	w.z, w.dz, w.dh, w.dc = ws[z:dz], ws[dz:dh], ws[dh:dc], ws[dc:dc+bu]
	w.gradA, w.gradB = ws[dc+bu:dc+bu+g*bu], ws[dc+bu+g*bu:dc+bu+2*g*bu]
	if p.RecDropped {
		_, blocks, prod, hm, dhm, dblocks := p.RecDropOffsets()
		w.blocks, w.prod, w.hm, w.dhm = ws[blocks:prod], ws[prod:hm], ws[hm:dhm], ws[dhm:dblocks]
		w.dblocks = ws[dblocks : dblocks+g*p.Units*p.Units]
	}
	if p.Masked {
		end := len(ws)
		w.keptH, w.keptC = ws[end-2*bu:end-bu], ws[end-bu:end]
	}
	return w
}

// plane is plane f of step k: (Batch, Units).
func (w recurrenceWork[T]) plane(f, k int) []T {
	at := f*w.planeN + k*w.bu
	return w.planes[at : at+w.bu]
}

// prev is the state plane f (h's, or an LSTM's c, 8) had before step k:
// step k-1's, or at the first step the initial state (nil for zero).
func (w recurrenceWork[T]) prev(in recIn[T], f, k int) []T {
	if k > 0 {
		return w.plane(f, k-1)
	}
	if f == w.p.hPlane() {
		return in.h0
	}
	return in.c0
}

// skipped says whether the mask skips sample b's k-th step read.
func skipped[T float](p RecurrenceParams, mask []T, b, k int) bool {
	return mask != nil && mask[b*p.Steps+p.step(k)] == 0
}

// shown says whether sample b's output at its k-th step read is its
// state: whether a step up to k was read. Before the first step read the
// output is zero (Keras'), which differs from the state only when the
// state starts from initial states.
func shown[T float](p RecurrenceParams, mask []T, b, k int) bool {
	if mask == nil || !p.Init {
		return true
	}
	for i := 0; i <= k; i++ {
		if mask[b*p.Steps+p.step(i)] != 0 {
			return true
		}
	}
	return false
}

// step is the position in the sequence of the k-th step read.
func (p RecurrenceParams) step(k int) int {
	if p.Backwards {
		return p.Steps - 1 - k
	}
	return k
}

// recurrenceForward runs the steps, keeping each step's planes in ws,
// and writes the output y (when not nil). Each step's product goes
// through gemm; its cell runs on every core, a range of samples each.
func recurrenceForward[T float](p RecurrenceParams, in recIn[T], y, ws []T) {
	if p.Cell == GRUBeforeCell {
		gruBeforeForward(p, in.proj, in.rec, y, ws)
		return
	}
	w := newRecurrenceWork(p, ws)
	B, U, S := p.Batch, p.Units, p.Steps
	if in.rd != nil {
		w.splitKernel(in.rec)
	}
	for k := range S {
		if h := w.prev(in, p.hPlane(), k); h == nil {
			clear(w.z)
		} else if in.rd == nil {
			gemm(false, false, B, w.gu, U, 1, h, in.rec, 0, w.z)
		} else {
			w.droppedProduct(in, h)
		}
		overSamples(p, func(lo, hi int) { w.cellForward(in, y, k, lo, hi) })
	}
	if y == nil {
		return
	}
	last := w.plane(p.hPlane(), S-1)
	if !p.Sequences {
		copy(y, last)
		for b := range B {
			if !shown(p, in.mask, b, S-1) {
				clear(y[b*U:][:U])
			}
		}
	}
	if p.States {
		n := p.OutValues()
		copy(y[n:], last)
		if p.Cell == LSTMCell {
			copy(y[n+B*U:], w.plane(8, S-1))
		}
	}
}

// overSamples runs body over the samples [0, Batch) in ranges, on every
// core when a step's cells are work enough to pay for the goroutines.
func overSamples(p RecurrenceParams, body func(lo, hi int)) {
	workers := 1
	if p.Batch > 1 && p.Batch*p.Units*p.Gates() >= 1<<11 {
		workers = runtime.GOMAXPROCS(0)
	}
	mat.Parallel(workers, p.Batch, 1, func(_, lo, hi int) { body(lo, hi) })
}

// cellForward computes step k's cells of samples [lo, hi): the planes,
// and the output y's rows when y is not nil and holds the sequence.
func (w recurrenceWork[T]) cellForward(in recIn[T], y []T, k, lo, hi int) {
	p := w.p
	proj, rb := in.proj, in.rb
	U, S, gu := p.Units, p.Steps, w.gu
	t := p.step(k)
	rows := func(f, k int) []T { return w.plane(f, k)[lo*U : hi*U] }
	// pre sets plane f to gate g's projection plus z (plus the recurrent
	// bias).
	pre := func(f, g int) []T {
		out := rows(f, k)
		for b := lo; b < hi; b++ {
			xr, zr, o := proj[(b*S+t)*gu+g*U:][:U], w.z[b*gu+g*U:][:U], out[(b-lo)*U:][:U]
			addInto(o, xr, zr)
			if rb != nil {
				addInto(o, o, rb[g*U:][:U])
			}
		}
		return out
	}
	switch p.Cell {
	case RNNCell:
		gateActivate(p.Act, p.Alpha, U, pre(0, 0), rows(1, k))
	case LSTMCell:
		for g := range 4 {
			act, alpha := p.RecAct, p.RecAlpha
			if g == 2 {
				act, alpha = p.Act, p.Alpha
			}
			gateActivate(act, alpha, U, pre(g, g), rows(4+g, k))
		}
		i, f, cc, o := rows(4, k), rows(5, k), rows(6, k), rows(7, k)
		c, tc, h := rows(8, k), rows(9, k), rows(10, k)
		mulInto(c, i, cc)
		if prev := w.prev(in, 8, k); prev != nil {
			addProductInto(c, f, prev[lo*U:hi*U])
		}
		gateActivate(p.Act, p.Alpha, U, c, tc)
		mulInto(h, o, tc)
	case GRUCell:
		for g := range 2 {
			gateActivate(p.RecAct, p.RecAlpha, U, pre(g, g), rows(3+g, k))
		}
		// r_h is z's h block plus its bias; the candidate's
		// pre-activation is x_h + r·r_h.
		rh, ph, r := rows(6, k), rows(2, k), rows(4, k)
		for b := lo; b < hi; b++ {
			xr, zr := proj[(b*S+t)*gu+2*U:][:U], w.z[b*gu+2*U:][:U]
			e0 := (b - lo) * U
			rhb, phb := rh[e0:][:U], ph[e0:][:U]
			copy(rhb, zr)
			if rb != nil {
				addInto(rhb, rhb, rb[2*U:][:U])
			}
			copy(phb, xr)
			addProductInto(phb, r[e0:][:U], rhb)
		}
		zg, cand, h := rows(3, k), rows(5, k), rows(7, k)
		gateActivate(p.Act, p.Alpha, U, ph, cand)
		prev := w.prev(in, 7, k)
		if prev != nil {
			prev = prev[lo*U : hi*U]
		}
		blendInto(h, cand, zg, prev)
	}
	// A skipped step keeps the state it is given.
	for b := lo; b < hi; b++ {
		if !skipped(p, in.mask, b, k) {
			continue
		}
		for _, f := range []int{p.hPlane(), 8} {
			if f == 8 && p.Cell != LSTMCell {
				break
			}
			row := w.plane(f, k)[b*U:][:U]
			if prev := w.prev(in, f, k); prev != nil {
				copy(row, prev[b*U:][:U])
			} else {
				clear(row)
			}
		}
	}
	if y != nil && p.Sequences {
		h := rows(p.hPlane(), k)
		for b := lo; b < hi; b++ {
			row := y[(b*S+k)*U:][:U]
			if shown(p, in.mask, b, k) && !(p.ZeroMasked && skipped(p, in.mask, b, k)) {
				copy(row, h[(b-lo)*U:][:U])
			} else {
				clear(row)
			}
		}
	}
}

// recurrenceBackward runs the steps forward (unless p.Saved), then back,
// and writes the gradients of proj, rec and (RecBias) the recurrent bias
// into out, one after another. Each step's cells run on every core, a
// range of samples each, then its products go through gemm.
func recurrenceBackward[T float](p RecurrenceParams, in recIn[T], dy, out, ws []T) {
	if !p.Saved {
		recurrenceForward(p, in, nil, ws)
	}
	if p.Cell == GRUBeforeCell {
		gruBeforeBackward(p, dy, out, ws)
		return
	}
	w := newRecurrenceWork(p, ws)
	B, U, S := p.Batch, p.Units, p.Steps
	gu := w.gu
	parts := p.GradParts()
	dproj, drec := out[:parts[0]], out[parts[0]:parts[0]+parts[1]]
	var drb []T
	if p.RecBias {
		drb = out[parts[0]+parts[1]:]
	}
	clear(drec)
	clear(drb)
	if in.rd != nil {
		w.splitKernel(in.rec)
		clear(w.dblocks)
	}
	clear(w.dh)
	clear(w.dc)
	if p.States { // the gradients of the last states
		n := p.OutValues()
		copy(w.dh, dy[n:n+B*U])
		if p.Cell == LSTMCell {
			copy(w.dc, dy[n+B*U:n+2*B*U])
		}
	}
	for k := S - 1; k >= 0; k-- {
		overSamples(p, func(lo, hi int) { w.cellBackward(in, dy, dproj, k, lo, hi) })
		if drb != nil {
			for b := range B {
				for j, v := range w.dz[b*gu:][:gu] {
					drb[j] += v
				}
			}
		}
		if h := w.prev(in, p.hPlane(), k); h != nil {
			if in.rd != nil {
				w.droppedProductGrad(in, h)
				continue
			}
			gemm(false, true, B, U, gu, 1, w.dz, in.rec, 1, w.dh)
			gemm(true, false, U, gu, B, 1, h, w.dz, 1, drec)
		}
	}
	if in.rd != nil { // the blocks' gradients into the kernel's columns
		for g := range p.Gates() {
			for i := range U {
				copy(drec[i*gu+g*U:][:U], w.dblocks[(g*U+i)*U:][:U])
			}
		}
	}
	if p.Init { // the gradients of the initial states
		at := parts[0] + parts[1]
		if p.RecBias {
			at += parts[2]
		}
		copy(out[at:at+B*U], w.dh)
		if p.Cell == LSTMCell {
			copy(out[at+B*U:at+2*B*U], w.dc)
		}
	}
}

// maskedState sets w.hm to the state h times gate g's recurrent dropout
// mask.
func (w recurrenceWork[T]) maskedState(in recIn[T], h []T, g int) {
	U, gu := w.p.Units, w.gu
	for b := range w.p.Batch {
		m, hb, o := in.rd[b*gu+g*U:][:U], h[b*U:][:U], w.hm[b*U:][:U]
		mulInto(o, hb, m)
	}
}

// splitKernel copies the recurrent kernel's blocks of columns, one per
// gate, into w.blocks, each a (Units, Units) matrix of its own.
func (w recurrenceWork[T]) splitKernel(rec []T) {
	U, gu := w.p.Units, w.gu
	for g := range w.p.Gates() {
		for i := range U {
			copy(w.blocks[(g*U+i)*U:][:U], rec[i*gu+g*U:][:U])
		}
	}
}

// block is gate g's block of the recurrent kernel (Units, Units), and
// of its gradient.
func (w recurrenceWork[T]) block(v []T, g int) []T {
	uu := w.p.Units * w.p.Units
	return v[g*uu : (g+1)*uu]
}

// droppedProduct sets z to the state's product with the recurrent
// kernel under recurrent dropout: gate g's block of columns is (h·m_g)
// times the kernel's block g (a product per gate, as many operations as
// the one product without dropout).
func (w recurrenceWork[T]) droppedProduct(in recIn[T], h []T) {
	B, U, gu := w.p.Batch, w.p.Units, w.gu
	for g := range w.p.Gates() {
		w.maskedState(in, h, g)
		gemm(false, false, B, U, U, 1, w.hm, w.block(w.blocks, g), 0, w.prod)
		for b := range B {
			copy(w.z[b*gu+g*U:][:U], w.prod[b*U:][:U])
		}
	}
}

// droppedProductGrad is droppedProduct's gradient: per gate g, dz's
// block g goes back through the kernel's block to h·m_g, then times m_g
// into dh, and into the block's gradient as (h·m_g)ᵀ·dz_g.
func (w recurrenceWork[T]) droppedProductGrad(in recIn[T], h []T) {
	B, U, gu := w.p.Batch, w.p.Units, w.gu
	for g := range w.p.Gates() {
		for b := range B {
			copy(w.prod[b*U:][:U], w.dz[b*gu+g*U:][:U])
		}
		gemm(false, true, B, U, U, 1, w.prod, w.block(w.blocks, g), 0, w.dhm)
		for b := range B {
			addProductInto(w.dh[b*U:][:U], w.dhm[b*U:][:U], in.rd[b*gu+g*U:][:U])
		}
		w.maskedState(in, h, g)
		gemm(true, false, U, U, B, 1, w.hm, w.prod, 1, w.block(w.dblocks, g))
	}
}

// cellBackward runs step k's cells back for samples [lo, hi): it adds
// the step's part of dy to dh, writes the gradients of the gates'
// pre-activations into dproj at the step's position and, on the
// recurrent side, into dz, and leaves in dh the gradient of the previous
// state but for its path through the recurrent kernel (a GRU's z·dh,
// else 0) and in dc the previous cell state's (LSTM).
func (w recurrenceWork[T]) cellBackward(in recIn[T], dy, dproj []T, k, lo, hi int) {
	p := w.p
	U, S, G, gu := p.Units, p.Steps, p.Gates(), w.gu
	t := p.step(k)
	rows := func(f, k int) []T { return w.plane(f, k)[lo*U : hi*U] }
	span := func(v []T, g int) []T { return v[g*w.bu+lo*U : g*w.bu+hi*U] } // gate g's rows of a G·B·U scratch
	dh, dc := w.dh[lo*U:hi*U], w.dc[lo*U:hi*U]
	for b := lo; b < hi; b++ {
		var row []T
		switch {
		case !shown(p, in.mask, b, k), p.ZeroMasked && p.Sequences && skipped(p, in.mask, b, k):
			continue
		case p.Sequences:
			row = dy[(b*S+k)*U:][:U]
		case k == S-1:
			row = dy[b*U:][:U]
		default:
			continue
		}
		addInto(dh[(b-lo)*U:][:U], dh[(b-lo)*U:][:U], row)
	}
	// A skipped step passes dh and dc on to the step before: the cell
	// runs back from zero gradients (all its gradients then zero), and
	// they are put back after.
	if in.mask != nil {
		for b := lo; b < hi; b++ {
			if skipped(p, in.mask, b, k) {
				e := b * U
				copy(w.keptH[e:e+U], w.dh[e:e+U])
				copy(w.keptC[e:e+U], w.dc[e:e+U])
				clear(w.dh[e : e+U])
				clear(w.dc[e : e+U])
			}
		}
		defer func() {
			for b := lo; b < hi; b++ {
				if skipped(p, in.mask, b, k) {
					e := b * U
					copy(w.dh[e:e+U], w.keptH[e:e+U])
					copy(w.dc[e:e+U], w.keptC[e:e+U])
				}
			}
		}()
	}
	dpost := func(g int) []T { return span(w.gradA, g) }
	dpre := func(g int) []T { return span(w.gradB, g) }
	switch p.Cell {
	case RNNCell:
		gateActivateGrad(p.Act, p.Alpha, U, rows(0, k), rows(1, k), dh, dpre(0))
		clear(dh)
	case LSTMCell:
		i, f, cc, o := rows(4, k), rows(5, k), rows(6, k), rows(7, k)
		c, tc := rows(8, k), rows(9, k)
		dtc, dcn := dpre(0), dpre(1) // scratch until the gates' turn
		mulInto(dpost(3), dh, tc)
		mulInto(dtc, dh, o)
		gateActivateGrad(p.Act, p.Alpha, U, c, tc, dtc, dcn)
		d := dcn
		addInto(d, dc, dcn) // the cell state's gradient
		mulInto(dpost(0), d, cc)
		mulInto(dpost(2), d, i)
		if prev := w.prev(in, 8, k); prev != nil {
			mulInto(dpost(1), d, prev[lo*U:hi*U])
		} else {
			clear(dpost(1))
		}
		mulInto(dc, d, f)
		for g := range G {
			act, alpha := p.RecAct, p.RecAlpha
			if g == 2 {
				act, alpha = p.Act, p.Alpha
			}
			gateActivateGrad(act, alpha, U, rows(g, k), rows(4+g, k), dpost(g), dpre(g))
		}
		clear(dh)
	case GRUCell:
		zg, cand, rh := rows(3, k), rows(5, k), rows(6, k)
		prev := w.prev(in, 7, k)
		if prev != nil {
			prev = prev[lo*U : hi*U]
		}
		dz, dcand := dpost(0), dpost(2)
		for e := range dh {
			pv := T(0)
			if prev != nil {
				pv = prev[e]
			}
			dz[e] = dh[e] * (pv - cand[e])
			dcand[e] = dh[e] * (1 - zg[e])
			dh[e] *= zg[e] // the direct path to the previous state
		}
		gateActivateGrad(p.Act, p.Alpha, U, rows(2, k), cand, dcand, dpre(2))
		mulInto(dpost(1), dpre(2), rh)
		for g := range 2 {
			gateActivateGrad(p.RecAct, p.RecAlpha, U, rows(g, k), rows(3+g, k), dpost(g), dpre(g))
		}
	}
	var r []T // a GRU's reset gate
	if p.Cell == GRUCell {
		r = rows(4, k)
	}
	for b := lo; b < hi; b++ {
		e0 := (b - lo) * U
		for g := range G {
			dp, dpr, dzr := dpre(g)[e0:][:U], dproj[(b*S+t)*gu+g*U:][:U], w.dz[b*gu+g*U:][:U]
			copy(dpr, dp)
			if p.Cell == GRUCell && g == 2 {
				for j, v := range dp {
					dzr[j] = v * r[e0+j] // r·d(r_h)
				}
				continue
			}
			copy(dzr, dp)
		}
	}
}

// gruBefore cuts a GRUBeforeCell's workspace (GRUBeforeOffsets).
type gruBefore[T float] struct {
	recurrenceWork[T]
	zr, q, dzr, dq, rzr, rh, drh, drzr, drhk []T
}

func newGRUBefore[T float](p RecurrenceParams, ws []T) gruBefore[T] {
	w := gruBefore[T]{recurrenceWork: newRecurrenceWork(p, ws)}
	u, bu := p.Units, p.Batch*p.Units
	w.zr, w.q = w.z[:2*bu], w.z[2*bu:3*bu]
	w.dzr, w.dq = w.dz[:2*bu], w.dz[2*bu:3*bu]
	rzr, rh, drh, drzr, drhk := p.GRUBeforeOffsets()
	w.rzr, w.rh, w.drh = ws[rzr:rzr+2*u*u], ws[rh:rh+u*u], ws[drh:drh+bu]
	w.drzr, w.drhk = ws[drzr:drzr+2*u*u], ws[drhk:drhk+u*u]
	return w
}

// gruBeforeForward is recurrenceForward for GRUBeforeCell: per step the
// state's product with the z and r columns, the gates, (r·h)'s product
// with the h columns, the candidate and the state.
func gruBeforeForward[T float](p RecurrenceParams, proj, rec, y, ws []T) {
	w := newGRUBefore(p, ws)
	B, U, S := p.Batch, p.Units, p.Steps
	gu := 3 * U
	for i := range U { // the kernel's two blocks of columns, each contiguous
		copy(w.rzr[i*2*U:][:2*U], rec[i*gu:][:2*U])
		copy(w.rh[i*U:][:U], rec[i*gu+2*U:][:U])
	}
	for k := range S {
		t := p.step(k)
		var prev []T
		if k > 0 {
			prev = w.plane(7, k-1)
			gemm(false, false, B, 2*U, U, 1, prev, w.rzr, 0, w.zr)
		}
		overSamples(p, func(lo, hi int) {
			for g := range 2 {
				pre := w.plane(g, k)[lo*U : hi*U]
				for b := lo; b < hi; b++ {
					xr, o := proj[(b*S+t)*gu+g*U:][:U], pre[(b-lo)*U:][:U]
					copy(o, xr)
					if prev != nil {
						for j, v := range w.zr[b*2*U+g*U:][:U] {
							o[j] += v
						}
					}
				}
				gateActivate(p.RecAct, p.RecAlpha, U, pre, w.plane(3+g, k)[lo*U:hi*U])
			}
			r, rh := w.plane(4, k)[lo*U:hi*U], w.plane(6, k)[lo*U:hi*U]
			for e := range rh {
				rh[e] = 0
				if prev != nil {
					rh[e] = r[e] * prev[lo*U+e]
				}
			}
		})
		if k > 0 {
			gemm(false, false, B, U, U, 1, w.plane(6, k), w.rh, 0, w.q)
		}
		overSamples(p, func(lo, hi int) {
			pre, zg, cand, h := w.plane(2, k)[lo*U:hi*U], w.plane(3, k)[lo*U:hi*U], w.plane(5, k)[lo*U:hi*U], w.plane(7, k)[lo*U:hi*U]
			for b := lo; b < hi; b++ {
				xr, o := proj[(b*S+t)*gu+2*U:][:U], pre[(b-lo)*U:][:U]
				copy(o, xr)
				if prev != nil {
					for j, v := range w.q[b*U:][:U] {
						o[j] += v
					}
				}
			}
			gateActivate(p.Act, p.Alpha, U, pre, cand)
			for e := range h {
				pv := T(0)
				if prev != nil {
					pv = prev[lo*U+e]
				}
				h[e] = cand[e] + zg[e]*(pv-cand[e])
			}
			if y != nil && p.Sequences {
				for b := lo; b < hi; b++ {
					copy(y[(b*S+k)*U:][:U], h[(b-lo)*U:][:U])
				}
			}
		})
	}
	if y != nil && !p.Sequences {
		copy(y, w.plane(7, S-1))
	}
}

// gruBeforeBackward is recurrenceBackward's backward pass for
// GRUBeforeCell, the planes in ws.
func gruBeforeBackward[T float](p RecurrenceParams, dy, out, ws []T) {
	w := newGRUBefore(p, ws)
	B, U, S := p.Batch, p.Units, p.Steps
	gu := 3 * U
	parts := p.GradParts()
	dproj, drec := out[:parts[0]], out[parts[0]:parts[0]+parts[1]]
	clear(w.drzr)
	clear(w.drhk)
	clear(w.dh)
	dpost := func(g, lo, hi int) []T { return w.gradA[g*w.bu+lo*U : g*w.bu+hi*U] }
	for k := S - 1; k >= 0; k-- {
		t := p.step(k)
		var prev []T
		if k > 0 {
			prev = w.plane(7, k-1)
		}
		// The candidate's side: dq, and the direct path z·dh.
		overSamples(p, func(lo, hi int) {
			dh := w.dh[lo*U : hi*U]
			for b := lo; b < hi; b++ {
				var row []T
				switch {
				case p.Sequences:
					row = dy[(b*S+k)*U:][:U]
				case k == S-1:
					row = dy[b*U:][:U]
				}
				for j, v := range row {
					dh[(b-lo)*U+j] += v
				}
			}
			zg, cand := w.plane(3, k)[lo*U:hi*U], w.plane(5, k)[lo*U:hi*U]
			dz, dc := dpost(0, lo, hi), dpost(2, lo, hi)
			for e := range dh {
				pv := T(0)
				if prev != nil {
					pv = prev[lo*U+e]
				}
				dz[e] = dh[e] * (pv - cand[e])
				dc[e] = dh[e] * (1 - zg[e])
				dh[e] *= zg[e]
			}
			dq := w.dq[lo*U : hi*U]
			gateActivateGrad(p.Act, p.Alpha, U, w.plane(2, k)[lo*U:hi*U], cand, dc, dq)
			for b := lo; b < hi; b++ {
				copy(dproj[(b*S+t)*gu+2*U:][:U], dq[(b-lo)*U:][:U])
			}
		})
		if k > 0 {
			gemm(false, true, B, U, U, 1, w.dq, w.rh, 0, w.drh)
		}
		// The gates' side.
		overSamples(p, func(lo, hi int) {
			dh, r := w.dh[lo*U:hi*U], w.plane(4, k)[lo*U:hi*U]
			dr := dpost(1, lo, hi)
			for e := range dr {
				dr[e] = 0
				if prev != nil {
					d := w.drh[lo*U+e]
					dr[e] = d * prev[lo*U+e]
					dh[e] += d * r[e]
				}
			}
			for g := range 2 {
				d := w.gradB[g*w.bu+lo*U : g*w.bu+hi*U]
				gateActivateGrad(p.RecAct, p.RecAlpha, U, w.plane(g, k)[lo*U:hi*U], w.plane(3+g, k)[lo*U:hi*U], dpost(g, lo, hi), d)
				for b := lo; b < hi; b++ {
					copy(dproj[(b*S+t)*gu+g*U:][:U], d[(b-lo)*U:][:U])
					copy(w.dzr[b*2*U+g*U:][:U], d[(b-lo)*U:][:U])
				}
			}
		})
		if k > 0 {
			gemm(false, true, B, U, 2*U, 1, w.dzr, w.rzr, 1, w.dh)
			gemm(true, false, U, 2*U, B, 1, prev, w.dzr, 1, w.drzr)
			gemm(true, false, U, U, B, 1, w.plane(6, k), w.dq, 1, w.drhk)
		}
	}
	for i := range U {
		copy(drec[i*gu:][:2*U], w.drzr[i*2*U:][:2*U])
		copy(drec[i*gu+2*U:][:U], w.drhk[i*U:][:U])
	}
}
