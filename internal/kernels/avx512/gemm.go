// Package avx512 computes the float32 matrix products of dense-layer
// training with AVX-512 kernels written for their shapes: a batch of a few
// dozen or hundred rows against weight matrices of millions of values.
//
// A general BLAS handles those shapes poorly: it packs both operands into
// cache-sized panels, and packing the weights costs as much memory traffic
// as the product itself when each weight is used only batch-size times.
// These kernels pack only the small operand (the batch) and stream the
// weights straight from memory, once, with the result tile held in the 32
// vector registers:
//
//   - forward, c = a·b: a tile of 8 batch rows × 48 outputs;
//   - weight gradient, c = aᵀ·b, where c is the weights themselves when
//     the caller folds the optimizer step in (alpha = -lr, beta = 1): a
//     tile of 8 weight rows × 48 columns, read and written once;
//   - input gradient, c = a·bᵀ: 12 weight rows × 32 batch columns,
//     dot products along the weight rows.
//
// Convolutions computed as products (patches times kernel) have the
// opposite shapes: tens of thousands of rows against a few dozen filters.
// Those (Tall) go to the tall kernels of tall.go, which read the patches in
// place against a tile as wide as the filters (16 to 64 columns).
//
// The work is split over GOMAXPROCS goroutines in chunks handed out as
// they finish, so a core slowed by other work does not hold up the rest.
//
// Available reports whether the kernels run on this machine (amd64 with
// AVX-512F). Package blas decides when they are used, and sends what they
// do not compute (ErrUnsupported) to a BLAS library: programs multiply
// through blas.Default, never through this package directly. MaskPositive,
// ReLU and its gradient in one pass, is here for package ops.
package avx512

import (
	"errors"
	"github.com/gokeras/gokeras/internal/kernels/matrix"
	"runtime"
)

// Block sizes. For a small batch the forward product takes the weights 16
// rows at a time, across all its columns: the rows stream from memory in
// long runs, each 16×48 panel stays in L1 while every batch panel uses it,
// and the result tiles (the whole batch's outputs) stay in L2. Measured on
// the CIFAR-10 MLP's first layer with weights not in cache, batch 32: 3.4 ms at
// 16 rows, 4.6 ms at 128. A large batch does enough arithmetic per weight
// to hide memory, and its outputs no longer fit in L2, which deep panels
// then spare re-reading (batch 256: 180 GFLOP/s at 16 rows, 200 at 256).
// The update's depth is the batch, in blocks of 512.
const (
	kcForwardSmall = 16
	kcForwardLarge = 256
	largeBatch     = 64
	kcUpdate       = 512
)

// Available reports whether the kernels can run on this CPU.
func Available() bool { return haveKernels }

