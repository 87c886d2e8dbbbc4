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
// A convolution of stride s > 1 (ResNets' downsampling layers) reads the
// same grid, its width and height rounded up to multiples of s, as
// positions of s pixels: rows s·C values apart instead of C.
//
//   - The output row oy is one tall product per kernel row, read in place
//     from grid row s·oy on, each output's window s positions (one
//     position of s pixels) after the one before.
//   - The kernel's gradient is the same products transposed against the
//     output's gradient laid on a grid of those positions: output row oy
//     at the position where the grid's row s·oy starts, so its rows are
//     one image row of positions apart, wp positions, the gradient zero
//     between them.
//   - The input's gradient is computed s pixels at a time (s·C values, a
//     "position" of the image again): image row y takes the kernel rows
//     ky ≡ y+PadTop (mod s), each output row's gradient contributing to
//     the s pixels of a position through a kernel made of the taps that
//     land on them (zeros for the taps past the kernel's edge). The rows
//     of each of the s phases are one set of tall products, written
//     straight into the image's gradient; this needs the image's width
//     and left padding to be multiples of s.
//
// A 3×3 convolution of stride 1 is computed in Winograd's form F(2×2,
// 3×3) where the instruction set has its kernels (WinogradProducts; see
// winograd.go) and its channels and filters are whole vectors: forward,
// the input's gradient and the kernel's gradient, with 2.25 times fewer
// multiplications, the tiles' transforms computed block by block in the
// caches. These read the images and the output's gradient in place, with
// no grids (Plan's InputGrid and OutputGrid are 0): the windows at the
// images' edges are copied with their zeros into the caches instead.
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
	// above 0, else 0), then with mask (nil for none) +0 wherever mask,
	// laid out as c, is not above 0.
	ConvRows(batch, span, n int, out func(b int) int, in func(b, q int) int, steps, depth, lda, stride int, a, b, c, bias []float32, relu bool, mask []float32)
	// MaskPositive writes v[i] where x[i] > 0 and +0 elsewhere (NaN
	// included) into out, for i < len(x).
	MaskPositive(x, v, out []float32)
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

// Shape is a convolution without dilation of Batch channels-last images
// of H×W×C: Filters filters of KH×KW moved Stride pixels at a time along
// both axes (0 means 1), PadTop rows and PadLeft columns of zeros before
// the image, OH×OW outputs. The kernel is KH·KW·C rows of Filters (HWIO
// order); the output OH·OW·Filters values an image.
type Shape struct {
	Batch, H, W, C  int
	Filters         int
	KH, KW          int
	Stride          int
	PadTop, PadLeft int
	OH, OW          int
}

// Memory is what the convolution needs for a Shape, in float32s: the
// grids of the images (InputGrid) and of the output's gradient
// (OutputGrid), and the scratch memory of Forward, InputGrad and
// KernelGrad. Where a grid is 0 the convolution has none: its steps take
// the images x, or the output's gradient dz, in the grid's place.
type Memory struct {
	InputGrid, OutputGrid, Forward, InputGrad, KernelGrad int
}

// ErrUnsupported is returned for a convolution Plan refuses.
var ErrUnsupported = errors.New("conv: the kernels do not compute this convolution without patches")

// minChannels is the fewest input channels Plan takes. A first layer's
// images of 3 channels make kernel rows of 9 values, which fill the tiles
// of the kernel's gradient poorly (a third, where its patches' product
// fills more than half), and patches cheap to write.
const minChannels = 8

// stride is the convolution's stride: 1 where Stride is 0.
func (s Shape) stride() int { return max(1, s.Stride) }

// ceilDiv is a/b rounded up, for a >= 0 and b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// grid returns the padded image's height and width: for a stride s > 1,
// at least s more rows than the windows read (the output gradient's grid
// needs a zero row between images), multiples of s.
func (s Shape) grid() (hp, wp int) {
	st := s.stride()
	if st == 1 {
		return s.OH + s.KH - 1, s.OW + s.KW - 1
	}
	hp = ceilDiv(max(st*(s.OH-1)+s.KH, s.PadTop+s.H, st*s.OH), st) * st
	wp = ceilDiv(max(st*(s.OW-1)+s.KW, s.PadLeft+s.W), st) * st
	return hp, wp
}

