package optim

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Rule names an update rule.
type Rule int

// The update rules, with the arithmetic of Keras 2 on TensorFlow, in
// float32 (g is the gradient, t the iteration counted from 1):
//
//	RuleSGD:      w -= lr·g
//	RuleMomentum: v = momentum·v - lr·g;  w += v
//	RuleNesterov: v = momentum·v - lr·g;  w += momentum·v - lr·g
//	RuleAdam:     m = β1·m + (1-β1)·g;  s = β2·s + (1-β2)·g²  (AMSGrad: ŝ = max(ŝ, s), used for s)
//	              w -= lr·√(1-β2^t)/(1-β1^t) · m/(√s + ε)
//	RuleRMSprop:  r = ρ·r + (1-ρ)·g²;  (centered: a = ρ·a + (1-ρ)·g, d = r - a²)
//	              Δ = lr·g/√(d + ε);  momentum: m = momentum·m + Δ, w -= m;  else w -= Δ
//	RuleAdagrad:  a += g²;  w -= lr·g/√(a + ε)  (a starts at InitialAccumulator)
//	RuleAdadelta: a = ρ·a + (1-ρ)·g²;  δ = -√(d + ε)/√(a + ε)·g;  d = ρ·d + (1-ρ)·δ²;  w += lr·δ
//	RuleAdamax:   m += (g - m)·(1-β1);  u = max(β2·u, |g|);  w -= lr·m/((1-β1^t)·(u + ε))
//	RuleNadam:    m += (g - m)·(1-β1);  s += (g² - s)·(1-β2)
//	              μ_t = β1·(1 - 0.5·0.96^t), Π_t = μ_1···μ_t
//	              m̂ = μ_{t+1}·m/(1-Π_{t+1}) + (1-μ_t)·g/(1-Π_t);  ŝ = s/(1-β2^t)
//	              w -= lr·m̂/(√ŝ + ε)
//
// Before the rule, every update clips the gradient as the Update's
// ClipNorm (or GlobalClipNorm, through GlobalScale) and ClipValue say, then
// applies its WeightDecay, Keras 2.11's decoupled decay: w -= w·WeightDecay·lr.
// AdamW is Adam with WeightDecay.
const (
	RuleSGD Rule = iota + 1
	RuleMomentum
	RuleNesterov
	RuleAdam
	RuleRMSprop
	RuleAdagrad
	RuleAdadelta
	RuleAdamax
	RuleNadam
)

var ruleNames = [...]string{RuleSGD: "SGD", RuleMomentum: "SGD with momentum", RuleNesterov: "SGD with Nesterov momentum", RuleAdam: "Adam",
	RuleRMSprop: "RMSprop", RuleAdagrad: "Adagrad", RuleAdadelta: "Adadelta", RuleAdamax: "Adamax", RuleNadam: "Nadam"}

func (r Rule) String() string {
	if r <= 0 || int(r) >= len(ruleNames) {
		return fmt.Sprintf("Rule(%d)", int(r))
	}
	return ruleNames[r]
}

// Update is one step of an optimizer as plain data: the rule and its
// numbers for this iteration. It is what a device needs to update the
// weights where they live, and Apply is the one definition of its
// arithmetic: the optimizers' own Apply calls it, the CPU backend calls it,
// and the CUDA kernels are tested against it.
type Update struct {
	Rule         Rule
	LearningRate float64
	// Momentum is SGD's and RMSprop's momentum (RuleMomentum,
	// RuleNesterov, RuleRMSprop).
	Momentum float64
	// Beta1, Beta2 and Epsilon are Adam's, Adamax's and Nadam's; Epsilon
	// also RMSprop's, Adagrad's and Adadelta's.
	Beta1, Beta2, Epsilon float64
	// Rho is RMSprop's and Adadelta's decay.
	Rho float64
	// Centered makes RMSprop divide by the gradient's variance estimate.
	Centered bool
	// AMSGrad makes Adam keep the largest second moment so far.
	AMSGrad bool
	// InitialAccumulator is what Adagrad's accumulator starts at.
	InitialAccumulator float64
	// ClipNorm scales each variable's gradient down to this L2 norm when it
	// is longer; ClipValue clips each gradient value to [-ClipValue,
	// ClipValue]. Zero: off. Clipping by norm needs the whole gradient of a
	// variable before its update (NeedsWholeGradient).
	ClipNorm, ClipValue float64
	// GlobalClipNorm scales all the gradients of the step together so that
	// their joint L2 norm is at most this; whoever applies the update to
	// each weight computes the factor from all of them first (GlobalScale)
	// and sets GlobalScale. Zero: off.
	GlobalClipNorm float64
	// GlobalScale is the factor GlobalClipNorm asks for this step, set by
	// whoever applies the update; 0 means 1.
	GlobalScale float32
	// WeightDecay is the decoupled weight decay applied before the rule.
	WeightDecay float64
	// Iteration counts updates from 1, this one included: Adam's t.
	Iteration int64
	// gradScale is the factor the gradient is multiplied by (ClipNorm),
	// set by Apply; 0 means 1.
	gradScale float32
	// scalarOnly makes apply skip the vector kernels (tests).
	scalarOnly bool
}

