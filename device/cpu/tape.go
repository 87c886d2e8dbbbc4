package cpu

import (
	"fmt"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tapeMachine runs a graph on gorgonia's tape machine: each op's own Do.
// It is the reference the plan machines are tested against, and the
// announced fallback for graphs the plan compiler does not know. Train is
// the plan's unfused path on the host: RunAll, then optim.Update.Apply on
// each weight and its gradient, then ops.MovingUpdate on each
// non-trainable weight the graph updates (an ops.MovingAverage node) with
// the step's statistic.
type tapeMachine struct {
	tm         gorgonia.VM
	learnables []*gorgonia.Node
	slots      func(variable, name string, size int) ([]float32, error)
	// reduce all-reduces the gradients of a data-parallel step (see
	// driver.MachineOptions.ReduceGradients), and the statistics of its
	// moving updates; nil: none.
	reduce func(grads [][]float32) error
	moving []movingUpdate
}

// movingUpdate is an ops.MovingAverage node of the graph: Train updates
// weight (its first operand, an input of the graph) with the statistic
// (its second), which the graph reads into stat: the tape machine's
// registers hold a node's value only until a later node reuses them.
type movingUpdate struct {
	p      ops.MovingParams
	weight *gorgonia.Node
	stat   gorgonia.Value
}

var _ driver.Trainer = (*tapeMachine)(nil)

// newTapeMachine makes a tape machine for g, adding to g a read of the
// statistic of each ops.MovingAverage node.
func newTapeMachine(g *gorgonia.ExprGraph, opts driver.MachineOptions) (*tapeMachine, error) {
	var vmOpts []gorgonia.VMOpt
	if len(opts.Learnables) > 0 {
		vmOpts = append(vmOpts, gorgonia.BindDualValues(opts.Learnables...))
	}
	m := &tapeMachine{learnables: opts.Learnables, slots: opts.Slots, reduce: opts.ReduceGradients}
	var stats []*gorgonia.Node
	for _, n := range g.AllNodes() {
		info, ok := ops.Inspect(n.Op())
		if !ok || info.Kind != ops.OpMovingAverage {
			continue
		}
		var ch []*gorgonia.Node // the operands, in order
		for it := g.From(n.ID()); it.Next(); {
			ch = append(ch, it.Node().(*gorgonia.Node))
		}
		if len(ch) != 2 || ch[0].Op() != nil || ch[0].Dtype() != tensor.Float32 {
			return nil, fmt.Errorf("device: node %q does not update a float32 input of the graph", n.Name())
		}
		m.moving = append(m.moving, movingUpdate{p: info.Moving, weight: ch[0],
			stat: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(ch[1].Shape().Clone()...))})
		stats = append(stats, ch[1])
	}
	for i, st := range stats {
		gorgonia.Read(st, &m.moving[i].stat)
	}
	m.tm = gorgonia.NewTapeMachine(g, vmOpts...)
	return m, nil
}

func (m *tapeMachine) RunAll() error { return m.tm.RunAll() }
func (m *tapeMachine) Reset()        { m.tm.Reset() }
func (m *tapeMachine) Close() error  { return m.tm.Close() }

// Train runs the graph and updates every learnable from its gradient. The
// tape machine adds each run's gradients into the bound gradient buffers,
// so they are cleared once used.
func (m *tapeMachine) Train(u optim.Update) error {
	if err := u.Check(); err != nil {
		return err
	}
	if len(m.learnables) == 0 {
		return fmt.Errorf("device: Train on a graph with no learnables: %w", driver.ErrUpdateUnsupported)
	}
	names := u.SlotNames()
	if len(names) > 0 && m.slots == nil {
		return fmt.Errorf("device: %v keeps slots, but the machine was made without the optimizer's slots", u.Rule)
	}
	if err := m.tm.RunAll(); err != nil {
		return err
	}
	slots := make([][]float32, len(names))
	grads := make([][]float32, len(m.learnables))
	for i, l := range m.learnables {
		g, err := l.Grad()
		if err != nil {
			return fmt.Errorf("device: the gradient of %s: %w: %w", l.Name(), err, driver.ErrUpdateUnsupported)
		}
		grads[i] = g.Data().([]float32)
	}
	if m.reduce != nil {
		if err := m.reduce(grads); err != nil {
			return fmt.Errorf("device: reducing the gradients: %w", err)
		}
	}
	if u.GlobalClipNorm > 0 {
		u.GlobalScale = optim.GlobalScale(u.GlobalClipNorm, grads...)
	}
	for li, l := range m.learnables {
		w, grad := l.Value().Data().([]float32), grads[li]
		for i, name := range names {
			var err error
			if slots[i], err = m.slots(l.Name(), name, len(w)); err != nil {
				return fmt.Errorf("device: optimizer slot %q of %s: %w", name, l.Name(), err)
			}
		}
		if err := u.CheckSlots(w, grad, slots); err != nil {
			return fmt.Errorf("device: updating %s: %w", l.Name(), err)
		}
		u.Apply(w, grad, slots)
		clear(grad)
	}
	return m.updateMoving()
}

// updateMoving updates the non-trainable weights of the graph's
// ops.MovingAverage nodes with the statistics the run read back, after
// averaging them over the replicas of a data-parallel step as the plan
// does (see plan.Plan.TrainingSteps).
func (m *tapeMachine) updateMoving() error {
	if len(m.moving) == 0 {
		return nil
	}
	stats := make([][]float32, len(m.moving))
	for i, u := range m.moving {
		d, ok := u.stat.(*tensor.Dense)
		if !ok {
			return fmt.Errorf("device: the statistic of %s was not read back", u.weight.Name())
		}
		stats[i] = d.Data().([]float32)
	}
	if m.reduce != nil {
		if err := m.reduce(stats); err != nil {
			return fmt.Errorf("device: reducing the moving statistics: %w", err)
		}
	}
	for i, u := range m.moving {
		ops.MovingUpdate(u.p, u.weight.Value().Data().([]float32), stats[i])
	}
	return nil
}
