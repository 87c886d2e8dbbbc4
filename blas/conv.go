package blas

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
	"github.com/gokeras/gokeras/internal/kernels/conv"
)

// Convolutions without patches. A convolution's products are usually
// computed on its patches (one row per window, im2col): what gokeras' ops
// do on every machine. For convolutions without dilation the kernels
// (AVX-512, else AVX2) compute them from the images themselves, laid on a
// grid of padded images, reading each window in place. Conv says whether
// they can and how much memory they need; where it says no (no kernels,
// or the kernels turned off; images of fewer than 8 channels or too
// small; a stride s > 1 on images whose width or left padding is not a
// multiple of s), callers use the patches. A 3×3 convolution of stride 1
// on channels and filters in multiples of 16 runs in Winograd's form
// F(2×2, 3×3), on the AVX-512 kernels and the AVX2 ones alike (2.25 times
// fewer multiplications; its rounding differs from the direct sums within
// float32's error of sums of that scale).
//
// The steps of a training step: ConvInputGrid lays the images on their
// grid, which ConvForward and ConvKernelGrad read; ConvOutputGrid lays
// the output's gradient on its grid, which ConvKernelGrad and
// ConvInputGrad read. Winograd's convolutions have no grids (ConvMemory's
// InputGrid and OutputGrid are 0): their steps read the images and the
// output's gradient themselves, passed where the grids would be.

// ConvShape is a convolution without dilation of Batch channels-last
// images of H×W×C: Filters filters of KH×KW moved Stride pixels at a time
// along both axes (0 means 1), PadTop rows and PadLeft columns of zeros
// before each image (TensorFlow's padding), and outputs of OH×OW. Its
// kernel is KH·KW·C rows of Filters values (HWIO order).
type ConvShape struct {
	Batch, H, W, C  int
	Filters         int
	KH, KW          int
	Stride          int
	PadTop, PadLeft int
	OH, OW          int
}

// ConvMemory is, in float32s, what the convolution methods need: the
// grids of the images (InputGrid) and of the output's gradient
// (OutputGrid; 0 for none, the tensor itself read in its place), and the
// scratch memory of ConvForward, ConvInputGrad and ConvKernelGrad.
type ConvMemory struct {
	InputGrid, OutputGrid, Forward, InputGrad, KernelGrad int
}

// ErrNoConv is returned by the convolution methods where m cannot compute
// the convolution without patches (Conv would say false).
var ErrNoConv = errors.New("blas: this convolution has no kernels without patches here")

// Conv returns the memory the convolution methods need for s, and false
// where m cannot compute s without patches.
func (m *Multiplier) Conv(s ConvShape) (ConvMemory, bool) {
	var mem conv.Memory
	ok := false
	m.conv(func(p conv.Products) error {
		mem, ok = conv.Plan(p, conv.Shape(s))
		return nil
	})
	return ConvMemory(mem), ok
}

// conv runs f with the products of m's kernels, or returns ErrNoConv.
func (m *Multiplier) conv(f func(p conv.Products) error) error {
	switch {
	case m.kernels && m.avx2:
		ws := m.free2.get(runtime.GOMAXPROCS(0), avx2.NewWorkspace)
		defer m.free2.put(ws)
		return f(ws)
	case m.kernels:
		ws := m.free.get(runtime.GOMAXPROCS(0), avx512.NewWorkspace)
		defer m.free.put(ws)
		return f(ws)
	}
	return fmt.Errorf("%w (%s)", ErrNoConv, m)
}

// run runs a convolution step on m's kernels.
func (m *Multiplier) run(s ConvShape, step func(p conv.Products, s conv.Shape) error) error {
	return m.conv(func(p conv.Products) error {
		if _, ok := conv.Plan(p, conv.Shape(s)); !ok {
			return fmt.Errorf("%w: %+v (%s)", ErrNoConv, s, m)
		}
		if err := step(p, conv.Shape(s)); err != nil {
			return fmt.Errorf("blas: %w", err)
		}
		return nil
	})
}

// ConvInputGrid lays the images x (Batch·H·W·C values) on grid
// (InputGrid values): each at its padding, zeros elsewhere.
func (m *Multiplier) ConvInputGrid(s ConvShape, x, grid []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error { return conv.InputGrid(p, s, x, grid) })
}

// ConvOutputGrid lays the output's gradient dz (Batch·OH·OW·Filters
// values) on grid (OutputGrid values), zeros elsewhere.
func (m *Multiplier) ConvOutputGrid(s ConvShape, dz, grid []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error { return conv.OutputGrid(p, s, dz, grid) })
}

// ConvForward writes the convolution's output z (Batch·OH·OW·Filters
// values) from the images' grid and the kernel, plus bias (a value a
// filter, or nil), using scratch (Forward values).
func (m *Multiplier) ConvForward(s ConvShape, grid, kernel, bias, z, scratch []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error { return conv.Forward(p, s, grid, kernel, bias, z, scratch) })
}

// ConvForwardReLU is ConvForward followed by the ReLU activation (the
// value where it is above 0, else 0), applied as each tile of z is stored.
func (m *Multiplier) ConvForwardReLU(s ConvShape, grid, kernel, bias, z, scratch []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error {
		return conv.ForwardReLU(p, s, grid, kernel, bias, z, scratch)
	})
}

// ConvInputGrad overwrites dx (Batch·H·W·C values) with the gradient of
// the convolution's input given its output gradient's grid and its
// kernel, using scratch (InputGrad values).
func (m *Multiplier) ConvInputGrad(s ConvShape, grid, kernel, dx, scratch []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error { return conv.InputGrad(p, s, grid, kernel, dx, scratch) })
}

// ConvInputGradReLU is ConvInputGrad through a ReLU whose output are the
// convolution's images, y (Batch·H·W·C values): the gradient where y is
// above 0, else +0, applied as each part of dx is computed.
func (m *Multiplier) ConvInputGradReLU(s ConvShape, grid, kernel, y, dx, scratch []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error {
		return conv.InputGradReLU(p, s, grid, kernel, y, dx, scratch)
	})
}

// ConvKernelGrad overwrites dk (KH·KW·C rows of Filters) with the
// gradient of the convolution's kernel given the images' grid and the
// output gradient's, using scratch (KernelGrad values).
func (m *Multiplier) ConvKernelGrad(s ConvShape, images, grad, dk, scratch []float32) error {
	return m.run(s, func(p conv.Products, s conv.Shape) error { return conv.KernelGrad(p, s, images, grad, dk, scratch) })
}
