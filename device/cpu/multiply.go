package cpu

import "github.com/gokeras/gokeras/blas"

// multiplier is the sgemm the backend computes with: blas.Default, which
// picks the AVX-512 kernels, a native BLAS or gonum (see package blas).
type multiplier struct{ *blas.Multiplier }

func newMultiplier() multiplier { return multiplier{blas.Default()} }

func (mm multiplier) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return mm.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
