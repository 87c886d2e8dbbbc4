package metrics

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
)

// AUC is the area under the ROC or precision-recall curve, estimated from
// confusion counts at NumThresholds thresholds, keras.metrics.AUC. Its zero
// value is Keras' default, the ROC curve at 200 thresholds summed by
// interpolation: &metrics.AUC{}.
//
// # Thresholds
//
// The thresholds are Keras': t_0 = -1e-7, t_i = i/(n-1) for i in 1..n-2,
// and t_{n-1} = 1 + 1e-7, n being NumThresholds, so that outputs of
// exactly 0 and 1 fall inside. At threshold t_i an output p is a predicted
// positive when p > t_i, and a label is positive when it is not 0; every
// element of the batch is one decision (unless MultiLabel), as Keras
// flattens the labels and outputs. TP_i, FP_i, TN_i and FN_i count them
// over every batch since the last Reset. Like Keras, which uses these
// thresholds' even spacing, each output is put in its bucket
// b = max(ceil(p·(n-1)) - 1, 0), computed in float32, and counts at every
// threshold t_i with i <= b. Outputs must be in [0, 1] (after the sigmoid,
// with FromLogits): Update fails otherwise, as Keras asserts.
//
// # The area
//
// With divide_no_nan's convention (x/0 = 0), recall_i = TP_i/(TP_i+FN_i),
// fpr_i = FP_i/(FP_i+TN_i), precision_i = TP_i/(TP_i+FP_i), and the sums
// running over i = 0..n-2:
//
//   - ROC, "interpolation" (the trapezoidal rule):
//     Σ (fpr_i - fpr_{i+1}) · (recall_i + recall_{i+1})/2.
//   - ROC or PR, "minoring" / "majoring": the same Riemann sum with height
//     min / max(y_i, y_{i+1}), y being recall for ROC and precision for PR,
//     and x (in place of fpr) recall for PR.
//   - PR, "interpolation" (Davis & Goadrich 2006, section 4, in Keras'
//     closed form): within each interval TP and P = TP+FP vary linearly,
//     so that precision = TP/P is not linear; with dTP = TP_i - TP_{i+1},
//     dP = P_i - P_{i+1}, slope = dTP/max(dP, 0),
//     intercept = TP_{i+1} - slope·P_{i+1} and ratio = P_i/P_{i+1} when
//     both are positive (1 otherwise), the area is
//     Σ slope · (dTP + intercept·ln(ratio)) / (TP_{i+1} + FN_{i+1}),
//     the exact integral of that precision over recall.
//
// With MultiLabel each column has its own counts and curve, and the result
// is the mean of the columns' areas, as Keras' multi_label=True without
// label_weights. Counts are float64 (Keras keeps float32 variables), so
// figures agree with Keras' to about 1e-6. Keras' thresholds list,
// num_labels and label_weights arguments are not supported.
type AUC struct {
	// NumThresholds is the number of thresholds, more than 1. Zero means
	// Keras' default, 200.
	NumThresholds int
	// Curve is "ROC" (the default, also when empty) or "PR", in upper or
	// lower case as Keras takes them.
	Curve string
	// SummationMethod is "interpolation" (the default, also when empty),
	// "minoring" or "majoring", as Keras takes them (or capitalized).
	SummationMethod string
	// MultiLabel computes one curve per column and averages their areas,
	// instead of flattening all columns into one curve.
	MultiLabel bool
	// FromLogits applies a sigmoid to the outputs first.
	FromLogits bool

	n, cols  int       // thresholds and columns counted, 0 before the first batch
	tp, fp   []float64 // per column, per bucket (see the type's documentation)
	pos, neg []float64 // per column, positive and negative labels
}

// aucConfig is an AUC's configuration, checked and with defaults filled in.
type aucConfig struct {
	n      int
	pr     bool   // the PR curve, else ROC
	method string // "interpolation", "minoring" or "majoring"
}

// config checks the fields and fills in Keras' defaults.
func (m *AUC) config() (aucConfig, error) {
	c := aucConfig{n: m.NumThresholds}
	if c.n == 0 {
		c.n = 200
	}
	if c.n <= 1 {
		return c, fmt.Errorf("%s: num_thresholds %d must be more than 1", m.Name(), m.NumThresholds)
	}
	switch m.Curve {
	case "", "ROC", "roc":
	case "PR", "pr":
		c.pr = true
	default:
		return c, fmt.Errorf("%s: curve %q is not ROC or PR", m.Name(), m.Curve)
	}
	switch m.SummationMethod {
	case "", "interpolation", "Interpolation":
		c.method = "interpolation"
	case "minoring", "Minoring":
		c.method = "minoring"
	case "majoring", "Majoring":
		c.method = "majoring"
	default:
		return c, fmt.Errorf("%s: summation_method %q is not interpolation, minoring or majoring", m.Name(), m.SummationMethod)
	}
	return c, nil
}

// Name is "auc".
func (m *AUC) Name() string { return "auc" }

// Reset forgets all batches.
func (m *AUC) Reset() { m.n, m.cols, m.tp, m.fp, m.pos, m.neg = 0, 0, nil, nil, nil, nil }

