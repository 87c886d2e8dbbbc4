package optim

import (
	"fmt"
	"math"
)

// Schedule is a learning rate that changes with the step, Keras'
// keras.optimizers.schedules: an optimizer given one (Options.Schedule)
// uses Rate(iterations) for each step, iterations being the steps done
// before it (0 for the first), as Keras evaluates schedule(optimizer.iterations).
type Schedule interface {
	// Rate is the learning rate of the step after step steps.
	Rate(step int64) float64
	// Name is the Keras class name.
	Name() string
}

// ExponentialDecay is initial·rate^(step/steps), with the exponent
// rounded down when Staircase is set.
type ExponentialDecay struct {
	InitialLearningRate float64
	DecaySteps          int64
	DecayRate           float64
	Staircase           bool
}

func (s ExponentialDecay) Name() string { return "ExponentialDecay" }
func (s ExponentialDecay) Rate(step int64) float64 {
	p := float64(step) / float64(s.DecaySteps)
	if s.Staircase {
		p = math.Floor(p)
	}
	return s.InitialLearningRate * math.Pow(s.DecayRate, p)
}

// InverseTimeDecay is initial/(1 + rate·step/steps), the ratio rounded
// down when Staircase is set.
type InverseTimeDecay struct {
	InitialLearningRate float64
	DecaySteps          int64
	DecayRate           float64
	Staircase           bool
}

func (s InverseTimeDecay) Name() string { return "InverseTimeDecay" }
func (s InverseTimeDecay) Rate(step int64) float64 {
	p := float64(step) / float64(s.DecaySteps)
	if s.Staircase {
		p = math.Floor(p)
	}
	return s.InitialLearningRate / (1 + s.DecayRate*p)
}

// PiecewiseConstantDecay is Values[i] for steps in (Boundaries[i-1],
// Boundaries[i]]: Values[0] up to and including Boundaries[0], and the last
// value after the last boundary. Values has one more entry than Boundaries.
type PiecewiseConstantDecay struct {
	Boundaries []int64
	Values     []float64
}

func (s PiecewiseConstantDecay) Name() string { return "PiecewiseConstantDecay" }
func (s PiecewiseConstantDecay) Rate(step int64) float64 {
	for i, b := range s.Boundaries {
		if step <= b {
			return s.Values[i]
		}
	}
	return s.Values[len(s.Values)-1]
}

// PolynomialDecay goes from initial to End over DecaySteps steps as
// (initial-End)·(1 - step/steps)^Power + End (Power 0 means 1), then
// stays at End; with Cycle, the steps grow to the next multiple of
// DecaySteps instead.
type PolynomialDecay struct {
	InitialLearningRate float64
	DecaySteps          int64
	EndLearningRate     float64 // Keras' default 0.0001
	Power               float64 // Keras' default 1
	Cycle               bool
}

func (s PolynomialDecay) Name() string { return "PolynomialDecay" }
func (s PolynomialDecay) Rate(step int64) float64 {
	power := s.Power
	if power == 0 {
		power = 1
	}
	steps, t := float64(s.DecaySteps), float64(step)
	if s.Cycle {
		mult := math.Ceil(t / steps)
		if t == 0 {
			mult = 1
		}
		steps *= mult
	} else {
		t = math.Min(t, steps)
	}
	return (s.InitialLearningRate-s.EndLearningRate)*math.Pow(1-t/steps, power) + s.EndLearningRate
}

// CosineDecay follows half a cosine from initial down to Alpha·initial
// over DecaySteps steps, then stays there; with WarmupSteps, it first rises
// linearly from initial to WarmupTarget over those steps and decays from
// WarmupTarget after them (Keras 2.13's warmup).
type CosineDecay struct {
	InitialLearningRate float64
	DecaySteps          int64
	Alpha               float64
	WarmupTarget        float64
	WarmupSteps         int64
}

func (s CosineDecay) Name() string { return "CosineDecay" }
func (s CosineDecay) Rate(step int64) float64 {
	initial := s.InitialLearningRate
	if s.WarmupSteps > 0 {
		if step < s.WarmupSteps {
			return initial + (s.WarmupTarget-initial)*float64(step)/float64(s.WarmupSteps)
		}
		initial, step = s.WarmupTarget, step-s.WarmupSteps
	}
	t := math.Min(float64(step), float64(s.DecaySteps)) / float64(s.DecaySteps)
	cosine := 0.5 * (1 + math.Cos(math.Pi*t))
	return initial * ((1-s.Alpha)*cosine + s.Alpha)
}

// CosineDecayRestarts is CosineDecay restarted after FirstDecaySteps
// steps, each period TMul times longer than the last (Keras' default 2)
// and starting from MMul times the last one's rate (default 1).
type CosineDecayRestarts struct {
	InitialLearningRate float64
	FirstDecaySteps     int64
	TMul, MMul          float64
	Alpha               float64
}

func (s CosineDecayRestarts) Name() string { return "CosineDecayRestarts" }
func (s CosineDecayRestarts) Rate(step int64) float64 {
	tMul, mMul := s.TMul, s.MMul
	if tMul == 0 {
		tMul = 2
	}
	if mMul == 0 {
		mMul = 1
	}
	done := float64(step) / float64(s.FirstDecaySteps)
	var i, frac float64
	if tMul == 1 {
		i = math.Floor(done)
		frac = done - i
	} else {
		i = math.Floor(math.Log(1-done*(1-tMul)) / math.Log(tMul))
		sumR := (1 - math.Pow(tMul, i)) / (1 - tMul)
		frac = (done - sumR) / math.Pow(tMul, i)
	}
	m := math.Pow(mMul, i)
	cosine := 0.5 * m * (1 + math.Cos(math.Pi*frac))
	return s.InitialLearningRate * ((1-s.Alpha)*cosine + s.Alpha)
}

// checkSchedule checks a schedule's numbers.
func checkSchedule(s Schedule) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", s.Name(), fmt.Sprintf(format, a...))
	}
	switch s := s.(type) {
	case ExponentialDecay:
		if s.DecaySteps <= 0 {
			return bad("decay_steps must be positive, got %d", s.DecaySteps)
		}
	case InverseTimeDecay:
		if s.DecaySteps <= 0 {
			return bad("decay_steps must be positive, got %d", s.DecaySteps)
		}
	case PolynomialDecay:
		if s.DecaySteps <= 0 {
			return bad("decay_steps must be positive, got %d", s.DecaySteps)
		}
	case CosineDecay:
		if s.DecaySteps <= 0 || s.WarmupSteps < 0 {
			return bad("decay_steps must be positive and warmup_steps not negative, got %d and %d", s.DecaySteps, s.WarmupSteps)
		}
	case CosineDecayRestarts:
		if s.FirstDecaySteps <= 0 {
			return bad("first_decay_steps must be positive, got %d", s.FirstDecaySteps)
		}
	case PiecewiseConstantDecay:
		if len(s.Values) != len(s.Boundaries)+1 {
			return bad("values must have one more entry than boundaries: got %d values for %d boundaries", len(s.Values), len(s.Boundaries))
		}
		for i := 1; i < len(s.Boundaries); i++ {
			if s.Boundaries[i] <= s.Boundaries[i-1] {
				return bad("boundaries must increase, got %v", s.Boundaries)
			}
		}
	}
	for _, step := range []int64{0, 1, 1000, 1 << 30} {
		if r := s.Rate(step); !(r >= 0) || math.IsInf(r, 0) {
			return bad("the learning rate at step %d is %v: it must be a finite number >= 0", step, r)
		}
	}
	return nil
}
