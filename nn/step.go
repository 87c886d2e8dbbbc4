package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/optim"
)

// trainStep runs one training step on the samples at idx and returns the
// batch loss.
func (m *Sequential) trainStep(p *program, data Dataset, idx []int) (float64, error) {
	c := m.compiled
	labels, err := p.gather(data, idx)
	if err != nil {
		return 0, err
	}
	defer p.machine.Reset()
	if done, loss, err := m.deviceStep(p, labels, len(idx)); done || err != nil {
		return loss, err
	}
	if err := p.run(); err != nil {
		return 0, err
	}
	loss, err := p.results(c, labels, len(idx))
	if err != nil || math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, err // a non-finite loss is reported by the caller, which knows the epoch
	}
	vars, err := p.variables()
	if err != nil {
		return 0, err
	}
	if err := c.optimizer.Apply(vars); err != nil {
		return 0, err
	}
	// The tape machine adds each step's gradients into the bound gradient
	// buffers, so they are cleared once used; a Trainer's RunAll writes
	// fresh ones.
	if _, fresh := p.machine.(device.Trainer); !fresh {
		for _, v := range vars {
			clear(v.Grad)
		}
	}
	return loss, nil
}

// deviceStep runs the step on the machine, update included, when the
// machine is a device.Trainer and the optimizer's update can travel as
// data: only the batch goes in, and the loss and outputs come back. It
// reports false when the step is left to the caller.
func (m *Sequential) deviceStep(p *program, labels []float32, batch int) (done bool, loss float64, err error) {
	c := m.compiled
	tr, ok := p.machine.(device.Trainer)
	if !ok {
		return false, 0, nil
	}
	u, ok := deviceUpdate(c.optimizer)
	if !ok {
		return false, 0, nil
	}
	if err := tr.Train(u); err != nil {
		if errors.Is(err, device.ErrUpdateUnsupported) {
			return false, 0, nil
		}
		return true, 0, err
	}
	// The update is applied: count it, as Apply would have. Apply with no
	// variables updates nothing and counts one iteration.
	if err := c.optimizer.Apply(nil); err != nil {
		return true, 0, err
	}
	loss, err = p.results(c, labels, batch)
	return true, loss, err
}

// deviceUpdate describes the optimizer's next step as a device.Update when
// a machine may apply it: plain SGD, whose whole state (the learning rate
// and the iteration count) stays in the optimizer. Optimizers with slots
// (momentum, Adam's moments) update on the host, where SaveCheckpoint reads
// their state.
func deviceUpdate(o optim.Optimizer) (device.Update, bool) {
	s, ok := o.(*optim.SGD)
	if !ok || s.Config().Momentum != 0 {
		return device.Update{}, false
	}
	return device.Update{Rule: device.SGD, LearningRate: s.LearningRate(), Step: s.Iterations() + 1}, true
}

// gather fills the program's input buffers with the samples and labels at
// idx and returns the labels.
func (p *program) gather(data Dataset, idx []int) ([]float32, error) {
	if err := data.GatherInputs(idx, p.x.Data().([]float32)); err != nil {
		return nil, fmt.Errorf("reading samples: %w", err)
	}
	labels := p.y.Data().([]float32)
	if err := data.GatherLabels(idx, labels); err != nil {
		return nil, fmt.Errorf("reading labels: %w", err)
	}
	return labels, nil
}

// results reads the loss of the step just run and, when it is finite,
// updates the metrics with the outputs.
func (p *program) results(c *compiled, labels []float32, batch int) (float64, error) {
	loss, err := p.lossValue()
	if err != nil {
		return 0, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, nil
	}
	out, err := p.outputs()
	if err != nil {
		return 0, err
	}
	for _, mt := range c.metrics {
		if err := mt.Update(labels, len(labels)/batch, out, p.outCols); err != nil {
			return 0, err
		}
	}
	return loss, nil
}

// evalStep computes the loss and updates the metrics for one batch.
func (m *Sequential) evalStep(data Dataset, idx []int, labelCols int) (float64, error) {
	p, err := m.program(len(idx), labelCols, modeEvaluate)
	if err != nil {
		return 0, err
	}
	labels, err := p.gather(data, idx)
	if err != nil {
		return 0, err
	}
	defer p.machine.Reset()
	if err := p.run(); err != nil {
		return 0, err
	}
	loss, err := p.results(m.compiled, labels, len(idx))
	if err != nil {
		return 0, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("%w (%v)", ErrNonFiniteLoss, loss)
	}
	return loss, nil
}

func (m *Sequential) predictStep(inputs Inputs, idx []int, dst []float32) error {
	p, err := m.program(len(idx), 0, modePredict)
	if err != nil {
		return err
	}
	if err := inputs.GatherInputs(idx, p.x.Data().([]float32)); err != nil {
		return fmt.Errorf("reading samples: %w", err)
	}
	defer p.machine.Reset()
	if err := p.run(); err != nil {
		return err
	}
	out, err := p.outputs()
	if err != nil {
		return err
	}
	copy(dst, out)
	return nil
}
