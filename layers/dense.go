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
	// The regularizers of the kernel, the bias and the layer's output.
	kernelReg, biasReg, activityReg *Regularizer
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

// KernelRegularizer adds r's penalty of the kernel to the model's loss
// (Keras' kernel_regularizer).
func KernelRegularizer(r Regularizer) WeightOption { return func(w *weights) { w.kernelReg = &r } }

// BiasRegularizer adds r's penalty of the bias to the model's loss (Keras'
// bias_regularizer).
func BiasRegularizer(r Regularizer) WeightOption { return func(w *weights) { w.biasReg = &r } }

// ActivityRegularizer adds r's penalty of the layer's output, divided by
// the batch size as Keras divides it, to the model's loss (Keras'
// activity_regularizer).
func ActivityRegularizer(r Regularizer) WeightOption { return func(w *weights) { w.activityReg = &r } }

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

// CheckConfig checks the layer's arguments.
func (d *DenseLayer) CheckConfig() error {
	if d.nameErr != nil {
		return fmt.Errorf("dense layer: %w", d.nameErr)
	}
	if d.units <= 0 {
		return fmt.Errorf("dense layer %q: units must be a positive integer, got %d", d.name, d.units)
	}
	return nil
}

// Build creates the kernel (inputs, units) and bias (units).
func (d *DenseLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := d.CheckConfig(); err != nil {
		return nil, err
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
	if out.Losses, err = d.weights.penalties(params, out.Node); err != nil {
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

// penalties returns the nodes of the layer's regularization penalties: of
// its kernel (params[0]), its bias (params[1], when there is one) and its
// output.
func (w weights) penalties(params []*gorgonia.Node, out *gorgonia.Node) ([]*gorgonia.Node, error) {
	var ps []*gorgonia.Node
	add := func(r *Regularizer, x *gorgonia.Node, scale float64) error {
		if r == nil {
			return nil
		}
		p, err := ops.Penalty(x, ops.PenaltyParams{L1: r.L1, L2: r.L2, Scale: scale})
		if err != nil {
			return err
		}
		ps = append(ps, p)
		return nil
	}
	if err := add(w.kernelReg, params[0], 0); err != nil {
		return nil, fmt.Errorf("kernel regularizer: %w", err)
	}
	if len(params) > 1 {
		if err := add(w.biasReg, params[1], 0); err != nil {
			return nil, fmt.Errorf("bias regularizer: %w", err)
		}
	}
	if err := add(w.activityReg, out, 1/float64(out.Shape()[0])); err != nil {
		return nil, fmt.Errorf("activity regularizer: %w", err)
	}
	return ps, nil
}
