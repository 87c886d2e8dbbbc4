package callbacks

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/formats/pyformat"
	"github.com/gokeras/gokeras/nn"
)

// ReduceLROnPlateau multiplies the learning rate by Factor when a
// monitored figure has stopped improving for Patience epochs, like
// keras.callbacks.ReduceLROnPlateau. Make one with NewReduceLROnPlateau,
// which sets Keras' defaults, then change its fields. It adds "lr" to
// each epoch's logs.
type ReduceLROnPlateau struct {
	nn.CallbackBase
	// Monitor is the figure watched (default "val_loss").
	Monitor string
	// Factor multiplies the learning rate, and must be below 1 (default 0.1).
	Factor float64
	// Patience is the number of epochs without improvement before reducing (default 10).
	Patience int
	// Verbose 1 prints Keras' message on each reduction (default 0).
	Verbose int
	// Mode is "min", "max" or "auto" (default): max for figures whose name
	// ends in "acc", "accuracy" or "auc", min otherwise.
	Mode string
	// MinDelta is the least change that counts as an improvement (default
	// 1e-4); its sign is ignored.
	MinDelta float64
	// Cooldown is the number of epochs to wait after a reduction before
	// counting again (default 0).
	Cooldown int
	// MinLR is the lowest learning rate (default 0).
	MinLR float64

	mon                 monitor
	best                float64
	wait, cooldownCount int
}

// NewReduceLROnPlateau makes a ReduceLROnPlateau with Keras' defaults.
func NewReduceLROnPlateau() *ReduceLROnPlateau {
	return &ReduceLROnPlateau{Monitor: "val_loss", Factor: 0.1, Patience: 10, Mode: "auto", MinDelta: 1e-4}
}

// OnTrainBegin checks the settings and starts afresh.
func (r *ReduceLROnPlateau) OnTrainBegin(nn.Logs) error {
	if !(r.Factor < 1) || r.Factor <= 0 {
		return fmt.Errorf("ReduceLROnPlateau: the factor must be in (0, 1), got %v", r.Factor)
	}
	var err error
	if r.mon, err = newMonitor(r.Monitor, "val_loss", r.Mode, r.MinDelta); err != nil {
		return fmt.Errorf("ReduceLROnPlateau: %w", err)
	}
	r.Monitor = r.mon.name
	r.best = r.mon.worst()
	r.wait, r.cooldownCount = 0, 0
	return nil
}

// OnEpochEnd records the learning rate in logs as "lr" and reduces it
// once Monitor has not improved for Patience epochs.
func (r *ReduceLROnPlateau) OnEpochEnd(epoch int, logs nn.Logs) error {
	opt := r.Model.Optimizer()
	logs["lr"] = kerasLR(opt.LearningRate())
	current, ok := r.mon.value(&r.CallbackBase, "Learning rate reduction", logs)
	if !ok {
		return nil
	}
	if r.cooldownCount > 0 {
		r.cooldownCount--
		r.wait = 0
	}
	switch {
	case r.mon.improves(current, r.best):
		r.best, r.wait = current, 0
	case r.cooldownCount == 0:
		r.wait++
		if r.wait >= r.Patience {
			old := kerasLR(opt.LearningRate())
			if old > kerasLR(r.MinLR) {
				lr := max(old*r.Factor, r.MinLR)
				opt.SetLearningRate(lr)
				if r.Verbose > 0 {
					printf(&r.CallbackBase, "\nEpoch %d: ReduceLROnPlateau reducing learning rate to %s.\n", epoch+1, pyformat.Repr(lr))
				}
				r.cooldownCount, r.wait = r.Cooldown, 0
			}
		}
	}
	return nil
}
