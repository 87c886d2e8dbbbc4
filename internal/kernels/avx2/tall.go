package avx2

import (
	"unsafe"

	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// Tall products: a convolution computed as a product has a row per output
// pixel (28,800 at batch 32 in the second layer of Keras' cifar10_cnn)
// against a few dozen filters. The forward product a·b and the patches'
// gradient a·bᵀ are then m×n with m huge and n small, and the kernel's
// gradient aᵀ·b a small m×n reduced over a huge k. The kernels above,
// built for a few rows of examples against large weights, pack a whole
// and measured 15-18 GFLOP/s on these shapes; gemm6x16 reads a in place
// instead, six rows at a time against 16 packed columns of b that stay in
// the caches, and the aᵀ·b case walks a down its rows in blocks.
const (
	tallRows  = 2048    // rows of examples from which a product is tall
	tallWidth = 1 << 20 // most values of b (a·b, a·bᵀ) or of c (aᵀ·b) the tall kernels take
	tallDepth = 384     // longest run of depth a·b and a·bᵀ take at once
	tallKC    = 256     // depth block of aᵀ·b
	tallSplit = 4096    // depth of each part of aᵀ·b reduced on its own
	tallChunk = 8       // groups of six rows of c an aᵀ·b work item takes
	gemmRows  = 6       // gemm6x16: rows of c
	gemmCols  = 16      // gemm6x16: columns of c
)

// Tall reports whether the product c = op(a)·op(b), c m×n with depth k,
// is one the tall kernels compute: many rows of examples (m of a·b and
// a·bᵀ, k of aᵀ·b) against a small operand. Sgemm computes it with them;
// callers with a native BLAS may leave the other products with many rows
// to it.
func Tall(transA, transB bool, m, n, k int) bool {
	switch {
	case transA && transB:
		return false
	case transA:
		return k > tallRows && m*n <= tallWidth
	default:
		return m > tallRows && n*k <= tallWidth
	}
}

// tallTile runs gemm6x16 for the rows×cols tile of c at c[off:], rows ≤ 6
// and cols ≤ 16, going through the scratch tile t (96 values) when it is
// partial, so that nothing outside c is read or written. pf and pfs are
// gemm6x16's prefetch address and stride.
func tallTile(kc int, a *float32, ars, aps uintptr, b *float32, ldb uintptr, c []float32, off, ldc, rows, cols int, pf, pfs uintptr, alpha, beta float32, t []float32) {
	if rows == gemmRows && cols == gemmCols {
		gemm6x16(kc, a, ars, aps, b, ldb, &c[off], uintptr(ldc*4), pf, pfs, alpha, beta)
		return
	}
	if beta != 0 {
		for r := 0; r < rows; r++ {
			copy(t[r*gemmCols:r*gemmCols+cols], c[off+r*ldc:off+r*ldc+cols])
		}
	}
	gemm6x16(kc, a, ars, aps, b, ldb, &t[0], gemmCols*4, pf, pfs, alpha, beta)
	for r := 0; r < rows; r++ {
		copy(c[off+r*ldc:off+r*ldc+cols], t[r*gemmCols:r*gemmCols+cols])
	}
}

// packColumns packs op(b), k×n (b itself row-major with stride ldb, or its
// transpose when trans), into 16-wide panels, each k×16 and contiguous:
// dst[j·k·16 + p·16 + i] = op(b)[p][16j+i], zero beyond column n.
func packColumns(dst []float32, trans bool, k, n int, b []float32, ldb int) []float32 {
	np := (n + gemmCols - 1) / gemmCols
	for j := 0; j < np; j++ {
		col := j * gemmCols
		cols := min(gemmCols, n-col)
		panel := dst[j*k*gemmCols : (j+1)*k*gemmCols]
		if !trans {
			for p := 0; p < k; p++ {
				e := panel[p*gemmCols : (p+1)*gemmCols]
				copy(e, b[p*ldb+col:p*ldb+col+cols])
				clear(e[cols:])
			}
			continue
		}
		clear(panel)
		for i := 0; i < cols; i++ {
			for p, v := range b[(col+i)*ldb : (col+i)*ldb+k] {
				panel[p*gemmCols+i] = v
			}
		}
	}
	return dst
}

// tallAB computes c = alpha·a·op(b) + beta·c for a m×k with m large and
// op(b) k×n small (op(b) = bᵀ, b n×k, when transB): b is packed in
// 16-wide panels, and each worker takes groups of six rows of a, read in
// place, through every panel while they are in L1.
func (ws *Workspace) tallAB(workers int, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	np := (n + gemmCols - 1) / gemmCols
	pb := packColumns(matrix.Grow(&ws.edge, np*k*gemmCols), transB, k, n, b, ldb)
	blocks := (k + tallDepth - 1) / tallDepth
	kc := (k + blocks - 1) / blocks
	groups := (m + gemmRows - 1) / gemmRows
	matrix.Parallel(workers, groups, 32, func(w, lo, hi int) {
		scratch := matrix.Grow(&ws.scratch[w], gemmRows*gemmCols+gemmRows*k)
		t, edge := scratch[:gemmRows*gemmCols], scratch[gemmRows*gemmCols:]
		for g := lo; g < hi; g++ {
			i0 := g * gemmRows
			rows := min(gemmRows, m-i0)
			ap, ars := a[i0*lda:], lda
			if rows < gemmRows {
				// The last rows of a, zero-padded to six.
				ap, ars = matrix.PadRows(edge, gemmRows, rows, k, a[i0*lda:], lda), k
			}
			for k0 := 0; k0 < k; k0 += kc {
				kk := min(kc, k-k0)
				be := beta
				if k0 > 0 {
					be = 1
				}
				// The first panel fetches the next six rows' block of
				// depth, 6·lda values from there when a is dense, as it
				// goes; the others find the rows in L1 and fetch nothing
				// new.
				here := uintptr(unsafe.Pointer(&ap[k0]))
				pf, pfs := here, uintptr(0)
				if i0+2*gemmRows <= m {
					pf, pfs = here+uintptr(gemmRows*lda*4), uintptr((gemmRows*lda*4+kk-1)/kk)
				}
				for j := 0; j < np; j++ {
					col := j * gemmCols
					tallTile(kk, &ap[k0], uintptr(ars*4), 4, &pb[(j*k+k0)*gemmCols], gemmCols*4,
						c, i0*ldc+col, ldc, rows, min(gemmCols, n-col), pf, pfs, alpha, be, t)
					pf, pfs = here, 0
				}
			}
		}
	})
}

// tallTN computes c = alpha·aᵀ·b + beta·c for a k×m and b k×n with k
// large and c m×n small: the workers take parts of the depth and groups of
// six rows of c, and walk a and b down their rows, tallKC at a time, both
// read in place (b is packed only when n is not a multiple of 16, a's last
// columns only when m is not one of 6).
func (ws *Workspace) tallTN(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	np := (n + gemmCols - 1) / gemmCols
	packed := n%gemmCols != 0
	var pb []float32
	if packed {
		pb = packColumns(matrix.Grow(&ws.edge, np*k*gemmCols), false, k, n, b, ldb)
	}
	// bAt returns row p of b's panel j and the panel's row stride in bytes.
	bAt := func(p, j int) (*float32, uintptr) {
		if packed {
			return &pb[(j*k+p)*gemmCols], gemmCols * 4
		}
		return &b[p*ldb+j*gemmCols], uintptr(ldb * 4)
	}
	groups := (m + gemmRows - 1) / gemmRows
	var edge []float32
	if last := (groups - 1) * gemmRows; m-last < gemmRows {
		// a's last columns, zero-padded to six: edge[p·6 + r] = a[p·lda + last + r].
		edge = matrix.Grow(&ws.packed, k*gemmRows)
		for p := 0; p < k; p++ {
			e := edge[p*gemmRows : (p+1)*gemmRows]
			copy(e, a[p*lda+last:p*lda+m])
			clear(e[m-last:])
		}
	}
	// The depth is cut into parts of tallSplit, each reduced on its own
	// (into c itself when there is one part, else into its partial m×n),
	// eight groups of rows at a time; the partials are then summed in
	// order, so that the bits do not depend on the number of workers.
	parts := (k + tallSplit - 1) / tallSplit
	chunks := (groups + tallChunk - 1) / tallChunk
	dst, ldd, alpha1, beta1 := c, ldc, alpha, beta
	var partial []float32
	if parts > 1 {
		partial = matrix.Grow(&ws.partial, parts*m*n)
		ldd, alpha1, beta1 = n, 1, 0
	}
	matrix.Parallel(workers, parts*chunks, 1, func(w, lo, hi int) {
		t := matrix.Grow(&ws.scratch[w], gemmRows*gemmCols)
		for item := lo; item < hi; item++ {
			part, chunk := item/chunks, item%chunks
			out := dst
			if parts > 1 {
				out = partial[part*m*n : (part+1)*m*n]
			}
			kLo, kHi := part*tallSplit, min(k, (part+1)*tallSplit)
			for k0 := kLo; k0 < kHi; k0 += tallKC {
				kk := min(tallKC, kHi-k0)
				be := beta1
				if k0 > kLo {
					be = 1
				}
				for g := chunk * tallChunk; g < min(groups, (chunk+1)*tallChunk); g++ {
					i0 := g * gemmRows
					rows := min(gemmRows, m-i0)
					ap, aps := &a[k0*lda+i0], uintptr(lda*4)
					if rows < gemmRows {
						ap, aps = &edge[k0*gemmRows], gemmRows*4
					}
					// The first panel fetches a's lines eight rows ahead.
					pf := uintptr(unsafe.Pointer(ap)) + 8*aps
					for j := 0; j < np; j++ {
						col := j * gemmCols
						bj, ldbj := bAt(k0, j)
						tallTile(kk, ap, 4, aps, bj, ldbj, out, i0*ldd+col, ldd, rows, min(gemmCols, n-col), pf, aps, alpha1, be, t)
						pf = uintptr(unsafe.Pointer(ap))
					}
				}
			}
		}
	})
	if parts == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			sum := partial[i*n+j]
			for q := 1; q < parts; q++ {
				sum += partial[q*m*n+i*n+j]
			}
			if beta == 0 {
				row[j] = alpha * sum
			} else {
				row[j] = alpha*sum + beta*row[j]
			}
		}
	}
}

// tallNN and tallNT are tallAB as the Products matrix.Sgemm calls.
func (ws *Workspace) tallNN(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ws.tallAB(workers, false, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (ws *Workspace) tallNT(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ws.tallAB(workers, true, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