// ErrUnknownRule is wrapped by the errors for an Update whose rule this
// version of gokeras does not know.
var ErrUnknownRule = errors.New("unknown update rule")

// Check validates the update's numbers.
func (u Update) Check() error {
	if u.Rule <= 0 || int(u.Rule) >= len(ruleNames) {
		return fmt.Errorf("optim: update rule %v: %w", u.Rule, ErrUnknownRule)
	}
	if !(u.LearningRate >= 0) || math.IsInf(u.LearningRate, 0) {
		return fmt.Errorf("optim: %v update: the learning rate must be a finite number >= 0, got %v", u.Rule, u.LearningRate)
	}
	if u.Iteration < 1 && (u.Rule == RuleAdam || u.Rule == RuleAdamax || u.Rule == RuleNadam) {
		return fmt.Errorf("optim: %v update with iteration %d: iterations count from 1", u.Rule, u.Iteration)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"clipnorm", u.ClipNorm}, {"clipvalue", u.ClipValue}, {"global_clipnorm", u.GlobalClipNorm}, {"weight_decay", u.WeightDecay}} {
		if !(v.x >= 0) || math.IsInf(v.x, 0) {
			return fmt.Errorf("optim: %v update: %s must be a finite number >= 0 (0: off), got %v", u.Rule, v.name, v.x)
		}
	}
	return nil
}

// PlainSGD reports whether u is SGD without momentum, clipping or weight
// decay, w -= lr·g, which a product that computes g can apply by itself
// (its output the weights, alpha -lr, beta 1).
func (u Update) PlainSGD() bool {
	return u.Rule == RuleSGD && u.ClipNorm == 0 && u.ClipValue == 0 && u.GlobalClipNorm == 0 && u.WeightDecay == 0
}

// NeedsWholeGradient reports whether the update must see a variable's
// whole gradient before changing any of its values (clipping by norm), so
// a device cannot apply it piece by piece as the gradient is computed.
func (u Update) NeedsWholeGradient() bool { return u.ClipNorm > 0 || u.GlobalClipNorm > 0 }

// GlobalScale is the factor Keras' clip_by_global_norm scales every
// gradient of a step by: clipNorm/max(norm, clipNorm), norm the L2 norm of
// all of them together (summed in float64), rounded to float32.
func GlobalScale(clipNorm float64, grads ...[]float32) float32 {
	var ss float64
	for _, g := range grads {
		for _, x := range g {
			ss += float64(x) * float64(x)
		}
	}
	return float32(clipNorm / math.Max(math.Sqrt(ss), clipNorm))
}

// SlotNames lists the per-weight slots the rule keeps, in the order Apply
// takes them, named as Keras names them.
func (u Update) SlotNames() []string {
	switch u.Rule {
	case RuleMomentum, RuleNesterov:
		return []string{"momentum"}
	case RuleAdam:
		if u.AMSGrad {
			return []string{"m", "v", "vhat"}
		}
		return []string{"m", "v"}
	case RuleRMSprop:
		names := []string{"velocity"}
		if u.Momentum > 0 {
			names = append(names, "momentum")
		}
		if u.Centered {
			names = append(names, "average_gradient")
		}
		return names
	case RuleAdagrad:
		return []string{"accumulator"}
	case RuleAdadelta:
		return []string{"accumulated_grad", "accumulated_delta_var"}
	case RuleAdamax:
		return []string{"m", "u"}
	case RuleNadam:
		return []string{"m", "v"}
	}
	return nil
}

// SlotInit is the value a new slot starts at: Adagrad's accumulator
// starts at InitialAccumulator, every other slot at 0.
func (u Update) SlotInit(name string) float32 {
	if u.Rule == RuleAdagrad && name == "accumulator" {
		return float32(u.InitialAccumulator)
	}
	return 0
}

// SlotNonNegative reports whether slot name can only hold values >= 0:
// the accumulated squares (Adam's, Nadam's and RMSprop's second moments,
// AMSGrad's maximum of them, Adagrad's and Adadelta's accumulators) and
// Adamax's infinity norm. A negative value there is damage, never state:
// the square root the rule takes of it would be NaN.
func (u Update) SlotNonNegative(name string) bool {
	switch u.Rule {
	case RuleAdam, RuleNadam:
		return name == "v" || name == "vhat"
	case RuleRMSprop:
		return name == "velocity"
	case RuleAdagrad:
		return name == "accumulator"
	case RuleAdadelta:
		return name == "accumulated_grad" || name == "accumulated_delta_var"
	case RuleAdamax:
		return name == "u"
	}
	return false
}

