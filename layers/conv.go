package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// ConvOption configures a convolution layer: its activation, a
// WindowOption (Padding, Strides, DilationRate), a WeightOption
// (WithoutBias, KernelInitializer, BiasInitializer), KernelSize, or any
// Option, such as Named.
type ConvOption interface{ applyConv(*ConvLayer) }

func (a Activation) applyConv(c *ConvLayer) { c.activation = a }

// KernelSize sets a rectangular kernel, height by width, for Conv2D, whose
// kernel size argument makes a square one.
func KernelSize(height, width int) ConvOption { return kernelSize{height, width} }

type kernelSize [2]int

func (k kernelSize) applyConv(c *ConvLayer) {
	if c.window.rank != 2 {
		c.window.fail(fmt.Errorf("KernelSize(%d, %d) applies to Conv2D only", k[0], k[1]))
		return
	}
	c.window.size = k
}

// ConvLayer is a convolution over images (Conv2D) or sequences (Conv1D),
// channels last: activation(conv(x, kernel) + bias), with Keras' kernel
// layout (height, width, input channels, filters).
type ConvLayer struct {
	named
	weights
	window
	filters      int
	activation   Activation
	in           [3]int // the input images: height, width, channels
	out          [2]int // the output's height and width
	kernel, bias *Param
}

// Conv2D makes a 2D convolution with the given number of filters and a
// square kernel of the given size, like keras.layers.Conv2D: strides 1,
// "valid" padding, no dilation, no activation, a glorot_uniform kernel and
// a zero bias unless options say otherwise.
func Conv2D(filters, kernelSize int, opts ...ConvOption) *ConvLayer {
	return newConv(2, filters, kernelSize, opts)
}

// Conv1D makes a 1D convolution over sequences (None, steps, channels),
// like keras.layers.Conv1D.
func Conv1D(filters, kernelSize int, opts ...ConvOption) *ConvLayer {
	return newConv(1, filters, kernelSize, opts)
}

func newConv(rank, filters, size int, opts []ConvOption) *ConvLayer {
	c := &ConvLayer{filters: filters, activation: Linear, weights: defaultWeights(),
		window: window{rank: rank, size: [2]int{size, size}}}
	if rank == 1 {
		c.window.size[0] = 1
	}
	for _, o := range opts {
		if o != nil {
			o.applyConv(c)
		}
	}
	return c
}

// Type returns "Conv2D" or "Conv1D".
func (c *ConvLayer) Type() string { return fmt.Sprintf("Conv%dD", c.rank) }

// Filters is the number of output channels.
func (c *ConvLayer) Filters() int { return c.filters }

// plan is the convolution's shape rule: the output's size by the
// window's, a kernel (kernel size..., channels, filters) and a bias
// (filters).
func (c *ConvLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	h, w, ch, ok := c.images(inputShape)
	if !ok {
		return nil, nil, fmt.Errorf("%s layer %q: expects %s, but gets %s", c.Type(), c.name, c.inputKind(), shapes.String(inputShape))
	}
	win, err := c.spec().On(1, h, w, ch)
	if err != nil {
		return nil, nil, fmt.Errorf("%s layer %q on input %s: %w", c.Type(), c.name, shapes.String(inputShape), err)
	}
	kshape := []int{c.size[0], c.size[1], ch, c.filters}
	if c.rank == 1 {
		kshape = kshape[1:]
	}
	return c.sampleShape(win.OH, win.OW, c.filters), c.weights.plan(kshape), nil
}

// Build creates the kernel, (kernel height, kernel width, channels,
// filters) for Conv2D and (kernel size, channels, filters) for Conv1D, and
// the bias (filters).
func (c *ConvLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := c.CheckConfig(); err != nil {
		return nil, err
	}
	out, ws, err := c.plan(inputShape)
	if err != nil {
		return nil, err
	}
	h, w, ch, _ := c.images(inputShape)
	c.in, c.out = [3]int{h, w, ch}, c.outputSize(out)
	field := c.size[0] * c.size[1]
	c.kernel, c.bias = c.weights.build(ws[0].Shape, field*ch, field*c.filters, rng)
	return out, nil
}

// CheckConfig checks the layer's arguments.
func (c *ConvLayer) CheckConfig() error {
	what := fmt.Sprintf("%s layer %q", c.Type(), c.name)
	if c.nameErr != nil {
		return fmt.Errorf("%s layer: %w", c.Type(), c.nameErr)
	}
	if c.window.err != nil {
		return fmt.Errorf("%s: %w", what, c.window.err)
	}
	if c.filters <= 0 {
		return fmt.Errorf("%s: filters must be a positive integer, got %d", what, c.filters)
	}
	if c.size[0] <= 0 || c.size[1] <= 0 {
		return fmt.Errorf("%s: the kernel size must be positive, got %v", what, c.size)
	}
	return nil
}

// OutputShape is the shape of the layer's output samples, nil before Build.
func (c *ConvLayer) OutputShape() []int {
	if c.kernel == nil {
		return nil
	}
	return c.sampleShape(c.out[0], c.out[1], c.filters)
}

// Params returns the kernel and, when the layer has one, the bias.
func (c *ConvLayer) Params() []*Param { return params(c.kernel, c.bias) }

