package nn

import (
	"fmt"
	"math"
)

// trainStep runs one training step on the samples at idx and returns the
// batch loss.
func (m *Sequential) trainStep(p *program, data Dataset, idx []int) (float64, error) {
	c := m.compiled
	if err := data.GatherInputs(idx, p.x.Data().([]float32)); err != nil {
		return 0, fmt.Errorf("reading samples: %w", err)
	}
	labels := p.y.Data().([]float32)
	if err := data.GatherLabels(idx, labels); err != nil {
		return 0, fmt.Errorf("reading labels: %w", err)
	}
	defer p.machine.Reset()
	if err := p.run(); err != nil {
		return 0, err
	}
	loss, err := p.lossValue()
	if err != nil {
		return 0, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, nil // reported by the caller, which knows the epoch
	}
	out, err := p.outputs()
	if err != nil {
		return 0, err
	}
	for _, mt := range c.metrics {
		if err := mt.Update(labels, len(labels)/len(idx), out, p.outCols); err != nil {
			return 0, err
		}
	}
	vars, err := p.variables()
	if err != nil {
		return 0, err
	}
	if err := c.optimizer.Apply(vars); err != nil {
		return 0, err
	}
	// The machine adds each step's gradients into the bound gradient
	// buffers, so they are cleared once used.
	for _, v := range vars {
		clear(v.Grad)
	}
	return loss, nil
}

// evalStep computes the loss and updates the metrics for one batch.
func (m *Sequential) evalStep(data Dataset, idx []int, labelCols int) (float64, error) {
	p, err := m.program(len(idx), labelCols, modeEvaluate)
	if err != nil {
		return 0, err
	}
	if err := data.GatherInputs(idx, p.x.Data().([]float32)); err != nil {
		return 0, fmt.Errorf("reading samples: %w", err)
	}
	labels := p.y.Data().([]float32)
	if err := data.GatherLabels(idx, labels); err != nil {
		return 0, fmt.Errorf("reading labels: %w", err)
	}
	defer p.machine.Reset()
	if err := p.run(); err != nil {
		return 0, err
	}
	loss, err := p.lossValue()
	if err != nil {
		return 0, err
	}
	out, err := p.outputs()
	if err != nil {
		return 0, err
	}
	for _, mt := range m.compiled.metrics {
		if err := mt.Update(labels, labelCols, out, p.outCols); err != nil {
			return 0, err
		}
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
