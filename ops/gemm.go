package ops

import (
	"fmt"

	"github.com/gokeras/gokeras/blas"
)

// gemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices, where
// op(a) is m×k, op(b) is k×n and c is m×n. It goes through blas.Default, so
// every op of this package uses the fastest BLAS the machine has (see
// package blas). The ops check shapes before calling it, so an error here is
// a bug in this package.
func gemm[T float](transA, transB bool, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	var err error
	switch cc := any(c).(type) {
	case []float32:
		err = blas.Default().Sgemm(transA, transB, m, n, k, float32(alpha), any(a).([]float32), max(lda, 1), any(b).([]float32), max(ldb, 1), float32(beta), cc, max(n, 1))
	case []float64:
		err = blas.Default().Dgemm(transA, transB, m, n, k, float64(alpha), any(a).([]float64), max(lda, 1), any(b).([]float64), max(ldb, 1), float64(beta), cc, max(n, 1))
	}
	if err != nil {
		panic(fmt.Sprintf("ops: gemm called with shapes the op did not check: %v", err))
	}
}
