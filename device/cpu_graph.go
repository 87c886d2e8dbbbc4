package device

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/internal/gemm"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// graphMachine runs a model graph on the CPU itself, instead of through
// gorgonia's tape machine: it walks the graph's nodes in topological order
// once, at construction, into a plan of float32 kernels with an output
// buffer per node allocated once and reused by every step. Reshapes alias
// their input. Matrix products go to the AVX-512 kernels of internal/gemm
// where the CPU has them and to blas.Default otherwise.
//
// Train folds the optimizer into the backward pass: a weight's gradient
// product writes straight into the weight (plain SGD: alpha = -lr, beta =
// 1) or into its velocity (momentum: beta = momentum, then one pass adds
// the velocity to the weight), after the last op that reads the weight in
// that step. Nesterov momentum and Adam compute the gradient into a buffer
// and update in one pass over it.
//
// Only graphs of package ops' nodes, gorgonia inputs, constants and Read
// nodes, all float32, run here; newGraphMachine returns errGraphUnsupported
// for anything else and the driver uses the tape machine.
type graphMachine struct {
	slots  []slot
	plan   []instr
	learns []learnable
	state  *State
	mul    multiplier
	// after[i] lists the learnables updated once plan[i] has run (Train).
	after [][]int
	// ones is a column of ones: the bias gradient is onesᵀ·dz.
	ones []float32
	// noTrain says why Train cannot fold the updates into this graph.
	noTrain string
	colSum  []float32
	closed  bool
}

// slot holds the value of one node.
type slot struct {
	node   *gorgonia.Node
	shape  []int
	data   []float32 // the node's values this step
	input  bool      // data is re-read from the node's bound value each step
	scalar bool
	// owned is the buffer of an op's output, allocated on first use.
	owned []float32
	// gradOf is the learnable whose gradient this node is, or -1.
	gradOf int
}

// instr is one node of the plan.
type instr struct {
	out  int
	in   []int
	info ops.Info
	read *gorgonia.Value // a Read node's destination
}

// learnable is a weight and what Train needs to update it.
type learnable struct {
	slot      int // the weight's slot
	gradInstr int
}

// multiplier is the sgemm the machine computes with.
type multiplier struct {
	ws  *gemm.Workspace
	lib *blas.Library
}

func (mm multiplier) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if mm.ws != nil {
		err := mm.ws.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		if !errors.Is(err, gemm.ErrUnsupported) {
			return err
		}
	}
	return mm.lib.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// errGraphUnsupported: the graph has a node the machine does not run.
var errGraphUnsupported = errors.New("graph not supported by the CPU graph machine")

// readOpType is gorgonia's Read op, whose destination is unexported.
var readOpType = reflect.TypeOf(gorgonia.Read(gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float32), new(gorgonia.Value)).Op())

// readDestination returns where a Read node writes: the *Value passed to
// gorgonia.Read, which gorgonia keeps in an unexported field of the op.
func readDestination(op gorgonia.Op) (*gorgonia.Value, bool) {
	v := reflect.ValueOf(op)
	if v.Type() != readOpType || v.NumField() != 1 || v.Field(0).Type() != reflect.TypeOf((*gorgonia.Value)(nil)) {
		return nil, false
	}
	return (*gorgonia.Value)(v.Field(0).UnsafePointer()), true
}

