package avx512

import (
	"unsafe"

	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

//go:generate go run gentall.go

// Tall products: a convolution computed as a product has a row per output
// pixel (32,768 at batch 32 in ResNet-20's first stage) against a few dozen
// filters. Its forward product a·b and its patches' gradient a·bᵀ are then
// m×n with m huge and the other operand small, and its kernel's gradient
// aᵀ·b a small m×n reduced over a huge depth k. The kernels above, built for
// a few rows of examples against large weights, tile c 48 columns wide and
// pack a whole; on these shapes they measured 12-50 GFLOP/s against the
// machine's 95 on a square product. The tall kernels (tall_amd64.s, written
// by gentall.go) read a in place and hold a tile of R rows × W columns of c
// in 24 registers, with W the filters rounded up to a multiple of 16 (16,
// 32, 48 or 64 columns against 24, 12, 8 or 6 rows), so that no lanes are
// wasted on the narrow shapes.
const (
	tallMinRows = 1024    // rows of examples (m of a·b and a·bᵀ, k of aᵀ·b) from which a product is tall
	tallSmall   = 1 << 16 // most values of b (a·b, a·bᵀ) or of c (aᵀ·b) a tall product has
	tallSplit   = 4096    // depth of each part of aᵀ·b reduced on its own
	tallKC      = 256     // depth block of aᵀ·b
	tallAhead   = 16      // rows of a ahead of its own that an aᵀ·b kernel fetches
)

// tallKernel is the signature of the kernels in tall_amd64.s.
type tallKernel func(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, skip int, masks uint64, pf, pfs uintptr, alpha, beta float32)

// tallTile is one of the kernels' tiles: r rows × 16·v columns, rows for
// a·op(b) (r rows of a, read along their length), cols for aᵀ·b (r
// columns of a, read down their length), colsj for aᵀ·b over blocks of
// rows with gaps between them.
type tallTile struct {
	r, v               int
	rows, cols, stream tallKernel
	colsj              colsjKernel
}

// colsjKernel is the signature of the colsj kernels in tall_amd64.s.
type colsjKernel func(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, skip int, masks uint64, steps, gap int, alpha, beta float32)

var tallTiles = [...]tallTile{
	{24, 1, rows24x16, cols24x16, stream24x16, colsj24x16},
	{12, 2, rows12x32, cols12x32, stream12x32, colsj12x32},
	{8, 3, rows8x48, cols8x48, stream8x48, colsj8x48},
	{6, 4, rows6x64, cols6x64, stream6x64, colsj6x64},
}

// tallStreamBytes is the size of c from which a tall a·op(b) with beta 0
// stores it past the caches (the stream kernels): a patches' gradient too
// large for them, which would otherwise be read from memory before it is
// written.
var tallStreamBytes = 8 << 20

// tileFor picks the tile for a c of m rows and n columns: the one that
// computes the fewest columns (n rounded up to a multiple of its width),
// and of those the widest (the fewest passes over a), among those of at
// most m rows. It returns false when m is below every tile's rows.
func tileFor(m, n int) (tallTile, bool) {
	best, found, cols := tallTile{}, false, 0
	for _, t := range tallTiles {
		if t.r > m {
			continue
		}
		w := 16 * t.v
		if c := (n + w - 1) / w * w; !found || c <= cols {
			best, found, cols = t, true, c
		}
	}
	return best, found
}

// Tall reports whether the product c = op(a)·op(b), c m×n with depth k,
// is one the tall kernels compute: many rows of examples (m of a·b and
// a·bᵀ, k of aᵀ·b) against a small operand.
func Tall(transA, transB bool, m, n, k int) bool {
	switch {
	case transA && transB:
		return false
	case transA:
		_, ok := tileFor(m, n)
		return ok && k >= tallMinRows && m*n <= tallSmall
	default:
		return m >= tallMinRows && n*k <= tallSmall
	}
}

// panelMasks returns the masks of a panel of c whose first width columns
// exist: 16 bits a vector.
func panelMasks(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(width) - 1
}

// tallAB computes c = alpha·a·op(b) + beta·c for a m×k with m large and
// op(b) k×n small (op(b) = bᵀ, b n×k, when transB: packed as a k×n
// matrix first). Each worker takes groups of r rows of a, read in place,
// through every panel of c's columns while they are in L1; the last group
// is moved back to end at row m, its rows already computed not stored.
func (ws *Workspace) tallAB(workers int, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	t, _ := tileFor(m, n)
	if transB {
		// op(b)[p][j] = b[j·ldb + p], packed with row stride n.
		pb := matrix.Grow(&ws.packed, k*n)
		for j := 0; j < n; j++ {
			for p, v := range b[j*ldb : j*ldb+k] {
				pb[p*n+j] = v
			}
		}
		b, ldb = pb, n
	}
	w := 16 * t.v
	groups := (m + t.r - 1) / t.r
	// The first panel fetches the next group's rows as it goes, r·lda
	// values from the end of its own, evenly over its k steps (two lines a
	// step at most); the others find the rows in L1.
	block := uintptr(t.r * lda * 4)
	pfs := min(128, (block+uintptr(k)-1)/uintptr(k))
	kernel := t.rows
	if beta == 0 && m*n*4 >= tallStreamBytes && n%w == 0 && ldc%16 == 0 && uintptr(unsafe.Pointer(&c[0]))%64 == 0 {
		kernel = t.stream
	}
	matrix.Parallel(workers, groups, 16, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			i0, skip := g*t.r, 0
			if i0+t.r > m {
				i0, skip = m-t.r, i0+t.r-m
			}
			here := uintptr(unsafe.Pointer(&a[i0*lda]))
			pf, step := here+block, pfs
			for col := 0; col < n; col += w {
				kernel(k, &a[i0*lda], uintptr(lda*4), &b[col], uintptr(ldb*4), &c[i0*ldc+col], uintptr(ldc*4), skip, panelMasks(n-col), pf, step, alpha, beta)
				pf, step = here, 0
			}
		}
	})
}

