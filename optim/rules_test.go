package optim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// reference64 is each rule's formula in float64, written from Keras'
// documentation and TensorFlow's update code, one variable at a time:
// what the float32 Apply must follow within rounding.
type reference64 struct {
	w     []float64
	slots map[string][]float64
	t     int
}

func (r *reference64) slot(name string, init float64) []float64 {
	if r.slots == nil {
		r.slots = map[string][]float64{}
	}
	s, ok := r.slots[name]
	if !ok {
		s = make([]float64, len(r.w))
		for i := range s {
			s[i] = init
		}
		r.slots[name] = s
	}
	return s
}

func (r *reference64) step(u Update, g []float64) {
	r.t++
	t := float64(r.t)
	lr, eps := u.LearningRate, u.Epsilon
	g = append([]float64(nil), g...)
	if u.ClipNorm > 0 {
		var ss float64
		for _, x := range g {
			ss += x * x
		}
		if n := math.Sqrt(ss); n > u.ClipNorm {
			for i := range g {
				g[i] *= u.ClipNorm / n
			}
		}
	}
	if u.ClipValue > 0 {
		for i := range g {
			g[i] = math.Max(-u.ClipValue, math.Min(u.ClipValue, g[i]))
		}
	}
	for i := range r.w {
		r.w[i] -= r.w[i] * u.WeightDecay * lr
	}
	switch u.Rule {
	case RuleAdam:
		m, v, vh := r.slot("m", 0), r.slot("v", 0), r.slot("vhat", 0)
		for i, gi := range g {
			m[i] = u.Beta1*m[i] + (1-u.Beta1)*gi
			v[i] = u.Beta2*v[i] + (1-u.Beta2)*gi*gi
			vv := v[i]
			if u.AMSGrad {
				vh[i] = math.Max(vh[i], v[i])
				vv = vh[i]
			}
			alpha := lr * math.Sqrt(1-math.Pow(u.Beta2, t)) / (1 - math.Pow(u.Beta1, t))
			r.w[i] -= alpha * m[i] / (math.Sqrt(vv) + eps)
		}
	case RuleRMSprop:
		vel, mom, avg := r.slot("velocity", 0), r.slot("momentum", 0), r.slot("average_gradient", 0)
		for i, gi := range g {
			vel[i] = u.Rho*vel[i] + (1-u.Rho)*gi*gi
			den := vel[i]
			if u.Centered {
				avg[i] = u.Rho*avg[i] + (1-u.Rho)*gi
				den -= avg[i] * avg[i]
			}
			inc := lr * gi / math.Sqrt(den+eps)
			if u.Momentum > 0 {
				mom[i] = u.Momentum*mom[i] + inc
				r.w[i] -= mom[i]
			} else {
				r.w[i] -= inc
			}
		}
	case RuleAdagrad:
		acc := r.slot("accumulator", u.InitialAccumulator)
		for i, gi := range g {
			acc[i] += gi * gi
			r.w[i] -= lr * gi / math.Sqrt(acc[i]+eps)
		}
	case RuleAdadelta:
		ag, ad := r.slot("accumulated_grad", 0), r.slot("accumulated_delta_var", 0)
		for i, gi := range g {
			ag[i] = u.Rho*ag[i] + (1-u.Rho)*gi*gi
			delta := -math.Sqrt(ad[i]+eps) * gi / math.Sqrt(ag[i]+eps)
			ad[i] = u.Rho*ad[i] + (1-u.Rho)*delta*delta
			r.w[i] += lr * delta
		}
	case RuleAdamax:
		m, v := r.slot("m", 0), r.slot("u", 0)
		for i, gi := range g {
			m[i] += (gi - m[i]) * (1 - u.Beta1)
			v[i] = math.Max(u.Beta2*v[i], math.Abs(gi))
			r.w[i] -= lr * m[i] / ((1 - math.Pow(u.Beta1, t)) * (v[i] + eps))
		}
	case RuleNadam:
		m, v := r.slot("m", 0), r.slot("v", 0)
		mu := func(s float64) float64 { return u.Beta1 * (1 - 0.5*math.Pow(0.96, s)) }
		prod := 1.0
		for s := 1; s <= r.t; s++ {
			prod *= mu(float64(s))
		}
		for i, gi := range g {
			m[i] += (gi - m[i]) * (1 - u.Beta1)
			v[i] += (gi*gi - v[i]) * (1 - u.Beta2)
			mHat := mu(t+1)*m[i]/(1-prod*mu(t+1)) + (1-mu(t))*gi/(1-prod)
			vHat := v[i] / (1 - math.Pow(u.Beta2, t))
			r.w[i] -= lr * mHat / (math.Sqrt(vHat) + eps)
		}
	case RuleMomentum:
		vel := r.slot("momentum", 0)
		for i, gi := range g {
			vel[i] = u.Momentum*vel[i] - lr*gi
			r.w[i] += vel[i]
		}
	case RuleSGD:
		for i, gi := range g {
			r.w[i] -= lr * gi
		}
	}
}

