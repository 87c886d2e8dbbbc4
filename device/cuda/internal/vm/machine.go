package vm

import (
	"errors"
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Backend executes a plan's buffers and steps on one device. Upload, Exec
// and Download may queue work and return before it is done; Wait waits for
// all of it. Every call but Close is made inside Do.
type Backend interface {
	// Do runs f with the device ready for the calls below (for CUDA: on a
	// locked OS thread with the GPU's context current).
	Do(f func() error) error
	// Alloc reserves the plan's buffers; it is called once, first.
	Alloc(bufs []Buffer) error
	// Upload queues a copy of src into buffer b (len(src) is its size).
	Upload(b int, src []float32) error
	// Exec queues step i of the plan, s.
	Exec(i int, s *Step) error
	// Download queues a copy of buffer b into dst, which must not be read
	// before Wait returns.
	Download(b int, dst []float32) error
	// Wait waits for the queued work and reports what went wrong in it; a
	// sparse target that is not a class index is a *TargetError.
	Wait() error
	// Close releases the device memory.
	Close() error
}

// TargetError is a sparse loss's target that is not a class index, found
// by the device while running Step.
type TargetError struct {
	Step int // index in Plan.Steps
	Row  int
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("step %d: the target of sample %d is not a class index", e.Step, e.Row)
}

// Machine runs a plan on a Backend under the step protocol of package nn
// (device.Machine): before each run the inputs' host values (the batch and
// its labels) and the weights' host values are copied to the device; after
// it the gradients are copied into host tensors bound to the gradient
// nodes, where node.Grad() finds them, and the values of the graph's
// gorgonia.Read statements are stored where those statements point.
//
// The weights travel both ways every step because under that protocol
// the optimizer updates them on the host.
type Machine struct {
	plan   *Plan
	be     Backend
	grads  []*tensor.Dense  // per learnable with a gradient: where it lands
	reads  [][]float32      // per Read: where its values land
	values []gorgonia.Value // per Read: what it stores, over reads[i]
	closed bool
}

// New binds p to be: allocates the buffers, uploads the constants, and binds
// a host tensor to each gradient node. A machine owns be and closes it.
func New(p *Plan, be Backend) (*Machine, error) {
	m := &Machine{plan: p, be: be, grads: make([]*tensor.Dense, len(p.Learnables)),
		reads: make([][]float32, len(p.Reads)), values: make([]gorgonia.Value, len(p.Reads))}
	for i, l := range p.Learnables {
		if p.Grads[i] == None {
			continue
		}
		g := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(l.Shape()...))
		// nn reads a weight's gradient with node.Grad(), which returns the
		// value of the node's Deriv when no gorgonia machine bound a dual
		// value to it.
		if err := gorgonia.UnsafeLet(l.Deriv(), g); err != nil {
			return nil, fmt.Errorf("binding the gradient of %q: %w", l.Name(), err)
		}
		m.grads[i] = g
	}
	for i, r := range p.Reads {
		m.reads[i] = make([]float32, max(r.Shape.TotalSize(), 1))
		if !r.Shape.IsScalar() {
			m.values[i] = tensor.New(tensor.WithShape(r.Shape...), tensor.WithBacking(m.reads[i]))
		}
	}
	err := be.Do(func() error {
		if err := be.Alloc(p.Buffers); err != nil {
			return err
		}
		for b, buf := range p.Buffers {
			if buf.Role == Const {
				if err := be.Upload(b, buf.Data); err != nil {
					return fmt.Errorf("copying constant %q: %w", buf.Node.Name(), err)
				}
			}
		}
		return be.Wait()
	})
	if err != nil {
		return nil, errors.Join(err, be.Close())
	}
	return m, nil
}

// RunAll runs the graph once on the current host values of its inputs and
// weights.
func (m *Machine) RunAll() error {
	if m.closed {
		return errors.New("the machine was closed")
	}
	p := m.plan
	return m.be.Do(func() error {
		for b, buf := range p.Buffers {
			if buf.Role != Input && buf.Role != Weight {
				continue
			}
			data, err := hostData(buf.Node)
			if err != nil {
				return err
			}
			if len(data) != buf.Elems {
				return fmt.Errorf("%s %q holds %d values, want %d", buf.Role, buf.Node.Name(), len(data), buf.Elems)
			}
			if err := m.be.Upload(b, data); err != nil {
				return fmt.Errorf("copying %s %q to the device: %w", buf.Role, buf.Node.Name(), err)
			}
		}
		for i := range p.Steps {
			if err := m.be.Exec(i, &p.Steps[i]); err != nil {
				return fmt.Errorf("%v for node %q: %w", p.Steps[i], p.Steps[i].Node.Name(), err)
			}
		}
		for i, g := range m.grads {
			if g == nil {
				continue
			}
			if err := m.be.Download(p.Grads[i], g.Data().([]float32)); err != nil {
				return fmt.Errorf("copying the gradient of %q to the host: %w", p.Learnables[i].Name(), err)
			}
		}
		for i, r := range p.Reads {
			if err := m.be.Download(r.Buf, m.reads[i]); err != nil {
				return fmt.Errorf("copying %q to the host: %w", r.Node.Name(), err)
			}
		}
		if err := m.be.Wait(); err != nil {
			return m.explain(err)
		}
		// What a Read stores: a scalar for a scalar node, as gorgonia's
		// machines do, else the tensor (the same one every run).
		for i, r := range p.Reads {
			if r.Shape.IsScalar() {
				*r.Into = gorgonia.NewF32(m.reads[i][0])
			} else {
				*r.Into = m.values[i]
			}
		}
		return nil
	})
}

// explain rewrites a TargetError with the step's node and the offending
// value, which the host still has.
func (m *Machine) explain(err error) error {
	var te *TargetError
	if !errors.As(err, &te) || te.Step < 0 || te.Step >= len(m.plan.Steps) {
		return err
	}
	s := m.plan.Steps[te.Step]
	target := m.plan.Buffers[s.In[1]].Node
	data, derr := hostData(target)
	if derr != nil || te.Row >= len(data) {
		return fmt.Errorf("%v: target of sample %d is not a class index in [0, %d)", s.Loss, te.Row, s.N)
	}
	return fmt.Errorf("%v: target of sample %d is %v, but it must be a class index in [0, %d)", s.Loss, te.Row, data[te.Row], s.N)
}

// Reset does nothing: a run leaves nothing behind that the next one would see.
func (m *Machine) Reset() {}

// Close releases the machine's device memory. Closing twice does nothing.
func (m *Machine) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	return m.be.Close()
}

// hostData returns the float32 values bound to an input node.
func hostData(n *gorgonia.Node) ([]float32, error) {
	switch v := n.Value().(type) {
	case *tensor.Dense:
		if d, ok := v.Data().([]float32); ok {
			return d, nil
		}
		return nil, fmt.Errorf("node %q holds %v values: the GPU machine computes in float32 only", n.Name(), v.Dtype())
	case *gorgonia.F32:
		return []float32{float32(*v)}, nil
	case nil:
		return nil, fmt.Errorf("node %q has no value: bind one (gorgonia.WithValue or gorgonia.Let) before running", n.Name())
	default:
		return nil, fmt.Errorf("node %q holds a %T: the GPU machine computes on float32 tensors", n.Name(), v)
	}
}