// taps returns how many kernel rows and columns, at most, land on one
// pixel: ceil(KH/s) and ceil(KW/s) (KH and KW for stride 1).
func (s Shape) taps() (j, d int) {
	st := s.stride()
	return ceilDiv(s.KH, st), ceilDiv(s.KW, st)
}

// margin is the number of zero grid pixels before the first image and
// after the last: as far as the input's gradient reaches back from a
// pixel through the output gradient's grid, s pixels a position (a
// multiple of s).
func (s Shape) margin() int {
	_, wp := s.grid()
	j, d := s.taps()
	return s.stride() * ((j-1)*wp + d - 1)
}

// positions is the number of pixels of the images' grid; the output
// gradient's grid has positions()/s. After the last image come margin()
// zero pixels, or for a stride s > 1 as far as the kernel's gradient
// reads past it (its rows of positions of s pixels run on past the
// output's, KH-1 rows and KW pixels on, where the gradient is zero).
func (s Shape) positions() int {
	hp, wp := s.grid()
	tail := s.margin()
	if st := s.stride(); st > 1 {
		tail = ceilDiv(max(tail, (s.KH-1)*wp+s.KW), st) * st
	}
	return s.margin() + tail + s.Batch*hp*wp
}

// phases returns, for each of the s phases ry of the image's rows (those
// whose padded row is ry modulo s), how many kernel rows land on them
// (ceil((KH-ry)/s), 0 past the kernel).
func (s Shape) phases() []int {
	st := s.stride()
	steps := make([]int, st)
	for ry := range steps {
		if ry < s.KH {
			steps[ry] = ceilDiv(s.KH-ry, st)
		}
	}
	return steps
}

// check reports what is wrong with s, or nil.
func (s Shape) check() error {
	hp, wp := s.grid()
	switch {
	case s.Batch <= 0 || s.H <= 0 || s.W <= 0 || s.C <= 0 || s.Filters <= 0 || s.KH <= 0 || s.KW <= 0 || s.OH <= 0 || s.OW <= 0 || s.Stride < 0:
		return fmt.Errorf("conv: convolution %+v: every size must be positive", s)
	case s.PadTop < 0 || s.PadLeft < 0 || s.PadTop+s.H > hp || s.PadLeft+s.W > wp:
		return fmt.Errorf("conv: convolution %+v: the padded image (%d×%d) does not hold the image at its padding", s, hp, wp)
	}
	return nil
}

