package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestBatchMatMulBySgemm: products big enough for sgemm agree with the
// reference kernel (sums in float64) for each pair of transposes, within
// float32 rounding of a sum of K terms.
func TestBatchMatMulBySgemm(t *testing.T) {
	const batch, m, k, n = 5, 24, 40, 33
	if m*k*n < blasBatchProduct {
		t.Fatalf("%d×%d×%d is below the sgemm threshold: the test would not reach it", m, k, n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(v []float32) {
		for i := range v {
			v[i] = float32(2*rng.Float64() - 1)
		}
	}
	mm := newMultiplier()
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			t.Run(fmt.Sprintf("transA=%t/transB=%t", ta, tb), func(t *testing.T) {
				p := ops.BatchMatMulParams{Batch: batch, M: m, K: k, N: n, TransA: ta, TransB: tb,
					A: []int{batch, m, k}, B: []int{batch, k, n}, Out: []int{batch, m, n}}
				if ta {
					p.A = []int{batch, k, m}
				}
				if tb {
					p.B = []int{batch, n, k}
				}
				a, b := make([]float32, batch*m*k), make([]float32, batch*k*n)
				fill(a)
				fill(b)
				want, got := make([]float32, batch*m*n), make([]float32, batch*m*n)
				ops.BatchMatMulForward(p, a, b, want)
				if err := mm.batchMatMul(p, a, b, got); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5*float64(k) {
						t.Fatalf("value %d: %v by sgemm, %v by the reference", i, got[i], want[i])
					}
				}
			})
		}
	}
}
