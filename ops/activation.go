package ops

import (
	"fmt"
	"hash"
	"math"
	"strings"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Activation names an elementwise (or, for softmax, row-wise) activation.
type Activation int

// The activations Keras users reach for, by their Keras names.
const (
	Linear Activation = iota
	ReLU
	Sigmoid
	Tanh
	Softmax
	// GELU is Keras' gelu with approximate=False (TensorFlow's
	// tf.nn.gelu): x·Φ(x) = 0.5·x·erfc(-x/√2), Φ the standard normal CDF.
	GELU
	// GELUApproximate is Keras' gelu with approximate=True, the tanh form
	// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). Keras has no name for it
	// (its configs write "gelu" either way, losing the flag); gokeras
	// writes "gelu_approximate", a name only gokeras reads, so that a saved
	// model keeps the function it was trained with.
	GELUApproximate
	// Swish is x·sigmoid(x), Keras 2's "swish"; Keras 3 calls it "silu"
	// (with "swish" an alias), and ParseActivation takes both.
	Swish
	// ELU is x where x > 0, else alpha·(eˣ - 1); alpha is 1 unless given
	// (ActivateWith, the ELU layer).
	ELU
	// SELU is scale·x where x ≥ 0, else scale·alpha·(eˣ - 1), with Keras'
	// constants SELUAlpha and SELUScale.
	SELU
	// Softplus is log(1 + eˣ), computed as max(x, 0) + log1p(e^-|x|).
	Softplus
	// Softsign is x/(1 + |x|) (±1 at ±∞).
	Softsign
	// HardSigmoid is Keras 2's hard_sigmoid, clip(0.2·x + 0.5, 0, 1).
	// Keras 3 changed it to relu6(x + 3)/6 = clip(x/6 + 0.5, 0, 1); gokeras
	// keeps Keras 2's, the one its saved models were trained with.
	HardSigmoid
	// Exponential is eˣ.
	Exponential
	// LeakyReLU is x where x > 0, else alpha·x (TensorFlow's
	// tf.nn.leaky_relu). By name ("leaky_relu", which Keras 3 has as a
	// function and Keras 2 only as the LeakyReLU layer) alpha is 0.2, the
	// default of tf.nn.leaky_relu and Keras 3's leaky_relu; the LeakyReLU
	// layer's is Keras 2's 0.3.
	LeakyReLU
)

// Keras' SELU constants (Klambauer et al., 2017).
const (
	SELUAlpha = 1.6732632423543772848170429916717
	SELUScale = 1.0507009873554804934193349852946
)

var activationNames = [...]string{Linear: "linear", ReLU: "relu", Sigmoid: "sigmoid", Tanh: "tanh", Softmax: "softmax", GELU: "gelu",
	GELUApproximate: "gelu_approximate", Swish: "swish", ELU: "elu", SELU: "selu", Softplus: "softplus", Softsign: "softsign",
	HardSigmoid: "hard_sigmoid", Exponential: "exponential", LeakyReLU: "leaky_relu"}

// activationAliases are other names ParseActivation takes: Keras 3's.
var activationAliases = map[string]Activation{"silu": Swish}

// DefaultAlpha is the alpha an activation has when none is given: 1 for
// ELU, 0.2 for LeakyReLU (see LeakyReLU), 0 for the activations without
// one.
func DefaultAlpha(act Activation) float64 {
	switch act {
	case ELU:
		return 1
	case LeakyReLU:
		return 0.2
	}
	return 0
}

// HasAlpha reports whether the activation takes an alpha: ELU and
// LeakyReLU.
func HasAlpha(act Activation) bool { return act == ELU || act == LeakyReLU }

// String returns the Keras name of the activation.
func (a Activation) String() string {
	if a < 0 || int(a) >= len(activationNames) {
		return fmt.Sprintf("Activation(%d)", int(a))
	}
	return activationNames[a]
}

// ParseActivation finds an activation by its Keras name ("relu", "softmax",
// ...). The empty string and "linear" both mean no activation.
func ParseActivation(name string) (Activation, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return Linear, nil
	}
	for a, known := range activationNames {
		if n == known {
			return Activation(a), nil
		}
	}
	if a, ok := activationAliases[n]; ok {
		return a, nil
	}
	return Linear, fmt.Errorf("unknown activation %q: known activations are %s", name, strings.Join(activationNames[:], ", "))
}

