package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/internal/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// PoolOption configures a pooling layer: PoolSize, a WindowOption
// (Padding, Strides), or any Option, such as Named.
type PoolOption interface{ applyPool(*PoolLayer) }

// PoolSize is Keras' pool_size argument: one value for every axis, or one
// per axis (height, width). It defaults to 2.
func PoolSize(p ...int) PoolOption { return poolSize(p) }

type poolSize []int

func (p poolSize) applyPool(l *PoolLayer) {
	if l.global {
		l.window.fail(fmt.Errorf("PoolSize does not apply to %s, which pools the whole input", l.Type()))
		return
	}
	l.window.size = l.window.pair("pool_size", p)
}

// PoolLayer pools windows of images or sequences, channels last: the
// largest value or the mean of each window, or of the whole input for the
// global poolings.
type PoolLayer struct {
	named
	window
	kind   ops.PoolKind
	global bool
	in     [3]int // the input images: height, width, channels
	out    [2]int
}

// MaxPooling2D makes a max pooling over images, like
// keras.layers.MaxPooling2D: 2×2 windows, strides equal to the pool size,
// "valid" padding unless options say otherwise.
func MaxPooling2D(opts ...PoolOption) *PoolLayer { return newPool(ops.MaxPool, 2, false, opts) }

// AveragePooling2D makes an average pooling over images, like
// keras.layers.AveragePooling2D; with "same" padding the windows at the
// border average only the input's values, not the padding, as Keras does.
func AveragePooling2D(opts ...PoolOption) *PoolLayer { return newPool(ops.AvgPool, 2, false, opts) }

// MaxPooling1D makes a max pooling over sequences (None, steps, channels),
// like keras.layers.MaxPooling1D: windows of 2 steps by default.
func MaxPooling1D(opts ...PoolOption) *PoolLayer { return newPool(ops.MaxPool, 1, false, opts) }

// AveragePooling1D makes an average pooling over sequences, like
// keras.layers.AveragePooling1D.
func AveragePooling1D(opts ...PoolOption) *PoolLayer { return newPool(ops.AvgPool, 1, false, opts) }

// GlobalAveragePooling2D makes the mean over each image's height and
// width: (None, h, w, c) becomes (None, c).
func GlobalAveragePooling2D(opts ...Option) *PoolLayer {
	return newPool(ops.AvgPool, 2, true, optionsAsPool(opts))
}

// GlobalMaxPooling2D makes the maximum over each image's height and width.
func GlobalMaxPooling2D(opts ...Option) *PoolLayer {
	return newPool(ops.MaxPool, 2, true, optionsAsPool(opts))
}

// GlobalAveragePooling1D makes the mean over each sequence's steps:
// (None, steps, c) becomes (None, c).
func GlobalAveragePooling1D(opts ...Option) *PoolLayer {
	return newPool(ops.AvgPool, 1, true, optionsAsPool(opts))
}

// GlobalMaxPooling1D makes the maximum over each sequence's steps.
func GlobalMaxPooling1D(opts ...Option) *PoolLayer {
	return newPool(ops.MaxPool, 1, true, optionsAsPool(opts))
}

func optionsAsPool(opts []Option) []PoolOption {
	out := make([]PoolOption, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

func newPool(kind ops.PoolKind, rank int, global bool, opts []PoolOption) *PoolLayer {
	p := &PoolLayer{kind: kind, global: global, window: window{rank: rank, size: [2]int{2, 2}}}
	if rank == 1 {
		p.window.size[0] = 1
	}
	for _, o := range opts {
		if o != nil {
			o.applyPool(p)
		}
	}
	return p
}

// Type returns the Keras class name: "MaxPooling2D", "GlobalAveragePooling1D", ...
func (p *PoolLayer) Type() string {
	kind := "Max"
	if p.kind == ops.AvgPool {
		kind = "Average"
	}
	if p.global {
		return fmt.Sprintf("Global%sPooling%dD", kind, p.rank)
	}
	return fmt.Sprintf("%sPooling%dD", kind, p.rank)
}

// Build checks the input shape and returns the pooled shape.
func (p *PoolLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	what := fmt.Sprintf("%s layer %q", p.Type(), p.name)
	if err := p.CheckConfig(); err != nil {
		return nil, err
	}
	h, w, c, ok := p.images(inputShape)
	if !ok {
		return nil, fmt.Errorf("%s: expects %s, but gets %s", what, p.inputKind(), shapes.String(inputShape))
	}
	if p.global {
		p.size, p.strides, p.same = [2]int{h, w}, [2]int{1, 1}, false
	}
	win, err := p.spec().On(1, h, w, c)
	if err != nil {
		return nil, fmt.Errorf("%s on input %s: %w", what, shapes.String(inputShape), err)
	}
	p.in, p.out = [3]int{h, w, c}, [2]int{win.OH, win.OW}
	if p.global {
		return []int{c}, nil
	}
	return p.sampleShape(win.OH, win.OW, c), nil
}

// CheckConfig checks the layer's arguments.
func (p *PoolLayer) CheckConfig() error {
	what := fmt.Sprintf("%s layer %q", p.Type(), p.name)
	if p.nameErr != nil {
		return fmt.Errorf("%s layer: %w", p.Type(), p.nameErr)
	}
	if p.window.err != nil {
		return fmt.Errorf("%s: %w", what, p.window.err)
	}
	if p.dilation != [2]int{} {
		return fmt.Errorf("%s: pooling takes no dilation rate", what)
	}
	return nil
}

// spec is the pooling window; strides default to the pool size.
func (p *PoolLayer) spec() ops.WindowSpec {
	s := p.window.spec()
	if p.strides == [2]int{} {
		s.Strides = p.size
		if p.rank == 1 {
			s.Strides[0] = 1
		}
	}
	return s
}

// Params returns nil: pooling has no weights.
func (p *PoolLayer) Params() []*Param { return nil }

// Call adds the pooling to the graph.
func (p *PoolLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("%s layer %q", p.Type(), p.name)
	batch := in.Node.Shape()[0]
	x, err := ops.Reshape(in.Node, []int{batch, p.in[0], p.in[1], p.in[2]}, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	y, err := ops.Pool(x, p.kind, p.spec(), in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	shape := append([]int{batch}, p.sampleShape(p.out[0], p.out[1], p.in[2])...)
	if p.global {
		shape = []int{batch, p.in[2]}
	}
	out, err := ops.Reshape(y, shape, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}
