package avx512

import (
	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// The products of the convolutions without patches (package
// internal/kernels/conv, which lays the images on a grid): a Workspace is
// its conv.Products on CPUs with AVX-512.

// convKernel is the signature of the conv kernels in tall_amd64.s.
type convKernel func(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, skip int, masks uint64, steps int, jump uintptr, alpha, beta float32, bias *float32, relu int)

// convTile is a conv kernel's tile, r rows × 16·v columns of c. The
// tiles of 24 accumulators come first; those of 16 have rows that divide
// small images' widths (8, 16, 32), for convolutions computed an image row
// at a time. In the caches every tile runs at the machine's peak
// (BenchmarkConvTilesInCache: 113-117 GFLOP per CPU-second on a Zen 4
// core, both kinds).
type convTile struct {
	r, v int
	conv convKernel
}

var convTiles = [...]convTile{
	{24, 1, conv24x16},
	{12, 2, conv12x32},
	{8, 3, conv8x48},
	{6, 4, conv6x64},
	{16, 1, conv16x16},
	{8, 2, conv8x32},
	{4, 4, conv4x64},
}

// convTileFor picks the tile that computes spans of span positions, n
// values each, at the least cost: the values it computes, rows and
// columns rounded up to whole tiles (a span's last tile moved back over
// rows computed before); of those the widest (the fewest passes over a),
// and the first such in convTiles. It returns the cost too, and false
// when every tile has more rows than span.
func convTileFor(span, n int) (convTile, int, bool) {
	best, bestCost, found := convTile{}, 0, false
	for _, t := range convTiles {
		if t.r > span {
			continue
		}
		w := 16 * t.v
		cost := (span + t.r - 1) / t.r * t.r * ((n + w - 1) / w * w)
		if !found || cost < bestCost || cost == bestCost && t.v > best.v {
			best, bestCost, found = t, cost, true
		}
	}
	return best, bestCost, found
}

// ConvFits reports whether ConvRows computes spans of span grid
// positions, n values each, and ConvKernelRows segments of width rows
// against n columns: whether a tile has no more rows than either.
func (ws *Workspace) ConvFits(span, width, n int) bool {
	if !haveKernels {
		return false
	}
	_, _, rows := convTileFor(span, n)
	_, cols := tileFor(width, n)
	return rows && cols
}

// ConvWork is what ConvRows costs for a span of span positions, n values
// each: the values its tiles compute; 0 where no tile fits.
func (ws *Workspace) ConvWork(span, n int) int {
	_, cost, _ := convTileFor(span, n)
	return cost
}

// ConvRows computes, for each of batch images, span grid positions of c
// (n values each) from the image's out(b)-th position on: the sum over
// steps kernel rows r of the tall product of a's rows (lda values apart,
// depth values deep) at the positions from in(b, q) + r·stride with b's
// rows r·depth on (n wide), plus bias (n values; nil for none), then
// with relu the ReLU of each value (the value where it is above 0, else
// 0), one conv kernel call a tile of c; then with mask (nil for none) +0
// wherever mask, laid out as c, is not above 0 (a ReLU's gradient, mask
// its output), each tile's rows while they are in the caches.
func (ws *Workspace) ConvRows(batch, span, n int, out func(b int) int, in func(b, q int) int,
	steps, depth, lda, stride int, a, b, c, bias []float32, relu bool, mask []float32) {
	t, _, _ := convTileFor(span, n)
	r := 0
	if relu {
		// The kernels apply the ReLU after a bias: a zero one if none.
		r = 1
		if bias == nil {
			bias = matrix.Grow(&ws.zeros, n)
			clear(bias)
		}
	}
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
				var bp *float32
				if bias != nil {
					bp = &bias[col]
				}
				t.conv(depth, ap, uintptr(lda*4), &b[col], uintptr(n*4), &c[at*n+col], uintptr(n*4), skip, panelMasks(n-col),
					steps, uintptr(stride*lda*4), 1, 0, bp, r)
			}
			if mask != nil {
				MaskPositive(mask[(at+skip)*n:][:(t.r-skip)*n], c[(at+skip)*n:], c[(at+skip)*n:])
			}
		}
	})
}

// ConvKernelRows sets c (len(segs)·width rows of n) to aᵀ·b for an a whose
// columns are segments of width columns, segment s from segs[s] values
// into a (rows lda apart), and b rows of n, ldb apart, over the rows in
// ranges (the others are zero in b: left out), and of those only the
// first run of every period rows when run < period (the colsj kernels
// jump over the rest).
func (ws *Workspace) ConvKernelRows(segs []int, width, n int, ranges [][2]int, run, period int, a []float32, lda int, b []float32, ldb int, c []float32) {
	ws.tallTNSegments(ws.workers, segs, width, n, ranges, run, period, 1, a, lda, b, ldb, 0, c, n)
}

// MaskPositive is the package's MaskPositive, for package conv.
func (ws *Workspace) MaskPositive(x, v, out []float32) { MaskPositive(x, v, out) }
