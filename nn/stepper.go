package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/metrics"
)

// stepper runs the training steps of one epoch and keeps its running
// figures. Each step either runs to its end before the next one starts, or,
// where it pipelines (fitRun.pipelines, the one place that decides), is
// started on the device and left running while the host prepares the next:
// its loss and metrics are read, and its batch hooks called, once the next
// step has been started. At most one step is under way (pending).
type stepper struct {
	r        *fitRun
	epoch    int
	lossMean metrics.Mean
	// entries are the epoch's running figures: the loss, then the metrics.
	entries []logEntry
	// done is the number of the epoch's steps finished.
	done int
	// pending is the step started on the device and not yet finished.
	pending *startedBatch
}

// startedBatch is a training step started on the device (startShard) and
// not yet finished: its program, labels, samples and number.
type startedBatch struct {
	p      *program
	labels []float32
	idx    []int
	step   int
}

// newStepper starts an epoch whose steps before first are done: the
// metrics start again from nothing.
func (r *fitRun) newStepper(epoch, first int) *stepper {
	c := r.m.compiled
	for _, mt := range c.metrics {
		mt.Reset()
	}
	return &stepper{r: r, epoch: epoch, entries: make([]logEntry, 1+len(c.metrics)), done: first}
}

// pipelines says whether Fit starts program p's steps before finishing
// the one before: PipelineSteps allows it, there is no strategy (whose
// steps exchange their results), every callback allows its batch hooks to
// run a step late (allowsLag: known once they have run), p's machine runs
// steps asynchronously (driver.Pipeliner), and every metric computes on
// the device (a host metric needs the step's labels and outputs).
func (r *fitRun) pipelines(p *program) bool {
	if r.cfg.serialSteps || r.m.compiled.strategy != nil {
		return false
	}
	for _, cb := range r.callbacks {
		if !allowsLag(cb) {
			return false
		}
	}
	pl, ok := p.machine.(driver.Pipeliner)
	if !ok || !(pl.Pipelines() || pipelineAlways) {
		return false
	}
	for _, on := range p.onDevice {
		if !on {
			return false
		}
	}
	return true
}

// pipelineAlways makes Fit take the pipelined path on machines that run
// each step at once too (the CPU's), so that tests run it everywhere.
var pipelineAlways = false

// step trains the epoch's step-th batch: it runs it, or starts it and
// finishes the step before. When finishing the step before stops training
// (Model.StopTraining in a hook), the batch is not trained.
func (s *stepper) step(step int) error {
	r, m := s.r, s.r.m
	c := m.compiled
	idx, err := r.batch(step)
	if err != nil {
		if !errors.Is(err, errStreamEnd) {
			err = s.stepError(step, err)
		}
		if ferr := s.finish(); ferr != nil {
			return ferr
		}
		return err
	}
	mine := idx
	if st := c.strategy; st != nil {
		mine = shard(idx, st.Rank(), st.Size())
	}
	p, err := m.programFor(programKey{batch: len(mine), labels: r.labels, mode: modeTrain, weighted: r.weigh != nil})
	if err != nil {
		s.abandon()
		return fmt.Errorf("fit: %w", err)
	}
	p.weigh, p.weighSteps = r.weigh, r.weighSteps
	lag := r.pipelines(p)
	if s.pending != nil && (s.pending.p != p || !lag) {
		// The step before must be done before this one runs: on another
		// machine (a stream of its own), or run at once.
		if err := s.finish(); err != nil {
			return err
		}
		if m.stopTraining.Load() {
			return nil
		}
	}
	if !lag {
		if err := s.beginBatch(step); err != nil {
			return err
		}
		loss, err := m.trainShard(p, r.data, mine, len(idx))
		if err != nil {
			return s.stepError(step, err)
		}
		return s.endBatch(step, len(idx), loss)
	}
	labels, err := m.startShard(p, r.data, mine, len(idx), true)
	if err != nil {
		err = s.stepError(step, err)
		if ferr := s.finish(); ferr != nil {
			return ferr
		}
		return err
	}
	started := &startedBatch{p: p, labels: labels, idx: mine, step: step}
	if err := s.finish(); err != nil {
		s.pending = started
		s.abandon()
		return err
	}
	s.pending = started
	return nil
}

// finish finishes the pending step, if any: reads its loss and metrics and
// calls its batch hooks.
func (s *stepper) finish() error {
	b := s.pending
	if b == nil {
		return nil
	}
	s.pending = nil
	loss, err := s.r.m.finishShard(b.p, b.labels, len(b.idx), len(b.idx), true)
	if err != nil {
		return s.stepError(b.step, err)
	}
	if err := s.beginBatch(b.step); err != nil {
		return err
	}
	return s.endBatch(b.step, len(b.idx), loss)
}

// abandon waits for the pending step, if any, ignoring its results: Fit is
// returning another error, and leaves no step running.
func (s *stepper) abandon() {
	if b := s.pending; b != nil {
		s.pending = nil
		_, _ = s.r.m.finishShard(b.p, b.labels, len(b.idx), len(b.idx), true)
	}
}

func (s *stepper) stepError(step int, err error) error {
	if s.r.steps == 0 { // a stream's first epoch: the steps are not known
		return fmt.Errorf("fit: epoch %d/%d, step %d: %w", s.epoch+1, s.r.cfg.epochs, step+1, err)
	}
	return fmt.Errorf("fit: epoch %d/%d, step %d/%d: %w", s.epoch+1, s.r.cfg.epochs, step+1, s.r.steps, err)
}

func (s *stepper) beginBatch(step int) error {
	if err := s.r.hooks("on_train_batch_begin", func(cb Callback) error { return cb.OnTrainBatchBegin(step, Logs{}) }); err != nil {
		return fmt.Errorf("fit: epoch %d/%d: %w", s.epoch+1, s.r.cfg.epochs, err)
	}
	return nil
}

// endBatch takes the loss of a step of batch samples (the global batch's)
// and calls the batch-end hooks.
func (s *stepper) endBatch(step, batch int, loss float64) error {
	r, c := s.r, s.r.m.compiled
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return s.stepError(step, fmt.Errorf("%w (%v): training diverged; lower the learning rate (now %g) or check the data for NaN or huge values%s",
			ErrNonFiniteLoss, loss, c.optimizer.LearningRate(), c.maskHint()))
	}
	s.done = step + 1
	r.endedRows = batch
	c.addToLogs(s.entries, &s.lossMean, loss, batch)
	if len(r.callbacks) > 0 {
		logs := logsOf(s.entries)
		if err := r.hooks("on_train_batch_end", func(cb Callback) error { return cb.OnTrainBatchEnd(step, logs) }); err != nil {
			return fmt.Errorf("fit: epoch %d/%d: %w", s.epoch+1, r.cfg.epochs, err)
		}
	}
	return nil
}
