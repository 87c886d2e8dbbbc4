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

type denseOptionFunc func(*DenseLayer)

func (f denseOptionFunc) applyDense(d *DenseLayer) { f(d) }

// WithoutBias makes a Dense layer with no bias (Keras' use_bias=False).
func WithoutBias() DenseOption { return denseOptionFunc(func(d *DenseLayer) { d.useBias = false }) }

// KernelInitializer sets how a Dense layer's kernel starts.
func KernelInitializer(i Initializer) DenseOption {
	return denseOptionFunc(func(d *DenseLayer) { d.kernelInit = i })
}

// BiasInitializer sets how a Dense layer's bias starts.
func BiasInitializer(i Initializer) DenseOption {
	return denseOptionFunc(func(d *DenseLayer) { d.biasInit = i })
}

// DenseLayer is a fully connected layer: activation(x·kernel + bias).
type DenseLayer struct {
	named
	units                int
	activation           Activation
	useBias              bool
	kernelInit, biasInit Initializer
	kernel, bias         *Param
}

// Dense makes a fully connected layer with the given number of output
// units, like keras.layers.Dense: by default no activation, a
// glorot_uniform kernel and a zero bias.
func Dense(units int, opts ...DenseOption) *DenseLayer {
	d := &DenseLayer{units: units, activation: Linear, useBias: true, kernelInit: GlorotUniform(), biasInit: Zeros()}
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
	d.kernel = &Param{Name: "kernel", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(in, d.units))}
	d.kernelInit.Fill(d.kernel.Value.Data().([]float32), in, d.units, rng)
	d.bias = nil
	if d.useBias {
		d.bias = &Param{Name: "bias", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(d.units))}
		d.biasInit.Fill(d.bias.Value.Data().([]float32), in, d.units, rng)
	}
	return []int{d.units}, nil
}

// Params returns the kernel and, when the layer has one, the bias.
func (d *DenseLayer) Params() []*Param {
	if d.kernel == nil {
		return nil
	}
	if d.bias == nil {
		return []*Param{d.kernel}
	}
	return []*Param{d.kernel, d.bias}
}

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
