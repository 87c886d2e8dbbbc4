package nn

import (
	"fmt"
	"time"

	"github.com/gokeras/gokeras/internal/formats/progbar"
)

// progbarLogger is the callback that writes Fit's progress, as Keras' fit
// adds a ProgbarLogger when verbose is not 0: the "Epoch 1/10" header when
// an epoch begins, the running figures after each step (a live bar on a
// terminal) and the epoch's line when it ends. Fit puts it first in the
// list, so the line shows the figures Fit computed, not those later
// callbacks add (such as "lr"), and their messages come after it.
type progbarLogger struct {
	CallbackBase
	throughput bool
	batchSize  int // samples per step, the last step of an epoch taking what is left
	samples    int // samples trained per full epoch
	// rows, when set, is the samples of a step (a stream's batches); target
	// is the steps of an epoch once known, when Params.Steps is 0 (a
	// stream's first epoch tells them, as in Keras).
	rows   func(batch int) int
	target int
	now    func() time.Time

	names []string         // the figures shown, in display order
	bar   *progbar.Progbar // the running epoch's bar, nil between epochs
	done  int              // steps done when the last step of this epoch ended, 0 before
	last  []progbar.Entry  // the figures after that step
}

func newProgbarLogger(cfg runConfig, samples int) *progbarLogger {
	return &progbarLogger{throughput: cfg.throughput, batchSize: cfg.batchSize, samples: samples, now: cfg.now}
}

// OnTrainBegin sets the display order: the loss, the metrics in the order
// compiled, then their validation figures.
func (p *progbarLogger) OnTrainBegin(Logs) error {
	train := []string{"loss"}
	train = append(train, p.Model.compiled.metricNames...)
	p.names = train
	for _, name := range train {
		p.names = append(p.names, "val_"+name)
	}
	return nil
}

func (p *progbarLogger) OnEpochBegin(epoch int, _ Logs) error {
	if _, err := fmt.Fprintf(p.Params.Output, "Epoch %d/%d\n", epoch+1, p.Params.Epochs); err != nil {
		return fmt.Errorf("writing progress: %w", err)
	}
	target := p.Params.Steps
	if target == 0 {
		target = p.target
	}
	p.bar = progbar.New(p.Params.Output, p.Params.Verbose, target, p.now)
	if p.throughput {
		p.bar.ShowThroughput()
	}
	p.done, p.last = 0, nil
	return nil
}

// AsyncBatchHooks: the progress line may show a batch while the next one
// trains.
func (p *progbarLogger) AsyncBatchHooks() bool { return true }

func (p *progbarLogger) OnTrainBatchEnd(batch int, logs Logs) error {
	if p.rows != nil {
		p.bar.CountSamples(p.rows(batch))
	} else {
		p.bar.CountSamples(min(p.batchSize, p.samples-batch*p.batchSize))
	}
	p.done, p.last = batch+1, p.entries(logs)
	p.bar.Update(p.done, p.last)
	return nil
}

func (p *progbarLogger) OnEpochEnd(_ int, logs Logs) error {
	bar := p.bar
	p.bar = nil
	if p.Params.Steps == 0 && p.target == 0 {
		p.target = p.done
	}
	if err := bar.Finish(p.done, p.entries(logs)); err != nil {
		return fmt.Errorf("writing progress: %w", err)
	}
	return nil
}

// interrupted ends the epoch's line where training stopped when Fit's
// context is cancelled mid-epoch, or takes the empty live bar away if no
// step ended.
func (p *progbarLogger) interrupted() {
	if p.bar == nil {
		return
	}
	if p.done > 0 {
		_ = p.bar.Finish(p.done, p.last) // Fit returns the interruption, not a drawing error
	} else {
		p.bar.Clear()
	}
	p.bar = nil
}

// entries picks the figures shown from logs, in display order.
func (p *progbarLogger) entries(logs Logs) []progbar.Entry {
	out := make([]progbar.Entry, 0, len(p.names))
	for _, name := range p.names {
		if v, ok := logs[name]; ok {
			out = append(out, progbar.Entry{Name: name, Value: v})
		}
	}
	return out
}
