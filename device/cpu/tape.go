package cpu

import (
	"fmt"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
)

// tapeMachine runs a graph on gorgonia's tape machine: each op's own Do.
// It is the reference the plan machines are tested against, and the
// announced fallback for graphs the plan compiler does not know. Train is
// the plan's unfused path on the host: RunAll, then optim.Update.Apply on
// each weight and its gradient.
type tapeMachine struct {
	tm         gorgonia.VM
	learnables []*gorgonia.Node
	slots      func(variable, name string, size int) ([]float32, error)
	// reduce all-reduces the gradients of a data-parallel step (see
	// driver.MachineOptions.ReduceGradients); nil: none.
	reduce func(grads [][]float32) error
}

var _ driver.Trainer = (*tapeMachine)(nil)

func newTapeMachine(g *gorgonia.ExprGraph, opts driver.MachineOptions) *tapeMachine {
	var vmOpts []gorgonia.VMOpt
	if len(opts.Learnables) > 0 {
		vmOpts = append(vmOpts, gorgonia.BindDualValues(opts.Learnables...))
	}
	return &tapeMachine{tm: gorgonia.NewTapeMachine(g, vmOpts...), learnables: opts.Learnables, slots: opts.Slots, reduce: opts.ReduceGradients}
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
	return nil
}
