package launch

import (
	"fmt"
	"slices"

	"github.com/gokeras/gokeras/optim"
)

// Update is how the CUDA backend launches one optimizer update
// (optim.Update) of a weight: the kernel of its rule (gk_sgd, gk_momentum,
// gk_adam, gk_rmsprop, gk_adagrad, gk_adadelta, gk_adamax or gk_nadam)
// takes the weight, the slot pointers Slots, the gradient and the number of
// values, then Nesterov (gk_momentum only), the Scalars, and the options:
// the gradient's scale for ClipNorm or GlobalClipNorm (a device float
// written by gk_clip_scale or gk_global_scale, NULL without either),
// ClipValue, Decays and Decay.
//
// The scalars are computed here, on the host, with the float64 formulas of
// package optim and rounded to float32 as optim rounds them, so the
// kernels compute each value with the same float32 operations as
// optim.Update.Apply.
type Update struct {
	Rule optim.Rule
	// Slots has, for each slot pointer of the rule's kernel, the index of
	// that slot in u.SlotNames(), or -1 for a NULL pointer (a slot the
	// update does not keep: RMSprop's momentum or average gradient,
	// Adam's vhat).
	Slots []int
	// Nesterov is gk_momentum's int parameter.
	Nesterov bool
	// Scalars are the kernel's float parameters, in its order:
	//
	//	gk_sgd:      lr
	//	gk_momentum: lr, momentum
	//	gk_adam:     lrT (optim.Update.AdamRate), β1, 1-β1, β2, 1-β2, ε
	//	gk_rmsprop:  lr, ρ, 1-ρ, momentum, ε
	//	gk_adagrad:  lr, ε
	//	gk_adadelta: lr, ρ, 1-ρ, ε
	//	gk_adamax:   lr, 1-β1, β2, 1-β1^t, ε
	//	gk_nadam:    lr, 1-β1, 1-β2, μ_{t+1}/(1-Π_{t+1}), (1-μ_t)/(1-Π_t), 1-β2^t, ε
	Scalars []float32
	// ClipNorm, when positive, needs the gradient's L2 norm before the
	// update: gk_abs_sq_sums (SumGrid blocks of SumBlock threads) then
	// gk_clip_scale (one block of SumBlock threads) write the factor the
	// gradient is multiplied by, 0 for none, as optim.Update.Apply
	// computes it.
	ClipNorm float64
	// Global says the update scales the gradient by the factor of
	// clipping by global norm (optim.Update.GlobalClipNorm > 0): the
	// device float that the step's GlobalNorm step wrote
	// (gk_global_scale, GlobalParts), which the Update step reads as its
	// In[2]. The factor is never taken from the host.
	Global bool
	// ClipValue clips each gradient value to [-ClipValue, ClipValue] when
	// positive (optim compares its float32 too).
	ClipValue float32
	// Decays says the update applies its weight decay, w -= w·Decay,
	// before the rule (optim.Update.WeightDecay > 0); Decay is
	// float32(WeightDecay·LearningRate).
	Decays bool
	Decay  float32
}