// Activate adds the node act(x) to the graph, with the activation's
// DefaultAlpha. Softmax works on the last axis.
func Activate(act Activation, x *gorgonia.Node) (*gorgonia.Node, error) {
	return ActivateWith(act, DefaultAlpha(act), x)
}

// ActivateWith is Activate with the alpha of ELU or LeakyReLU; the other
// activations take none, and refuse one but 0.
func ActivateWith(act Activation, alpha float64, x *gorgonia.Node) (*gorgonia.Node, error) {
	if act < 0 || int(act) >= len(activationNames) {
		return nil, fmt.Errorf("activate: unknown activation %d", int(act))
	}
	if !HasAlpha(act) && alpha != 0 {
		return nil, fmt.Errorf("activate: %v takes no alpha (got %v): only elu and leaky_relu do", act, alpha)
	}
	if math.IsNaN(alpha) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("activate: %v with alpha %v: want a finite alpha", act, alpha)
	}
	return gorgonia.ApplyOp(activationOp{act: act, alpha: alpha}, x)
}

type activationOp struct {
	common
	act   Activation
	alpha float64 // ELU's and LeakyReLU's; 0 for the others
}

func (op activationOp) String() string { return "Activation{" + op.name() + "}" }

// name is the activation's name, with its alpha where it has one.
func (op activationOp) name() string {
	if HasAlpha(op.act) {
		return fmt.Sprintf("%v(alpha=%v)", op.act, op.alpha)
	}
	return op.act.String()
}

func (op activationOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op activationOp) Hashcode() uint32      { return hashOf(op) }
func (op activationOp) Arity() int            { return 1 }