// Plan returns the memory the convolution needs for s on p, and false
// when p does not compute it: fewer than 8 channels, a shape too small
// for p's tiles, or a stride s > 1 with a 1×1 kernel or on images whose
// width or left padding is not a multiple of s.
func Plan(p Products, s Shape) (Memory, bool) {
	if s.check() != nil || s.C < minChannels {
		return Memory{}, false
	}
	hp, wp := s.grid()
	if st := s.stride(); st > 1 {
		// Outputs and the input's gradient a row at a time, s pixels a
		// position of the latter.
		// A 1×1 kernel of stride s reads one pixel in s² (a ResNet's
		// projection shortcuts): its patches, those pixels copied, cost
		// less than a grid of them all.
		if s.KH*s.KW == 1 || s.W%st != 0 || s.PadLeft%st != 0 || p.ConvWork(s.OW, s.Filters) == 0 || p.ConvWork(s.W/st, st*s.C) == 0 ||
			!p.ConvFits(s.OW, s.KW*s.C, s.Filters) || !p.ConvFits(s.W/st, s.KW*s.C, st*s.C) {
			return Memory{}, false
		}
		mem := Memory{InputGrid: s.positions() * s.C, OutputGrid: s.positions() / st * s.Filters}
		_, d := s.taps()
		for _, j := range s.phases() {
			mem.InputGrad += j * d * s.Filters * st * s.C
		}
		return mem, true
	}
	if !p.ConvFits(s.OH*wp, s.KW*s.C, s.Filters) || !p.ConvFits(s.H*wp, s.KW*s.C, s.C) {
		return Memory{}, false
	}
	img := s.Batch * hp * wp
	if _, ok := s.winograd(p); ok {
		// No grids: the tiles read the images and the output's gradient
		// in place.
		fwd, back := s.tilings()
		return Memory{
			Forward:    16*s.C*s.Filters + p.Workers()*fwd.scratch(),
			InputGrad:  s.KH*s.KW*s.Filters*s.C + 16*s.C*s.Filters + p.Workers()*back.scratch(),
			KernelGrad: fwd.kernelGradScratch(p.Workers()),
		}, true
	}
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

// tilings returns the Winograd tilings of a stride-1 convolution's
// forward pass (from the images) and of its input's gradient (from the
// output's gradient).
func (s Shape) tilings() (forward, inputGrad tiling) {
	return newTiling(s.Batch, s.C, s.Filters, s.OH, s.OW), newTiling(s.Batch, s.Filters, s.C, s.H, s.W)
}

// images is x (the images) as the forward tiling reads them: each tile's
// window from its first output's pixel less the padding.
func (s Shape) images(x []float32) image {
	return image{v: x, h: s.H, w: s.W, ch: s.C, top: s.PadTop, left: s.PadLeft}
}

// outputGrad is dz (the output's gradient) as the input gradient's tiling
// reads it: the window turned, reaching back KH-1 rows and KW-1 columns
// from each pixel of the image, less the padding.
func (s Shape) outputGrad(dz []float32) image {
	return image{v: dz, h: s.OH, w: s.OW, ch: s.Filters, top: s.KH - 1 - s.PadTop, left: s.KW - 1 - s.PadLeft}
}

// gridValues is what a step reads as the images' grid (images) or the
// output gradient's (else): the grid's values of mem, or where the
// convolution has no grid (Winograd's), the tensor itself.
func (s Shape) gridValues(mem Memory, images bool) int {
	switch {
	case images && mem.InputGrid > 0:
		return mem.InputGrid
	case images:
		return s.Batch * s.H * s.W * s.C
	case mem.OutputGrid > 0:
		return mem.OutputGrid
	}
	return s.Batch * s.OH * s.OW * s.Filters
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
// values of Plan): each at its padding, zeros elsewhere. Where Plan's
// InputGrid is 0 it does nothing: the steps read x itself.
func InputGrid(p Products, s Shape, x, grid []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("input grid", []int{len(x), len(grid)}, []int{s.Batch * s.H * s.W * s.C, mem.InputGrid}); err != nil {
		return err
	}
	if mem.InputGrid == 0 {
		return nil // no grid: the steps read x itself
	}
	hp, wp := s.grid()
	place(p.Workers(), s.Batch, x, s.H, s.W, s.C, s.PadTop, s.PadLeft, hp, wp, s.margin(), s.positions(), grid)
	return nil
}

// OutputGrid lays the output's gradient dz (Batch·OH·OW·Filters values) on
// grid (OutputGrid values of Plan), zeros elsewhere. Where Plan's
// OutputGrid is 0 it does nothing: the steps read dz itself.
func OutputGrid(p Products, s Shape, dz, grid []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("output grid", []int{len(dz), len(grid)}, []int{s.Batch * s.OH * s.OW * s.Filters, mem.OutputGrid}); err != nil {
		return err
	}
	if mem.OutputGrid == 0 {
		return nil // no grid: the steps read dz itself
	}
	// Stride s: positions of s pixels, hp/s rows of wp a padded image
	// (output row oy where the image grid's row s·oy starts).
	hp, wp := s.grid()
	st := s.stride()
	place(p.Workers(), s.Batch, dz, s.OH, s.OW, s.Filters, 0, 0, hp/st, wp, s.margin()/st, s.positions()/st, grid)
	return nil
}

// place writes the batch h×w images of ch channels in v on grid, their top
// left pixel at (top, left) of each padded image of hp rows of wp
// positions, margin positions before the first, total positions in all,
// and zeros everywhere else.
func place(workers, batch int, v []float32, h, w, ch, top, left, hp, wp, margin, total int, grid []float32) {
	img := hp * wp
	clear(grid[:margin*ch])
	clear(grid[(margin+batch*img)*ch : total*ch])
	matrix.Parallel(workers, batch, 1, func(_, lo, hi int) {
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
		[]int{s.gridValues(mem, true), s.KH * s.KW * s.C * s.Filters, s.Batch * s.OH * s.OW * s.Filters, mem.Forward}); err != nil {
		return err
	}
	if bias != nil && len(bias) < s.Filters {
		return fmt.Errorf("conv: convolution forward %+v: %d bias values for %d filters", s, len(bias), s.Filters)
	}
	hp, wp := s.grid()
	img, margin, f, st := hp*wp, s.margin(), s.Filters, s.stride()
	if bias != nil {
		bias = bias[:f]
	}
	if w, ok := s.winograd(p); ok {
		u := scratch[:16*s.C*f]
		w.WinogradKernel(kernel, s.C, f, u)
		t, _ := s.tilings()
		t.run(w, s.images(grid), u, z, bias, relu, nil, scratch[len(u):])
		return nil
	}
	if st > 1 || byRows(p, s.OH, s.OW, wp, f) {
		// Output row u (image u/OH, row u%OH) straight into z, from grid
		// row s·(u%OH), in positions of s pixels.
		p.ConvRows(s.Batch*s.OH, s.OW, f, func(u int) int { return u * s.OW },
			func(u, q int) int { return (margin+u/s.OH*img+u%s.OH*st*wp)/st + q },
			s.KH, s.KW*s.C, st*s.C, wp/st, grid, kernel, z, bias, relu, nil)
		return nil
	}
	// Every position of the output's rows, from the image's corner, then
	// the output's positions copied back from the grid.
	p.ConvRows(s.Batch, s.OH*wp, f, func(b int) int { return b * img }, func(b, q int) int { return margin + b*img + q },
		s.KH, s.KW*s.C, s.C, wp, grid, kernel, scratch[:s.Batch*img*f], bias, relu, nil)
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
	return inputGrad(p, s, grid, kernel, nil, dx, scratch)
}

// InputGradReLU is InputGrad through a ReLU whose output are the images
// themselves, y (Batch·H·W·C values): the gradient where y is above 0,
// else +0, each part while it is in the caches.
func InputGradReLU(p Products, s Shape, grid, kernel, y, dx, scratch []float32) error {
	if len(y) < s.Batch*s.H*s.W*s.C {
		return fmt.Errorf("conv: convolution input gradient %+v through a ReLU: %d values of its output, want %d", s, len(y), s.Batch*s.H*s.W*s.C)
	}
	return inputGrad(p, s, grid, kernel, y, dx, scratch)
}

func inputGrad(p Products, s Shape, grid, kernel, y, dx, scratch []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("input gradient", []int{len(grid), len(kernel), len(dx), len(scratch)},
		[]int{s.gridValues(mem, false), s.KH * s.KW * s.C * s.Filters, s.Batch * s.H * s.W * s.C, mem.InputGrad}); err != nil {
		return err
	}
	if s.stride() > 1 {
		s.stridedInputGrad(p, grid, kernel, y, dx, scratch)
		return nil
	}
	hp, wp := s.grid()
	img, margin, c, f := hp*wp, s.margin(), s.C, s.Filters
	wino, isWino := s.winograd(p)
	rows := byRows(p, s.H, s.W, wp, c)
	var out []float32
	if !rows && !isWino {
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
	if isWino {
		u := scratch[len(turned):][:16*f*c]
		wino.WinogradKernel(turned, f, c, u)
		_, t := s.tilings()
		t.run(wino, s.outputGrad(grid), u, dx, nil, false, y, scratch[len(turned)+len(u):])
		return nil
	}
	// The window turned reaches back margin positions from the pixel.
	back := margin - (s.KH-1)*wp - (s.KW - 1)
	if rows {
		// Image row u (image u/H, row u%H) straight into dx.
		p.ConvRows(s.Batch*s.H, s.W, c, func(u int) int { return u * s.W },
			func(u, q int) int { return back + u/s.H*img + (u%s.H+s.PadTop)*wp + s.PadLeft + q }, s.KH, s.KW*f, f, wp,
			grid, turned, dx, nil, false, y)
		return nil
	}
	// Every position of the image's rows, every column of the grid, then
	// the image's pixels copied back from the grid.
	p.ConvRows(s.Batch, s.H*wp, c, func(b int) int { return b*img + s.PadTop*wp },
		func(b, q int) int { return back + b*img + s.PadTop*wp + q }, s.KH, s.KW*f, f, wp,
		grid, turned, out, nil, false, nil)
	matrix.Parallel(p.Workers(), s.Batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			for r := 0; r < s.H; r++ {
				at, from := ((b*s.H+r)*s.W)*c, (b*img+(r+s.PadTop)*wp+s.PadLeft)*c
				if y != nil {
					p.MaskPositive(y[at:][:s.W*c], out[from:], dx[at:])
				} else {
					copy(dx[at:][:s.W*c], out[from:][:s.W*c])
				}
			}
		}
	})
	return nil
}

// stridedInputGrad is InputGrad for a stride s > 1 (see the package
// comment): the image's rows of each phase ry (padded row ry modulo s),
// s pixels a position, from the output rows whose kernel rows land on
// them, with kernels of their taps laid out in scratch; with y, through a
// ReLU whose output y is (InputGradReLU).
func (s Shape) stridedInputGrad(p Products, grid, kernel, y, dx, scratch []float32) {
	hp, wp := s.grid()
	st, c, f := s.stride(), s.C, s.Filters
	img, margin, n := hp*wp, s.margin(), st*s.C
	_, d := s.taps()
	for ry, j := range s.phases() {
		y0 := ((ry-s.PadTop)%st + st) % st // the phase's first image row
		if y0 >= s.H {
			continue
		}
		rows := (s.H - y0 + st - 1) / st
		if j == 0 {
			// No kernel row lands on these image rows.
			for u := 0; u < s.Batch*rows; u++ {
				row := y0 + u%rows*st
				clear(dx[((u/rows*s.H+row)*s.W)*c:][:s.W*c])
			}
			continue
		}
		// Step r reads output row m-j+1+r (kernel row s·(j-1-r)+ry) for
		// the image's padded row s·m+ry; in each, the d output positions
		// ending at the pixels' (tap column s·(d-1-e)+rx for output e of
		// them and pixel rx of the s): j·d·F rows of s·C.
		k := scratch[:j*d*f*n]
		scratch = scratch[len(k):]
		for r := 0; r < j; r++ {
			ky := st*(j-1-r) + ry
			for e := 0; e < d; e++ {
				for fi := 0; fi < f; fi++ {
					row := k[((r*d+e)*f+fi)*n:][:n]
					for rx := 0; rx < st; rx++ {
						kx := st*(d-1-e) + rx
						for ci := 0; ci < c; ci++ {
							v := float32(0)
							if kx < s.KW {
								v = kernel[((ky*s.KW+kx)*c+ci)*f+fi]
							}
							row[rx*c+ci] = v
						}
					}
				}
			}
		}
		p.ConvRows(s.Batch*rows, s.W/st, n,
			func(u int) int { return (u/rows*s.H + y0 + u%rows*st) * s.W / st },
			func(u, q int) int {
				m := (y0 + u%rows*st + s.PadTop) / st
				return margin/st + u/rows*img/st + (m-j+1)*wp + q + s.PadLeft/st - d + 1
			},
			j, d*f, f, wp, grid, k, dx, nil, false, y)
	}
}

// KernelGrad computes the gradient of the kernel, dk (KH·KW·C rows of
// Filters), from the images' grid (InputGrid) and the output gradient's
// (OutputGrid), using scratch (KernelGrad values of Plan): for kernel row
// dy, the windows' rows read in place from the image grid, transposed,
// times the gradient, summed over every grid position; or Winograd's.
func KernelGrad(p Products, s Shape, images, grad, dk, scratch []float32) error {
	mem, err := s.memory(p)
	if err != nil {
		return err
	}
	if err := s.sizes("kernel gradient", []int{len(images), len(grad), len(dk), len(scratch)},
		[]int{s.gridValues(mem, true), s.gridValues(mem, false), s.KH * s.KW * s.C * s.Filters, mem.KernelGrad}); err != nil {
		return err
	}
	if w, ok := s.winograd(p); ok {
		t, _ := s.tilings()
		t.kernelGrad(w, s.images(images), grad, dk, scratch)
		return nil
	}
	hp, wp := s.grid()
	margin, img, st := s.margin(), hp*wp, s.stride()
	segs := make([]int, s.KH)
	for dy := range segs {
		segs[dy] = (margin + dy*wp) * s.C
	}
	// Only the output's rows of each image: the gradient is zero on the
	// grid's rows after them, and on the positions after the output's in
	// each row (for stride s, rows of positions of s pixels).
	ranges := make([][2]int, s.Batch)
	for b := range ranges {
		ranges[b] = [2]int{b * img / st, b*img/st + s.OH*wp}
	}
	p.ConvKernelRows(segs, s.KW*s.C, s.Filters, ranges, s.OW, wp, images, st*s.C, grad[margin/st*s.Filters:], s.Filters, dk)
	return nil
}
