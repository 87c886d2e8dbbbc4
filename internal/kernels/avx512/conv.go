package avx512

import (
	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// The products of the convolutions without patches (package
// internal/kernels/conv, which lays the images on a grid): a Workspace is
// its conv.Products on CPUs with AVX-512.

// ConvFits reports whether ConvRows computes spans of span grid
// positions, n values each, and ConvKernelRows segments of width rows
// against n columns: whether a tile has no more rows than either.
func (ws *Workspace) ConvFits(span, width, n int) bool {
	if !haveKernels {
		return false
	}
	_, rows := tileFor(span, n)
	_, cols := tileFor(width, n)
	return rows && cols
}

// ConvRows computes, for each of batch images, span grid positions of c
// (n values each) from the image's out(b)-th position on: the sum over
// steps kernel rows r of the tall product of a's rows (lda values apart,
// depth values deep) at the positions from in(b, q) + r·stride with b's
// rows r·depth on (n wide), one conv kernel call a tile of c.
func (ws *Workspace) ConvRows(batch, span, n int, out func(b int) int, in func(b, q int) int,
	steps, depth, lda, stride int, a, b, c []float32) {
	t, _ := tileFor(span, n)
	groups := (span + t.r - 1) / t.r
	w := 16 * t.v
	matrix.Parallel(ws.workers, batch*groups, 4, func(_, lo, hi int) {
		for item := lo; item < hi; item++ {
			img, g := item/groups, item%groups
			q0, skip := g*t.r, 0
			if q0+t.r > span {
				q0, skip = span-t.r, q0+t.r-span
			}
			at, ap := out(img)+q0, &a[in(img, q0)*lda]
			for col := 0; col < n; col += w {
				t.conv(depth, ap, uintptr(lda*4), &b[col], uintptr(n*4), &c[at*n+col], uintptr(n*4), skip, panelMasks(n-col),
					steps, uintptr(stride*lda*4), 1, 0)
			}
		}
	})
}

// ConvKernelRows sets c (len(segs)·width rows of n) to aᵀ·b for an a whose
// columns are segments of width columns, segment s from segs[s] values
// into a (rows lda apart), and b rows of n, ldb apart, over the rows in
// ranges (the others are zero in b: left out).
func (ws *Workspace) ConvKernelRows(segs []int, width, n int, ranges [][2]int, a []float32, lda int, b []float32, ldb int, c []float32) {
	ws.tallTNSegments(ws.workers, segs, width, n, ranges, 1, a, lda, b, ldb, 0, c, n)
}