// Betas are β1 and β2 in float32 with their complements 1-β1 and 1-β2,
// each complement computed in float64 and then rounded: Keras computes
// 1 - beta_1 on the Python float before TensorFlow casts it to the
// variable's dtype, and 1 - float32(0.999) would be 1.3e-5 smaller than
// float32(0.001), an error every step's second moment carries.
func (u Update) Betas() (b1, c1, b2, c2 float32) {
	return float32(u.Beta1), float32(1 - u.Beta1), float32(u.Beta2), float32(1 - u.Beta2)
}

// RhoDecay is RMSprop's and Adadelta's ρ in float32 with 1-ρ, rounded
// from float64 as Betas' complements are.
func (u Update) RhoDecay() (rho, c float32) { return float32(u.Rho), float32(1 - u.Rho) }

// AdamaxCorrection is Adamax's bias correction of the first moment,
// 1-β1^t, computed in float64 and rounded.
func (u Update) AdamaxCorrection() float32 {
	return float32(1 - math.Pow(u.Beta1, float64(u.Iteration)))
}

// NadamCoefs are Nadam's per-step factors in float32 (see RuleNadam): of m
// in m̂, of g in m̂, and the second moment's bias correction 1-β2^t.
func (u Update) NadamCoefs() (mCoef, gCoef, vCorr float32) {
	mu, muNext, omp, ompNext := u.NadamFactors()
	return float32(muNext / ompNext), float32((1 - mu) / omp), float32(1 - math.Pow(u.Beta2, float64(u.Iteration)))
}

// AdamRate is Adam's step size with both bias corrections folded in:
// lr·√(1-β2^t)/(1-β1^t).
func (u Update) AdamRate() float32 {
	t := float64(u.Iteration)
	return float32(u.LearningRate * math.Sqrt(1-math.Pow(u.Beta2, t)) / (1 - math.Pow(u.Beta1, t)))
}

// NadamFactors are Nadam's per-step numbers: μ_t, μ_{t+1}, 1-Π_t and
// 1-Π_{t+1} (see RuleNadam), computed in float64 from the iteration.
func (u Update) NadamFactors() (mu, muNext, oneMinusProd, oneMinusProdNext float64) {
	t := u.Iteration
	mu1 := func(s int64) float64 { return u.Beta1 * (1 - 0.5*math.Pow(0.96, float64(s))) }
	prod := 1.0
	for s := int64(1); s <= t; s++ {
		prod *= mu1(s)
	}
	mu, muNext = mu1(t), mu1(t+1)
	return mu, muNext, 1 - prod, 1 - prod*muNext
}