func (op activationOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (op activationOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op activationOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	out := newLike(x.Dtype(), x.Shape().Clone()...)
	_, cols := rowsCols(x.Shape())
	switch od := out.Data().(type) {
	case []float32:
		activate(op.act, op.alpha, cols, x.Data().([]float32), od)
	case []float64:
		activate(op.act, op.alpha, cols, x.Data().([]float64), od)
	}
	return out, nil
}

// activate writes act(x) into y; cols is the row length softmax works on,
// alpha ELU's or LeakyReLU's. The elementwise formulas are the functions
// below, each with its derivative; kernels.cu has their float32 twins.
func activate[T float](act Activation, alpha float64, cols int, x, y []T) {
	switch act {
	case Linear:
		copy(y, x)
	case ReLU:
		for i, v := range x {
			if v > 0 {
				y[i] = v
			} else {
				y[i] = 0
			}
		}
	case Sigmoid:
		for i, v := range x {
			y[i] = T(sigmoid(float64(v)))
		}
	case Tanh:
		for i, v := range x {
			y[i] = T(math.Tanh(float64(v)))
		}
	case Softmax:
		softmaxRows(cols, x, y)
	default:
		for i, v := range x {
			y[i] = T(activateOne(act, alpha, float64(v)))
		}
	}
}

// activateOne is an elementwise activation (all but linear, relu,
// sigmoid, tanh and softmax, which have their own loops) of one value.
func activateOne(act Activation, alpha, v float64) float64 {
	switch act {
	case GELU:
		return gelu(v)
	case GELUApproximate:
		return geluApprox(v)
	case Swish:
		return swish(v)
	case ELU:
		if v > 0 {
			return v
		}
		return alpha * math.Expm1(v)
	case SELU:
		if v >= 0 {
			return SELUScale * v
		}
		return SELUScale * SELUAlpha * math.Expm1(v)
	case Softplus:
		return softplus(v)
	case Softsign:
		if math.IsInf(v, 0) {
			return math.Copysign(1, v)
		}
		return v / (1 + math.Abs(v))
	case HardSigmoid:
		return hardSigmoid(v)
	case Exponential:
		return math.Exp(v)
	case LeakyReLU:
		if v > 0 {
			return v
		}
		return alpha * v
	}
	return v
}

// activateOneGrad is activateOne's derivative at v, given y = act(v).
func activateOneGrad(act Activation, alpha, v, y float64) float64 {
	switch act {
	case GELU:
		return geluGrad(v)
	case GELUApproximate:
		return geluApproxGrad(v)
	case Swish:
		return swishGrad(v)
	case ELU:
		// At 0, 1 for alpha 1, as TensorFlow's EluGrad; alpha·e⁰ = alpha
		// otherwise, as Keras 2's where(x > 0, elu(x), alpha·elu(x)).
		if v > 0 {
			return 1
		}
		return alpha * math.Exp(v)
	case SELU:
		// scale at 0, as TensorFlow's SeluGrad.
		if v >= 0 {
			return SELUScale
		}
		return SELUScale * SELUAlpha * math.Exp(v)
	case Softplus:
		return sigmoid(v)
	case Softsign:
		d := 1 + math.Abs(v)
		return 1 / (d * d)
	case HardSigmoid:
		// The gradient of clip_by_value: through unless 0.2·x + 0.5 is
		// below 0 or above 1 (so through at the bounds, and for NaN).
		if p := float64(0.2*v) + 0.5; p < 0 || p > 1 { // the product rounded, as in hardSigmoid
			return 0
		}
		return 0.2
	case Exponential:
		return y
	case LeakyReLU:
		// alpha at 0, as TensorFlow's LeakyReluGrad.
		if v > 0 {
			return 1
		}
		return alpha
	}
	return 1
}

// geluApproxC is √(2/π), the tanh form's scale.
const geluApproxC = 0.7978845608028654

// geluApprox is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), TensorFlow's
// tf.nn.gelu(approximate=True); a zero of x's sign where 1 + tanh is 0 (so
// -∞ gives -0, not NaN).
func geluApprox(x float64) float64 {
	p := 1 + math.Tanh(geluApproxC*(x+0.044715*x*x*x))
	if p == 0 {
		return math.Copysign(0, x)
	}
	return 0.5 * x * p
}

// geluApproxGrad is geluApprox's derivative, 0.5·(1 + t) + 0.5·x·(1 - t²)·
// √(2/π)·(1 + 3·0.044715·x²), t the tanh above; 0.5·(1 + t) where 1 - t²
// is 0 (large |x|, where x² may overflow).
func geluApproxGrad(x float64) float64 {
	t := math.Tanh(geluApproxC * (x + 0.044715*x*x*x))
	s := 1 - t*t
	if s == 0 {
		return 0.5 * (1 + t)
	}
	return 0.5*(1+t) + 0.5*x*s*geluApproxC*(1+3*0.044715*x*x)
}

// swish is x·sigmoid(x); a zero of x's sign where the sigmoid is 0 (so
// -∞ gives -0, not NaN).
func swish(x float64) float64 {
	s := sigmoid(x)
	if s == 0 {
		return math.Copysign(0, x)
	}
	return x * s
}

// swishGrad is s·(1 + x·(1 - s)), s = sigmoid(x), as TensorFlow's swish
// gradient; 0 where s is 0 and 1 where s is 1 (so ±∞ give no NaN).
func swishGrad(x float64) float64 {
	s := sigmoid(x)
	if s == 0 || s == 1 {
		return s
	}
	return s * (1 + x*(1-s))
}

// hardSigmoid is Keras 2's clip(0.2·x + 0.5, 0, 1) (NaN for NaN).
func hardSigmoid(x float64) float64 {
	p := float64(0.2*x) + 0.5 // the product rounded, as Keras computes it: no fused multiply-add
	if p < 0 {
		return 0
	}
	if p > 1 {
		return 1
	}
	return p
}

// gelu is x·Φ(x), with Φ(x) = erfc(-x/√2)/2 as TensorFlow computes it: no
// cancellation for negative x, where 1+erf(x/√2) would lose the digits.
// Where Φ(x) is 0 the value is a zero of x's sign (so GELU(-∞) = -0).
func gelu(x float64) float64 {
	c := math.Erfc(-x * (1 / math.Sqrt2))
	if c == 0 {
		return math.Copysign(0, x)
	}
	return 0.5 * x * c
}

// geluGrad is GELU's derivative Φ(x) + x·φ(x), φ the standard normal
// density; where φ(x) is 0 (|x| ≥ 39, and ±∞) it is Φ(x), 1 or 0.
func geluGrad(x float64) float64 {
	p := 0.5 * math.Erfc(-x*(1/math.Sqrt2))
	d := math.Exp(-0.5*x*x) * (1 / math.Sqrt(2*math.Pi))
	if d == 0 {
		return p
	}
	return p + x*d
}

// sigmoid is the logistic function, computed without overflow for any v.
func sigmoid(v float64) float64 {
	if v >= 0 {
		return 1 / (1 + math.Exp(-v))
	}
	e := math.Exp(v)
	return e / (1 + e)
}

// softmaxRow writes softmax(x) into y, shifting by the row maximum so that
// large logits do not overflow.
func softmaxRow[T float](x, y []T) {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for i, v := range x {
		e := math.Exp(float64(v) - m)
		y[i] = T(e)
		sum += e
	}
	for i := range y {
		y[i] = T(float64(y[i]) / sum)
	}
}

func (op activationOp) DiffWRT(inputs int) []bool { return []bool{true} }

func (op activationOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want 1", op, len(inputs))
	}
	dx, err := gorgonia.ApplyOp(activationGradOp(op), inputs[0], output, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx}, nil
}