// TestOptimizersFollowTheirFormulas runs every optimizer for 20 steps on
// one variable and compares it with its float64 formula: within 1e-5
// relative to the largest weight (float32 rounding over 20 steps).
func TestOptimizersFollowTheirFormulas(t *testing.T) {
	mk := func(o Optimizer, err error) Optimizer {
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cases := []struct {
		name string
		opt  Optimizer
	}{
		{"rmsprop", mk(NewRMSprop(RMSpropConfig{LearningRate: 0.01}))},
		{"rmsprop momentum centered", mk(NewRMSprop(RMSpropConfig{LearningRate: 0.01, Momentum: 0.9, Centered: true}))},
		{"adagrad", mk(NewAdagrad(AdagradConfig{LearningRate: 0.05}))},
		{"adadelta", mk(NewAdadelta(AdadeltaConfig{LearningRate: 1}))},
		{"adamax", mk(NewAdamax(AdamaxConfig{LearningRate: 0.01}))},
		{"nadam", mk(NewNadam(NadamConfig{LearningRate: 0.01}))},
		{"adam amsgrad", mk(NewAdam(AdamConfig{LearningRate: 0.01, AMSGrad: true}))},
		{"adamw", mk(NewAdamW(AdamConfig{LearningRate: 0.01, Options: Options{WeightDecay: 0.1}}))},
		{"sgd clipnorm", mk(NewSGD(SGDConfig{LearningRate: 0.1, Options: Options{ClipNorm: 0.5}}))},
		{"momentum clipvalue weight decay", mk(NewSGD(SGDConfig{LearningRate: 0.1, Momentum: 0.9, Options: Options{ClipValue: 0.3, WeightDecay: 0.01}}))},
		{"adam clipnorm schedule", mk(NewAdam(AdamConfig{Options: Options{ClipNorm: 1,
			Schedule: ExponentialDecay{InitialLearningRate: 0.01, DecaySteps: 5, DecayRate: 0.5}}}))},
		{"rmsprop clipvalue", mk(NewRMSprop(RMSpropConfig{Options: Options{ClipValue: 0.1}}))},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 1))
			const n = 300 // not a multiple of the vector width
			w := make([]float32, n)
			ref := &reference64{w: make([]float64, n)}
			for i := range w {
				w[i] = float32(rng.NormFloat64())
				ref.w[i] = float64(w[i])
			}
			for step := 0; step < 20; step++ {
				g := make([]float32, n)
				g64 := make([]float64, n)
				for i := range g {
					g[i] = float32(rng.NormFloat64() * 0.5)
					g64[i] = float64(g[i])
				}
				u := tc.opt.NextUpdate()
				if err := tc.opt.Apply([]Variable{{Name: "v", Value: w, Grad: g}}); err != nil {
					t.Fatal(err)
				}
				ref.step(u, g64)
			}
			var worst, scale float64
			for i := range w {
				worst = math.Max(worst, math.Abs(float64(w[i])-ref.w[i]))
				scale = math.Max(scale, math.Abs(ref.w[i]))
			}
			if worst > 1e-5*scale {
				t.Errorf("after 20 steps the weights are %.3g from the float64 formula (largest weight %.3g)", worst, scale)
			}
			if tc.opt.Iterations() != 20 {
				t.Errorf("%d iterations", tc.opt.Iterations())
			}
		})
	}
}

