// Package opstest helps the tests of the CUDA machine: it hands them
// package ops' CPU ops (whose types are unexported) with the parameters they
// need and runs them, so that kernels are checked against the very code the
// CPU machine runs. It serves the device layer and imports nothing above it
// (ops, not nn or data): datasets for tests that fit models are in
// internal/modeltest.
package opstest

import (
	"fmt"
	"math"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Ops are the ops of a small graph x → Affine(+bias) → act → Loss(kind)
// and its gradients, for rows × cols activations.
type Ops struct {
	Affine, Activation, ActivationGrad, Loss, LossGrad, SumRows gorgonia.Op
	// MatMulTransA is x^T·g (a kernel's gradient); MatMulTransB g·w^T.
	MatMulTransA, MatMulTransB gorgonia.Op
}

// Build makes the graph and collects its ops.
func Build(act ops.Activation, loss ops.LossKind, rows, cols int) (Ops, error) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(rows, 4), gorgonia.WithName("x"))
	w := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(4, cols), gorgonia.WithName("w"))
	b := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(cols), gorgonia.WithName("b"))
	ycols := cols
	if loss.Sparse() {
		ycols = 1
	}
	y := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(rows, ycols), gorgonia.WithName("y"))
	z, err := ops.Affine(x, w, b, true)
	if err != nil {
		return Ops{}, err
	}
	a, err := ops.Activate(act, z)
	if err != nil {
		return Ops{}, err
	}
	l, err := ops.Loss(loss, a, y)
	if err != nil {
		return Ops{}, err
	}
	if _, err := gorgonia.Grad(l, x, w, b); err != nil {
		return Ops{}, err
	}
	var o Ops
	for _, n := range g.AllNodes() {
		info, ok := ops.Inspect(n.Op())
		if !ok {
			continue
		}
		switch info.Kind {
		case ops.OpAffine:
			o.Affine = n.Op()
		case ops.OpActivation:
			o.Activation = n.Op()
		case ops.OpActivationGrad:
			o.ActivationGrad = n.Op()
		case ops.OpLoss:
			o.Loss = n.Op()
		case ops.OpLossGrad:
			o.LossGrad = n.Op()
		case ops.OpSumRows:
			o.SumRows = n.Op()
		case ops.OpMatMul:
			if info.TransA {
				o.MatMulTransA = n.Op()
			} else {
				o.MatMulTransB = n.Op()
			}
		}
	}
	return o, nil
}

// Dense copies data into a float32 tensor of the given shape.
func Dense(ds []float32, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), ds...)))
}

// Run runs op's Do, the CPU implementation, and returns its values.
func Run(op gorgonia.Op, args ...gorgonia.Value) ([]float32, error) {
	if op == nil {
		return nil, fmt.Errorf("no op")
	}
	v, err := op.Do(args...)
	if err != nil {
		return nil, fmt.Errorf("%v on the CPU: %w", op, err)
	}
	switch r := v.(type) {
	case *tensor.Dense:
		return r.Data().([]float32), nil
	case *gorgonia.F32:
		return []float32{float32(*r)}, nil
	}
	return nil, fmt.Errorf("%v returned a %T", op, v)
}

// Near reports whether a and b agree within tol, relative to their size
// when that is above 1; NaN agrees only with NaN.
func Near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// Diff returns "" when got and want agree value by value within tol, else
// a description of the first difference.
func Diff(got, want []float32, tol float64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if !Near(float64(got[i]), float64(want[i]), tol) {
			return fmt.Sprintf("[%d] = %v, the CPU gives %v", i, got[i], want[i])
		}
	}
	return ""
}

