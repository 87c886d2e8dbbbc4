// Package conv computes stride-1 convolutions without their patches, on
// the product kernels of an instruction set (Products: the AVX-512 or the
// AVX2 kernels). Package blas decides when it is used.
//
// A convolution computed as a product writes every window of its input as
// a row of a patches matrix (im2col), KH·KW times the input, which the
// forward product and the kernel's gradient read; its input's gradient is
// a product of the same size, scattered back onto the image (col2im). On
// ResNet-20's 32×32 stage all of that moves more memory than the products
// compute.
//
// For a stride-1 convolution without dilation the windows need not be
// copied. Lay the images out on a grid: each image padded to Hp×Wp pixels
// (Hp = OH+KH-1, Wp = OW+KW-1), one after the other, with Margin zero
// positions before the first and after the last. The window whose top
// left corner is grid position q covers, in kernel row dy, the KW pixels
// from q+dy·Wp on: KW·C values in a row of the grid. So:
//
//   - the output is KH tall products, one per kernel row, whose rows of a
//     are grid positions C values apart, read in place (the rows overlap:
//     lda = C, depth KW·C), summed, computed at every position of the
//     output's rows, the KW-1 at the end of each grid row giving values no
//     one reads;
//   - the kernel's gradient, row dy, is the product of the same rows of a,
//     transposed, with the output's gradient laid on the grid (zeros where
//     there is no output): one product reducing over every grid position,
//     the KH rows as segments of a;
//   - the input's gradient is a convolution of the output's gradient on
//     the grid with the kernel turned by 180° and each tap transposed:
//     dx[p] = Σ dy[p-dy·Wp-dx]·w[dy][dx]ᵀ.
//
// The grids hold zeros wherever there is no image or output value, so no
// garbage (a NaN would spread through the zeros it is multiplied by) is
// ever read.
package conv

import (
	"errors"
	"fmt"

	"github.com/gokeras/gokeras/internal/kernels/matrix"
)

// Products are the tall products of an instruction set's kernels that the
// convolutions are made of.
type Products interface {
	// Workers is the most goroutines the products use.
	Workers() int
	// ConvFits reports whether ConvRows computes spans of span grid
	// positions, n values each, and ConvKernelRows segments of width rows
	// against n columns.
	ConvFits(span, width, n int) bool
	// ConvRows computes, for each of batch images, span grid positions of
	// c (n values each) from the image's out(b)-th position on: the sum
	// over steps kernel rows r of the tall product of a's rows (lda values
	// apart, depth values deep) at the positions from in(b, q) + r·stride
	// with b's rows r·depth on (n wide), plus bias (n values; nil for
	// none), then with relu the ReLU of each value (the value where it is
	// above 0, else 0).
	ConvRows(batch, span, n int, out func(b int) int, in func(b, q int) int, steps, depth, lda, stride int, a, b, c, bias []float32, relu bool)
	// ConvWork is what ConvRows costs for spans of span positions, n
	// values each (the values its tiles compute, rows and columns rounded
	// up to whole tiles), 0 where it cannot: the convolutions compare ways
	// of computing the same values with it.
	ConvWork(span, n int) int
	// ConvKernelRows sets c (len(segs)·width rows of n) to aᵀ·b for an a
	// whose columns are segments of width columns, segment s starting
	// segs[s] values into a (rows lda apart; segments may overlap), and b
	// rows of n, ldb apart, over the rows in ranges (ascending; b is zero
	// on the rows between them, which may be left out), each a whole
	// number of periods long: b is zero on all but the first run rows of
	// every period rows from a range's start too, which may also be left
	// out.
	ConvKernelRows(segs []int, width, n int, ranges [][2]int, run, period int, a []float32, lda int, b []float32, ldb int, c []float32)
}

// Shape is a convolution with stride 1 and no dilation of Batch
// channels-last images of H×W×C: Filters filters of KH×KW, PadTop rows and
// PadLeft columns of zeros before the image, OH×OW outputs. The kernel is
// KH·KW·C rows of Filters (HWIO order); the output OH·OW·Filters values an
// image.
type Shape struct {
	Batch, H, W, C  int
	Filters         int
	KH, KW          int
	PadTop, PadLeft int
	OH, OW          int
}

