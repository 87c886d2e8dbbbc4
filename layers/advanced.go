package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Keras' advanced activation layers: LeakyReLU and ELU, an activation
// with an alpha of the layer's own, and PReLU, whose alpha is a weight.

// alphaLayer is LeakyReLU or ELU: the activation act with alpha, as a
// layer of the Keras class class.
type alphaLayer struct {
	named
	class string
	act   ops.Activation
	alpha float64
}

// LeakyReLULayer is keras.layers.LeakyReLU: x where x > 0, else alpha·x.
type LeakyReLULayer struct{ alphaLayer }

// NewLeakyReLU makes a LeakyReLU layer of slope alpha for x ≤ 0, like
// keras.layers.LeakyReLU(alpha). Keras 2's default is 0.3,
// NewLeakyReLU(0.3); Keras 3 renamed the argument negative_slope and made
// its default 0.2 (the leaky_relu activation's, LeakyReLU). Its automatic
// name is Keras' "leaky_re_lu".
func NewLeakyReLU(alpha float64, opts ...Option) *LeakyReLULayer {
	l := &LeakyReLULayer{alphaLayer{class: "LeakyReLU", act: ops.LeakyReLU, alpha: alpha}}
	applyOptions(&l.named, opts)
	return l
}

// ELULayer is keras.layers.ELU: x where x > 0, else alpha·(eˣ - 1).
type ELULayer struct{ alphaLayer }

// NewELU makes an ELU layer, like keras.layers.ELU(alpha); Keras' default
// is 1.0, NewELU(1), the elu activation (ELU).
func NewELU(alpha float64, opts ...Option) *ELULayer {
	l := &ELULayer{alphaLayer{class: "ELU", act: ops.ELU, alpha: alpha}}
	applyOptions(&l.named, opts)
	return l
}

// Type returns the Keras class name, "LeakyReLU" or "ELU".
func (l *alphaLayer) Type() string { return l.class }

// CheckConfig checks alpha: a finite number, and for LeakyReLU at least
// 0, as Keras requires.
func (l *alphaLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("%s layer: %w", l.class, l.nameErr)
	}
	if math.IsNaN(l.alpha) || math.IsInf(l.alpha, 0) {
		return fmt.Errorf("%s layer %q: alpha %v: want a finite number", l.class, l.name, l.alpha)
	}
	if l.act == ops.LeakyReLU && l.alpha < 0 {
		return fmt.Errorf("%s layer %q: alpha %v: want a number >= 0, as Keras", l.class, l.name, l.alpha)
	}
	return nil
}

