package layers

import (
	"fmt"
	"strings"

	"github.com/gokeras/gokeras/ops"
)

// window holds the options of a layer that slides a window over its
// input: a convolution's or a pooling's.
type window struct {
	rank     int // 1 for Conv1D and the 1D poolings, 2 for the 2D ones
	size     [2]int
	strides  [2]int // zero: the pooling size (pooling) or 1 (convolution)
	dilation [2]int
	same     bool
	err      error // of an option given bad values
}

// WindowOption sets how a convolution or pooling layer slides its window:
// Padding, Strides or DilationRate.
type WindowOption func(*window)

func (f WindowOption) applyConv(c *ConvLayer) { f(&c.window) }
func (f WindowOption) applyPool(p *PoolLayer) { f(&p.window) }

// Padding is Keras' padding argument: "valid" (the default: no padding,
// the output shrinks) or "same" (zeros around the input, so that with
// strides 1 the output has the input's size; the extra row or column goes
// at the bottom and right, as TensorFlow pads).
func Padding(padding string) WindowOption {
	return func(w *window) {
		switch strings.ToLower(padding) {
		case "valid":
			w.same = false
		case "same":
			w.same = true
		default:
			w.fail(fmt.Errorf(`padding %q: want "valid" or "same"`, padding))
		}
	}
}

// Strides is Keras' strides argument: one value for every axis, or one
// per axis (height, width).
func Strides(s ...int) WindowOption {
	return func(w *window) { w.strides = w.pair("strides", s) }
}

// DilationRate is Keras' dilation_rate argument for convolutions: one value
// for every axis, or one per axis.
func DilationRate(d ...int) WindowOption {
	return func(w *window) { w.dilation = w.pair("dilation_rate", d) }
}

func (w *window) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// pair reads one value per axis from an option's arguments.
func (w *window) pair(what string, v []int) [2]int {
	for _, x := range v {
		if x <= 0 {
			w.fail(fmt.Errorf("%s %v: each value must be positive", what, v))
			return [2]int{}
		}
	}
	switch {
	case len(v) == 1:
		return [2]int{v[0], v[0]}
	case len(v) == 2 && w.rank == 2:
		return [2]int{v[0], v[1]}
	}
	w.fail(fmt.Errorf("%s %v: give 1 value, or one per axis (%d)", what, v, w.rank))
	return [2]int{}
}

// spec is the ops.WindowSpec of the window on images: a 1D window (over
// the steps of a sequence) is a 2D window of height 1.
func (w *window) spec() ops.WindowSpec {
	s := ops.WindowSpec{Kernel: w.size, Strides: w.strides, Dilation: w.dilation, Same: w.same}
	for i := range 2 {
		s.Strides[i] = max(s.Strides[i], 1)
		s.Dilation[i] = max(s.Dilation[i], 1)
	}
	if w.rank == 1 {
		s.Kernel[0], s.Strides[0], s.Dilation[0] = 1, 1, 1
	}
	return s
}

// images is the (height, width, channels) view of a sample of the given
// shape: a sequence (steps, channels) is one row of pixels.
func (w *window) images(shape []int) (h, wd, c int, ok bool) {
	if len(shape) != w.rank+1 {
		return 0, 0, 0, false
	}
	if w.rank == 1 {
		return 1, shape[0], shape[1], true
	}
	return shape[0], shape[1], shape[2], true
}

// sampleShape is the layer's output shape for an output of oh×ow×c.
func (w *window) sampleShape(oh, ow, c int) []int {
	if w.rank == 1 {
		return []int{ow, c}
	}
	return []int{oh, ow, c}
}

// outputSize is the (height, width) of an output of the given sample
// shape: a sequence's is one row.
func (w *window) outputSize(sample []int) [2]int {
	if w.rank == 1 {
		return [2]int{1, sample[0]}
	}
	return [2]int{sample[0], sample[1]}
}

// inputKind names the samples a window layer takes, for errors.
func (w *window) inputKind() string {
	if w.rank == 1 {
		return "sequences, shape (None, steps, channels)"
	}
	return "images, shape (None, height, width, channels)"
}

// axes lists a window's per-axis values as Keras does: one per axis, so
// one for a 1D layer.
func (w *window) axes(v [2]int) []int {
	if w.rank == 1 {
		return []int{v[1]}
	}
	return []int{v[0], v[1]}
}

// paddingName is the Keras padding argument.
func (w *window) paddingName() string {
	if w.same {
		return "same"
	}
	return "valid"
}

// atLeastOne replaces a window's zero (default) values with 1.
func atLeastOne(v [2]int) [2]int { return [2]int{max(v[0], 1), max(v[1], 1)} }

// windowArgs are the config arguments of layers that slide a window.
type windowArgs struct {
	Strides      []int  `json:"strides"`
	Padding      string `json:"padding"`
	DilationRate []int  `json:"dilation_rate"`
}

func (a windowArgs) options() []WindowOption {
	var opts []WindowOption
	if a.Strides != nil {
		opts = append(opts, Strides(a.Strides...))
	}
	if a.DilationRate != nil {
		opts = append(opts, DilationRate(a.DilationRate...))
	}
	return append(opts, Padding(a.Padding))
}
