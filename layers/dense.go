package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/internal/shapes"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DenseOption configures a Dense layer: its activation (an Activation is a
// DenseOption, so Dense(64, ReLU) reads as in Keras), WithoutBias,
// KernelInitializer, BiasInitializer, or any Option, such as Named.
type DenseOption interface{ applyDense(*DenseLayer) }

func (a Activation) applyDense(d *DenseLayer) { d.activation = a }

// weights are the options of a layer with a kernel and a bias.
type weights struct {
	useBias              bool
	kernelInit, biasInit Initializer
}

func defaultWeights() weights {
	return weights{useBias: true, kernelInit: GlorotUniform(), biasInit: Zeros()}
}

// WeightOption configures the weights of a Dense or convolution layer.
type WeightOption func(*weights)

func (f WeightOption) applyDense(d *DenseLayer) { f(&d.weights) }
func (f WeightOption) applyConv(c *ConvLayer)   { f(&c.weights) }

// WithoutBias makes a layer with no bias (Keras' use_bias=False).
func WithoutBias() WeightOption { return func(w *weights) { w.useBias = false } }

// KernelInitializer sets how a layer's kernel starts.
func KernelInitializer(i Initializer) WeightOption {
	return func(w *weights) { w.kernelInit = i }
}

// BiasInitializer sets how a layer's bias starts.
func BiasInitializer(i Initializer) WeightOption {
	return func(w *weights) { w.biasInit = i }
}

// DenseLayer is a fully connected layer: activation(x·kernel + bias).
type DenseLayer struct {
	named
	weights
	units        int
	activation   Activation
	kernel, bias *Param
}

// Dense makes a fully connected layer with the given number of output
// units, like keras.layers.Dense: by default no activation, a
// glorot_uniform kernel and a zero bias.
func Dense(units int, opts ...DenseOption) *DenseLayer {
	d := &DenseLayer{units: units, activation: Linear, weights: defaultWeights()}
	for _, o := range opts {
		if o != nil {
			o.applyDense(d)
		}
	}
	return d
}

// Type returns "Dense".
func (d *DenseLayer) Type() string { return "Dense" }

// Units is the number of outputs.
func (d *DenseLayer) Units() int { return d.units }

// Activation is the layer's activation.
func (d *DenseLayer) Activation() Activation { return d.activation }

// Build creates the kernel (inputs, units) and bias (units).
func (d *DenseLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if d.nameErr != nil {
		return nil, fmt.Errorf("dense layer: %w", d.nameErr)
	}
	if d.units <= 0 {
		return nil, fmt.Errorf("dense layer %q: units must be positive, got %d", d.name, d.units)
	}
	if len(inputShape) != 1 {
		return nil, fmt.Errorf("dense layer %q: expects flat samples, shape (None, features), but gets %s: put a Flatten layer before it",
			d.name, shapes.String(inputShape))
	}
	in := inputShape[0]
	d.kernel, d.bias = d.weights.build([]int{in, d.units}, in, d.units, rng)
	return []int{d.units}, nil
}

// Params returns the kernel and, when the layer has one, the bias.
func (d *DenseLayer) Params() []*Param { return params(d.kernel, d.bias) }

// Call adds activation(x·kernel + bias) to the graph.
func (d *DenseLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	if len(params) != len(d.Params()) || len(params) == 0 {
		return Flow{}, fmt.Errorf("dense layer %q: got %d weight nodes for %d weights (was the layer built?)", d.name, len(params), len(d.Params()))
	}
	var bias *gorgonia.Node
	if len(params) == 2 {
		bias = params[1]
	}
	z, err := ops.Affine(in.Node, params[0], bias, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	out, err := d.activation.apply(Flow{Node: z, NeedsGrad: true})
	if err != nil {
		return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	return out, nil
}

// build makes a kernel of the given shape and, with useBias, a bias of its
// last dimension, drawn with fanIn and fanOut as the initializers take them.
func (w weights) build(kernelShape []int, fanIn, fanOut int, rng *rand.Rand) (kernel, bias *Param) {
	kernel = &Param{Name: "kernel", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(kernelShape...))}
	w.kernelInit.Fill(kernel.Value.Data().([]float32), fanIn, fanOut, rng)
	if w.useBias {
		units := kernelShape[len(kernelShape)-1]
		bias = &Param{Name: "bias", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(units))}
		w.biasInit.Fill(bias.Value.Data().([]float32), fanIn, fanOut, rng)
	}
	return kernel, bias
}

// params lists a kernel and, when there is one, a bias.
func params(kernel, bias *Param) []*Param {
	if kernel == nil {
		return nil
	}
	if bias == nil {
		return []*Param{kernel}
	}
	return []*Param{kernel, bias}
}
