package ops

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices, where
// op(a) is m×k, op(b) is k×n and c is m×n. It goes through gonum's blas32 and
// blas64, so a faster implementation installed with blas32.Use or blas64.Use
// speeds up every op of this package.
func gemm[T float](transA, transB bool, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	ta, tb := blas.NoTrans, blas.NoTrans
	lda, ldb := k, n
	ar, ac, br, bc := m, k, k, n
	if transA {
		ta, lda, ar, ac = blas.Trans, m, k, m
	}
	if transB {
		tb, ldb, br, bc = blas.Trans, k, n, k
	}
	switch cc := any(c).(type) {
	case []float32:
		blas32.Gemm(ta, tb, float32(alpha),
			blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: any(a).([]float32)},
			blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float32)},
			float32(beta), blas32.General{Rows: m, Cols: n, Stride: n, Data: cc})
	case []float64:
		blas64.Gemm(ta, tb, float64(alpha),
			blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: any(a).([]float64)},
			blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float64)},
			float64(beta), blas64.General{Rows: m, Cols: n, Stride: n, Data: cc})
	}
}