// activationGradOp maps (x, y = act(x), dy) to dx.
type activationGradOp activationOp

func (op activationGradOp) String() string        { return "ActivationGrad{" + activationOp(op).name() + "}" }
func (op activationGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op activationGradOp) Hashcode() uint32      { return hashOf(op) }
func (op activationGradOp) Arity() int            { return 3 }

func (op activationGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, a, a)
}

func (op activationGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op activationGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	var ts [3]*tensor.Dense
	for i := range ts {
		t, err := denseArg(op, args, i)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	if err := sameDtype(op, ts[:]...); err != nil {
		return nil, err
	}
	out := newLike(ts[0].Dtype(), ts[0].Shape().Clone()...)
	_, cols := rowsCols(ts[0].Shape())
	switch od := out.Data().(type) {
	case []float32:
		activateGrad(op.act, op.alpha, cols, ts[0].Data().([]float32), ts[1].Data().([]float32), ts[2].Data().([]float32), od)
	case []float64:
		activateGrad(op.act, op.alpha, cols, ts[0].Data().([]float64), ts[1].Data().([]float64), ts[2].Data().([]float64), od)
	}
	return out, nil
}

// activateGrad writes dx given x, y = act(x) and dy.
func activateGrad[T float](act Activation, alpha float64, cols int, x, y, dy, dx []T) {
	switch act {
	case Linear:
		copy(dx, dy)
	case ReLU:
		// As TensorFlow's ReluGrad: no gradient where x <= 0.
		for i, v := range x {
			if v > 0 {
				dx[i] = dy[i]
			} else {
				dx[i] = 0
			}
		}
	case Sigmoid:
		for i, v := range y {
			dx[i] = dy[i] * v * (1 - v)
		}
	case Tanh:
		for i, v := range y {
			dx[i] = dy[i] * (1 - v*v)
		}
	case Softmax:
		softmaxGradRows(cols, y, dy, dx)
	default:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) * activateOneGrad(act, alpha, float64(v), float64(y[i])))
		}
	}
}
