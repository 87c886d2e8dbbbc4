package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Epsilon is Keras' fuzz factor (keras.backend.epsilon()): losses computed
// from probabilities clip them to [Epsilon, 1-Epsilon] before taking logs.
const Epsilon = 1e-7

// LossKind names how a loss is computed. The logit forms are what
// TensorFlow runs when a Keras cross-entropy follows a sigmoid or softmax
// output: the same loss, computed stably from the pre-activation values.
type LossKind int

const (
	// SoftmaxCrossEntropy: logits (batch, classes), target distributions
	// (batch, classes). Per sample: -Σ y·log softmax(z).
	SoftmaxCrossEntropy LossKind = iota
	// SparseSoftmaxCrossEntropy: logits (batch, classes), class indices (batch, 1).
	SparseSoftmaxCrossEntropy
	// SigmoidCrossEntropy: logits and targets in [0, 1], same shape; per
	// sample the mean over the last axis of the binary cross-entropy.
	SigmoidCrossEntropy
	// CategoricalCrossentropy: probabilities, each row normalised to sum 1,
	// clipped to [Epsilon, 1-Epsilon]; per sample -Σ y·log p.
	CategoricalCrossentropy
	// SparseCategoricalCrossentropy: probabilities, class indices (batch, 1).
	SparseCategoricalCrossentropy
	// BinaryCrossentropy: probabilities clipped to [Epsilon, 1-Epsilon];
	// per sample the mean over the last axis of
	// -(y·log(p+ε) + (1-y)·log(1-p+ε)).
	BinaryCrossentropy
	// MeanSquaredError: per sample the mean over the last axis of (p-y)².
	MeanSquaredError
)

var lossKindNames = [...]string{
	SoftmaxCrossEntropy:           "softmax_cross_entropy_with_logits",
	SparseSoftmaxCrossEntropy:     "sparse_softmax_cross_entropy_with_logits",
	SigmoidCrossEntropy:           "sigmoid_cross_entropy_with_logits",
	CategoricalCrossentropy:       "categorical_crossentropy",
	SparseCategoricalCrossentropy: "sparse_categorical_crossentropy",
	BinaryCrossentropy:            "binary_crossentropy",
	MeanSquaredError:              "mean_squared_error",
}

func (k LossKind) String() string {
	if k < 0 || int(k) >= len(lossKindNames) {
		return fmt.Sprintf("LossKind(%d)", int(k))
	}
	return lossKindNames[k]
}

// Sparse reports whether the loss takes class indices as targets.
func (k LossKind) Sparse() bool {
	return k == SparseSoftmaxCrossEntropy || k == SparseCategoricalCrossentropy
}

// Loss adds the scalar node mean over the batch of the per-sample loss of
// pred against target. pred is (batch, classes); target has the same shape,
// or (batch, 1) class indices for the sparse kinds.
func Loss(kind LossKind, pred, target *gorgonia.Node) (*gorgonia.Node, error) {
	if kind < 0 || int(kind) >= len(lossKindNames) {
		return nil, fmt.Errorf("loss: unknown kind %d", int(kind))
	}
	op := lossOp{kind: kind}
	if _, err := op.InferShape(pred.Shape(), target.Shape()); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, pred, target)
}

type lossOp struct {
	common
	kind LossKind
}

func (op lossOp) String() string        { return "Loss{" + op.kind.String() + "}" }
func (op lossOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op lossOp) Hashcode() uint32      { return hashOf(op) }
func (op lossOp) Arity() int            { return 2 }

func (op lossOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, a)
}

// checkShapes validates prediction and target shapes for the loss kind.
func checkLossShapes(kind LossKind, ps, ys tensor.Shape) error {
	if len(ps) != 2 || len(ys) != 2 {
		return fmt.Errorf("%v: want (batch, classes) predictions and targets, got shapes %v and %v", kind, ps, ys)
	}
	if kind.Sparse() {
		if ys[0] != ps[0] || ys[1] != 1 {
			return fmt.Errorf("%v: targets must be one class index per sample, shape (%d, 1); got %v for predictions of shape %v", kind, ps[0], ys, ps)
		}
		return nil
	}
	if !ps.Eq(ys) {
		return fmt.Errorf("%v: targets of shape %v do not match predictions of shape %v", kind, ys, ps)
	}
	return nil
}

func (op lossOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	ps, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	ys, err := shapeOf(op, in, 1)
	if err != nil {
		return nil, err
	}
	if err := checkLossShapes(op.kind, ps, ys); err != nil {
		return nil, err
	}
	return tensor.ScalarShape(), nil
}

