package layers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NormOption configures a BatchNormalization or LayerNormalization layer:
// Epsilon, Momentum (batch normalization), WithoutCenter, WithoutScale, or
// any Option, such as Named.
type NormOption interface{ applyNorm(*normLayer) }

type normOptionFunc func(*normLayer)

func (f normOptionFunc) applyNorm(n *normLayer) { f(n) }

// Epsilon is what normalization layers add to the variance before its
// square root (Keras' default 1e-3).
func Epsilon(eps float64) NormOption { return normOptionFunc(func(n *normLayer) { n.epsilon = eps }) }

// Momentum is how much of BatchNormalization's moving statistics each
// training step keeps (Keras' default 0.99): moving = momentum·moving +
// (1-momentum)·batch. PyTorch's momentum is 1 minus this.
func Momentum(m float64) NormOption { return normOptionFunc(func(n *normLayer) { n.momentum = m }) }

// WithoutCenter leaves out the offset beta (Keras' center=False).
func WithoutCenter() NormOption { return normOptionFunc(func(n *normLayer) { n.center = false }) }

// WithoutScale leaves out the scale gamma (Keras' scale=False).
func WithoutScale() NormOption { return normOptionFunc(func(n *normLayer) { n.scale = false }) }

func (o nameOption) applyNorm(n *normLayer) { o.applyLayer(&n.named) }

// normLayer is what both normalization layers share.
type normLayer struct {
	named
	epsilon, momentum float64
	center, scale     bool
	channels          int
	gamma, beta       *Param
}

func newNorm(opts []NormOption) normLayer {
	n := normLayer{epsilon: 1e-3, momentum: 0.99, center: true, scale: true}
	for _, o := range opts {
		if o != nil {
			o.applyNorm(&n)
		}
	}
	return n
}

// checkConfig checks the options.
func (n *normLayer) checkConfig(typ string) error {
	if n.nameErr != nil {
		return fmt.Errorf("%s layer: %w", typ, n.nameErr)
	}
	what := fmt.Sprintf("%s layer %q", typ, n.name)
	if !(n.epsilon > 0) {
		return fmt.Errorf("%s: epsilon must be positive, got %v", what, n.epsilon)
	}
	if !(n.momentum >= 0 && n.momentum <= 1) {
		return fmt.Errorf("%s: momentum must be in [0, 1], got %v", what, n.momentum)
	}
	return nil
}

// planWeights is the normalizations' shared shape rule: gamma and beta,
// those the layer has, one value per channel (the last axis).
func (n *normLayer) planWeights(typ string, inputShape []int) ([]WeightShape, error) {
	if len(inputShape) == 0 {
		return nil, fmt.Errorf("%s layer %q: the input %s has no axis to normalize", typ, n.name, shapes.String(inputShape))
	}
	c := []int{inputShape[len(inputShape)-1]}
	var ws []WeightShape
	if n.scale {
		ws = append(ws, WeightShape{"gamma", c})
	}
	if n.center {
		ws = append(ws, WeightShape{"beta", c})
	}
	return ws, nil
}

// build makes gamma (ones) and beta (zeros), those the layer has, for
// the given number of channels.
func (n *normLayer) build(channels int) {
	n.channels = channels
	n.gamma, n.beta = nil, nil
	if n.scale {
		n.gamma = &Param{Name: "gamma", Value: filled(channels, 1)}
	}
	if n.center {
		n.beta = &Param{Name: "beta", Value: filled(channels, 0)}
	}
}

// filled is a float32 vector of n values v.
func filled(n int, v float32) *tensor.Dense {
	t := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(n))
	d := t.Data().([]float32)
	for i := range d {
		d[i] = v
	}
	return t
}

