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

// normEpsilon is the floor tf.math.l2_normalize puts under a sum of
// squares before dividing by its square root.
const normEpsilon = 1e-12

// LossKind names how a loss is computed. The logit forms are what
// TensorFlow runs when a Keras cross-entropy follows a sigmoid or softmax
// output: the same loss, computed stably from the pre-activation values.
//
// "Mean over the last axis" below is the mean over the row of one sample;
// every loss op then takes the mean of the per-sample losses over the
// batch, Keras' "sum_over_batch_size" reduction.
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
	// MeanAbsoluteError: per sample the mean over the last axis of |p-y|.
	MeanAbsoluteError
	// MeanAbsolutePercentageError: per sample the mean over the last axis
	// of 100·|y-p| / max(|y|, Epsilon).
	MeanAbsolutePercentageError
	// MeanSquaredLogarithmicError: per sample the mean over the last axis
	// of (log(max(p, Epsilon)+1) - log(max(y, Epsilon)+1))².
	MeanSquaredLogarithmicError
	// Huber: per sample the mean over the last axis of ½e² where
	// |e| ≤ δ, else δ·|e| - ½δ², e = p-y and δ = LossParams.Delta.
	Huber
	// LogCosh: per sample the mean over the last axis of log(cosh(p-y)),
	// computed as Keras does: x + softplus(-2x) - log 2.
	LogCosh
	// KLDivergence: per sample Σ y·log(y/p), y and p clipped to
	// [Epsilon, 1].
	KLDivergence
	// Poisson: per sample the mean over the last axis of
	// p - y·log(p+Epsilon).
	Poisson
	// Hinge: per sample the mean over the last axis of max(1 - y·p, 0).
	// Labels are -1 or 1; when every label of the batch is 0 or 1 they
	// are read as 2y-1, as Keras converts them.
	Hinge
	// SquaredHinge: Hinge's terms squared, labels read as Hinge reads them.
	SquaredHinge
	// CategoricalHinge: per sample max(neg - pos + 1, 0) with pos = Σ y·p
	// and neg = max over the classes of (1-y)·p.
	CategoricalHinge
	// CosineSimilarity: per sample -Σ ŷ·p̂, the negative cosine similarity
	// of the rows, each divided by √max(Σx², 1e-12) as
	// tf.math.l2_normalize does.
	CosineSimilarity
)

