package cuda

// gemmArgs are the arguments of a column-major cublasSgemm call: C = op(A)·op(B),
// op(A) M×K, op(B) K×N, C M×N with leading dimension Ldc; TransA and TransB
// say whether op transposes.
type gemmArgs struct {
	TransA, TransB bool
	M, N, K        int
	Lda, Ldb, Ldc  int
	// SwapAB: pass the row-major b as cuBLAS's A and a as its B.
	SwapAB bool
}

// rowMajorGemm maps c = op(a)·op(b) on row-major matrices, with package ops'
// shapes (op(a) m×k, op(b) k×n, c m×n; a stored k×m when transA, b stored
// n×k when transB), to cuBLAS, which is column-major. A row-major matrix
// read column-major is its transpose, so cuBLAS computes cᵀ = op(b)ᵀ·op(a)ᵀ:
// the operands swap places and keep their transpose flags and leading
// dimensions (the row lengths of the stored matrices). It is a function of
// its own, with no build tag, so that a test can check it on the host.
func rowMajorGemm(transA, transB bool, m, n, k int) gemmArgs {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	return gemmArgs{TransA: transB, TransB: transA, M: n, N: m, K: k, Lda: ldb, Ldb: lda, Ldc: n, SwapAB: true}
}
