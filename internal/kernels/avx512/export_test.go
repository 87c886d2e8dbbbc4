package avx512

import "github.com/gokeras/gokeras/internal/kernels/matrix"

// SgemmWide is Sgemm without the tall kernels: every product on the
// kernels written for wide weights, as before the tall ones existed, for
// the benchmarks to compare.
func (ws *Workspace) SgemmWide(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if !haveKernels || transA && transB {
		return ErrUnsupported
	}
	return matrix.Sgemm("avx512", ws.workers, ws.tn, ws.nt, ws.nn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SetTallStreamBytes sets the size of c from which a tall a·op(b) with
// beta 0 streams its stores past the caches, and returns the old one.
func SetTallStreamBytes(n int) int {
	old := tallStreamBytes
	tallStreamBytes = n
	return old
}