// Call adds the convolution to the graph: the input's patches (one row per
// output position) times the kernel as a matrix, plus the bias, then the
// activation, reshaped to the output's shape.
func (c *ConvLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("%s layer %q", c.Type(), c.name)
	if len(params) != len(c.Params()) || len(params) == 0 {
		return Flow{}, fmt.Errorf("%s: got %d weight nodes for %d weights (was the layer built?)", what, len(params), len(c.Params()))
	}
	batch := in.Node.Shape()[0]
	x, err := ops.Reshape(in.Node, []int{batch, c.in[0], c.in[1], c.in[2]}, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	cols, err := ops.Patches(x, c.spec(), in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	k, err := ops.Reshape(params[0], []int{c.size[0] * c.size[1] * c.in[2], c.filters}, true)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	var bias *gorgonia.Node
	if len(params) == 2 {
		bias = params[1]
	}
	z, err := ops.Affine(cols, k, bias, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	a, err := c.activation.apply(Flow{Node: z, NeedsGrad: true})
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	out, err := ops.Reshape(a.Node, append([]int{batch}, c.sampleShape(c.out[0], c.out[1], c.filters)...), true)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	penalties, err := c.weights.penalties(params, out)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: out, NeedsGrad: true, Losses: penalties}, nil
}

// Config returns "Conv2D" or "Conv1D" with name, filters, kernel_size,
// strides, padding, dilation_rate, activation, use_bias, the initializers
// and the regularizers; the per-axis values hold one value per axis.
func (c *ConvLayer) Config() (Config, error) {
	args := map[string]any{
		"name": c.name, "filters": c.filters, "kernel_size": c.axes(c.size),
		"strides": c.axes(atLeastOne(c.strides)), "padding": c.paddingName(),
		"dilation_rate": c.axes(atLeastOne(c.dilation)), "activation": c.activation.String(),
	}
	if err := c.weights.config(args); err != nil {
		return Config{}, fmt.Errorf("%s layer %q: %w", c.Type(), c.name, err)
	}
	return Config{ClassName: c.Type(), Config: args}, nil
}

func convFromConfig(rank int) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		a := struct {
			baseArgs
			Filters    *int   `json:"filters"`
			KernelSize []int  `json:"kernel_size"`
			Activation string `json:"activation"`
			windowArgs
			weightArgs
		}{windowArgs: windowArgs{Padding: "valid"}, weightArgs: weightArgs{UseBias: true}}
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		if a.Filters == nil {
			return nil, missing("filters")
		}
		if a.KernelSize == nil {
			return nil, missing("kernel_size")
		}
		act, err := GetActivation(a.Activation)
		if err != nil {
			return nil, err
		}
		opts := []ConvOption{act}
		ks := a.KernelSize
		switch {
		case len(ks) == 1:
		case len(ks) == 2 && rank == 2:
			opts = append(opts, KernelSize(ks[0], ks[1]))
		default:
			return nil, fmt.Errorf("kernel_size %v: give 1 value, or one per axis (%d)", ks, rank)
		}
		for _, o := range a.windowArgs.options() {
			opts = append(opts, o)
		}
		wopts, err := a.weightArgs.options()
		if err != nil {
			return nil, err
		}
		for _, o := range wopts {
			opts = append(opts, o)
		}
		for _, o := range a.nameOptions() {
			opts = append(opts, o)
		}
		return newConv(rank, *a.Filters, ks[0], opts), nil
	}
}

// ONNX adds the convolution to an ONNX graph, on its input channels first:
// Keras' kernel (spatial axes..., channels, filters) reordered as ONNX's
// (filters, channels, spatial axes...), "same" padding as explicit pads.
func (c *ConvLayer) ONNX(b ONNXGraph, in string) (string, error) {
	if c.kernel == nil {
		return "", fmt.Errorf("%s layer %q has no kernel: is the model built?", c.Type(), c.name)
	}
	size, strides, dilation := c.axes(c.size), c.axes(atLeastOne(c.strides)), c.axes(atLeastOne(c.dilation))
	pads, err := onnxPads(b.InputShape(), size, strides, dilation, c.same)
	if err != nil {
		return "", err
	}
	kshape := c.kernel.Value.Shape()
	spatial, channels, filters := 1, kshape[len(kshape)-2], kshape[len(kshape)-1]
	for _, d := range kshape[:len(kshape)-2] {
		spatial *= d
	}
	src := c.kernel.Value.Data().([]float32)
	oihw := make([]float32, len(src))
	for s := range spatial {
		for ch := range channels {
			for f := range filters {
				oihw[(f*channels+ch)*spatial+s] = src[(s*channels+ch)*filters+f]
			}
		}
	}
	dims := append([]int{filters, channels}, kshape[:len(kshape)-2]...)
	inputs := []string{b.Weight("kernel", dims, oihw)}
	if c.bias != nil {
		inputs = append(inputs, onnxWeight(b, c.bias))
	}
	x := b.ChannelsFirst(in)
	y := b.Apply("Conv", x, inputs, intsAttr("kernel_shape", int64s(size)...), intsAttr("strides", int64s(strides)...),
		intsAttr("dilations", int64s(dilation)...), intsAttr("pads", pads...), intAttr("group", 1))
	return c.activation.onnx(b, y)
}
