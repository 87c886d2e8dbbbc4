//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// updateRules are an update of every rule and variant the kernels know.
var updateRules = []struct {
	name string
	u    optim.Update
}{
	{"sgd", optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1}},
	{"momentum", optim.Update{Rule: optim.RuleMomentum, LearningRate: 0.1, Momentum: 0.9}},
	{"nesterov", optim.Update{Rule: optim.RuleNesterov, LearningRate: 0.1, Momentum: 0.9}},
	{"adam", optim.Update{Rule: optim.RuleAdam, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}},
	{"adam amsgrad", optim.Update{Rule: optim.RuleAdam, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, AMSGrad: true}},
	{"rmsprop", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Epsilon: 1e-7}},
	{"rmsprop momentum", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Momentum: 0.8, Epsilon: 1e-7}},
	{"rmsprop centered", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Epsilon: 1e-7, Centered: true}},
	{"rmsprop centered momentum", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Momentum: 0.8, Epsilon: 1e-7,
		Centered: true}},
	{"adagrad", optim.Update{Rule: optim.RuleAdagrad, LearningRate: 0.05, Epsilon: 1e-7, InitialAccumulator: 0.1}},
	{"adadelta", optim.Update{Rule: optim.RuleAdadelta, LearningRate: 1, Rho: 0.95, Epsilon: 1e-7}},
	{"adamax", optim.Update{Rule: optim.RuleAdamax, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}},
	{"nadam", optim.Update{Rule: optim.RuleNadam, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}},
}

// updateOptions are the options every rule is tested with.
var updateOptions = []struct {
	name                       string
	clipNorm, clipValue, decay float64
}{
	{"plain", 0, 0, 0},
	{"clipvalue", 0, 0.5, 0},
	{"weight decay", 0, 0, 0.05},
	{"clipnorm", 5, 0, 0},
	{"all", 5, 0.5, 0.05},
}

