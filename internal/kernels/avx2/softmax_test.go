package avx2

import (
	"math"
	"math/rand/v2"
	"testing"
)

// softmaxInputs are n values of x·scale for standard normal x, with the
// specials at a few places when specials is set.
func softmaxInputs(rng *rand.Rand, n int, scale float64, specials bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	if specials && n > 3 {
		x[1] = float32(math.Inf(-1))
		x[n/2] = -1e30
		x[n-1] = float32(math.NaN())
	}
	return x
}

// sameBits reports whether a and b hold the same values, NaN matching NaN.
func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return i, false
		}
	}
	return 0, true
}

// The kernels give the Go code's bits for every step, on whole vectors
// and on the Go tails, with and without NaN and infinities.
func TestSoftmaxStepsSameBitsAsGo(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX2 kernels on this CPU: the steps run the Go code")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{16, 32, 48, 128, 1024} {
		for _, specials := range []bool{false, true} {
			x := softmaxInputs(rng, n, 10, specials)
			b := softmaxInputs(rng, n, 1, false)
			if got, want := MaxOf(x), maxOfGo(x, x[0]); got != want && !specials {
				t.Errorf("n=%d: MaxOf = %v, Go %v", n, got, want)
			}
			m := maxOfGo(x, x[0])
			var cg, cw [Chains]float32
			cg[3], cw[3] = 0.5, 0.5 // the chains are added to
			yg, yw := make([]float32, n), make([]float32, n)
			ExpChains(x, yg, m, &cg)
			expChainsGo(x, yw, m, &cw)
			if i, ok := sameBits(yg, yw); !ok {
				t.Errorf("n=%d specials=%t: ExpChains y[%d] = %v, Go %v", n, specials, i, yg[i], yw[i])
			}
			if i, ok := sameBits(cg[:], cw[:]); !ok {
				t.Errorf("n=%d specials=%t: ExpChains chain %d = %v, Go %v", n, specials, i, cg[i], cw[i])
			}
			cg, cw = [Chains]float32{}, [Chains]float32{}
			DotChains(x, b, &cg)
			dotChainsGo(x, b, &cw)
			if i, ok := sameBits(cg[:], cw[:]); !ok {
				t.Errorf("n=%d specials=%t: DotChains chain %d = %v, Go %v", n, specials, i, cg[i], cw[i])
			}
		}
	}
	for n := 1; n <= 40; n++ {
		x := softmaxInputs(rng, n, 3, false)
		dy := softmaxInputs(rng, n, 1, false)
		if got, want := MaxOf(x), maxOfGo(x, x[0]); got != want {
			t.Errorf("n=%d: MaxOf = %v, Go %v", n, got, want)
		}
		yg, yw := append([]float32(nil), x...), append([]float32(nil), x...)
		ScaleBy(yg, 0.37)
		scaleByGo(yw, 0.37)
		if i, ok := sameBits(yg, yw); !ok {
			t.Errorf("n=%d: ScaleBy [%d] = %v, Go %v", n, i, yg[i], yw[i])
		}
		SoftmaxGrad(x, dy, yg, 0.61)
		softmaxGradGo(x, dy, yw, 0.61)
		if i, ok := sameBits(yg, yw); !ok {
			t.Errorf("n=%d: SoftmaxGrad [%d] = %v, Go %v", n, i, yg[i], yw[i])
		}
	}
}

// ExpShift is within 1 ulp of exp of the rounded difference (float64
// math.Exp), 0 where the difference is 104 or more, and NaN for NaN.
func TestExpShiftAccuracy(t *testing.T) {
	worst := 0.0
	for b := uint32(0); b <= math.Float32bits(104); b += 97 {
		d := math.Float32frombits(b)
		got := ExpShift(-d, 0)
		want := math.Exp(-float64(d))
		if u := ulps(got, want); u > worst {
			worst = u
			if u > 1 {
				t.Fatalf("ExpShift(%v, 0) = %v, float64 gives %v: %.2f ulp", -d, got, want, u)
			}
		}
	}
	t.Logf("largest error %.3f ulp", worst)
	for _, c := range []struct {
		v, m float32
		want float32
	}{
		{0, 0, 1}, {3, 3, 1}, {-104, 0, 0}, {float32(math.Inf(-1)), 2, 0}, {-1e30, 5, 0},
	} {
		if got := ExpShift(c.v, c.m); got != c.want {
			t.Errorf("ExpShift(%v, %v) = %v, want %v", c.v, c.m, got, c.want)
		}
	}
	for _, c := range [][2]float32{{float32(math.NaN()), 0}, {0, float32(math.NaN())}, {float32(math.Inf(1)), float32(math.Inf(1))}} {
		if got := ExpShift(c[0], c[1]); got == got {
			t.Errorf("ExpShift(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
}

// FoldChains adds the halves: chain j+8 into j, then j+4, j+2, j+1.
func TestFoldChainsOrder(t *testing.T) {
	// Values whose float32 sum depends on the order: 1 and ±2^24.
	var c [Chains]float32
	c[0], c[8], c[4] = 1<<24, 1, 1
	// Chain 8 then chain 4 into chain 0: each 2^24+1 rounds to 2^24 (the
	// two 1s added first would give 2^24+2).
	if got := FoldChains(&c); got != 1<<24 {
		t.Errorf("FoldChains = %v, want 2^24 (each 1 added to 2^24 alone)", got)
	}
	c = [Chains]float32{}
	c[0], c[1], c[2] = 1<<24, 1, 1
	// Chain 2 into chain 0 (w=2) before chain 1 (w=1): 2^24 both times.
	if got := FoldChains(&c); got != 1<<24 {
		t.Errorf("FoldChains = %v, want 2^24", got)
	}
	c = [Chains]float32{}
	c[1], c[9], c[0] = 1, 1, 1<<24
	// Chain 9 into chain 1 first (w=8), 2, then chain 1 into chain 0
	// (w=1): 2^24+2 exactly.
	if got := FoldChains(&c); got != 1<<24+2 {
		t.Errorf("FoldChains = %v, want 2^24+2", got)
	}
}
