package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
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

// plan is the pooling's shape rule: the output's size by the window's,
// or the channels alone for a global pooling; no weights.
func (p *PoolLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	h, w, c, ok := p.images(inputShape)
	if !ok {
		return nil, nil, fmt.Errorf("%s layer %q: expects %s, but gets %s", p.Type(), p.name, p.inputKind(), shapes.String(inputShape))
	}
	win, err := p.specOn(h, w).On(1, h, w, c)
	if err != nil {
		return nil, nil, fmt.Errorf("%s layer %q on input %s: %w", p.Type(), p.name, shapes.String(inputShape), err)
	}
	if p.global {
		return []int{c}, nil, nil
	}
	return p.sampleShape(win.OH, win.OW, c), nil, nil
}

// Build checks the input shape and returns the pooled shape.
func (p *PoolLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := p.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := p.plan(inputShape)
	if err != nil {
		return nil, err
	}
	h, w, c, _ := p.images(inputShape)
	p.in, p.out = [3]int{h, w, c}, [2]int{1, 1}
	if p.global {
		p.size, p.strides, p.same = [2]int{h, w}, [2]int{1, 1}, false
	} else {
		p.out = p.outputSize(out)
	}
	return out, nil
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

// specOn is the pooling window on images of height h and width w: a
// global pooling's covers them whole.
func (p *PoolLayer) specOn(h, w int) ops.WindowSpec {
	s := p.spec()
	if p.global {
		s.Kernel, s.Strides, s.Same = [2]int{h, w}, [2]int{1, 1}, false
	}
	return s
}

// Params returns nil: pooling has no weights.
func (p *PoolLayer) Params() []*Param { return nil }

// ComputesMask is true for GlobalAveragePooling1D, which honours a mask
// and outputs none (Keras' compute_mask returns None); the other
// poolings do not support masks, and a model drops one given them, as
// Keras 2 does (GlobalMaxPooling1D's maximum takes every step).
func (p *PoolLayer) ComputesMask() bool { return p.maskedMean() }

func (p *PoolLayer) maskedMean() bool { return p.global && p.kind == ops.AvgPool && p.rank == 1 }

// Call adds the pooling to the graph: GlobalAveragePooling1D given a mask
// takes the mean of the steps it keeps, Σ x·mask / Σ mask, as Keras does.
func (p *PoolLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("%s layer %q", p.Type(), p.name)
	batch := in.Node.Shape()[0]
	if in.Mask != nil && p.maskedMean() {
		out, err := maskedMean(in.Node, in.Mask)
		if err != nil {
			return Flow{}, fmt.Errorf("%s: %w", what, err)
		}
		return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
	}
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

// maskedMean is the mean over the steps of x (batch, steps, features)
// that mask (batch, steps) keeps: (batch, features).
func maskedMean(x, mask *gorgonia.Node) (*gorgonia.Node, error) {
	s := x.Shape()
	m3, err := ops.Reshape(mask, []int{s[0], s[1], 1}, false)
	if err != nil {
		return nil, err
	}
	sum, err := ops.BatchDot(m3, x, 1, 1) // (batch, 1, features)
	if err != nil {
		return nil, err
	}
	if sum, err = ops.Reshape(sum, []int{s[0], s[2]}, true); err != nil {
		return nil, err
	}
	count, err := ops.BatchDot(mask, mask, 1, 1) // (batch, 1): Σ mask² = Σ mask
	if err != nil {
		return nil, err
	}
	return ops.Divide(sum, count)
}

// Config returns the pooling's class with name, and for the poolings that
// are not global pool_size, strides (the pool size when not given) and
// padding.
func (p *PoolLayer) Config() (Config, error) {
	args := map[string]any{"name": p.name}
	if !p.global {
		strides := p.strides
		if strides == [2]int{} {
			strides = p.size
		}
		args["pool_size"], args["strides"], args["padding"] = p.axes(p.size), p.axes(strides), p.paddingName()
	}
	return Config{ClassName: p.Type(), Config: args}, nil
}

func poolFromConfig(kind ops.PoolKind, rank int, global bool) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		if global {
			var a baseArgs
			if err := configargs.Decode(args, &a); err != nil {
				return nil, err
			}
			return newPool(kind, rank, true, optionsAsPool(a.nameOptions())), nil
		}
		a := struct {
			baseArgs
			PoolSize []int  `json:"pool_size"`
			Strides  []int  `json:"strides"`
			Padding  string `json:"padding"`
		}{Padding: "valid"}
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		var opts []PoolOption
		if a.PoolSize != nil {
			opts = append(opts, PoolSize(a.PoolSize...))
		}
		for _, o := range (windowArgs{Strides: a.Strides, Padding: a.Padding}).options() {
			opts = append(opts, o)
		}
		opts = append(opts, optionsAsPool(a.nameOptions())...)
		return newPool(kind, rank, false, opts), nil
	}
}

// ONNX adds the pooling to an ONNX graph: a max or average pooling on its
// input channels first, the average excluding the padding as Keras'
// does; a global pooling as the maximum or mean over the spatial axes, in
// whichever layout its input has.
func (p *PoolLayer) ONNX(b ONNXGraph, in string) (string, error) {
	if p.global {
		var axes []int64
		for i := range len(b.InputShape()) - 1 {
			if b.IsChannelsFirst(in) {
				axes = append(axes, int64(i+2))
			} else {
				axes = append(axes, int64(i+1))
			}
		}
		op := "ReduceMax"
		if p.kind == ops.AvgPool {
			op = "ReduceMean"
		}
		return b.Node(op, []string{in}, intsAttr("axes", axes...), intAttr("keepdims", 0)), nil
	}
	strides := p.strides
	if strides == [2]int{} {
		strides = p.size
	}
	size := p.axes(p.size)
	pads, err := onnxPads(b.InputShape(), size, p.axes(strides), p.axes([2]int{1, 1}), p.same)
	if err != nil {
		return "", err
	}
	attrs := []ONNXAttr{intsAttr("kernel_shape", int64s(size)...), intsAttr("strides", int64s(p.axes(strides))...), intsAttr("pads", pads...)}
	op := "MaxPool"
	if p.kind == ops.AvgPool {
		op = "AveragePool"
		attrs = append(attrs, intAttr("count_include_pad", 0))
	}
	return b.Apply(op, b.ChannelsFirst(in), nil, attrs...), nil
}
