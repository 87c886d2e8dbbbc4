package cpu

import (
	"github.com/gokeras/gokeras/ops"
)

// blasBatchProduct is the smallest sample product (M·K·N multiply-adds)
// batchMatMul hands to sgemm; smaller ones (a Dot layer's rows) cost less
// in the reference loop than a call each.
const blasBatchProduct = 1 << 14

// batchMatMul writes p's products of a and b into out: the samples split
// between the cores, each sample's op(a)·op(b) by one core's sgemm
// (blas.Multiplier.SgemmBatch); small products by the reference kernel
// (ops.BatchMatMulForward).
func (mm multiplier) batchMatMul(p ops.BatchMatMulParams, a, b, out []float32) error {
	m, k, n := p.M, p.K, p.N
	if m*k*n < blasBatchProduct {
		ops.BatchMatMulForward(p, a, b, out)
		return nil
	}
	lda, ldb := k, n
	if p.TransA {
		lda = m
	}
	if p.TransB {
		ldb = k
	}
	return mm.SgemmBatch(p.TransA, p.TransB, p.Batch, m, n, k, 1, a, m*k, lda, b, k*n, ldb, 0, out, m*n, n)
}