func (n *normLayer) params() []*Param {
	var ps []*Param
	for _, p := range []*Param{n.gamma, n.beta} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// gammaBeta returns the nodes of gamma and beta among a Call's params, or
// constants of ones and zeros for the ones the layer leaves out.
func (n *normLayer) gammaBeta(g *gorgonia.ExprGraph, params []*gorgonia.Node) (gamma, beta *gorgonia.Node) {
	i := 0
	constant := func(name string, v float32) *gorgonia.Node {
		d := make([]float32, n.channels)
		for j := range d {
			d[j] = v
		}
		return gorgonia.NewTensor(g, tensor.Float32, 1, gorgonia.WithShape(n.channels), gorgonia.WithName(n.name+"/"+name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(n.channels), tensor.WithBacking(d))))
	}
	if n.scale {
		gamma, i = params[0], 1
	} else {
		gamma = constant("no_gamma", 1)
	}
	if n.center {
		beta = params[i]
	} else {
		beta = constant("no_beta", 0)
	}
	return gamma, beta
}

// rows views the input as a matrix of channels.
func (n *normLayer) rows(in Flow) (*gorgonia.Node, error) {
	return ops.Reshape(in.Node, []int{in.Node.Shape().TotalSize() / n.channels, n.channels}, in.NeedsGrad)
}

// BatchNormalizationLayer normalizes each channel (the last axis) with the
// batch's mean and variance while the model trains, and with moving
// averages of them in Evaluate and Predict, then scales by gamma and
// shifts by beta, like keras.layers.BatchNormalization.
type BatchNormalizationLayer struct {
	normLayer
	movingMean, movingVariance *Param
}

// BatchNormalization makes a batch normalization over the last axis, with
// Keras' defaults: momentum 0.99, epsilon 1e-3, gamma and beta.
//
// The batch is normalized with its biased variance (divided by n). The
// moving variance follows Keras 2 on TensorFlow, which depends on the
// input's rank: images and volumes (rank 4 or 5, batch included: after a
// Conv2D or Conv3D) go through TensorFlow's fused kernel, which updates it
// with the batch's unbiased variance (divided by n-1, Bessel's correction,
// as PyTorch does at every rank); other inputs (rank 2 after a Dense, rank
// 3 after a Conv1D) through tf.nn.moments, which updates it with the
// biased one. Keras 3 uses the biased variance at every rank.
func BatchNormalization(opts ...NormOption) *BatchNormalizationLayer {
	return &BatchNormalizationLayer{normLayer: newNorm(opts)}
}

// CheckConfig checks the layer's arguments.
func (b *BatchNormalizationLayer) CheckConfig() error { return b.checkConfig(b.Type()) }

// Type returns "BatchNormalization".
func (b *BatchNormalizationLayer) Type() string { return "BatchNormalization" }

// plan is BatchNormalization's shape rule: the output has the input's
// shape; gamma, beta (those it has), the moving mean and the moving
// variance hold one value per channel.
func (b *BatchNormalizationLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	ws, err := b.planWeights(b.Type(), inputShape)
	if err != nil {
		return nil, nil, err
	}
	c := []int{inputShape[len(inputShape)-1]}
	return slices.Clone(inputShape), append(ws, WeightShape{"moving_mean", c}, WeightShape{"moving_variance", c}), nil
}

// Build makes gamma (ones), beta (zeros), and the non-trainable moving
// mean (zeros) and moving variance (ones), each one value per channel.
func (b *BatchNormalizationLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := b.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := b.plan(inputShape)
	if err != nil {
		return nil, err
	}
	b.build(inputShape[len(inputShape)-1])
	b.movingMean = &Param{Name: "moving_mean", Value: filled(b.channels, 0), NonTrainable: true}
	b.movingVariance = &Param{Name: "moving_variance", Value: filled(b.channels, 1), NonTrainable: true}
	return out, nil
}

// Params returns gamma, beta (those the layer has), the moving mean and
// the moving variance, in Keras' order.
func (b *BatchNormalizationLayer) Params() []*Param {
	if b.movingMean == nil {
		return nil
	}
	return append(b.params(), b.movingMean, b.movingVariance)
}

