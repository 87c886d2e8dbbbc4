package blas

import (
	"errors"
	"fmt"

	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// Convolutions without patches. A convolution's products are usually
// computed on its patches (one row per window, im2col): what gokeras' ops
// do on every machine. For stride-1 convolutions without dilation the
// AVX-512 kernels compute them from the images themselves, laid on a grid
// of padded images, reading each window in place. Conv says whether they
// can and how much memory they need; where it says no (other CPUs, the
// kernels turned off, images too small), callers use the patches.
//
// The steps of a training step: ConvInputGrid lays the images on their
// grid, which ConvForward and ConvKernelGrad read; ConvOutputGrid lays
// the output's gradient on its grid, which ConvKernelGrad and
// ConvInputGrad read.

// ConvShape is a convolution with stride 1 and no dilation of Batch
// channels-last images of H×W×C: Filters filters of KH×KW, PadTop rows
// and PadLeft columns of zeros before each image (TensorFlow's padding),
// and outputs of OH×OW. Its kernel is KH·KW·C rows of Filters values
// (HWIO order).
type ConvShape struct {
	Batch, H, W, C  int
	Filters         int
	KH, KW          int
	PadTop, PadLeft int
	OH, OW          int
}

// ConvMemory is, in float32s, what the convolution methods need: the
// grids of the images (InputGrid) and of the output's gradient
// (OutputGrid), and the scratch memory of ConvForward and ConvInputGrad.
type ConvMemory struct {
	InputGrid, OutputGrid, Forward, InputGrad int
}

func (s ConvShape) kernels() avx512.ConvShape { return avx512.ConvShape(s) }

// ErrNoConv is returned by the convolution methods where m cannot compute
// the convolution without patches (Conv would say false).
var ErrNoConv = errors.New("blas: this convolution has no kernels without patches here")

// Conv returns the memory the convolution methods need for s, and false
// where m cannot compute s without patches.
func (m *Multiplier) Conv(s ConvShape) (ConvMemory, bool) {
	if !m.kernels || m.avx2 {
		return ConvMemory{}, false
	}
	mem, ok := avx512.Conv(s.kernels())
	return ConvMemory(mem), ok
}

// conv runs f with a workspace of the AVX-512 kernels, or returns
// ErrNoConv.
func (m *Multiplier) conv(s ConvShape, f func(ws *avx512.Workspace, s avx512.ConvShape) error) error {
	if _, ok := m.Conv(s); !ok {
		return fmt.Errorf("%w (%s)", ErrNoConv, m)
	}
	ws := m.free.get(avx512.NewWorkspace)
	defer m.free.put(ws)
	if err := f(ws, s.kernels()); err != nil {
		return fmt.Errorf("blas: %w", err)
	}
	return nil
}

// ConvInputGrid lays the images x (Batch·H·W·C values) on grid
// (InputGrid values): each at its padding, zeros elsewhere.
func (m *Multiplier) ConvInputGrid(s ConvShape, x, grid []float32) error {
	return m.conv(s, func(ws *avx512.Workspace, s avx512.ConvShape) error { return ws.ConvInputGrid(s, x, grid) })
}

// ConvOutputGrid lays the output's gradient dz (Batch·OH·OW·Filters
// values) on grid (OutputGrid values), zeros elsewhere.
func (m *Multiplier) ConvOutputGrid(s ConvShape, dz, grid []float32) error {
	return m.conv(s, func(ws *avx512.Workspace, s avx512.ConvShape) error { return ws.ConvOutputGrid(s, dz, grid) })
}

// ConvForward writes the convolution's output z (Batch·OH·OW·Filters
// values) from the images' grid and the kernel, plus bias (a value a
// filter, or nil), using scratch (Forward values).
func (m *Multiplier) ConvForward(s ConvShape, grid, kernel, bias, z, scratch []float32) error {
	return m.conv(s, func(ws *avx512.Workspace, s avx512.ConvShape) error {
		return ws.ConvForward(s, grid, kernel, bias, z, scratch)
	})
}

// ConvInputGrad overwrites dx (Batch·H·W·C values) with the gradient of
// the convolution's input given its output gradient's grid and its
// kernel, using scratch (InputGrad values).
func (m *Multiplier) ConvInputGrad(s ConvShape, grid, kernel, dx, scratch []float32) error {
	return m.conv(s, func(ws *avx512.Workspace, s avx512.ConvShape) error {
		return ws.ConvInputGrad(s, grid, kernel, dx, scratch)
	})
}

// ConvKernelGrad overwrites dk (KH·KW·C rows of Filters) with the
// gradient of the convolution's kernel given the images' grid and the
// output gradient's.
func (m *Multiplier) ConvKernelGrad(s ConvShape, images, grad, dk []float32) error {
	return m.conv(s, func(ws *avx512.Workspace, s avx512.ConvShape) error {
		return ws.ConvKernelGrad(s, images, grad, dk)
	})
}