// Memory is what the convolution needs for a Shape, in float32s: the
// grids of the images (InputGrid) and of the output's gradient
// (OutputGrid), and the scratch memory of Forward and InputGrad.
type Memory struct {
	InputGrid, OutputGrid, Forward, InputGrad int
}

// ErrUnsupported is returned for a convolution Plan refuses.
var ErrUnsupported = errors.New("conv: the kernels do not compute this convolution without patches")

// minChannels is the fewest input channels Plan takes. A first layer's
// images of 3 channels make kernel rows of 9 values, which fill the tiles
// of the kernel's gradient poorly (a third, where its patches' product
// fills more than half), and patches cheap to write.
const minChannels = 8

// grid returns the padded image's height and width.
func (s Shape) grid() (hp, wp int) { return s.OH + s.KH - 1, s.OW + s.KW - 1 }

// margin is the number of zero grid positions before the first image
// and after the last: as far as a window reaches from its corner.
func (s Shape) margin() int {
	_, wp := s.grid()
	return (s.KH-1)*wp + s.KW - 1
}

// positions is the number of positions of a grid.
func (s Shape) positions() int {
	hp, wp := s.grid()
	return 2*s.margin() + s.Batch*hp*wp
}

// check reports what is wrong with s, or nil.
func (s Shape) check() error {
	hp, wp := s.grid()
	switch {
	case s.Batch <= 0 || s.H <= 0 || s.W <= 0 || s.C <= 0 || s.Filters <= 0 || s.KH <= 0 || s.KW <= 0 || s.OH <= 0 || s.OW <= 0:
		return fmt.Errorf("conv: convolution %+v: every size must be positive", s)
	case s.PadTop < 0 || s.PadLeft < 0 || s.PadTop+s.H > hp || s.PadLeft+s.W > wp:
		return fmt.Errorf("conv: convolution %+v: the padded image (%d×%d) does not hold the image at its padding", s, hp, wp)
	}
	return nil
}

// Plan returns the memory the convolution needs for s on p, and false
// when p does not compute it: fewer than 8 channels, or a shape too small
// for p's tiles.
func Plan(p Products, s Shape) (Memory, bool) {
	if s.check() != nil || s.C < minChannels {
		return Memory{}, false
	}
	hp, wp := s.grid()
	if !p.ConvFits(s.OH*wp, s.KW*s.C, s.Filters) || !p.ConvFits(s.H*wp, s.KW*s.C, s.C) {
		return Memory{}, false
	}
	img := s.Batch * hp * wp
	mem := Memory{
		InputGrid:  s.positions() * s.C,
		OutputGrid: s.positions() * s.Filters,
		InputGrad:  s.KH * s.KW * s.Filters * s.C,
	}
	if !byRows(p, s.OH, s.OW, wp, s.Filters) {
		mem.Forward = img * s.Filters
	}
	if !byRows(p, s.H, s.W, wp, s.C) {
		mem.InputGrad += img * s.C
	}
	return mem, true
}

// byRows reports whether p computes the rows of a result (rows of width
// positions, n values each) one at a time, straight into the result, at
// no more cost than every position of the grid's rows (wp wide: the
// positions past width thrown away) followed by a copy out of the grid.
// On small images the grid's extra columns are a large share (a quarter
// more on 8×8 with a 3×3 kernel), and a tile that divides the width
// computes none of them.
func byRows(p Products, rows, width, wp, n int) bool {
	w := p.ConvWork(width, n)
	return w > 0 && w*rows <= p.ConvWork(rows*wp, n)
}

// memory returns Plan(p, s), or the error for a shape it refuses.
func (s Shape) memory(p Products) (Memory, error) {
	mem, ok := Plan(p, s)
	if !ok {
		if err := s.check(); err != nil {
			return mem, err
		}
		return mem, ErrUnsupported
	}
	return mem, nil
}

// sizes checks the lengths of a step's slices against what it needs.
func (s Shape) sizes(what string, got, want []int) error {
	for i := range got {
		if got[i] < want[i] {
			return fmt.Errorf("conv: convolution %s %+v: got %v values, want at least %v", what, s, got, want)
		}
	}
	return nil
}