func newGraphMachine(g *gorgonia.ExprGraph, opts MachineOptions, mul multiplier) (*graphMachine, error) {
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("device: sorting the graph: %w", err)
	}
	m := &graphMachine{state: opts.State, mul: mul}
	if m.state == nil {
		m.state = NewState()
	}
	index := make(map[*gorgonia.Node]int, len(sorted))
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		if !isReadNode(n) && n.Dtype() != tensor.Float32 {
			return nil, fmt.Errorf("%w: node %s has dtype %v", errGraphUnsupported, n.Name(), n.Dtype())
		}
		s := slot{node: n, shape: n.Shape(), gradOf: -1}
		s.scalar = len(s.shape) == 0
		ins := instr{out: len(m.slots)}
		it := g.From(n.ID())
		for it.Next() {
			child, ok := it.Node().(*gorgonia.Node)
			if !ok {
				return nil, fmt.Errorf("%w: node %s has a child of type %T", errGraphUnsupported, n.Name(), it.Node())
			}
			ci, ok := index[child]
			if !ok {
				return nil, fmt.Errorf("device: graph order: %s runs before its input %s", n.Name(), child.Name())
			}
			ins.in = append(ins.in, ci)
		}
		op := n.Op()
		switch {
		case op == nil:
			s.input = true
		case isConstant(op):
			v := op.(interface{ Value() gorgonia.Value }).Value()
			data, err := float32Data(v)
			if err != nil {
				return nil, fmt.Errorf("%w: constant %s: %v", errGraphUnsupported, n.Name(), err)
			}
			s.data = data
		default:
			if into, ok := readDestination(op); ok {
				ins.read = into
				m.plan = append(m.plan, ins)
				break
			}
			info, ok := ops.Inspect(op)
			if !ok {
				return nil, fmt.Errorf("%w: op %v (%T) of node %s", errGraphUnsupported, op, op, n.Name())
			}
			ins.info = info
			if err := checkArity(info, ins.in, n); err != nil {
				return nil, err
			}
			m.plan = append(m.plan, ins)
		}
		index[n] = len(m.slots)
		m.slots = append(m.slots, s)
	}
	// Learnables and the nodes computing their gradients.
	for _, w := range opts.Learnables {
		wi, ok := index[w]
		if !ok {
			return nil, fmt.Errorf("device: learnable %s is not in the graph", w.Name())
		}
		d := w.Deriv()
		if d == nil {
			return nil, fmt.Errorf("device: learnable %s has no gradient in the graph: call gorgonia.Grad before binding", w.Name())
		}
		gi, ok := index[d]
		if !ok {
			return nil, fmt.Errorf("device: the gradient of %s is not in the graph", w.Name())
		}
		l := learnable{slot: wi, gradInstr: -1}
		for pi, ins := range m.plan {
			if ins.out == gi {
				l.gradInstr = pi
			}
		}
		if l.gradInstr < 0 || !foldable(m.plan[l.gradInstr].info) {
			return nil, fmt.Errorf("%w: the gradient of %s is computed by %v", errGraphUnsupported, w.Name(), d.Op())
		}
		m.slots[gi].gradOf = len(m.learns)
		m.learns = append(m.learns, l)
	}
	for _, ins := range m.plan {
		for _, in := range ins.in {
			if g := m.slots[in].gradOf; g >= 0 {
				m.noTrain = fmt.Sprintf("node %s reads the gradient of %s", m.slots[ins.out].node.Name(), m.slots[m.learns[g].slot].node.Name())
			}
		}
	}
	// Train updates a weight once its gradient exists and nothing left in
	// the step reads the weight.
	m.after = make([][]int, len(m.plan))
	for li, l := range m.learns {
		at := l.gradInstr
		for pi, ins := range m.plan {
			for _, in := range ins.in {
				if in == l.slot && pi > at {
					at = pi
				}
			}
		}
		m.after[at] = append(m.after[at], li)
	}
	return m, nil
}

func isReadNode(n *gorgonia.Node) bool {
	if n.Op() == nil {
		return false
	}
	_, ok := readDestination(n.Op())
	return ok
}

// foldable reports whether Train can fold an update into the op computing a
// gradient: a product or a sum over the batch.
func foldable(info ops.Info) bool { return info.Kind == ops.OpMatMul || info.Kind == ops.OpSumRows }

func checkArity(info ops.Info, in []int, n *gorgonia.Node) error {
	want := map[ops.OpKind]int{
		ops.OpMatMul: 2, ops.OpSumRows: 1, ops.OpActivation: 1, ops.OpActivationGrad: 3,
		ops.OpReshape: 1, ops.OpLoss: 2, ops.OpLossGrad: 3,
	}[info.Kind]
	if info.Kind == ops.OpAffine {
		want = 2
		if info.Bias {
			want = 3
		}
	}
	if len(in) != want {
		return fmt.Errorf("device: node %s has %d inputs, its op takes %d", n.Name(), len(in), want)
	}
	return nil
}