// ForUpdate is the launch of update u, or an error naming the rule when
// no kernel computes it (or u is not a valid update).
func ForUpdate(u optim.Update) (Update, error) {
	if err := u.Check(); err != nil {
		return Update{}, err
	}
	if u.ClipNorm > 0 && u.GlobalClipNorm > 0 {
		return Update{}, fmt.Errorf("%v update: clipnorm and global_clipnorm together (optim.Options refuses them, as Keras does)", u.Rule)
	}
	if u.GlobalScale != 0 {
		// The kernels read the factor from the GlobalNorm step's device
		// float; one set on the host would be a second, possibly
		// different, factor.
		return Update{}, fmt.Errorf("%v update: a global clipping factor set on the host (%v): the CUDA backend computes it on the device, from global_clipnorm", u.Rule, u.GlobalScale)
	}
	names := u.SlotNames()
	slot := func(name string) int { return slices.Index(names, name) }
	l := Update{Rule: u.Rule, ClipNorm: u.ClipNorm, Global: u.GlobalClipNorm > 0, ClipValue: float32(u.ClipValue), Decays: u.WeightDecay > 0}
	if l.Decays {
		l.Decay = float32(u.WeightDecay * u.LearningRate)
	}
	lr, eps := float32(u.LearningRate), float32(u.Epsilon)
	b1, c1, b2, c2 := u.Betas()
	rho, crho := u.RhoDecay()
	switch u.Rule {
	case optim.RuleSGD:
		l.Scalars = []float32{lr}
	case optim.RuleMomentum, optim.RuleNesterov:
		l.Slots = []int{slot("momentum")}
		l.Nesterov = u.Rule == optim.RuleNesterov
		l.Scalars = []float32{lr, float32(u.Momentum)}
	case optim.RuleAdam:
		l.Slots = []int{slot("m"), slot("v"), slot("vhat")}
		l.Scalars = []float32{u.AdamRate(), b1, c1, b2, c2, eps}
	case optim.RuleRMSprop:
		l.Slots = []int{slot("velocity"), slot("momentum"), slot("average_gradient")}
		l.Scalars = []float32{lr, rho, crho, float32(u.Momentum), eps}
	case optim.RuleAdagrad:
		l.Slots = []int{slot("accumulator")}
		l.Scalars = []float32{lr, eps}
	case optim.RuleAdadelta:
		l.Slots = []int{slot("accumulated_grad"), slot("accumulated_delta_var")}
		l.Scalars = []float32{lr, rho, crho, eps}
	case optim.RuleAdamax:
		l.Slots = []int{slot("m"), slot("u")}
		l.Scalars = []float32{lr, c1, b2, u.AdamaxCorrection(), eps}
	case optim.RuleNadam:
		mCoef, gCoef, vCorr := u.NadamCoefs()
		l.Slots = []int{slot("m"), slot("v")}
		l.Scalars = []float32{lr, c1, c2, mCoef, gCoef, vCorr, eps}
	default:
		return Update{}, fmt.Errorf("no CUDA kernel for update rule %v", u.Rule)
	}
	// A slot the kernel needs that SlotNames does not list would be a
	// NULL pointer where the kernel writes: refuse it here.
	for i, j := range l.Slots {
		if j < 0 && !optionalSlot(u.Rule, i) {
			return Update{}, fmt.Errorf("no CUDA kernel for update rule %v with slots %q", u.Rule, names)
		}
	}
	return l, nil
}

// optionalSlot reports whether slot pointer i of rule's kernel may be
// NULL: RMSprop's momentum and average gradient, Adam's vhat.
func optionalSlot(r optim.Rule, i int) bool {
	return r == optim.RuleRMSprop && i > 0 || r == optim.RuleAdam && i == 2
}

const (
	// SumBlock is the block of gk_abs_sq_sums, gk_clip_scale and
	// gk_penalty.
	SumBlock = 256
	// maxSumParts is the most blocks gk_abs_sq_sums runs.
	maxSumParts = 1024
)

// SumGrid is the grid of gk_abs_sq_sums over n values: a block per
// SumBlock values, at most 1024 (grid-stride beyond), at least 1. Each
// block writes two doubles (SumDoubles); the shape depends on n only, so
// the sums round the same on every GPU.
func SumGrid(n int) int { return max(1, min((n+SumBlock-1)/SumBlock, maxSumParts)) }

// SumSharedBytes is the shared memory of the sum kernels: a double per
// thread.
const SumSharedBytes = 8 * SumBlock

// GlobalParts lays out the per-block sums of a GlobalNorm step over
// gradients of ns values: gk_abs_sq_sums over gradient j (SumGrid(ns[j])
// blocks of SumBlock threads) writes its blocks' sums from block
// offsets[j] on, one gradient after another, and gk_global_scale (one
// block of SumBlock threads) adds all parts of them. The layout depends on
// ns only, so the factor rounds the same on every GPU.
func GlobalParts(ns []int) (offsets []int, parts int) {
	offsets = make([]int, len(ns))
	for j, n := range ns {
		offsets[j] = parts
		parts += SumGrid(n)
	}
	return offsets, parts
}
