//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/optim"
)

// ulps is how many float32s lie between a and b (0 when both are NaN).
func ulps(a, b float32) int64 {
	if a != a && b != b {
		return 0
	}
	if a != a || b != b {
		return math.MaxInt64
	}
	key := func(x float32) int64 {
		i := int64(int32(math.Float32bits(x)))
		if i < 0 {
			i = math.MinInt32 - i
		}
		return i
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// TestGlobalScaleMatchesOptim runs a GlobalNorm step's kernels
// (gk_abs_sq_sums over each gradient, gk_global_scale over all their
// parts) in device/cuda's launches and a small block, and compares the
// factor with optim.GlobalScale's. The kernels add the squares (each exact
// in double) in another order than optim's one loop, so the sum can differ
// in its last bits, and the factor, rounded from double to float32, by at
// most one ulp when the double lies next to a float32 rounding boundary;
// the test requires at most one ulp everywhere, and optim's bits on these
// data, where the sums are found to round alike. Its edge cases are
// exact: no gradient values or only zeros (norm 0: factor 1), a norm equal
// to the bound (1), an infinite value (0, which optim and the kernels both
// read as no scaling), a NaN (NaN).
func TestGlobalScaleMatchesOptim(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	sets := map[string][][]float32{
		"one weight":     {randn(rng, 1000, 0.1)},
		"dense layers":   {randn(rng, 784*16, 0.05), randn(rng, 16, 0.01), randn(rng, 160, 0.2), randn(rng, 10, 0.3)},
		"single values":  {{3}, {-4}},
		"many blocks":    {randn(rng, 70001, 0.01), randn(rng, 7, 1)},
		"zeros":          {make([]float32, 100), {0, float32(math.Copysign(0, -1))}},
		"empty gradient": {{}, {1, 2}},
		"infinite":       {{1, float32(math.Inf(-1))}, {2}},
		"nan":            {{1, float32(math.NaN())}, {2}},
	}
	exact := 0
	total := 0
	for name, grads := range sets {
		clips := []float64{1e-3, 0.5, 1, 5, 1e3}
		if name == "many blocks" { // slow to emulate: 274 blocks
			clips = []float64{0.5, 5}
		}
		for _, clip := range clips {
			for _, block := range []int{32, launch.SumBlock} {
				want := optim.GlobalScale(clip, grads...)
				got := GlobalScale(block, clip, grads...)
				total++
				if d := ulps(got, want); d == 0 {
					exact++
				} else if d > 1 {
					t.Errorf("%s, clip %v, block %d: factor %v, optim %v", name, clip, block, got, want)
				} else {
					t.Logf("%s, clip %v, block %d: factor %v, optim %v: one ulp (the sum's order)", name, clip, block, got, want)
				}
			}
		}
	}
	if exact != total {
		t.Errorf("%d of %d factors optim's to the bit, want all on these data", exact, total)
	}
	for _, tc := range []struct {
		clip  float64
		grads [][]float32
		want  float32
	}{
		{1, [][]float32{{3}, {4}}, 0.2},
		{5, [][]float32{{3}, {4}}, 1},
		{6, [][]float32{{3}, {4}}, 1},
		{2, [][]float32{{}, {0}}, 1},
		{2, [][]float32{{float32(math.Inf(1))}}, 0},
	} {
		if got := GlobalScale(launch.SumBlock, tc.clip, tc.grads...); got != tc.want || got != optim.GlobalScale(tc.clip, tc.grads...) {
			t.Errorf("clip %v of %v: factor %v, want %v", tc.clip, tc.grads, got, tc.want)
		}
	}
	if got := GlobalScale(launch.SumBlock, 1, []float32{float32(math.NaN())}); got == got {
		t.Errorf("factor of a NaN gradient %v, want NaN", got)
	}
}

// TestGlobalClipUpdatesMatchOptim runs a step clipping by global norm as
// device/cuda does, for several rules and options over two weights of
// 1000 and 37 values, four iterations with the slots carried over: the
// factor from the GlobalNorm kernels, then each weight's update kernel
// reading it (UpdateGlobal), against optim.Update.Apply with GlobalScale
// set to optim.GlobalScale's: the weights and slots to the bit. The
// iterations clip (the norm over the bound), do not (factor 1, which optim
// skips and the kernels multiply by: no value changes), see only zeros,
// and a NaN (a NaN factor: every weight NaN).
func TestGlobalClipUpdatesMatchOptim(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	sizes := []int{1000, 37}
	iterations := [][][]float32{
		{randn(rng, 1000, 1), randn(rng, 37, 3)},      // norm ≈ 36: clipped
		{randn(rng, 1000, 0.01), randn(rng, 37, 0.1)}, // ≈ 0.7: not
		{make([]float32, 1000), make([]float32, 37)},  // zeros: not
		{randn(rng, 1000, 2), randn(rng, 37, 1)},      // clipped, a NaN
	}
	iterations[0][0][3], iterations[0][0][4] = 0, float32(math.Copysign(0, -1))
	iterations[0][1][5] = 40
	iterations[3][1][2] = float32(math.NaN())
	rules := []string{"sgd", "nesterov", "adam amsgrad", "rmsprop centered momentum", "adagrad", "adadelta", "adamax", "nadam"}
	for _, rn := range rules {
		var u0 optim.Update
		for _, r := range updateRules {
			if r.name == rn {
				u0 = r.u
			}
		}
		for _, o := range []struct {
			name             string
			clipValue, decay float64
		}{{"plain", 0, 0}, {"clipvalue and decay", 0.05, 0.05}} {
			t.Run(fmt.Sprintf("%s/%s", rn, o.name), func(t *testing.T) {
				u := u0
				u.GlobalClipNorm, u.ClipValue, u.WeightDecay = 2, o.clipValue, o.decay
				names := u.SlotNames()
				host, dev := make([][]float32, len(sizes)), make([][]float32, len(sizes))
				hostSlots, devSlots := make([][][]float32, len(sizes)), make([][][]float32, len(sizes))
				for k, n := range sizes {
					host[k] = randn(rng, n, 1)
					dev[k] = append([]float32(nil), host[k]...)
					hostSlots[k], devSlots[k] = make([][]float32, len(names)), make([][]float32, len(names))
					for i, s := range names {
						hostSlots[k][i], devSlots[k][i] = make([]float32, n), make([]float32, n)
						for j := range n {
							hostSlots[k][i][j] = u.SlotInit(s)
							devSlots[k][i][j] = u.SlotInit(s)
						}
					}
				}
				for it, grads := range iterations {
					u.Iteration = int64(it + 1)
					want := optim.GlobalScale(u.GlobalClipNorm, grads...)
					factor := GlobalScale(launch.SumBlock, u.GlobalClipNorm, grads...)
					if ulps(factor, want) != 0 {
						t.Fatalf("iteration %d: factor %v, optim %v", it+1, factor, want)
					}
					for k, g := range grads {
						hu := u
						hu.GlobalScale = want
						hu.Apply(host[k], g, hostSlots[k])
						if err := UpdateGlobal(Launch{2, 32}, u, dev[k], g, devSlots[k], &factor); err != nil {
							t.Fatal(err)
						}
						if d := bitDiff(dev[k], host[k]); d != "" {
							t.Fatalf("iteration %d (factor %v), weight %d: %s", it+1, factor, k, d)
						}
						for i, s := range names {
							if d := bitDiff(devSlots[k][i], hostSlots[k][i]); d != "" {
								t.Fatalf("iteration %d, weight %d, slot %q: %s", it+1, k, s, d)
							}
						}
					}
				}
			})
		}
	}
	t.Run("refused", func(t *testing.T) {
		w, g := make([]float32, 4), make([]float32, 4)
		u := optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, GlobalClipNorm: 1, Iteration: 1}
		if _, err := Update(Launch{1, 32}, Launch{1, 32}, u, w, g, nil); err == nil {
			t.Error("an update clipping by global norm without its factor: no error")
		}
		var f float32 = 0.5
		if err := UpdateGlobal(Launch{1, 32}, optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: 1}, w, g, nil, &f); err == nil {
			t.Error("a factor for an update without global_clipnorm: no error")
		}
	})
}