var lossKindNames = [...]string{
	SoftmaxCrossEntropy:           "softmax_cross_entropy_with_logits",
	SparseSoftmaxCrossEntropy:     "sparse_softmax_cross_entropy_with_logits",
	SigmoidCrossEntropy:           "sigmoid_cross_entropy_with_logits",
	CategoricalCrossentropy:       "categorical_crossentropy",
	SparseCategoricalCrossentropy: "sparse_categorical_crossentropy",
	BinaryCrossentropy:            "binary_crossentropy",
	MeanSquaredError:              "mean_squared_error",
	MeanAbsoluteError:             "mean_absolute_error",
	MeanAbsolutePercentageError:   "mean_absolute_percentage_error",
	MeanSquaredLogarithmicError:   "mean_squared_logarithmic_error",
	Huber:                         "huber_loss",
	LogCosh:                       "log_cosh",
	KLDivergence:                  "kl_divergence",
	Poisson:                       "poisson",
	Hinge:                         "hinge",
	SquaredHinge:                  "squared_hinge",
	CategoricalHinge:              "categorical_hinge",
	CosineSimilarity:              "cosine_similarity",
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

// smoothing returns what label smoothing ls adds to every target of kind,
// and whether kind smooths its labels at all: Keras smooths categorical
// targets to y·(1-ls) + ls/classes and binary ones to y·(1-ls) + ls/2.
func (k LossKind) smoothing(ls float64, classes int) (add float64, ok bool) {
	switch k {
	case SoftmaxCrossEntropy, CategoricalCrossentropy:
		return ls / float64(classes), true
	case SigmoidCrossEntropy, BinaryCrossentropy:
		return 0.5 * ls, true
	}
	return 0, false
}

// LossParams are a loss's arguments beyond its kind. The zero value is
// Keras' defaults.
type LossParams struct {
	// LabelSmoothing, in [0, 1], smooths the targets of the categorical
	// and binary cross-entropies (probability and logit forms; not the
	// sparse ones) as Keras' label_smoothing does.
	LabelSmoothing float64
	// Delta is Huber's δ, where its loss turns from quadratic to linear;
	// 0 means Keras' default 1.
	Delta float64
}

func (p LossParams) delta() float64 {
	if p.Delta == 0 {
		return 1
	}
	return p.Delta
}

// suffix names the parameters that differ from Keras' defaults, for the
// String of the loss ops (", label_smoothing=0.1").
func (p LossParams) suffix() string {
	s := ""
	if p.LabelSmoothing != 0 {
		s += fmt.Sprintf(", label_smoothing=%v", p.LabelSmoothing)
	}
	if p.Delta != 0 {
		s += fmt.Sprintf(", delta=%v", p.Delta)
	}
	return s
}

// check says whether kind takes the parameters p.
func (p LossParams) check(kind LossKind) error {
	if p.LabelSmoothing != 0 {
		if _, ok := kind.smoothing(p.LabelSmoothing, 1); !ok {
			return fmt.Errorf("%v: label smoothing applies to the categorical and binary cross-entropies only", kind)
		}
		if !(p.LabelSmoothing >= 0 && p.LabelSmoothing <= 1) {
			return fmt.Errorf("%v: label smoothing must be in [0, 1], got %v", kind, p.LabelSmoothing)
		}
	}
	if p.Delta != 0 {
		if kind != Huber {
			return fmt.Errorf("%v: only the Huber loss takes a delta", kind)
		}
		if !(p.Delta > 0) || math.IsInf(p.Delta, 0) {
			return fmt.Errorf("%v: delta must be a finite number > 0, got %v", kind, p.Delta)
		}
	}
	return nil
}

// Loss adds the scalar node mean over the batch of the per-sample loss of
// pred against target. pred is (batch, classes); target has the same shape,
// or (batch, 1) class indices for the sparse kinds. It is LossWith with
// Keras' default parameters.
func Loss(kind LossKind, pred, target *gorgonia.Node) (*gorgonia.Node, error) {
	return LossWith(kind, LossParams{}, pred, target)
}

// LossWith is Loss with the parameters p: label smoothing for the
// cross-entropies, δ for Huber.
func LossWith(kind LossKind, p LossParams, pred, target *gorgonia.Node) (*gorgonia.Node, error) {
	if kind < 0 || int(kind) >= len(lossKindNames) {
		return nil, fmt.Errorf("loss: unknown kind %d", int(kind))
	}
	if err := p.check(kind); err != nil {
		return nil, err
	}
	op := lossOp{kind: kind, p: p}
	if _, err := op.InferShape(pred.Shape(), target.Shape()); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, pred, target)
}

// WeightedLoss is LossWith with a weight per sample, weights a (batch)
// vector: the batch's loss is Σ weightᵢ·lossᵢ / batch, as Keras reduces a
// loss given sample weights (its SUM_OVER_BATCH_SIZE), and each sample's
// gradient is scaled by its weight.
func WeightedLoss(kind LossKind, p LossParams, pred, target, weights *gorgonia.Node) (*gorgonia.Node, error) {
	if kind < 0 || int(kind) >= len(lossKindNames) {
		return nil, fmt.Errorf("loss: unknown kind %d", int(kind))
	}
	if err := p.check(kind); err != nil {
		return nil, err
	}
	op := lossOp{kind: kind, p: p, weighted: true}
	if _, err := op.InferShape(pred.Shape(), target.Shape(), weights.Shape()); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(op, pred, target, weights)
}

// WithSampleWeights returns the loss node made by Loss or LossWith,
// weighted per sample by weights (see WeightedLoss). Losses made by
// package losses are such nodes, so any of them can be weighted. The
// unweighted node stays in the graph; a machine computes it too.
func WithSampleWeights(loss, weights *gorgonia.Node) (*gorgonia.Node, error) {
	op, ok := loss.Op().(lossOp)
	if !ok || op.weighted {
		return nil, fmt.Errorf("sample weights: %q is not an unweighted loss of package ops (its op is %v)", loss.Name(), loss.Op())
	}
	g := loss.Graph()
	var in []*gorgonia.Node
	it := g.From(loss.ID())
	for it.Next() {
		in = append(in, it.Node().(*gorgonia.Node))
	}
	if len(in) != 2 {
		return nil, fmt.Errorf("sample weights: the loss %q has %d operands, want 2", loss.Name(), len(in))
	}
	return WeightedLoss(op.kind, op.p, in[0], in[1], weights)
}

