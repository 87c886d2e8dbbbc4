package blas

import (
	"errors"
	"fmt"

	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// Convolutions without patches. A convolution's products are usually
// computed on its patches (one row per window, im2col): what gokeras'
// ops do on every machine. For stride-1 convolutions without dilation
// the AVX-512 kernels compute some of them from the images themselves,
// reading each window in place; these methods expose that, and say when
// it is not available (Scratch zero: other CPUs, the kernels turned off,
// images too small), for the caller to use patches instead.

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

func (s ConvShape) kernels() avx512.ConvShape { return avx512.ConvShape(s) }

// ErrNoConv is returned by the convolution methods where m cannot compute
// the convolution without patches (Scratch would say zero).
var ErrNoConv = errors.New("blas: this convolution has no kernels without patches here")

// ConvInputGradScratch returns the float32s of scratch memory
// ConvInputGrad needs for s, or zero when m cannot compute it: then the
// caller computes the gradient of the patches and scatters it.
func (m *Multiplier) ConvInputGradScratch(s ConvShape) int {
	if !m.kernels || m.avx2 {
		return 0
	}
	return avx512.ConvInputGradScratch(s.kernels())
}

// ConvInputGrad overwrites dx (Batch·H·W·C values) with the gradient of
// convolution s's input given its output's gradient dz (Batch·OH·OW·
// Filters values) and its kernel, using scratch (ConvInputGradScratch(s)
// values, overwritten). It returns ErrNoConv where that is zero.
func (m *Multiplier) ConvInputGrad(s ConvShape, dz, kernel, dx, scratch []float32) error {
	if m.ConvInputGradScratch(s) == 0 {
		return fmt.Errorf("%w (%s)", ErrNoConv, m)
	}
	ws := m.free.get(avx512.NewWorkspace)
	defer m.free.put(ws)
	if err := ws.ConvInputGrad(s.kernels(), dz, kernel, dx, scratch); err != nil {
		return fmt.Errorf("blas: %w", err)
	}
	return nil
}
