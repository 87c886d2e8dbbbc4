package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// weights are the options of a layer with a kernel and a bias: Dense and
// the convolutions.
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

// plan lists a kernel of the given shape and, with useBias, a bias of its
// last dimension, as build makes them.
func (w weights) plan(kernelShape []int) []WeightShape {
	ws := []WeightShape{{"kernel", kernelShape}}
	if w.useBias {
		ws = append(ws, WeightShape{"bias", []int{kernelShape[len(kernelShape)-1]}})
	}
	return ws
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

// config adds the weight arguments of a Dense or convolution layer.
func (w weights) config(args map[string]any) error {
	k, err := InitializerConfig(w.kernelInit)
	if err != nil {
		return fmt.Errorf("kernel_initializer: %w", err)
	}
	b, err := InitializerConfig(w.biasInit)
	if err != nil {
		return fmt.Errorf("bias_initializer: %w", err)
	}
	args["use_bias"] = w.useBias
	args["kernel_initializer"], args["bias_initializer"] = k, b
	args["kernel_regularizer"] = regularizerOrNone(w.kernelReg)
	args["bias_regularizer"] = regularizerOrNone(w.biasReg)
	args["activity_regularizer"] = regularizerOrNone(w.activityReg)
	return nil
}

// regularizerOrNone is a regularizer's config, or nil (Keras' None).
func regularizerOrNone(r *Regularizer) any {
	if r == nil {
		return nil
	}
	return RegularizerConfig(*r)
}

// weightArgs are the weight arguments of a Dense or convolution layer.
type weightArgs struct {
	UseBias             bool    `json:"use_bias"`
	KernelInitializer   *Config `json:"kernel_initializer"`
	BiasInitializer     *Config `json:"bias_initializer"`
	KernelRegularizer   *Config `json:"kernel_regularizer"`
	BiasRegularizer     *Config `json:"bias_regularizer"`
	ActivityRegularizer *Config `json:"activity_regularizer"`
}

func (a weightArgs) options() ([]WeightOption, error) {
	var opts []WeightOption
	if !a.UseBias {
		opts = append(opts, WithoutBias())
	}
	for _, i := range []struct {
		name string
		c    *Config
		opt  func(Initializer) WeightOption
	}{{"kernel_initializer", a.KernelInitializer, KernelInitializer}, {"bias_initializer", a.BiasInitializer, BiasInitializer}} {
		if i.c == nil {
			continue
		}
		init, err := InitializerFromConfig(*i.c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", i.name, err)
		}
		opts = append(opts, i.opt(init))
	}
	for _, r := range []struct {
		name string
		c    *Config
		opt  func(Regularizer) WeightOption
	}{
		{"kernel_regularizer", a.KernelRegularizer, KernelRegularizer},
		{"bias_regularizer", a.BiasRegularizer, BiasRegularizer},
		{"activity_regularizer", a.ActivityRegularizer, ActivityRegularizer},
	} {
		if r.c == nil {
			continue
		}
		reg, err := RegularizerFromConfig(*r.c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		opts = append(opts, r.opt(reg))
	}
	return opts, nil
}