// Call adds the normalization to the graph: with the batch's statistics in
// a training graph, which also updates the moving ones from them
// (ops.MovingAverage: the machine that trains the graph writes the new
// values into the moving mean and variance, on the model's device); with
// the moving statistics in the others.
func (b *BatchNormalizationLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("BatchNormalization layer %q", b.name)
	if len(params) != len(b.Params()) || len(params) < 2 {
		return Flow{}, fmt.Errorf("%s: got %d weight nodes for %d weights (was the layer built?)", what, len(params), len(b.Params()))
	}
	x, err := b.rows(in)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	gamma, beta := b.gammaBeta(in.Node.Graph(), params)
	mean, variance := params[len(params)-2], params[len(params)-1]
	if in.Training {
		movingMean, movingVariance := mean, variance
		if mean, variance, err = ops.ColumnMoments(x); err != nil {
			return Flow{}, fmt.Errorf("%s: %w", what, err)
		}
		bessel := besselForRank(len(in.Node.Shape()), x.Shape()[0])
		if _, err := ops.MovingAverage(movingMean, mean, ops.MovingParams{Momentum: b.momentum}); err != nil {
			return Flow{}, fmt.Errorf("%s: %w", what, err)
		}
		if _, err := ops.MovingAverage(movingVariance, variance, ops.MovingParams{Momentum: b.momentum, Bessel: bessel}); err != nil {
			return Flow{}, fmt.Errorf("%s: %w", what, err)
		}
	}
	y, err := ops.BatchNormalize(x, mean, variance, gamma, beta, ops.NormParams{Epsilon: b.epsilon, BatchStats: in.Training}, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	out, err := ops.Reshape(y, in.Node.Shape().Clone(), true)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: out, NeedsGrad: true}, nil
}

// besselForRank is the factor the moving variance takes the batch's
// (biased) variance with, for an input of rank (batch included) whose
// rows values per channel it was computed over: n/(n-1) where Keras 2
// runs TensorFlow's fused batch normalization (rank 4 and 5), else 1 (see
// BatchNormalization).
func besselForRank(rank, rows int) float64 {
	if (rank == 4 || rank == 5) && rows > 1 {
		return float64(rows) / float64(rows-1)
	}
	return 1
}

// LayerNormalizationLayer normalizes each sample over its last axis, then
// scales by gamma and shifts by beta, like keras.layers.LayerNormalization;
// it behaves the same in training and inference.
type LayerNormalizationLayer struct{ normLayer }

// LayerNormalization makes a layer normalization over the last axis with
// Keras' defaults: epsilon 1e-3, gamma and beta.
func LayerNormalization(opts ...NormOption) *LayerNormalizationLayer {
	return &LayerNormalizationLayer{newNorm(opts)}
}

// CheckConfig checks the layer's arguments.
func (l *LayerNormalizationLayer) CheckConfig() error { return l.checkConfig(l.Type()) }

// Type returns "LayerNormalization".
func (l *LayerNormalizationLayer) Type() string { return "LayerNormalization" }

// plan is LayerNormalization's shape rule: the output has the input's
// shape; gamma and beta (those it has) hold one value per channel.
func (l *LayerNormalizationLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	ws, err := l.planWeights(l.Type(), inputShape)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(inputShape), ws, nil
}

// Build makes gamma (ones) and beta (zeros).
func (l *LayerNormalizationLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := l.plan(inputShape)
	if err != nil {
		return nil, err
	}
	l.build(inputShape[len(inputShape)-1])
	return out, nil
}

// Params returns gamma and beta, those the layer has.
func (l *LayerNormalizationLayer) Params() []*Param { return l.params() }

// Call adds the normalization to the graph.
func (l *LayerNormalizationLayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("LayerNormalization layer %q", l.name)
	if len(params) != len(l.Params()) || l.channels == 0 {
		return Flow{}, fmt.Errorf("%s: got %d weight nodes for %d weights (was the layer built?)", what, len(params), len(l.Params()))
	}
	x, err := l.rows(in)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	gamma, beta := l.gammaBeta(in.Node.Graph(), params)
	y, err := ops.LayerNormalize(x, gamma, beta, l.epsilon, in.NeedsGrad)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	out, err := ops.Reshape(y, in.Node.Shape().Clone(), true)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: out, NeedsGrad: true}, nil
}

