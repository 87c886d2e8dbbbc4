package metrics

import (
	"fmt"
	"math"
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
	if m.FromLogits {
		probs := make([]float32, len(preds))
		for i, x := range preds {
			probs[i] = sigmoid(x)
		}
		preds = probs
	}
	if err := checkProbabilities(m.Name(), preds); err != nil {
		return err
	}
	scale := float32(c.n - 1)
	for i, p := range preds {
		col := 0
		if m.MultiLabel {
			col = i % predCols
		}
		// Outputs in [0, 1] give buckets 0..n-2: none is above 1 + 1e-7.
		b := max(int(math.Ceil(float64(p*scale)))-1, 0)
		if labels[i] != 0 {
			m.tp[col*c.n+b]++
			m.pos[col]++
		} else {
			m.fp[col*c.n+b]++
			m.neg[col]++
		}
	}
	return nil
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