// tallTN computes c = alpha·aᵀ·b + beta·c for a k×m and b k×n with k
// large and c m×n small, a and b read in place. The depth is cut into
// parts of tallSplit, each reduced on its own (into c itself when there is
// one part, else into its own partial m×n), tallKC rows of a and b at a
// time against every group of r rows of c; the partials are then summed in
// order, so that the bits do not depend on the number of workers.
func (ws *Workspace) tallTN(workers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ws.tallTNSegments(workers, []int{0}, m, n, [][2]int{{0, k}}, 0, 0, alpha, a, lda, b, ldb, beta, c, ldc)
}

// tallTNSegments is tallTN for an a whose columns are segments of width
// columns each, segment s starting segs[s] values into a (segments may
// overlap: a convolution's windows read in place), over the rows of a and
// b in ranges (ascending, apart: the rows between them are left out): c
// has len(segs)·width rows, those of segment s from row s·width. Each
// block of b's rows is read once for every segment. The ranges are cut
// into parts of tallSplit rows, in order, as tallTN cuts its depth. With
// run < period, only the first run rows of every period rows from each
// range's start are read (the others are zero in b), the ranges being
// whole periods long, and the parts whole periods too.
func (ws *Workspace) tallTNSegments(workers int, segs []int, width, n int, ranges [][2]int, run, period int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	m := len(segs) * width
	t, _ := tileFor(width, n)
	w := 16 * t.v
	perSeg := (width + t.r - 1) / t.r
	groups := len(segs) * perSeg
	// The parts: part p's rows are pieces[first[p]:first[p+1]].
	split, block := tallSplit, tallKC
	if run <= 0 || run >= period {
		run, period = 0, 0
	} else {
		split, block = max(1, tallSplit/period)*period, max(1, tallKC/period)*period
	}
	pieces, first, size := ws.pieces[:0], append(ws.first[:0], 0), 0
	for _, r := range ranges {
		for lo := r[0]; lo < r[1]; {
			hi := min(r[1], lo+split-size)
			pieces, size, lo = append(pieces, [2]int{lo, hi}), size+hi-lo, hi
			if size == split {
				first, size = append(first, len(pieces)), 0
			}
		}
	}
	if size > 0 {
		first = append(first, len(pieces))
	}
	ws.pieces, ws.first = pieces, first
	parts := len(first) - 1
	// Each part's groups of rows go in chunks, enough work items to keep
	// the workers busy; each chunk reads its block of a's columns once.
	chunks := 1
	if items := 4 * workers; parts < items {
		chunks = min(groups, (items+parts-1)/parts)
	}
	per := (groups + chunks - 1) / chunks
	chunks = (groups + per - 1) / per
	dst, ldd, alpha1, beta1 := c, ldc, alpha, beta
	var partial []float32
	if parts > 1 {
		partial = matrix.Grow(&ws.partial, parts*m*n)
		ldd, alpha1, beta1 = n, 1, 0
	}
	matrix.Parallel(workers, parts*chunks, 1, func(_, lo, hi int) {
		for item := lo; item < hi; item++ {
			part, chunk := item/chunks, item%chunks
			out := dst
			if parts > 1 {
				out = partial[part*m*n : (part+1)*m*n]
			}
			be := beta1
			for _, piece := range pieces[first[part]:first[part+1]] {
				for k0 := piece[0]; k0 < piece[1]; k0 += block {
					kk := min(block, piece[1]-k0)
					ws.colsBlock(t, chunk, per, groups, perSeg, width, n, w, kk, k0, run, period, segs, a, lda, b, ldb, out, ldd, alpha1, be)
					be = 1
				}
			}
		}
	})
	if parts == 1 {
		return
	}
	rowsPer := max(1, (1<<14)/max(1, n*parts))
	matrix.Parallel(workers, (m+rowsPer-1)/rowsPer, 1, func(_, lo, hi int) {
		for i := lo * rowsPer; i < min(m, hi*rowsPer); i++ {
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
	})
}

// colsBlock adds, for the groups of rows of c in chunk (per a chunk, of
// groups, perSeg a segment), kk rows of a and b from row k0 into out: the
// cols kernel on every panel of each group (tallTNSegments); with period
// > 0, kk is whole periods and only the first run rows of each are read
// (the colsj kernels).
func (ws *Workspace) colsBlock(t tallTile, chunk, per, groups, perSeg, width, n, w, kk, k0, run, period int, segs []int,
	a []float32, lda int, b []float32, ldb int, out []float32, ldd int, alpha, beta float32) {
	for g := chunk * per; g < min(groups, (chunk+1)*per); g++ {
		seg, i0, skip := g/perSeg, (g%perSeg)*t.r, 0
		if i0+t.r > width {
			i0, skip = width-t.r, i0+t.r-width
		}
		// The first panel fetches a's values tallAhead rows ahead; the
		// others find them in L1. (The colsj kernels fetch nothing.)
		ap := &a[segs[seg]+k0*lda+i0]
		row := seg*width + i0
		pf, step := uintptr(unsafe.Pointer(ap))+uintptr(tallAhead*lda*4), uintptr(lda*4)
		for col := 0; col < n; col += w {
			bp, cp, masks := &b[k0*ldb+col], &out[row*ldd+col], panelMasks(n-col)
			if period > 0 {
				t.colsj(run, ap, uintptr(lda*4), bp, uintptr(ldb*4), cp, uintptr(ldd*4), skip, masks, kk/period, period-run, alpha, beta)
				continue
			}
			t.cols(kk, ap, uintptr(lda*4), bp, uintptr(ldb*4), cp, uintptr(ldd*4), skip, masks, pf, step, alpha, beta)
			pf, step = uintptr(unsafe.Pointer(ap)), 0
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