// InputGrid lays the images x (Batch·H·W·C values) on grid (InputGrid
// values of Plan): each at its padding, zeros elsewhere.
func InputGrid(p Products, s Shape, x, grid []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("input grid", []int{len(x), len(grid)}, []int{s.Batch * s.H * s.W * s.C, mem.InputGrid}); err != nil {
		return err
	}
	place(p.Workers(), s, x, s.H, s.W, s.C, s.PadTop, s.PadLeft, grid)
	return nil
}

// OutputGrid lays the output's gradient dz (Batch·OH·OW·Filters values) on
// grid (OutputGrid values of Plan), zeros elsewhere.
func OutputGrid(p Products, s Shape, dz, grid []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("output grid", []int{len(dz), len(grid)}, []int{s.Batch * s.OH * s.OW * s.Filters, mem.OutputGrid}); err != nil {
		return err
	}
	place(p.Workers(), s, dz, s.OH, s.OW, s.Filters, 0, 0, grid)
	return nil
}

// place writes the h×w images of ch channels in v on grid, their top left
// pixel at (top, left) of each padded image, and zeros everywhere else.
func place(workers int, s Shape, v []float32, h, w, ch, top, left int, grid []float32) {
	hp, wp := s.grid()
	margin, img := s.margin(), hp*wp
	clear(grid[:margin*ch])
	clear(grid[(margin+s.Batch*img)*ch : s.positions()*ch])
	matrix.Parallel(workers, s.Batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			g := grid[(margin+b*img)*ch:][:img*ch]
			for y := 0; y < hp; y++ {
				row := g[y*wp*ch:][:wp*ch]
				if y < top || y >= top+h {
					clear(row)
					continue
				}
				clear(row[:left*ch])
				copy(row[left*ch:], v[((b*h+y-top)*w)*ch:][:w*ch])
				clear(row[(left+w)*ch:])
			}
		}
	})
}

// Forward computes the convolution's output z (Batch·OH·OW·Filters values)
// from the images on their grid and the kernel, plus bias (one value a
// filter; nil for none), using scratch (Forward values of Plan).
func Forward(p Products, s Shape, grid, kernel, bias, z, scratch []float32) error {
	return forward(p, s, grid, kernel, bias, z, scratch, false)
}

// ForwardReLU is Forward followed by the ReLU activation (the value where
// it is above 0, else 0), in the products' last pass over z.
func ForwardReLU(p Products, s Shape, grid, kernel, bias, z, scratch []float32) error {
	return forward(p, s, grid, kernel, bias, z, scratch, true)
}

func forward(p Products, s Shape, grid, kernel, bias, z, scratch []float32, relu bool) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("forward", []int{len(grid), len(kernel), len(z), len(scratch)},
		[]int{mem.InputGrid, s.KH * s.KW * s.C * s.Filters, s.Batch * s.OH * s.OW * s.Filters, mem.Forward}); err != nil {
		return err
	}
	if bias != nil && len(bias) < s.Filters {
		return fmt.Errorf("conv: convolution forward %+v: %d bias values for %d filters", s, len(bias), s.Filters)
	}
	hp, wp := s.grid()
	img, margin, f := hp*wp, s.margin(), s.Filters
	if bias != nil {
		bias = bias[:f]
	}
	if byRows(p, s.OH, s.OW, wp, f) {
		// Output row u (image u/OH, row u%OH) straight into z.
		p.ConvRows(s.Batch*s.OH, s.OW, f, func(u int) int { return u * s.OW },
			func(u, q int) int { return margin + u/s.OH*img + u%s.OH*wp + q },
			s.KH, s.KW*s.C, s.C, wp, grid, kernel, z, bias, relu)
		return nil
	}
	// Every position of the output's rows, from the image's corner, then
	// the output's positions copied back from the grid.
	p.ConvRows(s.Batch, s.OH*wp, f, func(b int) int { return b * img }, func(b, q int) int { return margin + b*img + q },
		s.KH, s.KW*s.C, s.C, wp, grid, kernel, scratch[:s.Batch*img*f], bias, relu)
	matrix.Parallel(p.Workers(), s.Batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			for y := 0; y < s.OH; y++ {
				copy(z[((b*s.OH+y)*s.OW)*f:][:s.OW*f], scratch[(b*img+y*wp)*f:][:s.OW*f])
			}
		}
	})
	return nil
}

