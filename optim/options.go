package optim

import (
	"fmt"
	"math"
)

// Options are the arguments every Keras optimizer takes besides its own:
// gradient clipping, weight decay and a learning-rate schedule. The zero
// value is Keras' default: none of them.
type Options struct {
	// ClipNorm scales each weight's gradient down to this L2 norm when it
	// is longer (Keras' clipnorm); ClipValue clips each gradient value to
	// [-ClipValue, ClipValue] (clipvalue). 0: off. As in Keras 2.11+,
	// whose optimizers apply the first of clipnorm, global_clipnorm and
	// clipvalue that is set, ClipValue does nothing when ClipNorm or
	// GlobalClipNorm is set.
	ClipNorm, ClipValue float64
	// GlobalClipNorm scales all the gradients of a step down together so
	// that their joint L2 norm is at most this (Keras' global_clipnorm;
	// it excludes ClipNorm, as in Keras). 0: off.
	GlobalClipNorm float64
	// WeightDecay is Keras 2.11's decoupled weight decay: before each
	// update, w -= w·WeightDecay·lr. 0: off.
	WeightDecay float64
	// Schedule, when set, gives each step's learning rate, in place of the
	// optimizer's LearningRate (Keras' learning_rate=schedule).
	Schedule Schedule
}

func (o Options) check() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"clipnorm", o.ClipNorm}, {"clipvalue", o.ClipValue}, {"global_clipnorm", o.GlobalClipNorm}, {"weight_decay", o.WeightDecay}} {
		if !(v.x >= 0) || math.IsInf(v.x, 0) {
			return fmt.Errorf("%s must be a finite number >= 0 (0: off), got %v", v.name, v.x)
		}
	}
	if o.ClipNorm > 0 && o.GlobalClipNorm > 0 {
		return fmt.Errorf("clipnorm and global_clipnorm exclude each other, as in Keras: clip each weight's gradient or all of them together, not both")
	}
	if o.Schedule != nil {
		if err := checkSchedule(o.Schedule); err != nil {
			return err
		}
	}
	return nil
}

// rate is the learning rate of the step after iterations steps.
func (o Options) rate(lr float64, iterations int64) float64 {
	if o.Schedule != nil {
		return o.Schedule.Rate(iterations)
	}
	return lr
}

// fill sets the options' numbers on an update: ClipValue only when no
// norm clips, as Keras applies one clipping only.
func (o Options) fill(u *Update) {
	u.ClipNorm, u.ClipValue, u.WeightDecay = o.ClipNorm, o.ClipValue, o.WeightDecay
	u.GlobalClipNorm = o.GlobalClipNorm
	if o.ClipNorm > 0 || o.GlobalClipNorm > 0 {
		u.ClipValue = 0
	}
}