// Update adds a batch: labels and outputs of the same shape. With
// MultiLabel, every batch until the next Reset must have the first one's
// number of columns.
func (m *AUC) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	c, err := m.config()
	if err != nil {
		return err
	}
	if _, err := sameShape(m.Name(), labels, labelCols, preds, predCols); err != nil {
		return err
	}
	cols := 1
	if m.MultiLabel {
		cols = predCols
	}
	if err := m.begin(c, cols); err != nil {
		return err
	}
	probs := preds
	if m.FromLogits {
		probs = make([]float32, len(preds))
		for i, x := range preds {
			probs[i] = ops.Sigmoid32(x)
		}
	}
	if err := checkProbabilities(m.Name(), probs); err != nil {
		return err
	}
	p := m.params(c)
	state := make([]float32, ops.MetricStateSize(p, predCols))
	ops.MetricBatch(p, labels, labelCols, preds, predCols, state)
	return m.add(state)
}

// begin makes the histogram for cols columns at the first batch, and
// checks a later batch has as many.
func (m *AUC) begin(c aucConfig, cols int) error {
	switch {
	case m.cols == 0:
		m.n, m.cols = c.n, cols
		m.tp, m.fp = make([]float64, cols*c.n), make([]float64, cols*c.n)
		m.pos, m.neg = make([]float64, cols), make([]float64, cols)
	case m.n != c.n:
		return fmt.Errorf("%s: num_thresholds changed from %d to %d since the last Reset", m.Name(), m.n, c.n)
	case m.cols != cols:
		return fmt.Errorf("%s: multi-label outputs have %d columns, %d in earlier batches", m.Name(), cols, m.cols)
	}
	return nil
}

// params is the device metric of the settings c.
func (m *AUC) params(c aucConfig) ops.MetricParams {
	return ops.MetricParams{Kind: ops.MetricAUC, Thresholds: c.n, MultiLabel: m.MultiLabel, FromLogits: m.FromLogits}
}

// add adds a batch's histogram (ops.MetricStateSize values: tp, fp,
// positives, negatives, bad outputs), refusing one with outputs that are
// not probabilities; m.n and m.cols are set.
func (m *AUC) add(state []float32) error {
	n, cols := m.n, m.cols
	if len(state) != 2*cols*n+2*cols+1 {
		return fmt.Errorf("%s: the device's state has %d values, want %d", m.Name(), len(state), 2*cols*n+2*cols+1)
	}
	if bad := int(state[len(state)-1]); bad > 0 {
		return fmt.Errorf("%s: %d outputs of the batch are not in [0, 1]: predictions must be probabilities (a model that outputs logits needs from_logits or a sigmoid)", m.Name(), bad)
	}
	for i := range m.tp {
		m.tp[i] += float64(state[i])
		m.fp[i] += float64(state[cols*n+i])
	}
	for col := range cols {
		m.pos[col] += float64(state[2*cols*n+col])
		m.neg[col] += float64(state[2*cols*n+cols+col])
	}
	return nil
}

// DeviceParams is AUC's histogram, when its settings are valid.
func (m *AUC) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	c, err := m.config()
	return m.params(c), err == nil && labelCols == predCols && predCols > 0
}

// AddDeviceBatch adds a batch the device counted.
func (m *AUC) AddDeviceBatch(state []float32, rows int) error {
	c, err := m.config()
	if err != nil {
		return err
	}
	cols := (len(state) - 1) / (2*c.n + 2)
	if cols < 1 || len(state) != 2*cols*c.n+2*cols+1 {
		return fmt.Errorf("%s: the device's state has %d values, which fit no number of columns", m.Name(), len(state))
	}
	if err := m.begin(c, cols); err != nil {
		return err
	}
	return m.add(state)
}

// Result is the area under the curve over every batch since the last
// Reset: 0 before any, NaN when the fields were changed to an invalid
// configuration since (which Update reports).
func (m *AUC) Result() float64 {
	c, err := m.config()
	if err != nil {
		return math.NaN()
	}
	if m.cols == 0 {
		return 0
	}
	var sum float64
	for col := 0; col < m.cols; col++ {
		sum += m.area(c, col)
	}
	return sum / float64(m.cols)
}

// area is the area under the curve of one column's counts.
func (m *AUC) area(c aucConfig, col int) float64 {
	n := m.n
	tp, fp := make([]float64, n), make([]float64, n)
	// The counts at threshold i are those of the buckets i and above.
	var tpAbove, fpAbove float64
	for i := n - 1; i >= 0; i-- {
		tpAbove += m.tp[col*n+i]
		fpAbove += m.fp[col*n+i]
		tp[i], fp[i] = tpAbove, fpAbove
	}
	pos, neg := m.pos[col], m.neg[col]
	if c.pr && c.method == "interpolation" {
		var area float64
		for i := 0; i < n-1; i++ {
			dtp := tp[i] - tp[i+1]
			pA, pB := tp[i]+fp[i], tp[i+1]+fp[i+1]
			slope := divideNoNaN(dtp, max(pA-pB, 0))
			intercept := tp[i+1] - slope*pB
			ratio := 1.0
			if pA > 0 && pB > 0 {
				ratio = pA / pB
			}
			// tp + fn is every positive label, at each threshold.
			area += divideNoNaN(slope*(dtp+intercept*math.Log(ratio)), pos)
		}
		return area
	}
	x, y := make([]float64, n), make([]float64, n)
	for i := range n {
		recall := divideNoNaN(tp[i], pos)
		if c.pr {
			x[i], y[i] = recall, divideNoNaN(tp[i], tp[i]+fp[i])
		} else {
			x[i], y[i] = divideNoNaN(fp[i], neg), recall
		}
	}
	var area float64
	for i := 0; i < n-1; i++ {
		var height float64
		switch c.method {
		case "interpolation":
			height = (y[i] + y[i+1]) / 2
		case "minoring":
			height = min(y[i], y[i+1])
		default:
			height = max(y[i], y[i+1])
		}
		area += (x[i] - x[i+1]) * height
	}
	return area
}
