package callbacks

import (
	"errors"
	"fmt"
	"math"

	"github.com/gokeras/gokeras/internal/formats/pyformat"
	"github.com/gokeras/gokeras/nn"
)

// LearningRateScheduler sets the learning rate at the start of each epoch
// to Schedule(epoch, current rate), like keras.callbacks.LearningRateScheduler.
// It adds "lr" to each epoch's logs.
type LearningRateScheduler struct {
	nn.CallbackBase
	// Schedule returns the learning rate for an epoch (0-based) from the
	// current one, as Keras' schedule(epoch, lr).
	Schedule func(epoch int, lr float64) float64
	// Verbose 1 prints Keras' message each epoch (default 0).
	Verbose int
}

// NewLearningRateScheduler makes a LearningRateScheduler that follows
// schedule.
func NewLearningRateScheduler(schedule func(epoch int, lr float64) float64) *LearningRateScheduler {
	return &LearningRateScheduler{Schedule: schedule}
}

// OnTrainBegin checks that there is a schedule.
func (s *LearningRateScheduler) OnTrainBegin(nn.Logs) error {
	if s.Schedule == nil {
		return errors.New("LearningRateScheduler: no schedule function given: set Schedule")
	}
	return nil
}

// OnEpochBegin sets the learning rate the schedule gives for the epoch.
func (s *LearningRateScheduler) OnEpochBegin(epoch int, _ nn.Logs) error {
	opt := s.Model.Optimizer()
	lr := s.Schedule(epoch, kerasLR(opt.LearningRate()))
	if !(lr >= 0) || math.IsInf(lr, 0) { // 0 is allowed: a schedule may decay to it
		return fmt.Errorf("LearningRateScheduler: the schedule for epoch %d: the learning rate must be a finite number >= 0, got %v", epoch, lr)
	}
	opt.SetLearningRate(lr)
	if s.Verbose > 0 {
		printf(&s.CallbackBase, "\nEpoch %d: LearningRateScheduler setting learning rate to %s.\n", epoch+1, pyformat.Repr(lr))
	}
	return nil
}

// OnEpochEnd records the learning rate in logs as "lr".
func (s *LearningRateScheduler) OnEpochEnd(_ int, logs nn.Logs) error {
	logs["lr"] = kerasLR(s.Model.Optimizer().LearningRate())
	return nil
}

// kerasLR is the learning rate as Keras reports it: Keras keeps it in a
// float32 variable.
func kerasLR(lr float64) float64 { return float64(float32(lr)) }