// Apply updates the weights w from their gradient g, in place, with the
// slots named by SlotNames (zeros before the first update) updated too.
// g and every slot must be as long as w; Apply does not check (see
// CheckSlots). Long slices are split over the CPU's cores; every element's
// arithmetic is the same however they are split.
func (u Update) Apply(w, g []float32, slots [][]float32) {
	if u.GlobalScale != 0 && u.GlobalScale != 1 {
		u.gradScale = u.GlobalScale
	}
	if u.ClipNorm > 0 {
		var ss float64
		for _, x := range g {
			ss += float64(x) * float64(x)
		}
		if norm := math.Sqrt(ss); norm > u.ClipNorm {
			u.gradScale = float32(u.ClipNorm / norm)
		}
	}
	const chunk = 1 << 16
	workers := min(runtime.GOMAXPROCS(0), (len(w)+chunk-1)/chunk)
	if workers <= 1 {
		u.apply(w, g, slots)
		return
	}
	per := (len(w) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(w); lo += per {
		hi := min(len(w), lo+per)
		part := make([][]float32, len(slots))
		for i, s := range slots {
			part[i] = s[lo:hi]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.apply(w[lo:hi], g[lo:hi], part)
		}()
	}
	wg.Wait()
}

// apply is Apply on one goroutine: the vector kernels where the CPU has
// them (update_amd64.s computes the same operations in the same order),
// these loops for the rest.
func (u Update) apply(w, g []float32, slots [][]float32) {
	if u.gradScale == 0 && u.ClipValue == 0 && u.WeightDecay > 0 {
		// Weight decay alone needs no copy of the gradient: decay a
		// block of weights, then apply the rule to it while it is in
		// the cache.
		plain := u
		plain.WeightDecay = 0
		d := float32(u.WeightDecay * u.LearningRate)
		if !u.scalarOnly {
			// AdamW: both in one pass where a vector kernel does it.
			done := u.adamDecayVector(w, g, slots, d)
			w, g, slots = w[done:], g[done:len(w)], tails(slots, done)
		}
		const block = 4096
		for lo := 0; lo < len(w); lo += block {
			hi := min(len(w), lo+block)
			u.decay(w[lo:hi], d)
			plain.apply(w[lo:hi], g[lo:hi], sub(slots, lo, hi))
		}
		return
	}
	if u.gradScale != 0 || u.ClipValue > 0 || u.WeightDecay > 0 {
		// Clipping and weight decay first, on a copy of the gradient,
		// then the rule, in blocks that stay in the cache.
		var buf [1024]float32
		for lo := 0; lo < len(w); lo += len(buf) {
			hi := min(len(w), lo+len(buf))
			gc := u.prepare(w[lo:hi], g[lo:hi], buf[:hi-lo])
			plain := u
			plain.gradScale, plain.ClipValue, plain.WeightDecay = 0, 0, 0
			plain.apply(w[lo:hi], gc, sub(slots, lo, hi))
		}
		return
	}
	done := 0
	if !u.scalarOnly {
		done = u.applyVector(w, g, slots)
	}
	w, g = w[done:], g[done:len(w)]
	slots = tails(slots, done)
	if u.Rule > RuleAdam || u.AMSGrad {
		u.applyMore(w, g, slots)
		return
	}
	// Each product is converted to float32 before it is added: the Go spec
	// then forbids fusing it into a multiply-add (as GOAMD64=v3 builds
	// would), so every build rounds exactly as the vector kernels do.
	lr := float32(u.LearningRate)
	switch u.Rule {
	case RuleSGD:
		for i, gi := range g {
			w[i] -= float32(lr * gi)
		}
	case RuleMomentum:
		mom, vel := float32(u.Momentum), slots[0][:len(w)]
		for i, gi := range g {
			vel[i] = float32(mom*vel[i]) - float32(lr*gi)
			w[i] += vel[i]
		}
	case RuleNesterov:
		mom, vel := float32(u.Momentum), slots[0][:len(w)]
		for i, gi := range g {
			vel[i] = float32(mom*vel[i]) - float32(lr*gi)
			w[i] += float32(mom*vel[i]) - float32(lr*gi)
		}
	case RuleAdam:
		lrT := u.AdamRate()
		b1, c1, b2, c2 := u.Betas()
		eps := float32(u.Epsilon)
		m, s := slots[0][:len(w)], slots[1][:len(w)]
		for i, gi := range g {
			m[i] = float32(b1*m[i]) + float32(c1*gi)
			s[i] = float32(b2*s[i]) + float32(float32(c2*gi)*gi)
			w[i] -= float32(lrT*m[i]) / (float32(math.Sqrt(float64(s[i]))) + eps)
		}
	}
}

// prepare writes the gradient g, clipped as u says, into out, and applies
// u's weight decay to w.
func (u Update) prepare(w, g, out []float32) []float32 {
	scale, cv := u.gradScale, float32(u.ClipValue)
	for i, x := range g {
		if scale != 0 {
			x = float32(x * scale)
		}
		if cv > 0 {
			x = min(max(x, -cv), cv)
		}
		out[i] = x
	}
	if u.WeightDecay > 0 {
		u.decay(w, float32(u.WeightDecay*u.LearningRate))
	}
	return out
}

// decay applies decoupled weight decay, w -= w·d, with the vector kernel
// where the CPU has it (same operations, same bits).
func (u Update) decay(w []float32, d float32) {
	done := 0
	if !u.scalarOnly {
		done = decayVector(w, d)
	}
	for i, x := range w[done:] {
		w[done+i] = x - float32(x*d)
	}
}

// sub returns s[lo:hi] of every slot.
func sub(slots [][]float32, lo, hi int) [][]float32 {
	out := make([][]float32, len(slots))
	for i, s := range slots {
		out[i] = s[lo:hi]
	}
	return out
}

// tails returns the slots without their first n values.
func tails(slots [][]float32, n int) [][]float32 {
	if n == 0 {
		return slots
	}
	out := make([][]float32, len(slots))
	for i, s := range slots {
		out[i] = s[n:]
	}
	return out
}

// CheckSlots checks that g and the slots fit w and the rule, for callers
// that take them from elsewhere (a checkpoint, another device).
func (u Update) CheckSlots(w, g []float32, slots [][]float32) error {
	if len(g) != len(w) {
		return fmt.Errorf("optim: %d weights but %d gradients", len(w), len(g))
	}
	names := u.SlotNames()
	if len(slots) != len(names) {
		return fmt.Errorf("optim: %v keeps %d slots, got %d", u.Rule, len(names), len(slots))
	}
	for i, s := range slots {
		if len(s) != len(w) {
			return fmt.Errorf("optim: slot %q holds %d values for %d weights", names[i], len(s), len(w))
		}
	}
	return nil
}