func TestAdagradAccumulatorStartsAtItsInitialValue(t *testing.T) {
	a, err := NewAdagrad(AdagradConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Slot("dense/kernel", "accumulator", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range s {
		if v != float32(0.1) {
			t.Fatalf("accumulator starts at %v, want Keras' 0.1", s)
		}
	}
}

func TestSchedulesMatchKerasFormulas(t *testing.T) {
	tests := []struct {
		s    Schedule
		step int64
		want float64
	}{
		{ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 10, DecayRate: 0.5}, 5, 0.1 * math.Pow(0.5, 0.5)},
		{ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 10, DecayRate: 0.5, Staircase: true}, 15, 0.05},
		{InverseTimeDecay{InitialLearningRate: 0.1, DecaySteps: 1, DecayRate: 0.5}, 2, 0.05},
		{PiecewiseConstantDecay{Boundaries: []int64{10, 20}, Values: []float64{1, 0.5, 0.1}}, 10, 1},
		{PiecewiseConstantDecay{Boundaries: []int64{10, 20}, Values: []float64{1, 0.5, 0.1}}, 11, 0.5},
		{PiecewiseConstantDecay{Boundaries: []int64{10, 20}, Values: []float64{1, 0.5, 0.1}}, 21, 0.1},
		{PolynomialDecay{InitialLearningRate: 0.1, DecaySteps: 10, EndLearningRate: 0.01}, 5, 0.055},
		{PolynomialDecay{InitialLearningRate: 0.1, DecaySteps: 10, EndLearningRate: 0.01}, 50, 0.01},
		{PolynomialDecay{InitialLearningRate: 0.1, DecaySteps: 10, EndLearningRate: 0.01, Power: 2, Cycle: true}, 15, 0.09*0.0625 + 0.01}, // the period grows to 20 steps,
		{CosineDecay{InitialLearningRate: 0.1, DecaySteps: 100}, 50, 0.05},
		{CosineDecay{InitialLearningRate: 0.1, DecaySteps: 100, Alpha: 0.1}, 200, 0.01},
		{CosineDecay{InitialLearningRate: 0, DecaySteps: 100, WarmupTarget: 0.1, WarmupSteps: 10}, 5, 0.05},
		{CosineDecay{InitialLearningRate: 0, DecaySteps: 100, WarmupTarget: 0.1, WarmupSteps: 10}, 60, 0.05},
		{CosineDecayRestarts{InitialLearningRate: 0.1, FirstDecaySteps: 10}, 5, 0.05},
		{CosineDecayRestarts{InitialLearningRate: 0.1, FirstDecaySteps: 10}, 10, 0.1},  // restart
		{CosineDecayRestarts{InitialLearningRate: 0.1, FirstDecaySteps: 10}, 20, 0.05}, // halfway through the second period of 20
		{CosineDecayRestarts{InitialLearningRate: 0.1, FirstDecaySteps: 10, TMul: 1, MMul: 0.5}, 15, 0.025},
	}
	for _, tc := range tests {
		if err := checkSchedule(tc.s); err != nil {
			t.Errorf("%+v: %v", tc.s, err)
		}
		if got := tc.s.Rate(tc.step); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s %+v at step %d: %v, want %v", tc.s.Name(), tc.s, tc.step, got, tc.want)
		}
	}
	if err := checkSchedule(PiecewiseConstantDecay{Boundaries: []int64{1}, Values: []float64{1}}); err == nil {
		t.Error("a piecewise schedule with as many values as boundaries was accepted")
	}
}

func TestScheduleDrivesTheLearningRate(t *testing.T) {
	s, err := NewSGD(SGDConfig{Options: Options{Schedule: PiecewiseConstantDecay{Boundaries: []int64{1}, Values: []float64{0.5, 0.25}}}})
	if err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for i := 0; i < 3; i++ {
		rates = append(rates, s.NextUpdate().LearningRate)
		s.Advance()
	}
	if rates[0] != 0.5 || rates[1] != 0.5 || rates[2] != 0.25 {
		t.Errorf("rates %v, want 0.5 0.5 0.25 (steps 0 and 1, then after the boundary)", rates)
	}
	st := s.State()
	s2, _ := NewSGD(SGDConfig{Options: Options{Schedule: PiecewiseConstantDecay{Boundaries: []int64{1}, Values: []float64{0.5, 0.25}}}})
	if err := s2.SetState(st); err != nil {
		t.Fatal(err)
	}
	if s2.LearningRate() != 0.25 {
		t.Errorf("restored at step %d: rate %v, want 0.25 from the schedule", st.Iterations, s2.LearningRate())
	}
	s.SetLearningRate(0.1)
	if s.LearningRate() != 0.1 || s.NextUpdate().LearningRate != 0.1 {
		t.Errorf("SetLearningRate did not replace the schedule")
	}
}

