package avx2

import (
	"errors"
	"github.com/gokeras/gokeras/internal/kernels/matrix"
	"runtime"
)

// Block sizes. The forward product takes the weights 256 rows at a time
// (a 256×24 panel of them, 24 KiB, stays in L1 while every batch panel
// uses it): on this design's first measurements (CIFAR-10 MLP, batch 32,
// a noisy 2-core Zen 3) 16 rows, avx512's choice for its wider tile, took
// 1.5 times as long, the epilogue's read and write of c then costing as
// much as the arithmetic. A small batch takes two long chunks of columns
// per worker, a large one finer chunks that balance the workers. The
// update's depth is the batch, in blocks of 512.
const (
	kcForward  = 256
	largeBatch = 64
	kcUpdate   = 512
)

// Tile sizes of the kernels.
const (
	panelRows = 4  // panel4x24: rows of c
	panelCols = 24 // panel4x24: columns of c
	dotRows   = 6  // dot6x16: rows of the weights (columns of c)
	dotCols   = 16 // dot6x16: batch rows (rows of c)
)

// Available reports whether the kernels can run on this CPU.
func Available() bool { return haveKernels }

// Workspace holds the packed operands and scratch tiles of the products,
// reused from call to call so that a training step allocates nothing. A
// Workspace is used by one goroutine at a time.
type Workspace struct {
	workers int
	packed  []float32
	edge    []float32   // b packed in 24-wide panels: all of it (tn), or its last, partial panel (nn)
	scratch [][]float32 // one per worker
	partial []float32   // the partial sums of a tall aᵀ·b
}

// NewWorkspace makes a workspace that computes with up to workers
// goroutines; 0 means GOMAXPROCS.
func NewWorkspace(workers int) *Workspace {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Workspace{workers: workers, scratch: make([][]float32, workers)}
}

// Workers is the number of goroutines a product runs on.
func (ws *Workspace) Workers() int { return ws.workers }

// ErrUnsupported is returned by Sgemm for what the kernels do not compute:
// anything, on a CPU without AVX2 and FMA, and products of two transposes.
var ErrUnsupported = errors.New("avx2: product not supported by the AVX2 kernels on this machine (it needs AVX2 and FMA, and not both operands transposed): compute it with a BLAS library")

// Sgemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices,
// with the arguments of blas.Library.Sgemm. It returns ErrUnsupported, and
// computes nothing, when the kernels are not Available or both operands are
// transposed (a product training never needs): the caller computes it
// with a BLAS instead. It returns another error when the arguments do not
// fit the slices.
func (ws *Workspace) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if !haveKernels {
		return ErrUnsupported
	}
	if transA && transB {
		return ErrUnsupported
	}
	if Tall(transA, transB, m, n, k) {
		return matrix.Sgemm("avx2", ws.workers, ws.tallTN, ws.tallNT, ws.tallNN, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	return matrix.Sgemm("avx2", ws.workers, ws.tn, ws.nt, ws.nn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// packEdge copies the columns from col on of the k×n matrix b (row stride
// ldb), fewer than 24, into ws.edge as a k×24 matrix padded with zeros, and
// returns it; nil when n is a multiple of 24.
func (ws *Workspace) packEdge(k, n int, b []float32, ldb int) []float32 {
	col := n / panelCols * panelCols
	if col == n {
		return nil
	}
	edge := matrix.Grow(&ws.edge, k*panelCols)
	for p := 0; p < k; p++ {
		e := edge[p*panelCols : (p+1)*panelCols]
		copy(e, b[p*ldb+col:p*ldb+n])
		clear(e[n-col:])
	}
	return edge
}

// tile runs panel4x24 for the rows×cols tile of c at c[off:], rows ≤ 4 and
// cols ≤ 24, going through the scratch tile t (96 values) when it is
// partial, so that nothing outside c is read or written. pf and pfb are
// panel4x24's.
func tile(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c []float32, off, ldc, rows, cols int, pf, pfb *float32, alpha, beta float32, t []float32) {
	if rows == panelRows && cols == panelCols {
		panel4x24(kc, a, lda, b, ldb, &c[off], uintptr(ldc*4), pf, pfb, alpha, beta)
		return
	}
	if beta != 0 {
		clear(t)
		for r := 0; r < rows; r++ {
			copy(t[r*panelCols:r*panelCols+cols], c[off+r*ldc:off+r*ldc+cols])
		}
	}
	panel4x24(kc, a, lda, b, ldb, &t[0], panelCols*4, &t[0], pfb, alpha, beta)
	for r := 0; r < rows; r++ {
		copy(c[off+r*ldc:off+r*ldc+cols], t[r*panelCols:r*panelCols+cols])
	}
}

// nn computes c = alpha·a·b + beta·c, a m×k small, b k×n large.
func (ws *Workspace) nn(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mp := (m + panelRows - 1) / panelRows
	// pa[q·k·4 + p·4 + r] = a[(4q+r)·lda + p], zero beyond row m.
	pa := matrix.PackRows(matrix.Grow(&ws.packed, mp*k*panelRows), panelRows, m, k, a, lda)
	edge := ws.packEdge(k, n, b, ldb)
	np := (n + panelCols - 1) / panelCols
	kc, chunk := kcForward, (np+2*workers-1)/(2*workers)
	if m > largeBatch {
		chunk = 2
	}
	matrix.Parallel(workers, np, chunk, func(w, lo, hi int) {
		t := matrix.Grow(&ws.scratch[w], panelRows*panelCols)
		for k0 := 0; k0 < k; k0 += kc {
			kk := min(kc, k-k0)
			be := beta
			if k0 > 0 {
				be = 1
			}
			for j := lo; j < hi; j++ {
				col := j * panelCols
				cols := min(panelCols, n-col)
				bp, bstride := &b[k0*ldb+col], uintptr(ldb*4)
				if cols < panelCols {
					bp, bstride = &edge[k0*panelCols], panelCols*4
				}
				// The first batch panel fetches the next tile of b along
				// the same rows, which later panels find in cache.
				var next *float32
				if col+panelCols < n {
					next = &b[k0*ldb+col+panelCols]
				}
				for q := 0; q < mp; q++ {
					off := q*panelRows*ldc + col
					tile(kk, &pa[q*k*panelRows+k0*panelRows], panelRows*4, bp, bstride, c, off, ldc, min(panelRows, m-q*panelRows), cols, &c[off], next, alpha, be, t)
					next = nil
				}
			}
		}
	})
}

// tn computes c = alpha·aᵀ·b + beta·c: a k×m (the batch's inputs), b k×n
// (the gradient of the outputs), c m×n (the weights or their gradient).
// Each worker takes a run of 4-row panels of c and sweeps each panel
// across all the columns, so that c streams through once, in long runs.
func (ws *Workspace) tn(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mp := (m + panelRows - 1) / panelRows
	np := (n + panelCols - 1) / panelCols
	// pa[q·k·4 + p·4 + r] = a[p·lda + 4q + r], zero beyond column m.
	pa := matrix.Grow(&ws.packed, mp*k*panelRows)
	for q := 0; q < mp; q++ {
		i0 := q * panelRows
		rows := min(panelRows, m-i0)
		for p := 0; p < k; p++ {
			e := pa[(q*k+p)*panelRows : (q*k+p+1)*panelRows]
			copy(e, a[p*lda+i0:p*lda+i0+rows])
			clear(e[rows:])
		}
	}
	// pb[j·k·24 + p·24 + r] = b[p·ldb + 24j + r], zero beyond column n:
	// each tile's k×24 block of b contiguous, for the caches to stream.
	pb := matrix.Grow(&ws.edge, np*k*panelCols)
	for j := 0; j < np; j++ {
		col := j * panelCols
		cols := min(panelCols, n-col)
		for p := 0; p < k; p++ {
			e := pb[(j*k+p)*panelCols : (j*k+p+1)*panelCols]
			copy(e, b[p*ldb+col:p*ldb+col+cols])
			clear(e[cols:])
		}
	}
	matrix.Parallel(workers, mp, 8, func(w, lo, hi int) {
		t := matrix.Grow(&ws.scratch[w], panelRows*panelCols)
		for k0 := 0; k0 < k; k0 += kcUpdate {
			kk := min(kcUpdate, k-k0)
			be := beta
			if k0 > 0 {
				be = 1
			}
			for q := lo; q < hi; q++ {
				i0 := q * panelRows
				rows := min(panelRows, m-i0)
				for j := 0; j < np; j++ {
					col := j * panelCols
					cols := min(panelCols, n-col)
					off := i0*ldc + col
					// The tile after this one, for the caches to fetch.
					pf := &c[off]
					if j+1 < np {
						pf = &c[off+panelCols]
					} else if q+1 < hi {
						pf = &c[(i0+panelRows)*ldc]
					}
					tile(kk, &pa[(q*k+k0)*panelRows], panelRows*4, &pb[(j*k+k0)*panelCols], panelCols*4, c, off, ldc, rows, cols, pf, nil, alpha, be, t)
				}
			}
		}
	})
}

// nt computes c = alpha·a·bᵀ + beta·c: a m×k (the gradient of a layer's
// outputs), b n×k (its weights), c m×n (the gradient of its inputs).
func (ws *Workspace) nt(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	groups := (m + dotCols - 1) / dotCols
	// at[g·k·16 + p·16 + i] = a[(16g+i)·lda + p], zero beyond row m.
	at := matrix.PackRows(matrix.Grow(&ws.packed, groups*k*dotCols), dotCols, m, k, a, lda)
	nt := (n + dotRows - 1) / dotRows
	matrix.Parallel(workers, nt, 4, func(w, lo, hi int) {
		scratch := matrix.Grow(&ws.scratch[w], dotRows*dotCols+dotRows*k)
		acc, edge := scratch[:dotRows*dotCols], scratch[dotRows*dotCols:]
		for t := lo; t < hi; t++ {
			n0 := t * dotRows
			rows := min(dotRows, n-n0)
			bp, bstride := b[n0*ldb:], ldb
			if rows < dotRows {
				// The last rows of b, zero-padded to six.
				bp, bstride = matrix.PadRows(edge, dotRows, rows, k, b[n0*ldb:], ldb), k
			}
			for g := 0; g < groups; g++ {
				dot6x16(k, &bp[0], uintptr(bstride*4), &at[g*k*dotCols], &acc[0])
				for i := 0; i < min(dotCols, m-g*dotCols); i++ {
					crow := c[(g*dotCols+i)*ldc+n0 : (g*dotCols+i)*ldc+n0+rows]
					if beta == 0 {
						for r := range crow {
							crow[r] = alpha * acc[r*dotCols+i]
						}
						continue
					}
					for r := range crow {
						crow[r] = alpha*acc[r*dotCols+i] + beta*crow[r]
					}
				}
			}
		}
	})
}
