package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// DenseOption configures a Dense layer: its activation (an Activation is a
// DenseOption, so Dense(64, ReLU) reads as in Keras), WithoutBias,
// KernelInitializer, BiasInitializer, or any Option, such as Named.
type DenseOption interface{ applyDense(*DenseLayer) }

func (a Activation) applyDense(d *DenseLayer) { d.activation = a }

// DenseLayer is a fully connected layer: activation(x·kernel + bias). On
// samples of more than one axis it works on the last one, as Keras' Dense
// does: (None, steps, features) becomes (None, steps, units), the same
// kernel applied at every step; a model may end there, trained on a label
// per step.
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

// plan is Dense's shape rule: samples whose last axis has n features make
// a kernel (n, units) and a bias (units), and outputs of the same shape
// with units in place of n.
func (d *DenseLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if len(inputShape) == 0 {
		return nil, nil, fmt.Errorf("dense layer %q: expects samples of at least one axis, shape (None, ..., features), but gets %s",
			d.name, shapes.String(inputShape))
	}
	n := inputShape[len(inputShape)-1]
	out := append(slices.Clone(inputShape[:len(inputShape)-1]), d.units)
	return out, d.weights.plan([]int{n, d.units}), nil
}

// Build creates the kernel (inputs, units) and bias (units).
func (d *DenseLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := d.CheckConfig(); err != nil {
		return nil, err
	}
	out, ws, err := d.plan(inputShape)
	if err != nil {
		return nil, err
	}
	d.kernel, d.bias = d.weights.build(ws[0].Shape, inputShape[len(inputShape)-1], d.units, rng)
	return out, nil
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
	// Samples of more axes: every position of the last axis's rows is a
	// row of the product, reshaped back after the activation.
	x, shape := in.Node, in.Node.Shape()
	if len(shape) > 2 {
		rows := shape.TotalSize() / shape[len(shape)-1]
		var err error
		if x, err = ops.Reshape(x, []int{rows, shape[len(shape)-1]}, in.NeedsGrad); err != nil {
			return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
		}
	}
	z, err := ops.Affine(x, params[0], bias, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	out, err := d.activation.apply(Flow{Node: z, NeedsGrad: true})
	if err != nil {
		return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	if len(shape) > 2 {
		to := append(slices.Clone([]int(shape[:len(shape)-1])), d.units)
		if out.Node, err = ops.Reshape(out.Node, to, true); err != nil {
			return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
		}
	}
	if out.Losses, err = d.weights.penalties(params, out.Node); err != nil {
		return Flow{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	return out, nil
}

// Config returns "Dense" with name, units, activation, use_bias, the
// initializers and the regularizers.
func (d *DenseLayer) Config() (Config, error) {
	args := map[string]any{"name": d.name, "units": d.units, "activation": d.activation.String()}
	if err := d.weights.config(args); err != nil {
		return Config{}, fmt.Errorf("dense layer %q: %w", d.name, err)
	}
	return Config{ClassName: d.Type(), Config: args}, nil
}

func denseFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Units      *int   `json:"units"`
		Activation string `json:"activation"`
		weightArgs
	}{weightArgs: weightArgs{UseBias: true}}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Units == nil {
		return nil, missing("units")
	}
	act, err := GetActivation(a.Activation)
	if err != nil {
		return nil, err
	}
	wopts, err := a.options()
	if err != nil {
		return nil, err
	}
	opts := []DenseOption{act}
	for _, o := range wopts {
		opts = append(opts, o)
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Dense(*a.Units, opts...), nil
}

// ONNX adds activation(x·kernel + bias) to an ONNX graph: as Gemm on flat
// samples, as MatMul (over the last axis, channels last) and Add on
// samples of more axes.
func (d *DenseLayer) ONNX(b ONNXGraph, in string) (string, error) {
	if d.kernel == nil {
		return "", fmt.Errorf("%s layer %q has no kernel: is the model built?", d.Type(), d.name)
	}
	if len(b.InputShape()) > 1 {
		z := b.Node("MatMul", []string{b.ChannelsLast(in), onnxWeight(b, d.kernel)})
		if d.bias != nil {
			z = b.Node("Add", []string{z, onnxWeight(b, d.bias)})
		}
		return d.activation.onnx(b, z)
	}
	inputs := []string{onnxWeight(b, d.kernel)}
	if d.bias != nil {
		inputs = append(inputs, onnxWeight(b, d.bias))
	}
	return d.activation.onnx(b, b.Apply("Gemm", in, inputs))
}