type lossOp struct {
	common
	kind LossKind
	p    LossParams
	// weighted: a third input holds a weight per sample.
	weighted bool
}

func (op lossOp) name() string {
	s := op.kind.String() + op.p.suffix()
	if op.weighted {
		s += ", weighted"
	}
	return s
}

func (op lossOp) String() string        { return "Loss{" + op.name() + "}" }
func (op lossOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op lossOp) Hashcode() uint32      { return hashOf(op) }

func (op lossOp) Arity() int {
	if op.weighted {
		return 3
	}
	return 2
}

func (op lossOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	if op.weighted {
		return hm.NewFnType(m, m, gorgonia.TensorType{Dims: 1, Of: a}, a)
	}
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
	if op.weighted {
		ws, err := shapeOf(op, in, 2)
		if err != nil {
			return nil, err
		}
		if ws.TotalSize() != ps[0] {
			return nil, fmt.Errorf("%v: %d sample weights for a batch of %d", op, ws.TotalSize(), ps[0])
		}
	}
	return tensor.ScalarShape(), nil
}

// weightsArg reads the sample weights of a weighted loss op from args[i],
// nil for an unweighted one.
func weightsArg[T float](op lossOp, args []gorgonia.Value, i int) ([]T, error) {
	if !op.weighted {
		return nil, nil
	}
	w, err := denseArg(op, args, i)
	if err != nil {
		return nil, err
	}
	d, ok := w.Data().([]T)
	if !ok {
		return nil, fmt.Errorf("%v: sample weights of dtype %v", op, w.Dtype())
	}
	return d, nil
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
		var w []float32
		if w, err = weightsArg[float32](op, args, 2); err == nil {
			sum, err = lossSum(op.kind, op.p, rows, cols, pd, y.Data().([]float32), w)
		}
	case []float64:
		var w []float64
		if w, err = weightsArg[float64](op, args, 2); err == nil {
			sum, err = lossSum(op.kind, op.p, rows, cols, pd, y.Data().([]float64), w)
		}
	}
	if err != nil {
		return nil, err
	}
	return scalarValue(sum/float64(rows), p.Dtype()), nil
}

func (op lossOp) DiffWRT(inputs int) []bool { return append([]bool{true}, make([]bool, inputs-1)...) }

func (op lossOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want %d", op, len(inputs), op.Arity())
	}
	args := []*gorgonia.Node{inputs[0], inputs[1], grad}
	if op.weighted {
		args = append(args, inputs[2])
	}
	dp, err := gorgonia.ApplyOp(lossGradOp(op), args...)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	grads := make(gorgonia.Nodes, len(inputs))
	grads[0] = dp
	return grads, nil
}

// lossGradOp maps (pred, target, dLoss) to dPred.
type lossGradOp lossOp

// With sample weights, a fourth input holds them.
func (op lossGradOp) String() string        { return "LossGrad{" + lossOp(op).name() + "}" }
func (op lossGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op lossGradOp) Hashcode() uint32      { return hashOf(op) }
func (op lossGradOp) Arity() int            { return lossOp(op).Arity() + 1 }

func (op lossGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	if op.weighted {
		return hm.NewFnType(m, m, a, gorgonia.TensorType{Dims: 1, Of: a}, m)
	}
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
		var w []float32
		if w, err = weightsArg[float32](lossOp(op), args, 3); err == nil {
			err = lossGrad(op.kind, op.p, rows, cols, p.Data().([]float32), y.Data().([]float32), w, scale, od)
		}
	case []float64:
		var w []float64
		if w, err = weightsArg[float64](lossOp(op), args, 3); err == nil {
			err = lossGrad(op.kind, op.p, rows, cols, p.Data().([]float64), y.Data().([]float64), w, scale, od)
		}
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

// sign is the derivative TensorFlow gives |x|: -1, 0 or 1.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// softplus is log(1 + exp(z)), computed stably.
func softplus(z float64) float64 { return math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) }