// lossArgs reads and checks the predictions and targets a loss op gets.
func lossArgs(op fmt.Stringer, kind LossKind, args []gorgonia.Value) (p, y *tensor.Dense, err error) {
	if p, err = denseArg(op, args, 0); err != nil {
		return nil, nil, err
	}
	if y, err = denseArg(op, args, 1); err != nil {
		return nil, nil, err
	}
	if err := sameDtype(op, p, y); err != nil {
		return nil, nil, err
	}
	if err := checkLossShapes(kind, p.Shape(), y.Shape()); err != nil {
		return nil, nil, err
	}
	return p, y, nil
}

func (op lossOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	p, y, err := lossArgs(op, op.kind, args)
	if err != nil {
		return nil, err
	}
	rows, cols := rowsCols(p.Shape())
	var sum float64
	switch pd := p.Data().(type) {
	case []float32:
		sum, err = lossSum(op.kind, rows, cols, pd, y.Data().([]float32))
	case []float64:
		sum, err = lossSum(op.kind, rows, cols, pd, y.Data().([]float64))
	}
	if err != nil {
		return nil, err
	}
	return scalarValue(sum/float64(rows), p.Dtype()), nil
}

func (op lossOp) DiffWRT(inputs int) []bool { return []bool{true, false} }

func (op lossOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want 2", op, len(inputs))
	}
	dp, err := gorgonia.ApplyOp(lossGradOp(op), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dp, nil}, nil
}

// lossGradOp maps (pred, target, dLoss) to dPred.
type lossGradOp lossOp

func (op lossGradOp) String() string        { return "LossGrad{" + op.kind.String() + "}" }
func (op lossGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op lossGradOp) Hashcode() uint32      { return hashOf(op) }
func (op lossGradOp) Arity() int            { return 3 }

func (op lossGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, a, m)
}

func (op lossGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	ps, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return ps.Clone(), nil
}

func (op lossGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	p, y, err := lossArgs(op, op.kind, args)
	if err != nil {
		return nil, err
	}
	seed, err := scalarArg(op, args, 2)
	if err != nil {
		return nil, err
	}
	rows, cols := rowsCols(p.Shape())
	out := newLike(p.Dtype(), p.Shape().Clone()...)
	scale := seed / float64(rows)
	switch od := out.Data().(type) {
	case []float32:
		err = lossGrad(op.kind, rows, cols, p.Data().([]float32), y.Data().([]float32), scale, od)
	case []float64:
		err = lossGrad(op.kind, rows, cols, p.Data().([]float64), y.Data().([]float64), scale, od)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// classIndex reads a sparse target, which must be a whole number in [0, classes).
func classIndex[T float](kind LossKind, row int, v T, classes int) (int, error) {
	f := float64(v)
	if f != math.Trunc(f) || f < 0 || int(f) >= classes {
		return 0, fmt.Errorf("%v: target of sample %d is %v, but it must be a class index in [0, %d)", kind, row, f, classes)
	}
	return int(f), nil
}

// logSumExp returns log Σ exp(z) computed stably, and fills e with
// exp(z - max) / Σ exp(z - max) = softmax(z) when e is not nil.
func logSumExp[T float](z []T, e []float64) float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, float64(v))
	}
	var s float64
	for j, v := range z {
		x := math.Exp(float64(v) - m)
		if e != nil {
			e[j] = x
		}
		s += x
	}
	if e != nil {
		for j := range e {
			e[j] /= s
		}
	}
	return m + math.Log(s)
}

func clip(v, lo, hi float64) (float64, bool) {
	switch {
	case v < lo:
		return lo, false
	case v > hi:
		return hi, false
	}
	return v, true
}