// bitDiff reports the first value of got that is not want's to the bit
// (any NaN matches any NaN: Go and C need not agree on the payload).
func bitDiff(got, want []float32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d values, want %d", len(got), len(want))
	}
	bad, first := 0, -1
	for i := range got {
		g, w := got[i], want[i]
		if math.Float32bits(g) == math.Float32bits(w) || g != g && w != w {
			continue
		}
		if bad++; first < 0 {
			first = i
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d values differ, the first [%d] %v (%#08x), want %v (%#08x)", bad, len(got), first,
		got[first], math.Float32bits(got[first]), want[first], math.Float32bits(want[first]))
}

// cpuGradScale is the factor optim.Update.Apply multiplies the gradient by
// for ClipNorm (0: none), computed as Apply computes it.
func cpuGradScale(clipNorm float64, g []float32) float32 {
	var ss float64
	for _, x := range g {
		ss += float64(x) * float64(x)
	}
	if norm := math.Sqrt(ss); clipNorm > 0 && norm > clipNorm {
		return float32(clipNorm / norm)
	}
	return 0
}

// TestUpdatesMatchOptim runs every rule with every option for four
// iterations, the slots carried over, over 1000 values (not a multiple of
// any block), in a small grid-strided launch (and, with all the options,
// a few rules in device/cuda's own launches too), and requires the weights and every slot to be
// optim.Update.Apply's to the bit after each iteration. The gradients
// hold zeros of both signs, values past the clipping bound, and, in the
// last iteration, a NaN (clipping and AMSGrad's max keep it, as Go's min
// and max do). Clipping by norm sums the squares in another order than the
// CPU; the factor it gives (the only value the order reaches) is checked
// against the CPU's separately, and is the CPU's here.
func TestUpdatesMatchOptim(t *testing.T) {
	const n = 1000
	rng := rand.New(rand.NewPCG(6, 6))
	w0 := randn(rng, n, 1)
	grads := [][]float32{randn(rng, n, 1), randn(rng, n, 2), randn(rng, n, 0.1), randn(rng, n, 1)}
	grads[0][3], grads[0][4] = 0, float32(math.Copysign(0, -1))
	grads[1][5] = 40
	grads[3][7] = float32(math.NaN())
	type shape struct{ l, sums Launch }
	small := shape{Launch{2, 32}, Launch{3, 32}}
	device := shape{Launch{elemGrid(n), 256}, Launch{launch.SumGrid(n), launch.SumBlock}}
	for _, r := range updateRules {
		for _, o := range updateOptions {
			shapes := []shape{small}
			// device/cuda's own launches, slower to emulate, for the
			// options' kernels on a few rules: the rules share their
			// indexing.
			if o.name == "all" && (r.u.Rule == optim.RuleSGD || r.u.AMSGrad || r.u.Rule == optim.RuleNadam) {
				shapes = append(shapes, device)
			}
			for _, sh := range shapes {
				name := fmt.Sprintf("%s/%s/%d×%d", r.name, o.name, sh.l.Grid, sh.l.Block)
				t.Run(name, func(t *testing.T) {
					u := r.u
					u.ClipNorm, u.ClipValue, u.WeightDecay = o.clipNorm, o.clipValue, o.decay
					names := u.SlotNames()
					host, dev := append([]float32(nil), w0...), append([]float32(nil), w0...)
					hostSlots, devSlots := make([][]float32, len(names)), make([][]float32, len(names))
					for i, s := range names {
						hostSlots[i], devSlots[i] = make([]float32, n), make([]float32, n)
						for j := range n {
							hostSlots[i][j] = u.SlotInit(s)
							devSlots[i][j] = u.SlotInit(s)
						}
					}
					for it, g := range grads {
						u.Iteration = int64(it + 1)
						u.Apply(host, g, hostSlots)
						scale, err := Update(sh.l, sh.sums, u, dev, g, devSlots)
						if err != nil {
							t.Fatal(err)
						}
						if want := cpuGradScale(u.ClipNorm, g); scale != want {
							t.Fatalf("iteration %d: gradient scale %v, the CPU's %v", it+1, scale, want)
						}
						if d := bitDiff(dev, host); d != "" {
							t.Fatalf("iteration %d: weights: %s", it+1, d)
						}
						for i, s := range names {
							if d := bitDiff(devSlots[i], hostSlots[i]); d != "" {
								t.Fatalf("iteration %d: slot %q: %s", it+1, s, d)
							}
						}
					}
				})
			}
		}
	}
}

// elemGrid is device/cuda's grid for an elementwise kernel over n values.
func elemGrid(n int) int { return min((n+255)/256, 4096) }

// TestUpdateClipNormScales checks clipping by norm where the norm is and
// is not over the bound, on one value and on none, and the factor's
// rounding: clipnorm/‖g‖ in double, rounded once.
func TestUpdateClipNormScales(t *testing.T) {
	u := optim.Update{Rule: optim.RuleSGD, LearningRate: 1, ClipNorm: 1, Iteration: 1}
	for _, tc := range []struct {
		g    []float32
		want float32
	}{
		{[]float32{3, 4}, float32(1.0 / 5)},
		{[]float32{0.5, -0.5}, 0}, // norm under 1: no scaling
		{[]float32{-2}, 0.5},
		{[]float32{}, 0},
		{[]float32{float32(math.Inf(1)), 1}, 0}, // 1/∞ = 0: no scaling, as on the CPU
		{[]float32{float32(math.NaN())}, 0},
	} {
		w := make([]float32, len(tc.g))
		scale, err := Update(Launch{1, 32}, Launch{1, 32}, u, w, tc.g, nil)
		if err != nil {
			t.Fatal(err)
		}
		if scale != tc.want || scale != cpuGradScale(1, tc.g) {
			t.Errorf("gradient %v: scale %v, want %v (the CPU's %v)", tc.g, scale, tc.want, cpuGradScale(1, tc.g))
		}
		host := make([]float32, len(tc.g))
		u.Apply(host, tc.g, nil)
		if d := bitDiff(w, host); d != "" {
			t.Errorf("gradient %v: weights: %s", tc.g, d)
		}
	}
}

func TestUpdateRefusesWhatItCannotDo(t *testing.T) {
	w, g := make([]float32, 4), make([]float32, 4)
	if _, err := Update(Launch{1, 32}, Launch{1, 32}, optim.Update{Rule: 42, LearningRate: 0.1}, w, g, nil); err == nil {
		t.Error("an unknown rule ran")
	}
	u := optim.Update{Rule: optim.RuleAdam, LearningRate: 0.1, Beta1: 0.9, Beta2: 0.999, Iteration: 1}
	if _, err := Update(Launch{1, 32}, Launch{1, 32}, u, w, g, [][]float32{make([]float32, 4)}); err == nil {
		t.Error("Adam ran with one slot")
	}
}

func TestPenaltyMatchesOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	params := []ops.PenaltyParams{{L1: 0.01}, {L2: 0.01}, {L1: 0.001, L2: 0.01}, {L1: 0.3, L2: 0.7, Scale: 1.0 / 32}}
	for _, n := range []int{0, 1, 7, 1000, 5000} {
		x := randn(rng, n, 1)
		if n > 3 {
			x[1], x[2] = 0, float32(math.Copysign(0, -1))
		}
		for _, sums := range []Launch{{1, 32}, {3, 64}, {launch.SumGrid(n), launch.SumBlock}} {
			for _, p := range params {
				want := float32(ops.PenaltyValue(p, x))
				got := Penalty(sums, p, x)
				if math.Abs(float64(got-want)) > 1e-6*math.Abs(float64(want)) {
					t.Errorf("n=%d %+v %v: penalty %v, want %v", n, p, sums, got, want)
				}
			}
		}
	}
}

func TestPenaltyGradMatchesOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	params := []ops.PenaltyParams{{L1: 0.01}, {L2: 0.01}, {L1: 0.001, L2: 0.01}, {L1: 0.3, L2: 0.7, Scale: 1.0 / 32}}
	for _, n := range []int{1, 7, 1000} {
		x := randn(rng, n, 1)
		if n > 3 {
			x[1], x[2] = 0, float32(math.Copysign(0, -1))
		}
		for _, l := range launches {
			for _, p := range params {
				for _, seed := range []float32{1, 0.37, -2} {
					want, got := make([]float32, n), make([]float32, n)
					ops.PenaltyGradient(p, float64(seed), x, want)
					PenaltyGrad(l, p, seed, x, got)
					what := fmt.Sprintf("n=%d %+v seed %v %v: gradient", n, p, seed, l)
					if goFusesMultiplyAdds {
						check(t, what, got, want, 1e-6)
					} else if d := bitDiff(got, want); d != "" {
						t.Errorf("%s: %s", what, d)
					}
				}
			}
		}
	}
}

func TestAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{1, 7, 1000} {
		a, b := randn(rng, n, 1), randn(rng, n, 1e-3)
		want, got := make([]float32, n), make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		for _, l := range launches {
			clear(got)
			Add(l, a, b, got)
			if d := bitDiff(got, want); d != "" {
				t.Errorf("n=%d %v: %s", n, l, d)
			}
		}
	}
}

// TestUpdateLateIterations checks the host's per-step numbers of the
// rules with bias corrections (Adam's rate, Adamax's and Nadam's factors)
// far from the first iterations.
func TestUpdateLateIterations(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	const n = 100
	for _, r := range updateRules {
		if r.u.Rule != optim.RuleAdam && r.u.Rule != optim.RuleAdamax && r.u.Rule != optim.RuleNadam {
			continue
		}
		u := r.u
		w := randn(rng, n, 1)
		host := append([]float32(nil), w...)
		slots, hostSlots := make([][]float32, len(u.SlotNames())), make([][]float32, len(u.SlotNames()))
		for i := range slots {
			slots[i] = randn(rng, n, 0.01)
			for j := range slots[i] {
				slots[i][j] = float32(math.Abs(float64(slots[i][j])))
			}
			hostSlots[i] = append([]float32(nil), slots[i]...)
		}
		for _, it := range []int64{999, 1000, 12345} {
			u.Iteration = it
			g := randn(rng, n, 0.1)
			u.Apply(host, g, hostSlots)
			if _, err := Update(Launch{1, 32}, Launch{1, 32}, u, w, g, slots); err != nil {
				t.Fatal(err)
			}
			if d := bitDiff(w, host); d != "" {
				t.Errorf("%s at iteration %d: weights: %s", r.name, it, d)
			}
		}
	}
}
