package nn

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/ops"
)

// trainStep runs one training step on the samples at idx and returns the
// batch loss. Every optimizer's update runs on the model's device, with its
// slots there: only the batch goes in, and the loss and outputs come back.
func (m *Sequential) trainStep(p *program, ds data.Dataset, idx []int) (float64, error) {
	return m.trainShard(p, ds, idx, len(idx))
}

// trainShard is trainStep on this replica's shard idx of a global batch of
// global samples (WithStrategy): it returns the global batch's loss.
func (m *Sequential) trainShard(p *program, ds data.Dataset, idx []int, global int) (float64, error) {
	labels, err := m.startShard(p, ds, idx, global, false)
	if err != nil {
		return 0, err
	}
	return m.finishShard(p, labels, len(idx), global, false)
}

// startShard gathers the samples at idx, this replica's shard of a global
// batch of global samples, and runs the training step on them, or when
// started is true starts it (driver.Pipeliner) and returns once it is
// queued, for finishShard to finish. It returns the shard's labels.
func (m *Sequential) startShard(p *program, ds data.Dataset, idx []int, global int, started bool) (_ []float32, err error) {
	c := m.compiled
	labels, err := p.gather(ds, idx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.machine.Reset()
		}
	}()
	if p.weights != nil {
		if err := p.fillWeights(idx, labels); err != nil {
			return nil, err
		}
	}
	tr, ok := p.machine.(driver.Trainer)
	if !ok {
		return nil, fmt.Errorf("the %s machine (%T) cannot run training steps: its driver must implement driver.Trainer", c.device.Short(), p.machine)
	}
	u := c.optimizer.NextUpdate()
	if p.step != nil {
		// Dropout draws its units from the step: the optimizer's
		// iteration, which checkpoints keep, so a resumed run drops what
		// the interrupted one would have; and from each unit's place in
		// the global batch, so replicas drop what one process drops.
		first := 0
		if s := c.strategy; s != nil {
			first = s.Rank() * global / s.Size() // shard's start
		}
		sv := ops.StepValues(uint64(u.Iteration), first)
		copy(p.step.Data().([]float32), sv[:])
	}
	c.gradScale = float32(len(idx)) / float32(global)
	if started {
		pl, ok := tr.(driver.Pipeliner)
		if !ok {
			return nil, fmt.Errorf("the %s machine (%T) cannot start training steps: its driver must implement driver.Pipeliner", c.device.Short(), p.machine)
		}
		err = pl.StartTrain(u)
	} else {
		err = tr.Train(u)
	}
	if err != nil {
		return nil, err
	}
	c.optimizer.Advance()
	return labels, nil
}

// finishShard finishes the training step startShard ran (started: or
// started) on a shard of batch samples with labels, of a global batch of
// global samples: the loss, which it returns, and the metrics. The layers'
// state (BatchNormalization's moving statistics) was updated in the step,
// on the device.
func (m *Sequential) finishShard(p *program, labels []float32, batch, global int, started bool) (float64, error) {
	defer p.machine.Reset()
	if started {
		if err := p.machine.(driver.Pipeliner).FinishTrain(); err != nil {
			return 0, err
		}
	}
	return p.results(m.compiled, labels, batch, global)
}

// gather fills the program's input buffers with the samples and labels at
// idx and returns the labels.
func (p *program) gather(ds data.Dataset, idx []int) ([]float32, error) {
	if err := ds.GatherInputs(idx, p.x.Data().([]float32)); err != nil {
		return nil, fmt.Errorf("reading samples: %w", err)
	}
	labels := p.y.Data().([]float32)
	if err := ds.GatherLabels(idx, labels); err != nil {
		return nil, fmt.Errorf("reading labels: %w", err)
	}
	return labels, nil
}

