package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MetricKind is a metric whose batch state a model's device computes (see
// MetricState): a sum of per-sample scores, or confusion counts.
type MetricKind int

const (
	// MetricBinaryAccuracy: the share of a sample's outputs above
	// Threshold whose label is above 0.5, or at most Threshold whose
	// label is not.
	MetricBinaryAccuracy MetricKind = iota + 1
	// MetricCategoricalAccuracy: 1 when the output's argmax is the one-hot
	// label's (first index on ties, as numpy).
	MetricCategoricalAccuracy
	// MetricSparseCategoricalAccuracy: 1 when the output's argmax is the
	// label, a whole class index.
	MetricSparseCategoricalAccuracy
	// MetricTopK: 1 when fewer than K outputs are larger than the one at
	// the one-hot label's argmax, and all are finite (tf.math.in_top_k).
	MetricTopK
	// MetricSparseTopK: MetricTopK with a class index for label; a label
	// that is not one in [0, outputs) is counted as bad.
	MetricSparseTopK
	// MetricAbsoluteError: the mean of |output - label| over the sample's
	// outputs.
	MetricAbsoluteError
	// MetricSquaredError: the mean of (output - label)².
	MetricSquaredError
	// MetricPrecisionRecall: the true positives, false positives and false
	// negatives of Keras' Precision and Recall (Threshold, TopK, ClassID).
	MetricPrecisionRecall
	// MetricAUC: Keras' AUC histogram, true and false positives per
	// column and bucket of Thresholds, and positive and negative labels per
	// column (MultiLabel, FromLogits).
	MetricAUC
	// MetricF1: Keras' F1Score counts per column: true positives, false
	// positives, false negatives and the labels' sum (Threshold, 0: the
	// row's maximum).
	MetricF1
)

var metricNames = map[MetricKind]string{
	MetricBinaryAccuracy: "binary_accuracy", MetricCategoricalAccuracy: "categorical_accuracy",
	MetricSparseCategoricalAccuracy: "sparse_categorical_accuracy", MetricTopK: "top_k",
	MetricSparseTopK: "sparse_top_k", MetricAbsoluteError: "absolute_error", MetricSquaredError: "squared_error",
	MetricPrecisionRecall: "precision_recall", MetricAUC: "auc", MetricF1: "f1",
}

func (k MetricKind) String() string {
	if s, ok := metricNames[k]; ok {
		return s
	}
	return fmt.Sprintf("MetricKind(%d)", int(k))
}

// Counts reports whether the kind's state is confusion counts rather than
// a sum of scores.
func (k MetricKind) Counts() bool { return k >= MetricPrecisionRecall }

// MetricParams say which metric MetricState computes.
type MetricParams struct {
	Kind MetricKind
	// Threshold: MetricBinaryAccuracy's; MetricPrecisionRecall's (0
	// without TopK: 0.5); MetricF1's (0: each row's maximum).
	Threshold float32
	K         int // MetricTopK, MetricSparseTopK; MetricPrecisionRecall's top_k (0: none)
	// ClassID is the one column MetricPrecisionRecall counts, or -1 for
	// all of them.
	ClassID int
	// Thresholds is MetricAUC's number of thresholds (buckets); MultiLabel
	// keeps a histogram per column; FromLogits applies a sigmoid first.
	Thresholds             int
	MultiLabel, FromLogits bool
}

// MetricStateSize is the number of values of p's state for outputs of
// predCols columns: the sum and the bad labels for a score; tp, fp, fn and
// the bad outputs for MetricPrecisionRecall; for MetricAUC, with c columns
// (predCols if MultiLabel, else 1) and n = Thresholds, tp[c][n], fp[c][n],
// positives[c], negatives[c] and the bad outputs; for MetricF1, tp, fp, fn
// and the labels' sum per column, and a 0.
func MetricStateSize(p MetricParams, predCols int) int {
	switch p.Kind {
	case MetricPrecisionRecall:
		return 4
	case MetricAUC:
		c := 1
		if p.MultiLabel {
			c = predCols
		}
		return 2*c*p.Thresholds + 2*c + 1
	case MetricF1:
		return 4*predCols + 1
	}
	return 2
}

// MetricState is a node holding p's state for a batch of outputs pred
// (rows × outputs) and their labels y (rows × labelCols), of
// MetricStateSize values (see MetricBatch). It has no gradient: it is
// read, not trained on.
func MetricState(pred, y *gorgonia.Node, p MetricParams) (*gorgonia.Node, error) {
	if _, ok := metricNames[p.Kind]; !ok {
		return nil, fmt.Errorf("metric state: unknown kind %v", p.Kind)
	}
	if pred.Dims() != 2 || y.Dims() != 2 || pred.Shape()[0] != y.Shape()[0] {
		return nil, fmt.Errorf("metric state %v: outputs %v and labels %v must be matrices of as many rows", p.Kind, pred.Shape(), y.Shape())
	}
	if err := checkMetricShapes(p, y.Shape()[1], pred.Shape()[1]); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(metricStateOp{p: p, size: MetricStateSize(p, pred.Shape()[1])}, pred, y)
}

