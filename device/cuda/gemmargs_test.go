package cuda

import (
	"math/rand/v2"
	"testing"
)

// colMajorSgemm is BLAS's sgemm, column-major: c = op(a)·op(b) with
// op(a) m×k, op(b) k×n, element (i, j) of a matrix x with leading dimension
// ld at x[i + j·ld].
func colMajorSgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32 // op(a)[i][p], op(b)[p][j]
				if transA {
					av = a[p+i*lda]
				} else {
					av = a[i+p*lda]
				}
				if transB {
					bv = b[j+p*ldb]
				} else {
					bv = b[p+j*ldb]
				}
				s += float64(av) * float64(bv)
			}
			c[i+j*ldc] = float32(s)
		}
	}
}

// TestRowMajorGemm checks the cuBLAS arguments for each transpose pair by
// running a column-major sgemm with them and comparing with the row-major
// product computed directly.
func TestRowMajorGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, n, k := 4, 3, 5
	for _, tc := range []struct{ transA, transB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(rng.IntN(9) - 4)
		}
		for i := range b {
			b[i] = float32(rng.IntN(9) - 4)
		}
		want := make([]float32, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				for p := 0; p < k; p++ {
					var av, bv float32
					if tc.transA {
						av = a[p*m+i] // a stored k×m
					} else {
						av = a[i*k+p] // a m×k, row-major
					}
					if tc.transB {
						bv = b[j*k+p] // b stored n×k
					} else {
						bv = b[p*n+j] // b k×n
					}
					want[i*n+j] += av * bv
				}
			}
		}
		g := rowMajorGemm(tc.transA, tc.transB, m, n, k)
		A, B := a, b
		if g.SwapAB {
			A, B = b, a
		}
		got := make([]float32, m*n)
		colMajorSgemm(g.TransA, g.TransB, g.M, g.N, g.K, A, g.Lda, B, g.Ldb, got, g.Ldc)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("transA=%t transB=%t: c[%d] = %v, want %v (args %+v)", tc.transA, tc.transB, i, got[i], want[i], g)
			}
		}
	}
}