// plan keeps the input's shape; no weights.
func (l *alphaLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build checks the arguments and returns the input shape unchanged.
func (l *alphaLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := l.plan(inputShape)
	return out, err
}

// Params returns nil: no weights.
func (l *alphaLayer) Params() []*Param { return nil }

// Call adds the activation with the layer's alpha to the graph.
func (l *alphaLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	out, err := ops.ActivateWith(l.act, l.alpha, in.Node)
	if err != nil {
		return Flow{}, fmt.Errorf("%s layer %q: %w", l.class, l.name, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

// Config returns the class with name and alpha, Keras 2's key.
func (l *alphaLayer) Config() (Config, error) {
	return Config{ClassName: l.class, Config: map[string]any{"name": l.name, "alpha": l.alpha}}, nil
}

// ONNX adds ONNX's LeakyRelu or Elu with the layer's alpha.
func (l *alphaLayer) ONNX(b ONNXGraph, in string) (string, error) {
	return onnxActivation(b, in, l.act, l.alpha)
}

// leakyReLUFromConfig reads Keras 2's alpha (default 0.3) or Keras 3's
// negative_slope.
func leakyReLUFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Alpha         *float64 `json:"alpha"`
		NegativeSlope *float64 `json:"negative_slope"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	alpha := 0.3
	switch {
	case a.Alpha != nil && a.NegativeSlope != nil:
		return nil, fmt.Errorf("both alpha (Keras 2) and negative_slope (Keras 3) are given: give one")
	case a.Alpha != nil:
		alpha = *a.Alpha
	case a.NegativeSlope != nil:
		alpha = *a.NegativeSlope
	}
	return NewLeakyReLU(alpha, a.nameOptions()...), nil
}

func eluFromConfig(args map[string]any) (Layer, error) {
	a := struct {
		baseArgs
		Alpha float64 `json:"alpha"`
	}{Alpha: 1}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	return NewELU(a.Alpha, a.nameOptions()...), nil
}

// PReLUOption configures a PReLU layer: AlphaInitializer,
// AlphaRegularizer, SharedAxes, or any Option, such as Named.
type PReLUOption interface{ applyPReLU(*PReLULayer) }

type preluOption func(*PReLULayer)

func (f preluOption) applyPReLU(l *PReLULayer) { f(l) }

func (o nameOption) applyPReLU(l *PReLULayer) { o.applyLayer(&l.named) }

// AlphaInitializer sets how PReLU's alpha starts (Keras' default: zeros).
func AlphaInitializer(i Initializer) PReLUOption {
	return preluOption(func(l *PReLULayer) { l.init = i })
}

// AlphaRegularizer adds r's penalty of PReLU's alpha to the model's loss
// (Keras' alpha_regularizer).
func AlphaRegularizer(r Regularizer) PReLUOption {
	return preluOption(func(l *PReLULayer) { l.reg = &r })
}

// SharedAxes are the axes of the input, counted with the batch axis as 0,
// along which PReLU shares one alpha (Keras' shared_axes): SharedAxes(1, 2)
// on images (height, width, channels) learns one alpha per channel.
func SharedAxes(axes ...int) PReLUOption {
	return preluOption(func(l *PReLULayer) { l.shared = slices.Clone(axes) })
}

// PReLULayer is keras.layers.PReLU: x where x > 0, else alpha·x, with
// alpha a weight of the input's sample shape, but of size 1 along the
// shared axes.
type PReLULayer struct {
	named
	init   Initializer
	reg    *Regularizer
	shared []int
	alpha  *Param
}

// NewPReLU makes a PReLU layer, like keras.layers.PReLU(): alpha starts at
// zeros (a ReLU) unless AlphaInitializer says otherwise, one per value of
// a sample unless SharedAxes shares it. Its automatic name is Keras'
// "p_re_lu".
func NewPReLU(opts ...PReLUOption) *PReLULayer {
	l := &PReLULayer{init: Zeros()}
	for _, o := range opts {
		if o != nil {
			o.applyPReLU(l)
		}
	}
	return l
}

// Type returns "PReLU".
func (l *PReLULayer) Type() string { return "PReLU" }

// CheckConfig checks the name and that the shared axes are sample axes
// (1 or more), each once.
func (l *PReLULayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("PReLU layer: %w", l.nameErr)
	}
	for i, a := range l.shared {
		if a < 1 || slices.Contains(l.shared[:i], a) {
			return fmt.Errorf("PReLU layer %q: shared_axes %v: want axes of the samples (1 or more, 0 is the batch), each once", l.name, l.shared)
		}
	}
	return nil
}

// plan keeps the input's shape; alpha has the sample shape with 1 along
// the shared axes.
func (l *PReLULayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if len(inputShape) == 0 {
		return nil, nil, fmt.Errorf("PReLU layer %q: expects samples of at least one axis, gets %s", l.name, shapes.String(inputShape))
	}
	alpha := slices.Clone(inputShape)
	for _, a := range l.shared {
		if a > len(inputShape) {
			return nil, nil, fmt.Errorf("PReLU layer %q: shared axis %d on inputs %s, which have axes 1 to %d", l.name, a, shapes.String(inputShape), len(inputShape))
		}
		alpha[a-1] = 1
	}
	return slices.Clone(inputShape), []WeightShape{{"alpha", alpha}}, nil
}

// Build makes alpha.
func (l *PReLULayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, ws, err := l.plan(inputShape)
	if err != nil {
		return nil, err
	}
	shape := ws[0].Shape
	l.alpha = &Param{Name: "alpha", Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(shape...))}
	fanIn, fanOut := kerasFans(shape)
	l.init.Fill(l.alpha.Value.Data().([]float32), fanIn, fanOut, rng)
	return out, nil
}

// kerasFans are the fans Keras' initializers compute for a weight of the
// given shape: the size for one axis, the two sizes for two, and for more
// the last two each times the product of the others.
func kerasFans(shape []int) (fanIn, fanOut int) {
	switch len(shape) {
	case 1:
		return shape[0], shape[0]
	case 2:
		return shape[0], shape[1]
	}
	field := 1
	for _, d := range shape[:len(shape)-2] {
		field *= d
	}
	return shape[len(shape)-2] * field, shape[len(shape)-1] * field
}

// Params returns alpha.
func (l *PReLULayer) Params() []*Param {
	if l.alpha == nil {
		return nil
	}
	return []*Param{l.alpha}
}

// Call adds relu(x) - alpha·relu(-x) to the graph, as Keras computes
// PReLU, alpha broadcast over the batch and the shared axes.
func (l *PReLULayer) Call(in Flow, params []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("PReLU layer %q", l.name)
	if len(params) != 1 {
		return Flow{}, fmt.Errorf("%s: got %d weight nodes for 1 weight (was the layer built?)", what, len(params))
	}
	x := in.Node
	alpha, err := ops.Reshape(params[0], append([]int{1}, params[0].Shape()...), true)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	pos, err := ops.Activate(ops.ReLU, x)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	negX, err := ops.Scale(x, -1)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	neg, err := ops.Activate(ops.ReLU, negX)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	scaled, err := ops.Binary(ops.BinaryMultiply, alpha, neg)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	out, err := ops.Binary(ops.BinarySubtract, pos, scaled)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	f := Flow{Node: out, NeedsGrad: true}
	if l.reg != nil {
		p, err := ops.Penalty(params[0], ops.PenaltyParams{L1: l.reg.L1, L2: l.reg.L2})
		if err != nil {
			return Flow{}, fmt.Errorf("%s: alpha regularizer: %w", what, err)
		}
		f.Losses = []*gorgonia.Node{p}
	}
	return f, nil
}

// Config returns "PReLU" with name, alpha_initializer, alpha_regularizer
// and shared_axes (null for none), Keras 2's keys.
func (l *PReLULayer) Config() (Config, error) {
	init, err := InitializerConfig(l.init)
	if err != nil {
		return Config{}, fmt.Errorf("PReLU layer %q: alpha_initializer: %w", l.name, err)
	}
	var shared any
	if len(l.shared) > 0 {
		shared = slices.Clone(l.shared)
	}
	return Config{ClassName: l.Type(), Config: map[string]any{
		"name": l.name, "alpha_initializer": init, "alpha_regularizer": regularizerOrNone(l.reg), "shared_axes": shared,
	}}, nil
}

func preluFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		AlphaInitializer *Config `json:"alpha_initializer"`
		AlphaRegularizer *Config `json:"alpha_regularizer"`
		SharedAxes       []int   `json:"shared_axes"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	var opts []PReLUOption
	if a.AlphaInitializer != nil {
		init, err := InitializerFromConfig(*a.AlphaInitializer)
		if err != nil {
			return nil, fmt.Errorf("alpha_initializer: %w", err)
		}
		opts = append(opts, AlphaInitializer(init))
	}
	if a.AlphaRegularizer != nil {
		r, err := RegularizerFromConfig(*a.AlphaRegularizer)
		if err != nil {
			return nil, fmt.Errorf("alpha_regularizer: %w", err)
		}
		opts = append(opts, AlphaRegularizer(r))
	}
	if len(a.SharedAxes) > 0 {
		opts = append(opts, SharedAxes(a.SharedAxes...))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return NewPReLU(opts...), nil
}

// ONNX adds ONNX's PRelu, its slope alpha with the sample's axes, which
// broadcasts over the batch, on the input channels last (as alpha is).
func (l *PReLULayer) ONNX(b ONNXGraph, in string) (string, error) {
	if l.alpha == nil {
		return "", fmt.Errorf("PReLU layer %q has no alpha: is the model built?", l.name)
	}
	return b.Node("PRelu", []string{b.ChannelsLast(in), onnxWeight(b, l.alpha)}), nil
}