// float32Data reads a float32 value (a scalar or a dense tensor).
func float32Data(v gorgonia.Value) ([]float32, error) {
	switch v := v.(type) {
	case *gorgonia.F32:
		return []float32{float32(*v)}, nil
	case *tensor.Dense:
		if v.Dtype() != tensor.Float32 {
			return nil, fmt.Errorf("dtype %v, want float32", v.Dtype())
		}
		if v.IsScalar() {
			return []float32{v.ScalarValue().(float32)}, nil
		}
		if !v.IsNativelyAccessible() || v.RequiresIterator() {
			return nil, fmt.Errorf("a view, not a plain tensor")
		}
		return v.Data().([]float32), nil
	}
	return nil, fmt.Errorf("value of type %T", v)
}

// buffer returns the output buffer of slot i, allocating it once.
func (m *graphMachine) buffer(i int) []float32 {
	s := &m.slots[i]
	if s.owned == nil {
		s.owned = make([]float32, max(1, shapeSize(s.shape)))
		if s.gradOf >= 0 {
			// Make the gradient readable with Node.Grad, as the tape
			// machine's bound gradients are.
			_ = gorgonia.UnsafeLet(s.node, tensor.New(tensor.WithShape(s.shape...), tensor.WithBacking(s.owned)))
		}
	}
	s.data = s.owned
	return s.owned
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// loadInputs re-reads the values bound to the graph's inputs: the caller
// fills them in place between steps, and may bind new ones.
func (m *graphMachine) loadInputs() error {
	for i := range m.slots {
		s := &m.slots[i]
		if !s.input {
			continue
		}
		v := s.node.Value()
		if v == nil {
			return fmt.Errorf("device: input %s has no value bound", s.node.Name())
		}
		data, err := float32Data(v)
		if err != nil {
			return fmt.Errorf("device: input %s: %w", s.node.Name(), err)
		}
		if len(data) != max(1, shapeSize(s.shape)) {
			return fmt.Errorf("device: input %s holds %d values, its shape %v needs %d", s.node.Name(), len(data), s.shape, shapeSize(s.shape))
		}
		s.data = data
	}
	return nil
}

func (m *graphMachine) RunAll() error { return m.run(nil) }

func (m *graphMachine) Train(u Update) error {
	if err := u.check(); err != nil {
		return err
	}
	if len(m.learns) == 0 {
		return fmt.Errorf("device: Train on a graph with no learnables: %w", ErrUpdateUnsupported)
	}
	if m.noTrain != "" {
		return fmt.Errorf("device: %s: %w", m.noTrain, ErrUpdateUnsupported)
	}
	return m.run(&u)
}

func (m *graphMachine) run(u *Update) error {
	if m.closed {
		return errors.New("device: the CPU machine is closed")
	}
	if err := m.loadInputs(); err != nil {
		return err
	}
	for pi := range m.plan {
		ins := &m.plan[pi]
		if u == nil || m.slots[ins.out].gradOf < 0 { // Train computes gradients in update
			if err := m.exec(ins); err != nil {
				return fmt.Errorf("device: %s: %w", m.slots[ins.out].node.Name(), err)
			}
		}
		if u == nil {
			continue
		}
		for _, li := range m.after[pi] {
			if err := m.update(li, u); err != nil {
				return fmt.Errorf("device: updating %s: %w", m.slots[m.learns[li].slot].node.Name(), err)
			}
		}
	}
	return nil
}

func (m *graphMachine) exec(ins *instr) error {
	in := func(j int) *slot { return &m.slots[ins.in[j]] }
	if ins.read != nil {
		return writeRead(ins.read, in(0))
	}
	switch ins.info.Kind {
	case ops.OpAffine:
		x, w := in(0), in(1)
		rows, k, n := x.shape[0], x.shape[1], w.shape[1]
		out := m.buffer(ins.out)
		beta := float32(0)
		if ins.info.Bias {
			b := in(2).data
			for r := 0; r < rows; r++ {
				copy(out[r*n:(r+1)*n], b)
			}
			beta = 1
		}
		return m.mul.sgemm(false, false, rows, n, k, 1, x.data, k, w.data, n, beta, out, n)
	case ops.OpMatMul:
		return m.matMul(ins, 1, 0, m.buffer(ins.out))
	case ops.OpSumRows:
		a := in(0)
		out := m.buffer(ins.out)
		clear(out)
		ops.SumRows(a.shape[0], a.shape[1], a.data, out)
	case ops.OpActivation:
		x := in(0)
		ops.ActivationForward(ins.info.Activation, lastDim(x.shape), x.data, m.buffer(ins.out))
	case ops.OpActivationGrad:
		x, y, dy := in(0), in(1), in(2)
		ops.ActivationBackward(ins.info.Activation, lastDim(x.shape), x.data, y.data, dy.data, m.buffer(ins.out))
	case ops.OpReshape:
		m.slots[ins.out].data = in(0).data
	case ops.OpLoss:
		p, y := in(0), in(1)
		loss, err := ops.LossValue(ins.info.Loss, p.shape[0], lastDim(p.shape), p.data, y.data)
		if err != nil {
			return err
		}
		m.buffer(ins.out)[0] = float32(loss)
	case ops.OpLossGrad:
		p, y, seed := in(0), in(1), in(2)
		return ops.LossGradient(ins.info.Loss, p.shape[0], lastDim(p.shape), p.data, y.data, float64(seed.data[0]), m.buffer(ins.out))
	default:
		return fmt.Errorf("op kind %d not implemented", ins.info.Kind)
	}
	return nil
}

// matMul computes c = alpha·op(a)·op(b) + beta·c for a MatMul node.
func (m *graphMachine) matMul(ins *instr, alpha, beta float32, c []float32) error {
	a, b := &m.slots[ins.in[0]], &m.slots[ins.in[1]]
	rows, k := a.shape[0], a.shape[1]
	if ins.info.TransA {
		rows, k = k, rows
	}
	n := b.shape[1]
	if ins.info.TransB {
		n = b.shape[0]
	}
	return m.mul.sgemm(ins.info.TransA, ins.info.TransB, rows, n, k, alpha, a.data, a.shape[1], b.data, b.shape[1], beta, c, n)
}

func lastDim(shape []int) int {
	if len(shape) == 0 {
		return 1
	}
	return shape[len(shape)-1]
}

// writeRead stores a node's value where a Read node asked, as the tape
// machine does: into the value already there when it fits, else into a
// copy the caller then owns.
func writeRead(into *gorgonia.Value, s *slot) error {
	if s.scalar {
		v := s.data[0]
		if f, ok := (*into).(*gorgonia.F32); ok && f != nil {
			*f = gorgonia.F32(v)
			return nil
		}
		*into = gorgonia.NewF32(v)
		return nil
	}
	if d, ok := (*into).(*tensor.Dense); ok && d != nil && d.Dtype() == tensor.Float32 && d.Shape().Eq(tensor.Shape(s.shape)) && d.IsNativelyAccessible() {
		copy(d.Data().([]float32), s.data)
		return nil
	}
	*into = tensor.New(tensor.WithShape(s.shape...), tensor.WithBacking(append([]float32(nil), s.data...)))
	return nil
}

// slotFor returns the optimizer slot name of learnable l, shared through the
// machine's State by every machine of the model.
func (m *graphMachine) slotFor(l *learnable, name string) ([]float32, error) {
	w := m.slots[l.slot].data
	v, err := m.state.Value(slotKey{data: &w[0], name: name}, func() (any, error) {
		return make([]float32, len(w)), nil
	})
	if err != nil {
		return nil, err
	}
	s := v.([]float32)
	if len(s) != len(w) {
		return nil, fmt.Errorf("optimizer slot %q has %d values for a weight of %d", name, len(s), len(w))
	}
	return s, nil
}

// slotKey identifies an optimizer slot of one weight by the weight's host
// memory, which every graph of a model binds.
type slotKey struct {
	data *float32
	name string
}

// update computes learnable li's gradient and applies u to it.
func (m *graphMachine) update(li int, u *Update) error {
	l := &m.learns[li]
	ins := &m.plan[l.gradInstr]
	w := m.slots[l.slot].data
	lr := float32(u.LearningRate)
	plainSGD := u.Rule == SGD && u.Momentum == 0
	momentum := u.Rule == SGD && u.Momentum != 0 && !u.Nesterov
	if ins.info.Kind == ops.OpSumRows && plainSGD {
		// b -= lr·Σ_rows dz, as the product onesᵀ·dz, which the kernels sum
		// row by row as ops.SumRows does.
		a := &m.slots[ins.in[0]]
		rows, cols := a.shape[0], a.shape[1]
		for len(m.ones) < rows {
			m.ones = append(m.ones, 1)
		}
		return m.mul.sgemm(true, false, 1, cols, rows, -lr, m.ones[:rows], 1, a.data, cols, 1, w, cols)
	}
	if ins.info.Kind == ops.OpMatMul && (plainSGD || momentum) {
		if plainSGD {
			return m.matMul(ins, -lr, 1, w)
		}
		vel, err := m.slotFor(l, "velocity")
		if err != nil {
			return err
		}
		if err := m.matMul(ins, -lr, float32(u.Momentum), vel); err != nil {
			return err
		}
		for i, v := range vel {
			w[i] += v
		}
		return nil
	}
	// The gradient itself, then the rule over it.
	var g []float32
	if ins.info.Kind == ops.OpSumRows {
		a := &m.slots[ins.in[0]]
		if cap(m.colSum) < a.shape[1] {
			m.colSum = make([]float32, a.shape[1])
		}
		g = m.colSum[:a.shape[1]]
		clear(g)
		ops.SumRows(a.shape[0], a.shape[1], a.data, g)
	} else {
		g = m.buffer(ins.out)
		if err := m.matMul(ins, 1, 0, g); err != nil {
			return err
		}
	}
	return m.apply(l, u, w, g)
}

// apply updates w from its gradient g with the rule's arithmetic, exactly as
// package optim computes it.
func (m *graphMachine) apply(l *learnable, u *Update, w, g []float32) error {
	lr := float32(u.LearningRate)
	switch u.Rule {
	case SGD:
		if u.Momentum == 0 {
			for i, gi := range g {
				w[i] -= lr * gi
			}
			return nil
		}
		vel, err := m.slotFor(l, "velocity")
		if err != nil {
			return err
		}
		mom := float32(u.Momentum)
		for i, gi := range g {
			vel[i] = mom*vel[i] - lr*gi
			if u.Nesterov {
				w[i] += mom*vel[i] - lr*gi
			} else {
				w[i] += vel[i]
			}
		}
		return nil
	case Adam:
		ms, err := m.slotFor(l, "m")
		if err != nil {
			return err
		}
		vs, err := m.slotFor(l, "v")
		if err != nil {
			return err
		}
		t := float64(u.Step)
		lrT := float32(u.LearningRate * math.Sqrt(1-math.Pow(u.Beta2, t)) / (1 - math.Pow(u.Beta1, t)))
		b1, b2, eps := float32(u.Beta1), float32(u.Beta2), float32(u.Epsilon)
		for i, gi := range g {
			ms[i] = b1*ms[i] + (1-b1)*gi
			vs[i] = b2*vs[i] + (1-b2)*gi*gi
			w[i] -= lrT * ms[i] / (float32(math.Sqrt(float64(vs[i]))) + eps)
		}
		return nil
	}
	return fmt.Errorf("update rule %v: %w", u.Rule, ErrUpdateUnsupported)
}

func (m *graphMachine) Reset() {}

func (m *graphMachine) Close() error {
	m.closed = true
	for i := range m.slots {
		m.slots[i].owned, m.slots[i].data = nil, nil
	}
	return nil
}
