package blas

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
)

// SgemmBatch gives every sample the bits Sgemm gives it alone, for each
// pair of transposes, with leading dimensions and sample strides larger
// than the matrices (values between samples untouched), beta 0 and not;
// and it refuses operands too short for the last sample.
func TestSgemmBatchAsSgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(2*rng.Float64() - 1)
		}
		return v
	}
	muls := []*Multiplier{Default(), NewMultiplier(PureGo(), false)}
	if avx2.Available() {
		// The AVX2 kernels, on a CPU with AVX-512 too.
		m := NewMultiplier(PureGo(), true)
		m.avx2 = true
		muls = append(muls, m)
	}
	for _, mul := range muls {
		for _, shape := range [][3]int{{128, 32, 128}, {32, 128, 128}, {5, 7, 3}, {40, 70, 33}} {
			m, n, k := shape[0], shape[1], shape[2]
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, beta := range []float32{0, 0.5} {
						name := fmt.Sprintf("%s/%dx%dx%d/transA=%t/transB=%t/beta=%g", mul, m, n, k, ta, tb, beta)
						ar, ac, br, bc := m, k, k, n
						if ta {
							ar, ac = k, m
						}
						if tb {
							br, bc = n, k
						}
						lda, ldb, ldc := ac+3, bc+1, n+2
						const batch = 7
						sa, sb, sc := ar*lda+5, br*ldb, m*ldc+4
						a, b, c := fill(batch*sa), fill(batch*sb), fill(batch*sc)
						want := append([]float32(nil), c...)
						for s := range batch {
							if err := mul.Sgemm(ta, tb, m, n, k, 1.5, a[s*sa:], lda, b[s*sb:], ldb, beta, want[s*sc:], ldc); err != nil {
								t.Fatalf("%s: Sgemm: %v", name, err)
							}
						}
						got := append([]float32(nil), c...)
						if err := mul.SgemmBatch(ta, tb, batch, m, n, k, 1.5, a, sa, lda, b, sb, ldb, beta, got, sc, ldc); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("%s: c[%d] = %v, Sgemm alone %v", name, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
	mul := Default()
	a, b, c := make([]float32, 3*4*5), make([]float32, 3*5*6), make([]float32, 3*4*6)
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"short a", func() error {
			return mul.SgemmBatch(false, false, 3, 4, 6, 5, 1, a[:len(a)-1], 20, 5, b, 30, 6, 0, c, 24, 6)
		}, "sample 2"},
		{"stride past c", func() error { return mul.SgemmBatch(false, false, 3, 4, 6, 5, 1, a, 20, 5, b, 30, 6, 0, c, 60, 6) }, "need more values"},
		{"negative", func() error { return mul.SgemmBatch(false, false, -1, 4, 6, 5, 1, a, 20, 5, b, 30, 6, 0, c, 24, 6) }, "negative"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
