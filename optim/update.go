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
//	RuleAdam:     m = β1·m + (1-β1)·g;  s = β2·s + (1-β2)·g²
//	              w -= lr·√(1-β2^t)/(1-β1^t) · m/(√s + ε)
const (
	RuleSGD Rule = iota + 1
	RuleMomentum
	RuleNesterov
	RuleAdam
)

var ruleNames = [...]string{RuleSGD: "SGD", RuleMomentum: "SGD with momentum", RuleNesterov: "SGD with Nesterov momentum", RuleAdam: "Adam"}

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
	// Momentum is SGD's momentum (RuleMomentum, RuleNesterov).
	Momentum float64
	// Beta1, Beta2 and Epsilon are Adam's.
	Beta1, Beta2, Epsilon float64
	// Iteration counts updates from 1, this one included: Adam's t.
	Iteration int64
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
	if u.Rule == RuleAdam && u.Iteration < 1 {
		return fmt.Errorf("optim: Adam update with iteration %d: iterations count from 1", u.Iteration)
	}
	return nil
}

// SlotNames lists the per-weight slots the rule keeps, in the order Apply
// takes them, named as Keras names them.
func (u Update) SlotNames() []string {
	switch u.Rule {
	case RuleMomentum, RuleNesterov:
		return []string{"momentum"}
	case RuleAdam:
		return []string{"m", "v"}
	}
	return nil
}

// AdamRate is Adam's step size with both bias corrections folded in:
// lr·√(1-β2^t)/(1-β1^t).
func (u Update) AdamRate() float32 {
	t := float64(u.Iteration)
	return float32(u.LearningRate * math.Sqrt(1-math.Pow(u.Beta2, t)) / (1 - math.Pow(u.Beta1, t)))
}

// Apply updates the weights w from their gradient g, in place, with the
// slots named by SlotNames (zeros before the first update) updated too.
// g and every slot must be as long as w; Apply does not check (see
// CheckSlots). Long slices are split over the CPU's cores; every element's
// arithmetic is the same however they are split.
func (u Update) Apply(w, g []float32, slots [][]float32) {
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
	done := 0
	if !u.scalarOnly {
		done = u.applyVector(w, g, slots)
	}
	w, g = w[done:], g[done:len(w)]
	slots = tails(slots, done)
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
		b1, b2, eps := float32(u.Beta1), float32(u.Beta2), float32(u.Epsilon)
		c1, c2 := 1-b1, 1-b2
		m, s := slots[0][:len(w)], slots[1][:len(w)]
		for i, gi := range g {
			m[i] = float32(b1*m[i]) + float32(c1*gi)
			s[i] = float32(b2*s[i]) + float32(float32(c2*gi)*gi)
			w[i] -= float32(lrT*m[i]) / (float32(math.Sqrt(float64(s[i]))) + eps)
		}
	}
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
