package callbacks

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// EarlyStopping stops training when a monitored figure has stopped
// improving, like keras.callbacks.EarlyStopping. Make one with
// NewEarlyStopping, which sets Keras' defaults, then change its fields.
//
// At the end of each epoch from StartFromEpoch on: a value better than the
// best so far by more than MinDelta is an improvement, which resets the
// count of epochs without one (unless a Baseline is set and not beaten);
// otherwise the count grows, and once it reaches Patience (and not in the
// first epoch) training stops. Keras 2.13 and later behave so; older Keras 2
// releases could stop on an improving epoch when Patience was 0.
type EarlyStopping struct {
	nn.CallbackBase
	// Monitor is the figure watched (default "val_loss").
	Monitor string
	// MinDelta is the least change that counts as an improvement (default
	// 0); its sign is ignored.
	MinDelta float64
	// Patience is the number of epochs without improvement before stopping (default 0).
	Patience int
	// Verbose 1 prints Keras' messages when stopping (default 0).
	Verbose int
	// Mode is "min", "max" or "auto" (default): max for figures whose name
	// ends in "acc", "accuracy" or "auc", min otherwise.
	Mode string
	// Baseline, when not NaN (the default, Keras' None), is a value the
	// figure must beat for an epoch to reset the patience.
	Baseline float64
	// RestoreBestWeights puts back the weights of the best epoch when
	// training stops early (default false).
	RestoreBestWeights bool
	// StartFromEpoch is the number of epochs to wait before watching (default 0).
	StartFromEpoch int

	mon          monitor
	wait         int
	stoppedEpoch int
	best         float64
	bestEpoch    int
	bestWeights  []*tensor.Dense
}

// NewEarlyStopping makes an EarlyStopping with Keras' defaults.
func NewEarlyStopping() *EarlyStopping {
	return &EarlyStopping{Monitor: "val_loss", Mode: "auto", Baseline: math.NaN()}
}

// StoppedEpoch is the epoch (0-based) at which training stopped, 0 if it
// did not stop early — Keras' stopped_epoch.
func (e *EarlyStopping) StoppedEpoch() int { return e.stoppedEpoch }

// BestEpoch is the epoch (0-based) with the best value — Keras' best_epoch.
func (e *EarlyStopping) BestEpoch() int { return e.bestEpoch }

// OnTrainBegin checks the settings and starts afresh.
func (e *EarlyStopping) OnTrainBegin(nn.Logs) error {
	var err error
	if e.mon, err = newMonitor(e.Monitor, "val_loss", e.Mode, e.MinDelta); err != nil {
		return fmt.Errorf("EarlyStopping: %w", err)
	}
	e.Monitor = e.mon.name
	if e.Patience < 0 {
		return fmt.Errorf("EarlyStopping: patience must not be negative, got %d", e.Patience)
	}
	e.wait, e.stoppedEpoch, e.bestEpoch, e.bestWeights = 0, 0, 0, nil
	e.best = e.mon.worst()
	return nil
}

// OnEpochEnd counts the epochs without improvement and stops training
// when they reach Patience.
func (e *EarlyStopping) OnEpochEnd(epoch int, logs nn.Logs) error {
	current, ok := e.mon.value(&e.CallbackBase, "Early stopping", logs)
	if !ok {
		return nil
	}
	if epoch < e.StartFromEpoch {
		return nil
	}
	if e.RestoreBestWeights && e.bestWeights == nil {
		// Restore the weights after the first epoch if no progress is ever made.
		if err := e.keepWeights(); err != nil {
			return err
		}
	}
	e.wait++
	if e.mon.improves(current, e.best) {
		e.best, e.bestEpoch = current, epoch
		if e.RestoreBestWeights {
			if err := e.keepWeights(); err != nil {
				return err
			}
		}
		// Restart the count only when beating both the baseline and the best.
		if math.IsNaN(e.Baseline) || e.mon.improves(current, e.Baseline) {
			e.wait = 0
		}
		return nil
	}
	if e.wait >= e.Patience && epoch > 0 {
		e.stoppedEpoch = epoch
		e.Model.StopTraining()
		if e.RestoreBestWeights && e.bestWeights != nil {
			if e.Verbose > 0 {
				printf(&e.CallbackBase, "Restoring model weights from the end of the best epoch: %d.\n", e.bestEpoch+1)
			}
			if err := e.Model.SetWeights(e.bestWeights); err != nil {
				return fmt.Errorf("EarlyStopping: restoring the best weights: %w", err)
			}
		}
	}
	return nil
}

func (e *EarlyStopping) keepWeights() error {
	ws, err := e.Model.GetWeights()
	if err != nil {
		return fmt.Errorf("EarlyStopping: keeping the best weights: %w", err)
	}
	e.bestWeights = ws
	return nil
}

// OnTrainEnd prints Keras' message when training stopped early and
// Verbose is 1.
func (e *EarlyStopping) OnTrainEnd(nn.Logs) error {
	if e.stoppedEpoch > 0 && e.Verbose > 0 {
		printf(&e.CallbackBase, "Epoch %d: early stopping\n", e.stoppedEpoch+1)
	}
	return nil
}
