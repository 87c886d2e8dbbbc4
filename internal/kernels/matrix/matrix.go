// Package matrix holds what the product kernels of gokeras (internal/kernels/avx512,
// internal/kernels/avx2) and package blas share about row-major matrices: checking
// a product's arguments against its slices, scaling by beta, packing
// panels, and splitting the work over goroutines.
package matrix

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// CheckArgs validates the arguments of a row-major gemm (slice lengths and
// row strides), so that no kernel reads or writes outside the slices.
func CheckArgs(transA, transB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("negative dimension in m=%d, n=%d, k=%d", m, n, k)
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	for _, mat := range [...]struct {
		name              string
		rows, cols, ld, l int
	}{{"a", ar, ac, lda, la}, {"b", br, bc, ldb, lb}, {"c", m, n, ldc, lc}} {
		if mat.ld < max(1, mat.cols) {
			return fmt.Errorf("%s is %d×%d but its row stride is %d, less than its %d columns (and at least 1)", mat.name, mat.rows, mat.cols, mat.ld, mat.cols)
		}
		if mat.rows > 0 && mat.cols > 0 && mat.l < (mat.rows-1)*mat.ld+mat.cols {
			return fmt.Errorf("%s is %d×%d with row stride %d, which needs %d values, but the slice holds %d",
				mat.name, mat.rows, mat.cols, mat.ld, (mat.rows-1)*mat.ld+mat.cols, mat.l)
		}
	}
	return nil
}

// ScaleRows sets the m×n matrix c (row stride ldc) to beta·c; beta 0 writes
// zeros whatever c held, as BLAS does. It is what a product with k = 0 or
// alpha = 0 reduces to.
func ScaleRows[T float32 | float64](m, n int, beta T, c []T, ldc int) {
	for r := 0; r < m; r++ {
		row := c[r*ldc : r*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// PackRows interleaves the m×k matrix a (row stride lda) in panels of width
// rows, each stored step by step: dst[q·k·width + p·width + r] =
// a[(q·width+r)·lda + p], with zeros for the rows beyond m. dst holds
// ⌈m/width⌉·k·width values; PackRows returns it.
func PackRows(dst []float32, width, m, k int, a []float32, lda int) []float32 {
	for q := 0; q*width < m; q++ {
		panel := dst[q*k*width : (q+1)*k*width]
		for r := 0; r < width; r++ {
			i := q*width + r
			if i >= m {
				for p := 0; p < k; p++ {
					panel[p*width+r] = 0
				}
				continue
			}
			for p, v := range a[i*lda : i*lda+k] {
				panel[p*width+r] = v
			}
		}
	}
	return dst
}

// PadRows copies the rows×k matrix a (row stride lda, rows ≤ width) into
// dst as a width×k matrix (row stride k) whose rows beyond rows are zero:
// a product's last, partial panel of rows made whole. It returns dst.
func PadRows(dst []float32, width, rows, k int, a []float32, lda int) []float32 {
	for r := 0; r < width; r++ {
		e := dst[r*k : (r+1)*k]
		if r < rows {
			copy(e, a[r*lda:r*lda+k])
		} else {
			clear(e)
		}
	}
	return dst
}

// Parallel runs body over [0, n) in chunks on up to workers goroutines,
// handing chunks out as the goroutines finish, each a share of what is
// left (guided scheduling): long runs first, then smaller ones that even
// out the finish. No chunk is smaller than minChunk but the last. body
// gets the worker's index, for its scratch memory.
func Parallel(workers, n, minChunk int, body func(worker, lo, hi int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		body(0, 0, n)
		return
	}
	minChunk = max(1, minChunk)
	var next atomic.Int64
	run := func(w int) {
		for {
			lo := int(next.Load())
			if lo >= n {
				return
			}
			hi := min(n, lo+max(minChunk, (n-lo)/(2*workers)))
			if !next.CompareAndSwap(int64(lo), int64(hi)) {
				continue
			}
			body(w, lo, hi)
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}

// Grow returns (*s)[:n], replacing *s with a new slice when it is too
// short: the scratch memory of a workspace, allocated once.
func Grow(s *[]float32, n int) []float32 {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	return (*s)[:n]
}

// Product computes one shape of product, c = alpha·op(a)·op(b) + beta·c,
// on up to workers goroutines, its arguments already checked.
type Product func(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// Sgemm is what the kernel packages' Sgemm share once they know they can
// compute the product: it checks the arguments (errors prefixed with pkg),
// handles the empty and scaling-only cases, keeps products too small to
// pay for waking another core on one goroutine, and calls tn, nt or nn
// for aᵀ·b, a·bᵀ or a·b (both transposed is the caller's to refuse).
func Sgemm(pkg string, workers int, tn, nt, nn Product, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if err := CheckArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		ScaleRows(m, n, beta, c, ldc)
		return nil
	}
	if 2*m*n*k < 1<<20 { // too small to pay for waking another core
		workers = 1
	}
	product := nn
	switch {
	case transA:
		product = tn
	case transB:
		product = nt
	}
	product(workers, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}
