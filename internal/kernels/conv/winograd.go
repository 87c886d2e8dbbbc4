package conv

import (
	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// Winograd's F(2×2, 3×3). A 3×3 stride-1 convolution computes each 2×2
// block of its outputs (a tile) from the 4×4 input pixels under it. In
// Winograd's form, per channel, that is Y = Aᵀ·[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]·A
// for the kernel g (3×3), the tile's pixels d (4×4) and
//
//	Bᵀ = | 1  0 -1  0 |    G = | 1    0    0  |    Aᵀ = | 1  1  1  0 |
//	     | 0  1  1  0 |        | 1/2  1/2  1/2 |         | 0  1 -1 -1 |
//	     | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
//	     | 0  1  0 -1 |        | 0    0    1  |
//
// Summed over the channels, the 16 elementwise products of the 4×4
// transforms become 16 products of matrices: for element ξ, the tiles'
// transformed pixels (a row of C values a tile) times the transformed
// kernel's element ξ (C×F). They take 16·C·F multiplications a tile of
// four outputs, against 36·C·F directly: 2.25 times fewer. The
// transforms add only additions, 16 values a channel a tile in and out.
//
// The tiles go by blocks, each block's transformed pixels and products
// kept in the caches of the core that computes it: the block's tiles
// transformed from the images themselves, its 16 products, then each
// tile's outputs transformed into the result, plus the bias, with the
// ReLU or the ReLU's gradient's mask. The input's gradient is the same
// computation on the output's gradient with the kernel turned by 180° and
// each tap transposed (see the package comment).
//
// The tiles read their windows in place: no grid is laid out. A window
// that reaches past the image (the padding: the first and last rows of
// tiles, the first and last tile of each row) is copied into a worker's
// scratch with zeros where there is no pixel, and transformed from there.
//
// The rounding differs from the direct sums (the transforms' additions,
// the 1/2s of G): within the same bound of float32 errors of sums of that
// scale that the tests ask of every path (TestConv).

// WinogradProducts are the Products of an instruction set with the
// kernels of Winograd's F(2×2, 3×3).
type WinogradProducts interface {
	Products
	// WinogradFits reports whether the kernels transform tiles of c
	// channels and outputs of n.
	WinogradFits(c, n int) bool
	// WinogradKernel writes the transformed kernel u (16 planes of in
	// rows of out: element (i, j) of G·g·Gᵀ in plane 4i+j, for each input
	// and output channel) of the 3×3 kernel k (9 taps of in rows of out,
	// HWIO).
	WinogradKernel(k []float32, in, out int, u []float32)
	// WinogradInput transforms count tiles of c channels: tile t's 4×4
	// pixels from src[2·c·t:] (rows ld values apart, pixels c apart),
	// Bᵀ·d·B, value (i, j) written to dst[(4i+j)·plane + c·t:][:c].
	WinogradInput(count int, src []float32, ld, c int, dst []float32, plane int)
	// WinogradOutput transforms count tiles of n channels: tile t's 4×4
	// values m[i][j] from src[(4i+j)·plane + n·t:][:n], Aᵀ·m·A, output
	// (i, j) written to dst[i·ld + n·(2t+j):][:n], plus bias (nil for
	// none), then with relu the ReLU, then with mask (nil for none; laid
	// out as dst) +0 wherever mask is not above 0.
	WinogradOutput(count int, src []float32, plane, n int, dst []float32, ld int, bias []float32, relu bool, mask []float32)
	// WinogradProduct sets c (rows of n) to a·b (a rows of depth, b
	// depth×n) on the calling goroutine, rows rounded up to a multiple of
	// winogradRows.
	WinogradProduct(rows, depth, n int, a, b, c []float32)
	// WinogradOutputGrad transforms count tiles of n channels of an
	// output's gradient, the adjoint of WinogradOutput's transform: tile
	// t's 2×2 values y from src[2·n·t:] (rows ld values apart, pixels n
	// apart), A·y·Aᵀ, value (i, j) written to dst[(4i+j)·plane + n·t:][:n].
	WinogradOutputGrad(count int, src []float32, ld, n int, dst []float32, plane int)
	// WinogradProductT sets c (m rows of n) to aᵀ·b, or with add adds it
	// to c, for a rows×m and b rows×n, on the calling goroutine.
	WinogradProductT(rows, m, n int, a, b, c []float32, add bool)
	// WinogradKernelGrad writes the kernel's gradient dk (9 taps of in
	// rows of out, HWIO) from parts sums in Winograd's form (part p's 16
	// planes of in rows of out from src[p·16·in·out:]): the parts added
	// in order, then Gᵀ·x·G.
	WinogradKernelGrad(src []float32, parts, in, out int, dk []float32)
}

// winogradRows is the multiple of rows WinogradProduct computes; the
// blocks of tiles are multiples of it.
const winogradRows = 48

// winogradOn turns Winograd's convolutions on; the tests turn them off to
// check the direct ones.
var winogradOn = true

// winograd returns the Winograd kernels of p where they compute s: a 3×3
// kernel of stride 1 on channels and filters the kernels transform.
func (s Shape) winograd(p Products) (WinogradProducts, bool) {
	w, ok := p.(WinogradProducts)
	if !winogradOn || !ok || s.KH != 3 || s.KW != 3 || s.stride() != 1 || !w.WinogradFits(s.C, s.Filters) || !w.WinogradFits(s.Filters, s.C) {
		return nil, false
	}
	return w, true
}

// tiling is one Winograd convolution's walk over its tiles: out×OH×OW
// outputs an image from in channels.
type tiling struct {
	batch, in, out, oh, ow int
	block                  int // tiles a block: a multiple of winogradRows
}

// newTiling returns the tiling of a convolution, blocks sized so that a
// block's transformed pixels and products take about 256 KiB.
func newTiling(batch, in, out, oh, ow int) tiling {
	block := max(1, 65536/(16*(in+out))/winogradRows) * winogradRows
	return tiling{batch, in, out, oh, ow, block}
}

// image is a batch of channels-last images that a tiling reads in place:
// v holds batch images of h×w pixels of ch values; tile (ty, tx)'s window
// has its top left corner at pixel (2·ty-top, 2·tx-left) and reads zeros
// outside the image.
type image struct {
	v         []float32
	h, w, ch  int
	top, left int
}

// windows hands the windows of size×size pixels of run tiles of image
// b's row of tiles ty, from column tx on, to f: tiles j to j+count-1 of
// the run, tile j+k's window from src[2·ch·k:], rows ld values apart. The
// windows inside the image are read in place; the others are copied into
// edge (edgeValues) first, zeros where they reach past the image.
func (im image) windows(b, ty, tx, run, size int, edge []float32, f func(j, count int, src []float32, ld int)) {
	r0, c0 := 2*ty-im.top, 2*tx-im.left
	if r0 < 0 || r0+size > im.h {
		// A first or last row of tiles: all the windows' rows copied.
		cols := 2*(run-1) + size
		im.fill(edge, b, r0, c0, size, cols)
		f(0, run, edge, cols*im.ch)
		return
	}
	lo := min(run, max(0, (1-c0)/2))            // the first tile whose window starts inside
	hi := max(lo, min(run, (im.w-size-c0)/2+1)) // past the last that ends inside
	if im.w-size-c0 < 0 {
		hi = lo
	}
	edgeTile := func(j int) {
		im.fill(edge, b, r0, c0+2*j, size, size)
		f(j, 1, edge, size*im.ch)
	}
	for j := 0; j < lo; j++ {
		edgeTile(j)
	}
	if hi > lo {
		f(lo, hi-lo, im.v[((b*im.h+r0)*im.w+c0+2*lo)*im.ch:], im.w*im.ch)
	}
	for j := hi; j < run; j++ {
		edgeTile(j)
	}
}

// edgeValues is the scratch windows needs for runs of at most run tiles
// of windows of size pixels: size rows of 2·(run-1)+size pixels.
func (im image) edgeValues(run, size int) int { return size * (2*(run-1) + size) * im.ch }

// fill copies rows×cols pixels of image b from pixel (r0, c0) on into dst
// (rows cols·ch values apart), zeros where they lie outside the image.
func (im image) fill(dst []float32, b, r0, c0, rows, cols int) {
	ch := im.ch
	x0, x1 := max(0, c0), min(im.w, c0+cols) // the image's columns in the window
	for r := 0; r < rows; r++ {
		row := dst[r*cols*ch:][:cols*ch]
		y := r0 + r
		if y < 0 || y >= im.h || x0 >= x1 {
			clear(row)
			continue
		}
		clear(row[:(x0-c0)*ch])
		copy(row[(x0-c0)*ch:], im.v[((b*im.h+y)*im.w+x0)*ch:][:(x1-x0)*ch])
		clear(row[(x1-c0)*ch:])
	}
}

// scratch is the memory a worker of run needs: a block's transformed
// pixels and products, one tile's outputs, and the windows copied at the
// images' edges.
func (t tiling) scratch() int {
	return t.blockValues() + 4*t.out + t.edgeValues()
}

// edgeValues is the most memory the windows at the edges of a row of
// tiles take: 4 rows of its pixels and two more, in or out channels.
func (t tiling) edgeValues() int {
	return image{ch: max(t.in, t.out)}.edgeValues(ceilDiv(t.ow, 2), 4)
}

// blockValues is the memory of a block's transformed pixels (16 planes
// of in channels) and products or output-gradient tiles (16 of out).
func (t tiling) blockValues() int { return 16 * (t.plane(t.in) + t.plane(t.out)) }

// plane is the values between the planes of a block's transformed tiles
// of ch channels: a cache line more than they hold, so that the 16 planes
// do not start at the same offset into a page (with blocks of whole
// kilobytes, every second or fourth would, and the caches would hold only
// as many of them as they have ways).
func (t tiling) plane(ch int) int { return t.block*ch + 16 }

// run computes the convolution's outputs into out (batch images of
// oh×ow×out values) from the images src (of in channels) and the
// transformed kernel u, plus bias (nil for none), with relu the ReLU, with
// mask (nil for none; laid out as out) +0 wherever mask is not above 0;
// scratch holds each worker's scratch().
func (t tiling) run(p WinogradProducts, src image, u, out, bias []float32, relu bool, mask, scratch []float32) {
	tw := ceilDiv(t.ow, 2)
	tiles, blocks := t.tiles(), t.blocks()
	per := t.scratch()
	workers := min(p.Workers(), len(scratch)/per)
	inPlane, outPlane := t.plane(t.in), t.plane(t.out)
	matrix.Parallel(workers, blocks, 1, func(worker, lo, hi int) {
		buf := scratch[worker*per:][:per]
		v, m := buf[:16*inPlane], buf[16*inPlane:][:16*outPlane]
		edge, windows := buf[16*(inPlane+outPlane):][:4*t.out], buf[16*(inPlane+outPlane)+4*t.out:]
		for blk := lo; blk < hi; blk++ {
			first := blk * t.block
			n := min(t.block, tiles-first)
			t.runs(first, n, func(i, b, ty, tx, run int) {
				src.windows(b, ty, tx, run, 4, windows, func(j, count int, from []float32, ld int) {
					p.WinogradInput(count, from, ld, t.in, v[(i+j)*t.in:], inPlane)
				})
			})
			for xi := 0; xi < 16; xi++ {
				p.WinogradProduct(n, t.in, t.out, v[xi*inPlane:], u[xi*t.in*t.out:], m[xi*outPlane:])
			}
			t.runs(first, n, func(i, b, ty, tx, run int) {
				full := run
				if 2*ty+1 >= t.oh {
					full = 0 // a last row of tiles with one row of outputs
				} else if tx+run == tw && t.ow%2 == 1 {
					full-- // a last tile with one column
				}
				at := ((b*t.oh+2*ty)*t.ow + 2*tx) * t.out
				var mk []float32
				if mask != nil {
					mk = mask[at:]
				}
				p.WinogradOutput(full, m[i*t.out:], outPlane, t.out, out[at:], t.ow*t.out, bias, relu, mk)
				for e := full; e < run; e++ {
					// A tile at the edge: its outputs into edge, then those
					// inside the image copied.
					p.WinogradOutput(1, m[(i+e)*t.out:], outPlane, t.out, edge, 2*t.out, bias, relu, nil)
					for y := 0; y < 2 && 2*ty+y < t.oh; y++ {
						cols := min(2, t.ow-2*(tx+e))
						from := edge[y*2*t.out:][:cols*t.out]
						to := at + (y*t.ow+2*e)*t.out
						if mask != nil {
							p.MaskPositive(mask[to:][:len(from)], from, out[to:])
						} else {
							copy(out[to:], from)
						}
					}
				}
			})
		}
	})
}

// tiles returns the number of tiles: ceil(oh/2) rows of ceil(ow/2) an
// image.
func (t tiling) tiles() int { return t.batch * ceilDiv(t.oh, 2) * ceilDiv(t.ow, 2) }

// blocks returns the number of blocks of tiles, the last one partly full.
func (t tiling) blocks() int { return ceilDiv(t.tiles(), t.block) }

// runs calls f for the n tiles from tile first on, a run along a row of
// tiles at a time: tile first+i is the first of run tiles of image b, row
// ty, from column tx on.
func (t tiling) runs(first, n int, f func(i, b, ty, tx, run int)) {
	th, tw := ceilDiv(t.oh, 2), ceilDiv(t.ow, 2)
	for i := 0; i < n; {
		j := first + i
		b, j := j/(th*tw), j%(th*tw)
		ty, tx := j/tw, j%tw
		run := min(tw-tx, n-i)
		f(i, b, ty, tx, run)
		i += run
	}
}

// winogradParts is the most parts a Winograd kernel gradient's tiles are
// summed in: one worker a part, the parts then added in order, so that
// the bits do not depend on the number of workers.
const winogradParts = 4

// parts returns the number of parts of a kernel gradient's blocks.
func (t tiling) parts() int {
	return min(winogradParts, t.blocks())
}

// kernelGrad computes the kernel's gradient dk (9 taps of in rows of out)
// from the images and the output's gradient grad (oh×ow×out values an
// image): for each block of tiles, the images' tiles transformed as the
// forward pass does and the gradient's 2×2 tiles by the adjoint of its
// output transform, their 16 products aᵀ·b summed over the part's blocks;
// then the parts' sums, in order, transformed back (Gᵀ·x·G). scratch
// holds the parts' sums and each worker's blocks (kernelGradScratch).
func (t tiling) kernelGrad(p WinogradProducts, images image, grad, dk, scratch []float32) {
	tiles, blocks := t.tiles(), t.blocks()
	parts, plane := t.parts(), 16*t.in*t.out
	sums, work := scratch[:parts*plane], scratch[parts*plane:]
	per := t.blockValues() + t.edgeValues()
	workers := min(p.Workers(), len(work)/per)
	inPlane, outPlane := t.plane(t.in), t.plane(t.out)
	dz := image{v: grad, h: t.oh, w: t.ow, ch: t.out}
	matrix.Parallel(workers, parts, 1, func(worker, lo, hi int) {
		buf := work[worker*per:][:per]
		v, m, windows := buf[:16*inPlane], buf[16*inPlane:][:16*outPlane], buf[t.blockValues():]
		for part := lo; part < hi; part++ {
			from, to := part*blocks/parts, (part+1)*blocks/parts
			for blk := from; blk < to; blk++ {
				first := blk * t.block
				n := min(t.block, tiles-first)
				t.runs(first, n, func(i, b, ty, tx, run int) {
					images.windows(b, ty, tx, run, 4, windows, func(j, count int, from []float32, ld int) {
						p.WinogradInput(count, from, ld, t.in, v[(i+j)*t.in:], inPlane)
					})
					dz.windows(b, ty, tx, run, 2, windows, func(j, count int, from []float32, ld int) {
						p.WinogradOutputGrad(count, from, ld, t.out, m[(i+j)*t.out:], outPlane)
					})
				})
				for xi := 0; xi < 16; xi++ {
					p.WinogradProductT(n, t.in, t.out, v[xi*inPlane:], m[xi*outPlane:], sums[part*plane+xi*t.in*t.out:], blk > from)
				}
			}
		}
	})
	p.WinogradKernelGrad(sums, parts, t.in, t.out, dk)
}

// kernelGradScratch is the memory kernelGrad needs with workers workers.
func (t tiling) kernelGradScratch(workers int) int {
	return t.parts()*16*t.in*t.out + workers*(t.blockValues()+t.edgeValues())
}