// lossSum returns the sum over the rows of the per-sample loss.
func lossSum[T float](kind LossKind, rows, cols int, p, y []T) (float64, error) {
	var total float64
	for r := 0; r < rows; r++ {
		pr := p[r*cols : (r+1)*cols]
		var l float64
		switch kind {
		case SoftmaxCrossEntropy:
			yr := y[r*cols : (r+1)*cols]
			lse := logSumExp(pr, nil)
			for j, z := range pr {
				l += float64(yr[j]) * (lse - float64(z))
			}
		case SparseSoftmaxCrossEntropy:
			id, err := classIndex(kind, r, y[r], cols)
			if err != nil {
				return 0, err
			}
			l = logSumExp(pr, nil) - float64(pr[id])
		case SigmoidCrossEntropy:
			yr := y[r*cols : (r+1)*cols]
			for j, zt := range pr {
				z := float64(zt)
				l += math.Max(z, 0) - z*float64(yr[j]) + math.Log1p(math.Exp(-math.Abs(z)))
			}
			l /= float64(cols)
		case CategoricalCrossentropy:
			yr := y[r*cols : (r+1)*cols]
			var s float64
			for _, v := range pr {
				s += float64(v)
			}
			for j, v := range pr {
				q, _ := clip(float64(v)/s, Epsilon, 1-Epsilon)
				l -= float64(yr[j]) * math.Log(q)
			}
		case SparseCategoricalCrossentropy:
			id, err := classIndex(kind, r, y[r], cols)
			if err != nil {
				return 0, err
			}
			var s float64
			for _, v := range pr {
				c, _ := clip(float64(v), Epsilon, 1-Epsilon)
				s += c
			}
			c, _ := clip(float64(pr[id]), Epsilon, 1-Epsilon)
			l = math.Log(s) - math.Log(c)
		case BinaryCrossentropy:
			yr := y[r*cols : (r+1)*cols]
			for j, v := range pr {
				c, _ := clip(float64(v), Epsilon, 1-Epsilon)
				t := float64(yr[j])
				l -= t*math.Log(c+Epsilon) + (1-t)*math.Log(1-c+Epsilon)
			}
			l /= float64(cols)
		case MeanSquaredError:
			yr := y[r*cols : (r+1)*cols]
			for j, v := range pr {
				d := float64(v) - float64(yr[j])
				l += d * d
			}
			l /= float64(cols)
		}
		total += l
	}
	return total, nil
}

// lossGrad writes scale·∂(per-sample loss)/∂p into dp, row by row.
func lossGrad[T float](kind LossKind, rows, cols int, p, y []T, scale float64, dp []T) error {
	soft := make([]float64, cols)
	for r := 0; r < rows; r++ {
		pr, dr := p[r*cols:(r+1)*cols], dp[r*cols:(r+1)*cols]
		switch kind {
		case SoftmaxCrossEntropy:
			yr := y[r*cols : (r+1)*cols]
			logSumExp(pr, soft)
			var sy float64
			for _, v := range yr {
				sy += float64(v)
			}
			for j := range dr {
				dr[j] = T(scale * (soft[j]*sy - float64(yr[j])))
			}
		case SparseSoftmaxCrossEntropy:
			id, err := classIndex(kind, r, y[r], cols)
			if err != nil {
				return err
			}
			logSumExp(pr, soft)
			soft[id]--
			for j := range dr {
				dr[j] = T(scale * soft[j])
			}
		case SigmoidCrossEntropy:
			yr := y[r*cols : (r+1)*cols]
			for j, z := range pr {
				dr[j] = T(scale * (sigmoid(float64(z)) - float64(yr[j])) / float64(cols))
			}
		case CategoricalCrossentropy:
			yr := y[r*cols : (r+1)*cols]
			var s float64
			for _, v := range pr {
				s += float64(v)
			}
			// g_j = ∂loss/∂q_j, then the chain rule through q = p / Σp.
			var gq float64
			for j, v := range pr {
				q := float64(v) / s
				c, inside := clip(q, Epsilon, 1-Epsilon)
				soft[j] = 0
				if inside {
					soft[j] = -float64(yr[j]) / c
				}
				gq += soft[j] * q
			}
			for j := range dr {
				dr[j] = T(scale * (soft[j] - gq) / s)
			}
		case SparseCategoricalCrossentropy:
			id, err := classIndex(kind, r, y[r], cols)
			if err != nil {
				return err
			}
			var s float64
			for _, v := range pr {
				c, _ := clip(float64(v), Epsilon, 1-Epsilon)
				s += c
			}
			for j, v := range pr {
				c, inside := clip(float64(v), Epsilon, 1-Epsilon)
				g := 0.0
				if inside {
					g = 1 / s
					if j == id {
						g -= 1 / c
					}
				}
				dr[j] = T(scale * g)
			}
		case BinaryCrossentropy:
			yr := y[r*cols : (r+1)*cols]
			for j, v := range pr {
				c, inside := clip(float64(v), Epsilon, 1-Epsilon)
				g := 0.0
				if inside {
					t := float64(yr[j])
					g = -t/(c+Epsilon) + (1-t)/(1-c+Epsilon)
				}
				dr[j] = T(scale * g / float64(cols))
			}
		case MeanSquaredError:
			yr := y[r*cols : (r+1)*cols]
			for j, v := range pr {
				dr[j] = T(scale * 2 * (float64(v) - float64(yr[j])) / float64(cols))
			}
		}
	}
	return nil
}