// Config returns "BatchNormalization" with name, axis (-1), momentum,
// epsilon, center and scale.
func (b *BatchNormalizationLayer) Config() (Config, error) {
	args := b.normConfig()
	args["momentum"] = b.momentum
	return Config{ClassName: b.Type(), Config: args}, nil
}

// Config returns "LayerNormalization" with name, axis (-1), epsilon,
// center and scale.
func (l *LayerNormalizationLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: l.normConfig()}, nil
}

func (n *normLayer) normConfig() map[string]any {
	return map[string]any{"name": n.name, "axis": -1, "epsilon": n.epsilon, "center": n.center, "scale": n.scale}
}

func normFromConfig(batch bool) func(map[string]any) (Layer, error) {
	return func(args map[string]any) (Layer, error) {
		var a struct {
			baseArgs
			Axis     int      `json:"axis"`
			Momentum *float64 `json:"momentum"`
			Epsilon  *float64 `json:"epsilon"`
			Center   *bool    `json:"center"`
			Scale    *bool    `json:"scale"`
		}
		a.Axis = -1
		if err := configargs.Decode(args, &a); err != nil {
			return nil, err
		}
		if !batch && a.Momentum != nil {
			return nil, errors.New(`unknown argument "momentum"`)
		}
		if a.Axis != -1 {
			return nil, fmt.Errorf("axis %d: gokeras normalizes the last axis only, axis -1", a.Axis)
		}
		var opts []NormOption
		if a.Momentum != nil {
			opts = append(opts, Momentum(*a.Momentum))
		}
		if a.Epsilon != nil {
			opts = append(opts, Epsilon(*a.Epsilon))
		}
		if a.Center != nil && !*a.Center {
			opts = append(opts, WithoutCenter())
		}
		if a.Scale != nil && !*a.Scale {
			opts = append(opts, WithoutScale())
		}
		for _, o := range a.nameOptions() {
			opts = append(opts, o)
		}
		if batch {
			return BatchNormalization(opts...), nil
		}
		return LayerNormalization(opts...), nil
	}
}

// ONNX adds BatchNormalization with the moving statistics to an ONNX
// graph, on the channels at axis 1 as ONNX takes them.
func (b *BatchNormalizationLayer) ONNX(g ONNXGraph, in string) (string, error) {
	if b.movingMean == nil || b.movingVariance == nil {
		return "", fmt.Errorf("%s layer %q has no moving statistics: is the model built?", b.Type(), b.name)
	}
	scale, shift := b.onnxGammaBeta(g, true)
	inputs := []string{scale, shift, onnxWeight(g, b.movingMean), onnxWeight(g, b.movingVariance)}
	return g.Apply("BatchNormalization", g.ChannelsFirst(in), inputs, floatAttr("epsilon", float32(b.epsilon))), nil
}

// ONNX adds LayerNormalization over the last axis to an ONNX graph.
func (l *LayerNormalizationLayer) ONNX(b ONNXGraph, in string) (string, error) {
	scale, shift := l.onnxGammaBeta(b, false)
	inputs := []string{scale}
	if shift != "" {
		inputs = append(inputs, shift)
	}
	return b.Apply("LayerNormalization", b.ChannelsLast(in), inputs, intAttr("axis", -1), floatAttr("epsilon", float32(l.epsilon))), nil
}

// onnxGammaBeta adds a normalization's gamma and beta to an ONNX graph,
// ones and zeros for those it was made without (WithoutScale,
// WithoutCenter); without needBeta, a missing beta is left out ("").
func (n *normLayer) onnxGammaBeta(b ONNXGraph, needBeta bool) (gamma, beta string) {
	channels := b.InputShape()
	c := channels[len(channels)-1]
	if n.gamma != nil {
		gamma = onnxWeight(b, n.gamma)
	} else {
		gamma = b.Weight("no_gamma", []int{c}, filled(c, 1).Data().([]float32))
	}
	if n.beta != nil {
		beta = onnxWeight(b, n.beta)
	} else if needBeta {
		beta = b.Weight("no_beta", []int{c}, filled(c, 0).Data().([]float32))
	}
	return gamma, beta
}