// Workspace holds the packed operands and scratch tiles of the products,
// reused from call to call so that a training step allocates nothing. A
// Workspace is used by one goroutine at a time.
type Workspace struct {
	workers int
	packed  []float32
	scratch [][]float32 // one per worker
	partial []float32   // the partial sums of a tall aᵀ·b
	pieces  [][2]int    // a tall aᵀ·b's ranges of rows, cut into its parts
	first   []int       // each part's first piece
	zeros   []float32   // a zero bias, for a convolution's ReLU without one
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
		return matrix.Sgemm("avx512", ws.workers, ws.tallTN, ws.tallNT, ws.tallNN, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	return matrix.Sgemm("avx512", ws.workers, ws.tn, ws.nt, ws.nn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// ErrUnsupported is returned by Sgemm for what the kernels do not compute:
// anything, on a CPU without AVX-512, and products of two transposes.
var ErrUnsupported = errors.New("avx512: product not supported by the AVX-512 kernels on this machine")

// masksFor returns the three 16-bit lane masks of a 48-wide tile of which
// the first width columns exist.
func masksFor(width int) uint64 {
	if width >= 48 {
		return 1<<48 - 1
	}
	return 1<<uint(width) - 1
}

// nn computes c = alpha·a·b + beta·c, a m×k small, b k×n large.
func (ws *Workspace) nn(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mp := (m + 7) / 8
	// Pack a in panels of 8 rows, each stored step by step:
	// pa[q·k·8 + p·8 + r] = a[(8q+r)·lda + p], zero beyond row m.
	pa := matrix.PackRows(matrix.Grow(&ws.packed, mp*k*8), 8, m, k, a, lda)
	np := (n + 47) / 48
	// A small batch streams the weights from memory: two long chunks of
	// columns per worker keep the runs along each weight row long. A large
	// one computes enough per weight to take the finer chunks that balance
	// the workers.
	kc, chunk := kcForwardSmall, (np+2*workers-1)/(2*workers)
	if m > largeBatch {
		kc, chunk = kcForwardLarge, 2
	}
	matrix.Parallel(workers, np, chunk, func(_, lo, hi int) {
		for k0 := 0; k0 < k; k0 += kc {
			kk := min(kc, k-k0)
			be := beta
			if k0 > 0 {
				be = 1
			}
			for j := lo; j < hi; j++ {
				col := j * 48
				masks := masksFor(n - col)
				bp := &b[k0*ldb+col]
				for q := 0; q < mp; q++ {
					ct := &c[q*8*ldc+col]
					panel8x48(kk, &pa[q*k*8+k0*8], 32, bp, uintptr(ldb*4), ct, uintptr(ldc*4), min(8, m-q*8), masks, ct, alpha, be)
				}
			}
		}
	})
}

// tn computes c = alpha·aᵀ·b + beta·c: a k×m (the batch's inputs), b k×n
// (the gradient of the outputs), c m×n (the weights or their gradient).
func (ws *Workspace) tn(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mp := (m + 7) / 8
	np := (n + 47) / 48
	matrix.Parallel(workers, mp, 4, func(w, lo, hi int) {
		for q := lo; q < hi; q++ {
			i0 := q * 8
			rows := min(8, m-i0)
			ap, astride := a[i0:], uintptr(lda*4)
			if rows < 8 {
				// The last panel: copy its columns of a, zero-padded to 8,
				// so the kernel reads nothing past the end of a.
				edge := matrix.Grow(&ws.scratch[w], k*8)
				for p := 0; p < k; p++ {
					e := edge[p*8 : p*8+8]
					copy(e, a[p*lda+i0:p*lda+i0+rows])
					clear(e[rows:])
				}
				ap, astride = edge, 32
			}
			for k0 := 0; k0 < k; k0 += kcUpdate {
				kk := min(kcUpdate, k-k0)
				be := beta
				if k0 > 0 {
					be = 1
				}
				for j := 0; j < np; j++ {
					col := j * 48
					ct := &c[i0*ldc+col]
					pf := ct
					if j+1 < np {
						pf = &c[i0*ldc+col+48]
					} else if q+1 < hi {
						pf = &c[(i0+8)*ldc]
					}
					panel8x48(kk, &ap[uintptr(k0)*astride/4], astride, &b[k0*ldb+col], uintptr(ldb*4), ct, uintptr(ldc*4), rows, masksFor(n-col), pf, alpha, be)
				}
			}
		}
	})
}

// nt computes c = alpha·a·bᵀ + beta·c: a m×k (the gradient of a layer's
// outputs), b n×k (its weights), c m×n (the gradient of its inputs).
func (ws *Workspace) nt(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	groups := (m + 31) / 32
	// at[g·k·32 + p·32 + i] = a[(32g+i)·lda + p], zero beyond row m.
	at := matrix.PackRows(matrix.Grow(&ws.packed, groups*k*32), 32, m, k, a, lda)
	nt := (n + 11) / 12
	matrix.Parallel(workers, nt, 2, func(w, lo, hi int) {
		scratch := matrix.Grow(&ws.scratch[w], 12*32+12*k)
		tile, edge := scratch[:12*32], scratch[12*32:]
		for t := lo; t < hi; t++ {
			n0 := t * 12
			rows := min(12, n-n0)
			bp, bstride := b[n0*ldb:], ldb
			if rows < 12 {
				// The last rows of b, zero-padded to twelve.
				bp, bstride = matrix.PadRows(edge, 12, rows, k, b[n0*ldb:], ldb), k
			}
			for g := 0; g < groups; g++ {
				dot12x32(k, &bp[0], uintptr(bstride*4), &at[g*k*32], &tile[0])
				for i := 0; i < min(32, m-g*32); i++ {
					crow := c[(g*32+i)*ldc+n0 : (g*32+i)*ldc+n0+rows]
					if beta == 0 {
						for r := range crow {
							crow[r] = alpha * tile[r*32+i]
						}
						continue
					}
					for r := range crow {
						crow[r] = alpha*tile[r*32+i] + beta*crow[r]
					}
				}
			}
		}
	})
}
