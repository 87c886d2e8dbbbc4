package ops

import (
	"fmt"
	"runtime"

	mat "github.com/gokeras/gokeras/internal/kernels/matrix"
)

// WindowSpec is how a window slides over images, as Keras' convolution and
// pooling layers take it: the window's size, its strides, its dilation and
// the padding ("valid": no padding; "same": zeros around the image so that
// the output has ceil(size/stride) positions, the extra row or column at
// the bottom and right, as TensorFlow pads).
type WindowSpec struct {
	Kernel   [2]int // height, width
	Strides  [2]int // zero: 1
	Dilation [2]int // zero: 1
	Same     bool
}

// Window is a WindowSpec placed on images of a given size: everything the
// kernels need to know. Images are channels-last, (Batch, H, W, C).
type Window struct {
	Batch, H, W, C       int
	KH, KW               int
	StrideH, StrideW     int
	DilationH, DilationW int
	PadTop, PadLeft      int
	// OH, OW are the output's height and width.
	OH, OW int
}

// On places the window on a batch of h×w images of c channels.
func (s WindowSpec) On(batch, h, w, c int) (Window, error) {
	one := func(v int) int {
		if v == 0 {
			return 1
		}
		return v
	}
	win := Window{Batch: batch, H: h, W: w, C: c, KH: s.Kernel[0], KW: s.Kernel[1],
		StrideH: one(s.Strides[0]), StrideW: one(s.Strides[1]),
		DilationH: one(s.Dilation[0]), DilationW: one(s.Dilation[1])}
	if batch <= 0 || h <= 0 || w <= 0 || c <= 0 {
		return Window{}, fmt.Errorf("images of shape (%d, %d, %d, %d): every dimension must be positive", batch, h, w, c)
	}
	if win.KH <= 0 || win.KW <= 0 || win.StrideH <= 0 || win.StrideW <= 0 || win.DilationH <= 0 || win.DilationW <= 0 {
		return Window{}, fmt.Errorf("window %v, strides %v, dilation %v: each must be positive", s.Kernel, s.Strides, s.Dilation)
	}
	var err error
	win.OH, win.PadTop, err = placeAxis("height", h, win.KH, win.StrideH, win.DilationH, s.Same)
	if err != nil {
		return Window{}, err
	}
	win.OW, win.PadLeft, err = placeAxis("width", w, win.KW, win.StrideW, win.DilationW, s.Same)
	if err != nil {
		return Window{}, err
	}
	return win, nil
}

// placeAxis returns the output size along one axis and the padding before
// the first element, by TensorFlow's rules.
func placeAxis(axis string, size, k, stride, dilation int, same bool) (out, padBefore int, err error) {
	span := (k-1)*dilation + 1
	if same {
		out = (size + stride - 1) / stride
		pad := max((out-1)*stride+span-size, 0)
		return out, pad / 2, nil
	}
	if size < span {
		return 0, 0, fmt.Errorf("the window spans %d along the %s, more than the input's %d: use padding \"same\" or a smaller window", span, axis, size)
	}
	return (size-span)/stride + 1, 0, nil
}

// String describes the window, for the ops' String and hash.
func (w Window) String() string {
	return fmt.Sprintf("%dx%dx%dx%d k%dx%d s%dx%d d%dx%d p%d,%d -> %dx%d", w.Batch, w.H, w.W, w.C,
		w.KH, w.KW, w.StrideH, w.StrideW, w.DilationH, w.DilationW, w.PadTop, w.PadLeft, w.OH, w.OW)
}

// InputSize is the number of values of the input images.
func (w Window) InputSize() int { return w.Batch * w.H * w.W * w.C }

// Positions is the number of window positions over the batch: Batch·OH·OW.
func (w Window) Positions() int { return w.Batch * w.OH * w.OW }

// PatchSize is the number of values one window covers: KH·KW·C.
func (w Window) PatchSize() int { return w.KH * w.KW * w.C }

// parallel runs body over ranges of n items (images, chunks) of about
// valuesPer values each, on every core when the work is large enough to
// pay for it.
func parallel(n, valuesPer int, body func(lo, hi int)) {
	workers := 1
	if n > 1 && n*valuesPer >= 1<<15 {
		workers = runtime.GOMAXPROCS(0)
	}
	mat.Parallel(workers, n, 1, func(_, lo, hi int) { body(lo, hi) })
}