// InputGrad overwrites dx (the images' Batch·H·W·C values) with the
// gradient of the convolution's input, given its output's gradient on its
// grid (OutputGrid) and its kernel, using scratch (InputGrad values of
// Plan).
func InputGrad(p Products, s Shape, grid, kernel, dx, scratch []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("input gradient", []int{len(grid), len(kernel), len(dx), len(scratch)},
		[]int{mem.OutputGrid, s.KH * s.KW * s.C * s.Filters, s.Batch * s.H * s.W * s.C, mem.InputGrad}); err != nil {
		return err
	}
	hp, wp := s.grid()
	img, margin, c, f := hp*wp, s.margin(), s.C, s.Filters
	rows := byRows(p, s.H, s.W, wp, c)
	var out []float32
	if !rows {
		out = scratch[:s.Batch*img*c]
	}
	turned := scratch[len(out):][:s.KH*s.KW*f*c]
	// The kernel turned by 180°, each tap transposed: Filters rows of C.
	taps := s.KH * s.KW
	for t := 0; t < taps; t++ {
		src, dst := kernel[t*c*f:][:c*f], turned[(taps-1-t)*f*c:][:f*c]
		for i := 0; i < c; i++ {
			for j, v := range src[i*f : (i+1)*f] {
				dst[j*c+i] = v
			}
		}
	}
	// The window turned reaches back margin positions from the pixel.
	back := margin - (s.KH-1)*wp - (s.KW - 1)
	if rows {
		// Image row u (image u/H, row u%H) straight into dx.
		p.ConvRows(s.Batch*s.H, s.W, c, func(u int) int { return u * s.W },
			func(u, q int) int { return back + u/s.H*img + (u%s.H+s.PadTop)*wp + s.PadLeft + q }, s.KH, s.KW*f, f, wp,
			grid, turned, dx, nil, false)
		return nil
	}
	// Every position of the image's rows, every column of the grid, then
	// the image's pixels copied back from the grid.
	p.ConvRows(s.Batch, s.H*wp, c, func(b int) int { return b*img + s.PadTop*wp },
		func(b, q int) int { return back + b*img + s.PadTop*wp + q }, s.KH, s.KW*f, f, wp,
		grid, turned, out, nil, false)
	matrix.Parallel(p.Workers(), s.Batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			for y := 0; y < s.H; y++ {
				copy(dx[((b*s.H+y)*s.W)*c:][:s.W*c], out[(b*img+(y+s.PadTop)*wp+s.PadLeft)*c:][:s.W*c])
			}
		}
	})
	return nil
}

// KernelGrad computes the gradient of the kernel, dk (KH·KW·C rows of
// Filters), from the images' grid (InputGrid) and the output gradient's
// (OutputGrid): for kernel row dy, the windows' rows read in place from the
// image grid, transposed, times the gradient, summed over every grid
// position.
func KernelGrad(p Products, s Shape, images, grad, dk []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("kernel gradient", []int{len(images), len(grad), len(dk)},
		[]int{mem.InputGrid, mem.OutputGrid, s.KH * s.KW * s.C * s.Filters}); err != nil {
		return err
	}
	hp, wp := s.grid()
	margin, img := s.margin(), hp*wp
	segs := make([]int, s.KH)
	for dy := range segs {
		segs[dy] = (margin + dy*wp) * s.C
	}
	// Only the output's rows of each image: the gradient is zero on the
	// grid's KH-1 rows after them, and on the KW-1 positions after the
	// output's in each row.
	ranges := make([][2]int, s.Batch)
	for b := range ranges {
		ranges[b] = [2]int{b * img, b*img + s.OH*wp}
	}
	p.ConvKernelRows(segs, s.KW*s.C, s.Filters, ranges, s.OW, wp, images, s.C, grad[margin*s.Filters:], s.Filters, dk)
	return nil
}
