package avx512

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
)

// The AVX-512 softmax steps give package avx2's bits (which its tests
// check against its Go code and float64), with NaN and infinities among
// the values, on whole vectors and tails.
func TestSoftmaxStepsSameBitsAsAVX2(t *testing.T) {
	if !Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	values := func(n int, scale float64, specials bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		if specials && n > 3 {
			x[1], x[n/2], x[n-1] = float32(math.Inf(-1)), -1e30, float32(math.NaN())
		}
		return x
	}
	same := func(a, b []float32) int {
		for i := range a {
			if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
				return i
			}
		}
		return -1
	}
	for _, n := range []int{1, 7, 15, 16, 17, 31, 32, 48, 128, 130, 1024} {
		for _, specials := range []bool{false, true} {
			x, b := values(n, 10, specials), values(n, 1, false)
			m, ok := MaxOf(x)
			if !ok {
				t.Fatal("MaxOf reports no kernel")
			}
			if want := avx2.MaxOf(x); m != want && !specials {
				t.Errorf("n=%d: MaxOf = %v, avx2 %v", n, m, want)
			}
			whole := n &^ 15
			var cg, cw [chains]float32
			cg[5], cw[5] = 0.25, 0.25
			yg, yw := make([]float32, n), make([]float32, n)
			ExpChains(x[:whole], yg, m, &cg)
			avx2.ExpChains(x[:whole], yw, m, (*[avx2.Chains]float32)(&cw))
			if i := same(yg, yw); i >= 0 {
				t.Errorf("n=%d specials=%t: ExpChains y[%d] = %v, avx2 %v", n, specials, i, yg[i], yw[i])
			}
			if i := same(cg[:], cw[:]); i >= 0 {
				t.Errorf("n=%d specials=%t: ExpChains lane %d = %v, avx2 %v", n, specials, i, cg[i], cw[i])
			}
			cg, cw = [chains]float32{}, [chains]float32{}
			DotChains(x[:whole], b, &cg)
			avx2.DotChains(x[:whole], b, (*[avx2.Chains]float32)(&cw))
			if i := same(cg[:], cw[:]); i >= 0 {
				t.Errorf("n=%d specials=%t: DotChains lane %d = %v, avx2 %v", n, specials, i, cg[i], cw[i])
			}
			yg, yw = append([]float32(nil), b...), append([]float32(nil), b...)
			ScaleBy(yg, 1/3.0)
			avx2.ScaleBy(yw, 1/3.0)
			if i := same(yg, yw); i >= 0 {
				t.Errorf("n=%d: ScaleBy [%d] = %v, avx2 %v", n, i, yg[i], yw[i])
			}
			SoftmaxGrad(b, x, yg, 0.7)
			avx2.SoftmaxGrad(b, x, yw, 0.7)
			if i := same(yg, yw); i >= 0 {
				t.Errorf("n=%d: SoftmaxGrad [%d] = %v, avx2 %v", n, i, yg[i], yw[i])
			}
		}
	}
}