// results reads the loss of the step just run and, when it is finite,
// updates the metrics with the outputs. With a strategy, batch is this
// replica's shard of a global batch of global samples, and both are
// summed over the replicas (reduceResults).
func (p *program) results(c *compiled, labels []float32, batch, global int) (float64, error) {
	loss, err := p.lossValue()
	if err != nil {
		return 0, err
	}
	if c.strategy != nil {
		return c.reduceResults(p, loss, batch, global, true)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, nil
	}
	for i, mt := range c.metrics {
		if o, ok := mt.(*outputLoss); ok {
			v, err := scalarValue(p.metricReads[i])
			if err != nil {
				return 0, fmt.Errorf("%s: %w", c.metricNames[i], err)
			}
			o.mean.Add(v, float64(batch))
			continue
		}
		if p.onDevice[i] {
			v, ok := p.metricReads[i].(*tensor.Dense)
			if !ok {
				return 0, fmt.Errorf("metric %s: its batch state is a %T, want a tensor", c.metricNames[i], p.metricReads[i])
			}
			// A mean over the steps of an output of several steps, as
			// Keras' metrics average every step's value.
			if err := mt.(metrics.OnDevice).AddDeviceBatch(v.Data().([]float32), batch*p.outSteps[c.metricOut[i]]); err != nil {
				return 0, err
			}
			continue
		}
		h := c.metricOut[i]
		out, err := p.outputs(h)
		if err != nil {
			return 0, err
		}
		ys, lc, oc := p.headLabels(labels, batch, h), p.stepLabelCols(h), p.outCols[h]
		if p.maskReads[h] != nil {
			// Only the steps the mask keeps count, as Keras' metrics
			// take the mask as the steps' weights.
			if ys, out, err = p.keptSteps(h, ys, out); err != nil {
				return 0, fmt.Errorf("metric %s: %w", c.metricNames[i], err)
			}
			if len(ys) == 0 {
				continue // no step kept: nothing to add
			}
		}
		if err := mt.Update(ys, lc, out, oc); err != nil {
			return 0, err
		}
	}
	return loss, nil
}

// keptSteps are the rows of labels ys and outputs out of output h whose
// step its mask keeps (a mask value of 1).
func (p *program) keptSteps(h int, ys, out []float32) (keptYs, keptOut []float32, err error) {
	v, ok := p.maskReads[h].(*tensor.Dense)
	if !ok {
		return nil, nil, fmt.Errorf("the mask is a %T, want a tensor", p.maskReads[h])
	}
	mask := v.Data().([]float32)
	lc, oc := p.stepLabelCols(h), p.outCols[h]
	if len(ys) != len(mask)*lc || len(out) != len(mask)*oc {
		return nil, nil, fmt.Errorf("%d mask values for %d label and %d output values", len(mask), len(ys), len(out))
	}
	for r, m := range mask {
		if m != 0 {
			keptYs = append(keptYs, ys[r*lc:(r+1)*lc]...)
			keptOut = append(keptOut, out[r*oc:(r+1)*oc]...)
		}
	}
	return keptYs, keptOut, nil
}

// spreadWeights spreads the first batch weights of w, one per sample, over
// steps rows each: sample i's weight fills w[i·steps : (i+1)·steps].
func spreadWeights(w []float32, batch, steps int) {
	if steps < 2 {
		return
	}
	for i := batch - 1; i >= 0; i-- { // from the last: each row is read before it is written
		v := w[i]
		for j := range steps {
			w[i*steps+j] = v
		}
	}
}

// headLabels are output h's columns of a batch of batch rows of labels:
// all of them for a model of one output.
func (p *program) headLabels(labels []float32, batch, h int) []float32 {
	if len(p.labelCols) < 2 {
		return labels
	}
	off, cols, ld := 0, p.labelCols[h], len(labels)/batch
	for _, c := range p.labelCols[:h] {
		off += c
	}
	out := make([]float32, 0, batch*cols)
	for r := range batch {
		out = append(out, labels[r*ld+off:r*ld+off+cols]...)
	}
	return out
}

// evalStep computes the loss and updates the metrics for one batch: idx,
// or with a strategy this replica's shard idx of a global batch of global
// samples.
func (m *Sequential) evalStep(ds data.Dataset, idx []int, labels labelLayout, global int) (float64, error) {
	p, err := m.program(len(idx), labels, modeEvaluate)
	if err != nil {
		return 0, err
	}
	ys, err := p.gather(ds, idx)
	if err != nil {
		return 0, err
	}
	defer p.machine.Reset()
	if err := p.run(); err != nil {
		return 0, err
	}
	loss, err := p.results(m.compiled, ys, len(idx), global)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("%w (%v)%s", ErrNonFiniteLoss, loss, m.compiled.maskHint())
	}
	return loss, nil
}

// predictStep writes the outputs for the samples at idx into dsts, one per
// output.
func (m *Sequential) predictStep(inputs data.Inputs, idx []int, dsts [][]float32) error {
	p, err := m.program(len(idx), labelLayout{}, modePredict)
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
	for h, dst := range dsts {
		out, err := p.outputs(h)
		if err != nil {
			return err
		}
		copy(dst, out)
	}
	return nil
}