// zeroOneLabels reports whether every one of the batch's targets y is 0 or
// 1, in which case Keras' hinge losses read them as -1 and 1.
func zeroOneLabels[T float](kind LossKind, y []T) bool {
	if kind != Hinge && kind != SquaredHinge {
		return false
	}
	for _, v := range y {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// targetRow writes one sample's targets as kind reads them into t: smoothed
// by p's label smoothing, or turned from 0/1 into -1/1 when zeroOne says the
// batch's labels are 0/1 for a hinge loss.
func targetRow[T float](kind LossKind, p LossParams, zeroOne bool, y []T, t []float64) {
	add, smooth := kind.smoothing(p.LabelSmoothing, len(y))
	smooth = smooth && p.LabelSmoothing != 0
	for j, v := range y {
		f := float64(v)
		switch {
		case smooth:
			f = f*(1-p.LabelSmoothing) + add
		case zeroOne:
			f = 2*f - 1
		}
		t[j] = f
	}
}

// lossSum returns the sum over the rows of the per-sample loss.
// lossSum is the sum of the per-sample losses, each times its weight in w
// (nil: weights of 1).
func lossSum[T float](kind LossKind, prm LossParams, rows, cols int, p, y, w []T) (float64, error) {
	var t []float64
	zeroOne := false
	if !kind.Sparse() {
		t = make([]float64, cols)
		zeroOne = zeroOneLabels(kind, y[:rows*cols])
	}
	var total float64
	for r := 0; r < rows; r++ {
		pr := p[r*cols : (r+1)*cols]
		if kind.Sparse() {
			id, err := classIndex(kind, r, y[r], cols)
			if err != nil {
				return 0, err
			}
			total += weightOf(w, r) * sparseRowLoss(kind, pr, id)
			continue
		}
		targetRow(kind, prm, zeroOne, y[r*cols:(r+1)*cols], t)
		total += weightOf(w, r) * rowLoss(kind, prm, pr, t)
	}
	return total, nil
}

// sparseRowLoss is the loss of one sample of a sparse kind whose class is id.
func sparseRowLoss[T float](kind LossKind, pr []T, id int) float64 {
	if kind == SparseSoftmaxCrossEntropy {
		return logSumExp(pr, nil) - float64(pr[id])
	}
	var s float64
	for _, v := range pr {
		c, _ := clip(float64(v), Epsilon, 1-Epsilon)
		s += c
	}
	c, _ := clip(float64(pr[id]), Epsilon, 1-Epsilon)
	return math.Log(s) - math.Log(c)
}

// rowLoss is the loss of one sample of the predictions pr against the
// targets t, as targetRow reads them.
func rowLoss[T float](kind LossKind, prm LossParams, pr []T, t []float64) float64 {
	cols := float64(len(pr))
	var l float64
	switch kind {
	case SoftmaxCrossEntropy:
		lse := logSumExp(pr, nil)
		for j, z := range pr {
			l += t[j] * (lse - float64(z))
		}
	case SigmoidCrossEntropy:
		for j, zt := range pr {
			z := float64(zt)
			l += math.Max(z, 0) - z*t[j] + math.Log1p(math.Exp(-math.Abs(z)))
		}
		l /= cols
	case CategoricalCrossentropy:
		var s float64
		for _, v := range pr {
			s += float64(v)
		}
		for j, v := range pr {
			q, _ := clip(float64(v)/s, Epsilon, 1-Epsilon)
			l -= t[j] * math.Log(q)
		}
	case BinaryCrossentropy:
		for j, v := range pr {
			c, _ := clip(float64(v), Epsilon, 1-Epsilon)
			l -= t[j]*math.Log(c+Epsilon) + (1-t[j])*math.Log(1-c+Epsilon)
		}
		l /= cols
	case MeanSquaredError:
		for j, v := range pr {
			d := float64(v) - t[j]
			l += d * d
		}
		l /= cols
	case MeanAbsoluteError:
		for j, v := range pr {
			l += math.Abs(float64(v) - t[j])
		}
		l /= cols
	case MeanAbsolutePercentageError:
		for j, v := range pr {
			l += math.Abs((t[j] - float64(v)) / math.Max(math.Abs(t[j]), Epsilon))
		}
		l = 100 * l / cols
	case MeanSquaredLogarithmicError:
		for j, v := range pr {
			d := math.Log(math.Max(float64(v), Epsilon)+1) - math.Log(math.Max(t[j], Epsilon)+1)
			l += d * d
		}
		l /= cols
	case Huber:
		delta := prm.delta()
		for j, v := range pr {
			e := float64(v) - t[j]
			if math.Abs(e) <= delta {
				l += 0.5 * e * e
			} else {
				l += delta*math.Abs(e) - 0.5*delta*delta
			}
		}
		l /= cols
	case LogCosh:
		for j, v := range pr {
			x := float64(v) - t[j]
			l += x + softplus(-2*x) - math.Ln2
		}
		l /= cols
	case KLDivergence:
		for j, v := range pr {
			tc, _ := clip(t[j], Epsilon, 1)
			pc, _ := clip(float64(v), Epsilon, 1)
			l += tc * math.Log(tc/pc)
		}
	case Poisson:
		for j, v := range pr {
			l += float64(v) - t[j]*math.Log(float64(v)+Epsilon)
		}
		l /= cols
	case Hinge:
		for j, v := range pr {
			l += math.Max(1-t[j]*float64(v), 0)
		}
		l /= cols
	case SquaredHinge:
		for j, v := range pr {
			m := math.Max(1-t[j]*float64(v), 0)
			l += m * m
		}
		l /= cols
	case CategoricalHinge:
		pos, neg := categoricalHingeTerms(pr, t)
		l = math.Max(neg-pos+1, 0)
	case CosineSimilarity:
		dot, invT, invP, _ := cosineTerms(pr, t)
		l = -dot * invT * invP
	}
	return l
}

// categoricalHingeTerms returns Σ t·p and max (1-t)·p over one sample.
func categoricalHingeTerms[T float](pr []T, t []float64) (pos, neg float64) {
	neg = math.Inf(-1)
	for j, v := range pr {
		pos += t[j] * float64(v)
		neg = math.Max(neg, (1-t[j])*float64(v))
	}
	return pos, neg
}

// cosineTerms returns Σ t·p and the factors 1/√max(Σt², 1e-12) and
// 1/√max(Σp², 1e-12) tf.math.l2_normalize scales them by, and whether the
// second is Σp²'s (the floor not taken), so that it has a gradient.
func cosineTerms[T float](pr []T, t []float64) (dot, invT, invP float64, pNormed bool) {
	var st, sp float64
	for j, v := range pr {
		p := float64(v)
		dot += t[j] * p
		st += t[j] * t[j]
		sp += p * p
	}
	return dot, 1 / math.Sqrt(math.Max(st, normEpsilon)), 1 / math.Sqrt(math.Max(sp, normEpsilon)), sp >= normEpsilon
}

// lossGrad writes scale·∂(per-sample loss)/∂p into dp, row by row.
// weightOf is sample r's weight, 1 without weights.
func weightOf[T float](w []T, r int) float64 {
	if w == nil {
		return 1
	}
	return float64(w[r])
}

// lossGrad writes scale·∂loss/∂p into dp, each sample's row also times its
// weight in w (nil: weights of 1).
func lossGrad[T float](kind LossKind, prm LossParams, rows, cols int, p, y, w []T, scale float64, dp []T) error {
	scratch := make([]float64, cols)
	var t []float64
	zeroOne := false
	if !kind.Sparse() {
		t = make([]float64, cols)
		zeroOne = zeroOneLabels(kind, y[:rows*cols])
	}
	for r := 0; r < rows; r++ {
		pr, dr := p[r*cols:(r+1)*cols], dp[r*cols:(r+1)*cols]
		if kind.Sparse() {
			id, err := classIndex(kind, r, y[r], cols)
			if err != nil {
				return err
			}
			sparseRowGrad(kind, pr, id, scale*weightOf(w, r), dr, scratch)
			continue
		}
		targetRow(kind, prm, zeroOne, y[r*cols:(r+1)*cols], t)
		rowGrad(kind, prm, pr, t, scale*weightOf(w, r), dr, scratch)
	}
	return nil
}

// sparseRowGrad writes scale·∂loss/∂p of one sample of a sparse kind whose
// class is id into dr; soft is scratch space of the row's length.
func sparseRowGrad[T float](kind LossKind, pr []T, id int, scale float64, dr []T, soft []float64) {
	if kind == SparseSoftmaxCrossEntropy {
		logSumExp(pr, soft)
		soft[id]--
		for j := range dr {
			dr[j] = T(scale * soft[j])
		}
		return
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
}

// rowGrad writes scale·∂loss/∂p of one sample against the targets t into
// dr; soft is scratch space of the row's length. Where Keras' loss clips
// or takes a maximum, the gradient is TensorFlow's: zero where the clip
// bites, and through the first argument of a maximum on a tie.
func rowGrad[T float](kind LossKind, prm LossParams, pr []T, t []float64, scale float64, dr []T, soft []float64) {
	cols := float64(len(pr))
	switch kind {
	case SoftmaxCrossEntropy:
		logSumExp(pr, soft)
		var sy float64
		for _, v := range t {
			sy += v
		}
		for j := range dr {
			dr[j] = T(scale * (soft[j]*sy - t[j]))
		}
	case SigmoidCrossEntropy:
		for j, z := range pr {
			dr[j] = T(scale * (sigmoid(float64(z)) - t[j]) / cols)
		}
	case CategoricalCrossentropy:
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
				soft[j] = -t[j] / c
			}
			gq += soft[j] * q
		}
		for j := range dr {
			dr[j] = T(scale * (soft[j] - gq) / s)
		}
	case BinaryCrossentropy:
		for j, v := range pr {
			c, inside := clip(float64(v), Epsilon, 1-Epsilon)
			g := 0.0
			if inside {
				g = -t[j]/(c+Epsilon) + (1-t[j])/(1-c+Epsilon)
			}
			dr[j] = T(scale * g / cols)
		}
	case MeanSquaredError:
		for j, v := range pr {
			dr[j] = T(scale * 2 * (float64(v) - t[j]) / cols)
		}
	case MeanAbsoluteError:
		for j, v := range pr {
			dr[j] = T(scale * sign(float64(v)-t[j]) / cols)
		}
	case MeanAbsolutePercentageError:
		for j, v := range pr {
			dr[j] = T(scale * 100 * sign(float64(v)-t[j]) / math.Max(math.Abs(t[j]), Epsilon) / cols)
		}
	case MeanSquaredLogarithmicError:
		for j, v := range pr {
			g := 0.0
			if p := float64(v); p >= Epsilon {
				g = 2 * (math.Log(p+1) - math.Log(math.Max(t[j], Epsilon)+1)) / (p + 1)
			}
			dr[j] = T(scale * g / cols)
		}
	case Huber:
		delta := prm.delta()
		for j, v := range pr {
			e := float64(v) - t[j]
			g := e
			if math.Abs(e) > delta {
				g = delta * sign(e)
			}
			dr[j] = T(scale * g / cols)
		}
	case LogCosh:
		for j, v := range pr {
			dr[j] = T(scale * math.Tanh(float64(v)-t[j]) / cols)
		}
	case KLDivergence:
		for j, v := range pr {
			g := 0.0
			if pc, inside := clip(float64(v), Epsilon, 1); inside {
				tc, _ := clip(t[j], Epsilon, 1)
				g = -tc / pc
			}
			dr[j] = T(scale * g)
		}
	case Poisson:
		for j, v := range pr {
			dr[j] = T(scale * (1 - t[j]/(float64(v)+Epsilon)) / cols)
		}
	case Hinge:
		for j, v := range pr {
			g := 0.0
			if 1-t[j]*float64(v) >= 0 {
				g = -t[j]
			}
			dr[j] = T(scale * g / cols)
		}
	case SquaredHinge:
		for j, v := range pr {
			m := math.Max(1-t[j]*float64(v), 0)
			dr[j] = T(scale * -2 * m * t[j] / cols)
		}
	case CategoricalHinge:
		pos, neg := categoricalHingeTerms(pr, t)
		if neg-pos+1 < 0 {
			for j := range dr {
				dr[j] = 0
			}
			return
		}
		// The max's gradient is shared among the classes that reach it,
		// as TensorFlow shares a reduce_max's.
		ties := 0
		for j, v := range pr {
			if (1-t[j])*float64(v) == neg {
				ties++
			}
		}
		for j, v := range pr {
			g := -t[j]
			if (1-t[j])*float64(v) == neg {
				g += (1 - t[j]) / float64(ties)
			}
			dr[j] = T(scale * g)
		}
	case CosineSimilarity:
		dot, invT, invP, pNormed := cosineTerms(pr, t)
		for j, v := range pr {
			g := -t[j] * invT * invP
			if pNormed {
				g += dot * invT * float64(v) * invP * invP * invP
			}
			dr[j] = T(scale * g)
		}
	}
}