// LossInputs makes predictions and targets (and the targets' columns) that
// loss kind accepts: logits, regression values, rates or probabilities
// (some at or past the clipping bounds), one-hot rows, values in [0, 1],
// counts, 0/1 (Hinge) or -1/1 (SquaredHinge) labels, or class indices.
func LossInputs(rnd func() float64, norm func() float64, intn func(int) int, kind ops.LossKind, rows, cols int) (p, y []float32, ycols int) {
	p = make([]float32, rows*cols)
	switch kind {
	case ops.SoftmaxCrossEntropy, ops.SparseSoftmaxCrossEntropy, ops.SigmoidCrossEntropy, ops.MeanSquaredError,
		ops.MeanAbsoluteError, ops.MeanAbsolutePercentageError, ops.Huber, ops.LogCosh, ops.Hinge, ops.SquaredHinge,
		ops.CosineSimilarity:
		for i := range p {
			p[i] = float32(3 * norm())
		}
	case ops.MeanSquaredLogarithmicError, ops.Poisson:
		// Rates: non-negative, one at 0 and, for MSLE, one below the clip.
		for i := range p {
			p[i] = float32(3 * rnd())
		}
		p[0] = 0
		if len(p) > 1 && kind == ops.MeanSquaredLogarithmicError {
			p[1] = -0.5
		}
	default:
		for i := range p {
			p[i] = float32(rnd())
		}
		p[0] = 0
		if len(p) > 1 {
			p[1] = 1
		}
	}
	if kind.Sparse() {
		y = make([]float32, rows)
		for i := range y {
			y[i] = float32(intn(cols))
		}
		return p, y, 1
	}
	y = make([]float32, rows*cols)
	for i := range y {
		switch kind {
		case ops.SigmoidCrossEntropy, ops.BinaryCrossentropy, ops.MeanSquaredError, ops.KLDivergence:
			y[i] = float32(rnd())
		case ops.MeanAbsoluteError, ops.MeanAbsolutePercentageError, ops.Huber, ops.LogCosh, ops.CosineSimilarity:
			y[i] = float32(2 * norm())
		case ops.MeanSquaredLogarithmicError:
			y[i] = float32(3 * rnd())
		case ops.Poisson:
			y[i] = float32(intn(4))
		case ops.Hinge:
			y[i] = float32(intn(2))
		case ops.SquaredHinge:
			y[i] = float32(2*intn(2) - 1)
		}
	}
	switch kind {
	case ops.CategoricalCrossentropy, ops.SoftmaxCrossEntropy, ops.CategoricalHinge:
		for r := 0; r < rows; r++ {
			y[r*cols+intn(cols)] = 1
		}
	case ops.MeanAbsolutePercentageError, ops.KLDivergence:
		y[0] = 0 // under the floor, or the clip
	}
	return p, y, cols
}

// ElementwiseActivations lists all of package ops' activations but softmax,
// which works on rows: those the BiasAct and ActGrad kernels compute.
func ElementwiseActivations() []ops.Activation {
	return []ops.Activation{ops.Linear, ops.ReLU, ops.Sigmoid, ops.Tanh, ops.GELU, ops.GELUApproximate, ops.Swish,
		ops.ELU, ops.SELU, ops.Softplus, ops.Softsign, ops.HardSigmoid, ops.Exponential, ops.LeakyReLU}
}

// LossKinds lists all of package ops' losses.
func LossKinds() []ops.LossKind {
	return []ops.LossKind{ops.SoftmaxCrossEntropy, ops.SparseSoftmaxCrossEntropy, ops.SigmoidCrossEntropy,
		ops.CategoricalCrossentropy, ops.SparseCategoricalCrossentropy, ops.BinaryCrossentropy, ops.MeanSquaredError,
		ops.MeanAbsoluteError, ops.MeanAbsolutePercentageError, ops.MeanSquaredLogarithmicError, ops.Huber, ops.LogCosh,
		ops.KLDivergence, ops.Poisson, ops.Hinge, ops.SquaredHinge, ops.CategoricalHinge, ops.CosineSimilarity}
}

// LossParamsFor lists the parameters the tests try kind with: Keras'
// defaults, label smoothing for the cross-entropies that take it, and
// Huber's delta below and above the default.
func LossParamsFor(kind ops.LossKind) []ops.LossParams {
	ps := []ops.LossParams{{}}
	switch kind {
	case ops.SoftmaxCrossEntropy, ops.SigmoidCrossEntropy, ops.CategoricalCrossentropy, ops.BinaryCrossentropy:
		ps = append(ps, ops.LossParams{LabelSmoothing: 0.1}, ops.LossParams{LabelSmoothing: 1})
	case ops.Huber:
		ps = append(ps, ops.LossParams{Delta: 0.5}, ops.LossParams{Delta: 3})
	}
	return ps
}

// SampleWeights makes a weight per sample in [0, 2), the first 0 when
// there are several.
func SampleWeights(rnd func() float64, rows int) []float32 {
	w := make([]float32, rows)
	for i := range w {
		w[i] = float32(2 * rnd())
	}
	if rows > 1 {
		w[0] = 0
	}
	return w
}

// MustBuild is Build for tests: it fails t on an error.
func MustBuild(t testing.TB, act ops.Activation, loss ops.LossKind, rows, cols int) Ops {
	t.Helper()
	o, err := Build(act, loss, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// MustRun is Run for tests: it fails t on an error.
func MustRun(t testing.TB, op gorgonia.Op, args ...gorgonia.Value) []float32 {
	t.Helper()
	v, err := Run(op, args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