// checkMetricShapes says whether labels of labelCols columns suit outputs
// of predCols for p.
func checkMetricShapes(p MetricParams, labelCols, predCols int) error {
	switch p.Kind {
	case MetricSparseCategoricalAccuracy, MetricSparseTopK:
		if labelCols != 1 {
			return fmt.Errorf("metric state %v: labels have %d columns, want one class index per sample", p.Kind, labelCols)
		}
	default:
		if labelCols != predCols {
			return fmt.Errorf("metric state %v: labels have %d columns and outputs %d", p.Kind, labelCols, predCols)
		}
	}
	switch {
	case (p.Kind == MetricTopK || p.Kind == MetricSparseTopK) && p.K < 1:
		return fmt.Errorf("metric state %v: k must be at least 1, got %d", p.Kind, p.K)
	case p.Kind == MetricPrecisionRecall && (p.K < 0 || p.K > predCols || p.ClassID < -1 || p.ClassID >= predCols || !(p.Threshold >= 0 && p.Threshold <= 1)):
		return fmt.Errorf("metric state %v: top_k %d, class_id %d or threshold %v do not fit %d outputs", p.Kind, p.K, p.ClassID, p.Threshold, predCols)
	case p.Kind == MetricAUC && p.Thresholds < 2:
		return fmt.Errorf("metric state %v: %d thresholds, want at least 2", p.Kind, p.Thresholds)
	case p.Kind == MetricF1 && !(p.Threshold >= 0 && p.Threshold <= 1):
		return fmt.Errorf("metric state %v: threshold %v is not in [0, 1]", p.Kind, p.Threshold)
	}
	return nil
}

// MetricBatch writes p's state for the batch (MetricStateSize values) into
// out: for a score, into out[0] the sum over the rows of pred (predCols
// outputs each) of each sample's score against its labels (labelCols
// each), accumulated in float64, and into out[1] the number of samples
// whose label is not a class index (MetricSparseTopK); for confusion
// counts, see metricCounts. It is the host kernel of MetricState and what
// package metrics computes these metrics with.
func MetricBatch(p MetricParams, labels []float32, labelCols int, pred []float32, predCols int, out []float32) {
	if p.Kind.Counts() {
		metricCounts(p, labels, pred, predCols, out)
		return
	}
	rows := len(pred) / predCols
	var sum float64
	bad := 0
	for r := 0; r < rows; r++ {
		lr, pr := labels[r*labelCols:(r+1)*labelCols], pred[r*predCols:(r+1)*predCols]
		s, ok := MetricScore(p, lr, pr)
		if !ok {
			bad++
		}
		sum += s
	}
	out[0], out[1] = float32(sum), float32(bad)
}

// MetricScore is one sample's score for p: its labels lr and outputs pr.
// ok is false for a MetricSparseTopK label that is not a class index
// (whose score is 0).
func MetricScore(p MetricParams, lr, pr []float32) (score float64, ok bool) {
	switch p.Kind {
	case MetricBinaryAccuracy:
		hits := 0
		for j, v := range pr {
			if (v > p.Threshold) == (lr[j] > 0.5) {
				hits++
			}
		}
		return float64(hits) / float64(len(pr)), true
	case MetricCategoricalAccuracy:
		if argmaxOf(lr) == argmaxOf(pr) {
			return 1, true
		}
	case MetricSparseCategoricalAccuracy:
		if int(lr[0]) == argmaxOf(pr) && float32(int(lr[0])) == lr[0] {
			return 1, true
		}
	case MetricTopK:
		return inTopK(pr, argmaxOf(lr), p.K), true
	case MetricSparseTopK:
		t := math.Trunc(float64(lr[0]))
		if !(t >= 0 && t < float64(len(pr))) {
			return 0, false
		}
		return inTopK(pr, int(t), p.K), true
	case MetricAbsoluteError, MetricSquaredError:
		var sum float64
		for j, v := range pr {
			d := float64(v) - float64(lr[j])
			if p.Kind == MetricAbsoluteError {
				sum += math.Abs(d)
			} else {
				sum += d * d
			}
		}
		return sum / float64(len(pr)), true
	}
	return 0, true
}

// argmaxOf returns the first index of the largest value, as numpy and
// TensorFlow do on ties.
func argmaxOf(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// inTopK is 1 when fewer than k values of row are larger than row[target]
// and all are finite, as tf.math.in_top_k decides, else 0.
func inTopK(row []float32, target, k int) float64 {
	larger := 0
	for _, v := range row {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
		if v > row[target] {
			larger++
		}
	}
	if larger < k {
		return 1
	}
	return 0
}

type metricStateOp struct {
	common
	p    MetricParams
	size int
}

func (op metricStateOp) String() string {
	return fmt.Sprintf("MetricState{%+v}", op.p)
}
func (op metricStateOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op metricStateOp) Hashcode() uint32      { return hashOf(op) }
func (op metricStateOp) Arity() int            { return 2 }

func (op metricStateOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(t, t, gorgonia.TensorType{Dims: 1, Of: a})
}

func (op metricStateOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.size}, nil
}

func (op metricStateOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	pred, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	y, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	pd, ok1 := pred.Data().([]float32)
	yd, ok2 := y.Data().([]float32)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%v: outputs and labels must be float32, got %v and %v", op, pred.Dtype(), y.Dtype())
	}
	out := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(op.size))
	MetricBatch(op.p, yd, y.Shape()[1], pd, pred.Shape()[1], out.Data().([]float32))
	return out, nil
}

func (op metricStateOp) DiffWRT(int) []bool { return []bool{false, false} }

func (op metricStateOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%v has no gradient: a metric is read, not trained on", op)
}
