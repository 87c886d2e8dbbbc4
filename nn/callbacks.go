package nn

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/progbar"
)

// Logs holds the figures callbacks see, as Keras' logs dict does: "loss",
// the metrics, the "val_" figures at the end of an epoch, and whatever
// callbacks add (package callbacks' ReduceLROnPlateau and
// LearningRateScheduler add "lr").
// Callbacks see one map per event, in the order they were given, so a
// callback can add a figure for those after it and for the History.
type Logs map[string]float64

// Params is what a callback knows about the run, like Keras'
// callback.params.
type Params struct {
	// Epochs is the last epoch (Fit's Epochs); training runs epochs
	// InitialEpoch to Epochs-1.
	Epochs       int
	InitialEpoch int
	// Steps is the number of steps (batches) per epoch; 0 when it is not
	// known: a stream read to its end without StepsPerEpoch (Keras' None).
	Steps   int
	Verbose int
	// Output is where Fit writes its progress; callbacks write their
	// messages there too.
	Output io.Writer
}

// Callback is called by Fit at each stage of training, with Keras' hooks.
// Epochs and batches are numbered from 0, as in Keras. A hook that returns
// an error stops Fit, which returns that error. To stop training without an
// error, as Keras' `self.model.stop_training = True`, call
// Model.StopTraining: Fit ends after the current batch, running that
// epoch's validation and end hooks first.
//
// Embed CallbackBase to implement only the hooks you need.
type Callback interface {
	// SetModel and SetParams are called before training begins.
	SetModel(m *Sequential)
	SetParams(p Params)
	OnTrainBegin(logs Logs) error
	// OnTrainEnd gets the last epoch's logs. It is not called when Fit
	// fails or is interrupted.
	OnTrainEnd(logs Logs) error
	OnEpochBegin(epoch int, logs Logs) error
	// OnEpochEnd gets the epoch's figures, validation included.
	OnEpochEnd(epoch int, logs Logs) error
	OnTrainBatchBegin(batch int, logs Logs) error
	// OnTrainBatchEnd gets the running means of the epoch so far.
	OnTrainBatchEnd(batch int, logs Logs) error
}

// AsyncBatchHooks is an optional interface of a Callback: a callback
// whose AsyncBatchHooks returns true lets Fit, on a device that computes
// asynchronously (a GPU), start batch k+1 before it calls the callback's
// OnTrainBatchBegin and OnTrainBatchEnd for batch k, so that the device
// does not wait for the host between steps. The hooks still see every
// batch, in order, each with its own figures; but while they run the
// device is already training on the next batch, and Model.StopTraining
// called from them stops Fit after that next batch. The epoch hooks are
// not affected: an epoch's steps are all finished before OnEpochEnd.
//
// A callback whose batch hooks are both CallbackBase's (it defines only
// epoch or train hooks) needs nothing: Fit sees that after the first
// batch, as Keras skips the batch hooks of callbacks that do not override
// them. Fit trains step by step, each finished before the next starts, as
// long as one callback defines a batch hook and does not implement
// AsyncBatchHooks, so a callback that must see the model as each batch
// left it (one that saves or changes the weights, or stops training, at a
// batch's end) simply leaves it out. Fit's progress bar and package
// callbacks' TensorBoard implement it.
type AsyncBatchHooks interface {
	AsyncBatchHooks() bool
}

// allowsLag says whether Fit may call cb's batch hooks a step late: it
// says so (AsyncBatchHooks), or both its batch hooks have run and were
// CallbackBase's own.
func allowsLag(cb Callback) bool {
	if a, ok := cb.(AsyncBatchHooks); ok {
		return a.AsyncBatchHooks()
	}
	b, ok := cb.(interface{ callbackBase() *CallbackBase })
	return ok && b.callbackBase().inherited == inheritedBegin|inheritedEnd
}

// CallbackBase gives every hook Keras' default: do nothing. Embed it in a
// callback of your own and define the hooks you need; Model and Params are
// set before training begins.
type CallbackBase struct {
	Model  *Sequential
	Params Params
	// inherited records which batch hooks have run as these, not
	// overridden (allowsLag).
	inherited uint8
}

// The bits of CallbackBase.inherited.
const (
	inheritedBegin uint8 = 1 << iota
	inheritedEnd
)

func (b *CallbackBase) callbackBase() *CallbackBase { return b }

func (b *CallbackBase) SetModel(m *Sequential)            { b.Model = m }
func (b *CallbackBase) SetParams(p Params)                { b.Params = p }
func (b *CallbackBase) OnTrainBegin(Logs) error           { return nil }
func (b *CallbackBase) OnTrainEnd(Logs) error             { return nil }
func (b *CallbackBase) OnEpochBegin(int, Logs) error      { return nil }
func (b *CallbackBase) OnEpochEnd(int, Logs) error        { return nil }
func (b *CallbackBase) OnTrainBatchBegin(int, Logs) error { b.inherited |= inheritedBegin; return nil }
func (b *CallbackBase) OnTrainBatchEnd(int, Logs) error   { b.inherited |= inheritedEnd; return nil }

// Callbacks adds callbacks to Fit, called in the order given, like the
// callbacks argument of Keras' fit.
func Callbacks(cbs ...Callback) Option {
	return func(c *runConfig) error {
		for _, cb := range cbs {
			if cb == nil {
				return fmt.Errorf("callbacks: nil callback")
			}
		}
		c.callbacks = append(c.callbacks, cbs...)
		return nil
	}
}

// StopTraining asks Fit to stop after the current batch, like Keras'
// `model.stop_training = True`: that epoch still runs its validation and
// its end hooks, then Fit returns the history without an error. Fit clears
// the request when it starts.
func (m *Sequential) StopTraining() {
	if m != nil {
		m.stopTraining.Store(true)
	}
}

// callbackList runs hooks on every callback in order.
type callbackList []Callback

func (cl callbackList) each(hook string, call func(Callback) error) error {
	for _, cb := range cl {
		if err := call(cb); err != nil {
			if _, ok := cb.(*progbarLogger); ok {
				return err // Fit's own progress: its error says what failed
			}
			return fmt.Errorf("callback %T, %s: %w", cb, hook, err)
		}
	}
	return nil
}

// interrupted tells the callbacks that care (Fit's progress) that Fit's
// context was cancelled mid-epoch; no Keras hook covers this.
func (cl callbackList) interrupted() {
	for _, cb := range cl {
		if i, ok := cb.(interface{ interrupted() }); ok {
			i.interrupted()
		}
	}
}

// logEntry is one named figure in display order, as progress lines and
// the History list them.
type logEntry = progbar.Entry

// logsOf makes the Logs callbacks see from the ordered figures.
func logsOf(entries []logEntry) Logs {
	logs := make(Logs, len(entries))
	for _, e := range entries {
		logs[e.Name] = e.Value
	}
	return logs
}

// entriesOf puts logs back in display order: the figures Fit computed in
// their order, then those callbacks added, sorted.
func entriesOf(ordered []logEntry, logs Logs) []logEntry {
	out := make([]logEntry, 0, len(logs))
	seen := map[string]bool{}
	for _, e := range ordered {
		if v, ok := logs[e.Name]; ok {
			out = append(out, logEntry{Name: e.Name, Value: v})
			seen[e.Name] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(logs)) {
		if !seen[k] {
			out = append(out, logEntry{Name: k, Value: logs[k]})
		}
	}
	return out
}
