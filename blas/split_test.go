package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSplitProductsMatchWholeOnes checks that a product shared among
// goroutines (OpenBLAS told to use one thread, gokeras splitting c) matches
// the library's single call to float32 rounding, and repeats bit for bit,
// for every transposition and for both shapes of split.
func TestSplitProductsMatchWholeOnes(t *testing.T) {
	lib := Load()
	if lib.native == nil || lib.native.split <= 1 {
		t.Skip("no native BLAS whose products gokeras splits here")
	}
	nl := lib.native
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ m, n, k int }{{700, 40, 300}, {32, 900, 257}, {1000, 33, 16}, {77, 1001, 64}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				a := make([]float32, tc.m*tc.k)
				b := make([]float32, tc.k*tc.n)
				for i := range a {
					a[i] = rng.Float32() - 0.5
				}
				for i := range b {
					b[i] = rng.Float32() - 0.5
				}
				lda, ldb := tc.k, tc.n
				if ta {
					lda = tc.m
				}
				if tb {
					ldb = tc.k
				}
				whole := make([]float32, tc.m*tc.n)
				split := make([]float32, tc.m*tc.n)
				for i := range whole {
					whole[i] = float32(i % 3)
					split[i] = whole[i]
				}
				again := append([]float32(nil), whole...)
				nl.sgemm1(ta, tb, tc.m, tc.n, tc.k, 0.5, a, lda, b, ldb, 0.25, whole, tc.n)
				nl.sgemm(ta, tb, tc.m, tc.n, tc.k, 0.5, a, lda, b, ldb, 0.25, split, tc.n)
				nl.sgemm(ta, tb, tc.m, tc.n, tc.k, 0.5, a, lda, b, ldb, 0.25, again, tc.n)
				for i := range whole {
					// Each value sums k products of values below 0.5.
					if d := math.Abs(float64(whole[i] - split[i])); d > 1e-6*float64(tc.k) {
						t.Fatalf("%dx%dx%d transA=%t transB=%t: c[%d] = %v split, %v whole", tc.m, tc.n, tc.k, ta, tb, i, split[i], whole[i])
					}
					if split[i] != again[i] {
						t.Fatalf("%dx%dx%d transA=%t transB=%t: c[%d] = %v, then %v: a split product must repeat", tc.m, tc.n, tc.k, ta, tb, i, split[i], again[i])
					}
				}
			}
		}
	}
}
