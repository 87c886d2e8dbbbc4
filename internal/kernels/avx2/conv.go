package avx2

import (
	"unsafe"

	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// The products of the convolutions without patches (package
// internal/kernels/conv, which lays the images on a grid): a Workspace is
// its conv.Products on CPUs with AVX2 and FMA but not AVX-512, on
// gemm6x16, whose a is read with any row and depth strides.

// ConvFits reports whether ConvRows computes spans of span grid
// positions (at least a tile's six rows), and ConvKernelRows any segments.
func (ws *Workspace) ConvFits(span, width, n int) bool {
	return haveKernels && span >= gemmRows && width > 0 && n > 0
}

// ConvWork is what ConvRows costs for a span of span positions, n values
// each: the values its tiles compute (rows and columns rounded up to whole
// tiles); 0 where no tile fits.
func (ws *Workspace) ConvWork(span, n int) int {
	if span < gemmRows {
		return 0
	}
	return (span + gemmRows - 1) / gemmRows * gemmRows * ((n + gemmCols - 1) / gemmCols * gemmCols)
}

// ConvRows computes, for each of batch images, span grid positions of c
// (n values each) from the image's out(b)-th position on: the sum over
// steps kernel rows r of the tall product of a's rows (lda values apart,
// depth values deep) at the positions from in(b, q) + r·stride with b's
// rows r·depth on (n wide), plus bias (n values; nil for none), then with
// relu the ReLU of each value (the value where it is above 0, else 0),
// then with mask (nil for none) +0 wherever mask, laid out as c, is not
// above 0 (a ReLU's gradient, mask its output).
// Groups of six positions go through every panel of 16 columns, each
// kernel row added into the tile; the last group of an image's span is
// moved back to end with it, its first rows computed again to the same
// values.
func (ws *Workspace) ConvRows(batch, span, n int, out func(b int) int, in func(b, q int) int,
	steps, depth, lda, stride int, a, b, c, bias []float32, relu bool, mask []float32) {
	k := steps * depth
	np := (n + gemmCols - 1) / gemmCols
	// b's rows, 16 columns a panel: b itself when n is a multiple of 16.
	bAt := func(p, j int) (*float32, uintptr) { return &b[p*n+j*gemmCols], uintptr(n * 4) }
	if n%gemmCols != 0 {
		pb := packColumns(matrix.Grow(&ws.edge, np*k*gemmCols), false, k, n, b, n)
		bAt = func(p, j int) (*float32, uintptr) { return &pb[(j*k+p)*gemmCols], gemmCols * 4 }
	}
	groups := (span + gemmRows - 1) / gemmRows
	matrix.Parallel(ws.workers, batch*groups, 8, func(w, lo, hi int) {
		t := matrix.Grow(&ws.scratch[w], gemmRows*gemmCols)
		for item := lo; item < hi; item++ {
			img, g := item/groups, item%groups
			q0, skip := g*gemmRows, 0
			if q0+gemmRows > span {
				q0, skip = span-gemmRows, q0+gemmRows-span
			}
			at, from := out(img)+q0, in(img, q0)
			for j := 0; j < np; j++ {
				col := j * gemmCols
				cols := min(gemmCols, n-col)
				// A whole tile adds into c; a part of one (the span's
				// last rows, which the group before computes too, or the
				// last columns) into t, then its own rows are copied.
				whole := skip == 0 && cols == gemmCols
				cp, ldc := &t[0], uintptr(gemmCols*4)
				if whole {
					cp, ldc = &c[at*n+col], uintptr(n*4)
				}
				for r := 0; r < steps; r++ {
					ap := &a[(from+r*stride)*lda]
					bp, ldb := bAt(r*depth, j)
					beta := float32(1)
					if r == 0 {
						beta = 0
					}
					gemm6x16(depth, ap, uintptr(lda*4), 4, bp, ldb, cp, ldc, uintptr(unsafe.Pointer(ap)), 0, 1, beta)
				}
				for i := skip; i < gemmRows; i++ {
					dst := c[(at+i)*n+col:][:cols]
					if !whole {
						copy(dst, t[i*gemmCols:][:cols])
					}
					if bias != nil {
						AddTo(dst, bias[col:][:cols])
					}
					if relu {
						MaskPositive(dst, dst, dst)
					}
					if mask != nil {
						MaskPositive(mask[(at+i)*n+col:][:cols], dst, dst)
					}
				}
			}
		}
	})
}

// ConvKernelRows sets c (len(segs)·width rows of n) to aᵀ·b for an a whose
// columns are segments of width columns, segment s from segs[s] values
// into a (rows lda apart), and b rows of n, ldb apart, over the rows in
// ranges (the others are zero in b): one tall aᵀ·b a segment, over every
// row from the first range's to the last's (a call a range would cost more
// than the zero rows), the zero rows between runs included.
func (ws *Workspace) ConvKernelRows(segs []int, width, n int, ranges [][2]int, run, period int, a []float32, lda int, b []float32, ldb int, c []float32) {
	if len(ranges) == 0 {
		clear(c[:len(segs)*width*n])
		return
	}
	lo, hi := ranges[0][0], ranges[len(ranges)-1][1]
	k := hi - lo
	a, b = a[lo*lda:], b[lo*ldb:]
	for s, off := range segs {
		ws.tallTN(ws.workers, width, n, k, 1, a[off:], lda, b, ldb, 0, c[s*width*n:], n)
	}
}

// MaskPositive is the package's MaskPositive, for package conv.
func (ws *Workspace) MaskPositive(x, v, out []float32) { MaskPositive(x, v, out) }