func TestNewOptimizersRoundTripTheirState(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			o, err := Get(name)
			if err != nil {
				t.Fatal(err)
			}
			w := []float32{1, -2, 3}
			for i := 0; i < 3; i++ {
				if err := o.Apply([]Variable{{Name: "x", Value: w, Grad: []float32{0.1, 0.2, -0.3}}}); err != nil {
					t.Fatal(err)
				}
			}
			so, ok := o.(Stateful)
			if !ok {
				t.Fatalf("%s is not Stateful", name)
			}
			o2, _ := Get(name)
			if err := o2.(Stateful).SetState(so.State()); err != nil {
				t.Fatal(err)
			}
			w2 := append([]float32(nil), w...)
			g := []float32{0.3, -0.1, 0.2}
			if err := o.Apply([]Variable{{Name: "x", Value: w, Grad: g}}); err != nil {
				t.Fatal(err)
			}
			if err := o2.Apply([]Variable{{Name: "x", Value: w2, Grad: g}}); err != nil {
				t.Fatal(err)
			}
			for i := range w {
				if w[i] != w2[i] {
					t.Fatalf("after restoring: %v, want %v", w2, w)
				}
			}
		})
	}
}

// TestGlobalClipNormScalesAllGradientsTogether checks Keras'
// clip_by_global_norm: every gradient of the step times
// clip/max(joint norm, clip), computed by hand for two variables.
func TestGlobalClipNormScalesAllGradientsTogether(t *testing.T) {
	sgd, err := NewSGD(SGDConfig{LearningRate: 1, Options: Options{GlobalClipNorm: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := []float32{0, 0}, []float32{0}
	// Joint norm √(3² + 4² + 12²) = 13: each gradient scaled by 1/13.
	if err := sgd.Apply([]Variable{{Name: "a", Value: a, Grad: []float32{3, 4}}, {Name: "b", Value: b, Grad: []float32{12}}}); err != nil {
		t.Fatal(err)
	}
	scale := float32(1.0 / 13)
	want := []float32{-float32(3 * scale), -float32(4 * scale), -float32(12 * scale)}
	if got := []float32{a[0], a[1], b[0]}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("after one step: %v, want %v", got, want)
	}
	// Below the clip, nothing is scaled.
	c := []float32{0}
	if err := sgd.Apply([]Variable{{Name: "c", Value: c, Grad: []float32{0.5}}}); err != nil {
		t.Fatal(err)
	}
	if c[0] != -0.5 {
		t.Errorf("a gradient of norm 0.5 with global_clipnorm 1 moved the weight to %v, want -0.5", c[0])
	}
	if got := GlobalScale(1, []float32{3, 4}, []float32{12}); got != scale {
		t.Errorf("GlobalScale = %v, want %v", got, scale)
	}
	if _, err := NewAdam(AdamConfig{Options: Options{ClipNorm: 1, GlobalClipNorm: 1}}); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("clipnorm with global_clipnorm: %v", err)
	}
}

// Keras 2.11+ applies the first of clipnorm, global_clipnorm and clipvalue
// that is set: with a norm clip, clipvalue does nothing.
func TestClipValueYieldsToNormClipping(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want float64 // the update's ClipValue
	}{
		{"clipvalue alone", Options{ClipValue: 0.5}, 0.5},
		{"clipnorm wins", Options{ClipNorm: 1, ClipValue: 0.5}, 0},
		{"global_clipnorm wins", Options{GlobalClipNorm: 1, ClipValue: 0.5}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := NewSGD(SGDConfig{LearningRate: 0.1, Options: tt.opts})
			if err != nil {
				t.Fatal(err)
			}
			if u := o.NextUpdate(); u.ClipValue != tt.want {
				t.Fatalf("ClipValue = %v, want %v", u.ClipValue, tt.want)
			}
			if got := o.Config().Options.ClipValue; got != tt.opts.ClipValue {
				t.Fatalf("the config keeps clipvalue %v, got %v", tt.opts.ClipValue, got)
			}
		})
	}
}
