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
)

var activationNames = [...]string{Linear: "linear", ReLU: "relu", Sigmoid: "sigmoid", Tanh: "tanh", Softmax: "softmax", GELU: "gelu"}

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
	return Linear, fmt.Errorf("unknown activation %q: known activations are %s", name, strings.Join(activationNames[:], ", "))
}

// Activate adds the node act(x) to the graph. Softmax works on the last axis.
func Activate(act Activation, x *gorgonia.Node) (*gorgonia.Node, error) {
	if act < 0 || int(act) >= len(activationNames) {
		return nil, fmt.Errorf("activate: unknown activation %d", int(act))
	}
	return gorgonia.ApplyOp(activationOp{act: act}, x)
}

type activationOp struct {
	common
	act Activation
}

func (op activationOp) String() string        { return "Activation{" + op.act.String() + "}" }
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
		activate(op.act, cols, x.Data().([]float32), od)
	case []float64:
		activate(op.act, cols, x.Data().([]float64), od)
	}
	return out, nil
}

// activate writes act(x) into y; cols is the row length softmax works on.
func activate[T float](act Activation, cols int, x, y []T) {
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
		for r := 0; r+cols <= len(x); r += cols {
			softmaxRow(x[r:r+cols], y[r:r+cols])
		}
	case GELU:
		for i, v := range x {
			y[i] = T(gelu(float64(v)))
		}
	}
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

func (op activationGradOp) String() string        { return "ActivationGrad{" + op.act.String() + "}" }
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
		activateGrad(op.act, cols, ts[0].Data().([]float32), ts[1].Data().([]float32), ts[2].Data().([]float32), od)
	case []float64:
		activateGrad(op.act, cols, ts[0].Data().([]float64), ts[1].Data().([]float64), ts[2].Data().([]float64), od)
	}
	return out, nil
}

// activateGrad writes dx given x, y = act(x) and dy.
func activateGrad[T float](act Activation, cols int, x, y, dy, dx []T) {
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
	case GELU:
		for i, v := range x {
			dx[i] = T(float64(dy[i]) * geluGrad(float64(v)))
		}
	case Softmax:
		for r := 0; r+cols <= len(y); r += cols {
			yr, dyr, dxr := y[r:r+cols], dy[r:r+cols], dx[r:r+cols]
			var dot T
			for j := range yr {
				dot += yr[j] * dyr[j]
			}
			for j := range yr {
				dxr[j] = yr[j] * (dyr[j] - dot)
			}
		}
	}
}
