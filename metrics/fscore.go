package metrics

import (
	"fmt"

	"github.com/gokeras/gokeras/ops"
)

// F1Score is the harmonic mean of precision and recall,
// 2·P·R / (P + R), keras.metrics.F1Score (Keras 2.13 and later). Its zero
// value is Keras' default, average=None and threshold=None:
// &metrics.F1Score{}.
//
// Labels are one-hot or multi-hot rows, one column per output. Each output
// is decided as Keras decides it: with no Threshold, the largest output of
// its row is positive (every output equal to the row's largest, if there
// are ties) unless it is 0 (|p| <= 1e-12); with a Threshold, an output
// above it is positive. Each column c then counts, with labels used as
// numbers as Keras does, TP_c += pred·label, FP_c += pred·(1-label),
// FN_c += (1-pred)·label and its support += label, over every batch since
// the last Reset, and its score is 2·P_c·R_c/(P_c+R_c) with
// P_c = TP_c/(TP_c+FP_c), R_c = TP_c/(TP_c+FN_c), each 0 where its
// denominator is 0.
//
// Keras' average=None returns a vector, one score per class; a log holds
// one number per name, so the Result of Average "" is the unweighted mean
// of those scores, what "macro" gives, reported under "f1_score" all the
// same; Scores returns the vector.
type F1Score struct {
	// Average is "" (Keras' None: the macro mean in Result, see the type's
	// documentation, and the vector in Scores), "micro" (one score from the
	// counts summed over the columns), "macro" (the mean of the columns'
	// scores) or "weighted" (their mean weighted by each column's support,
	// the sum of its labels).
	Average string
	// Threshold in (0, 1]: an output above it is positive. Zero means
	// Keras' None: each row's largest output is positive.
	Threshold float32

	tp, fp, fn, support []float64 // per column; nil before the first batch
}

// Name is "f1_score".
func (m *F1Score) Name() string { return "f1_score" }

// Reset forgets all batches.
func (m *F1Score) Reset() { m.tp, m.fp, m.fn, m.support = nil, nil, nil, nil }

// Update adds a batch: labels and outputs of the same shape. Every batch
// until the next Reset must have the first one's number of columns.
func (m *F1Score) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	if err := m.check(); err != nil {
		return err
	}
	if _, err := sameShape(m.Name(), labels, labelCols, preds, predCols); err != nil {
		return err
	}
	if err := m.begin(predCols); err != nil {
		return err
	}
	state := make([]float32, ops.MetricStateSize(m.params(), predCols))
	ops.MetricBatch(m.params(), labels, labelCols, preds, predCols, state)
	return m.add(state)
}

// params is the device metric of the F1 score's settings.
func (m *F1Score) params() ops.MetricParams {
	return ops.MetricParams{Kind: ops.MetricF1, Threshold: m.Threshold}
}

// add adds a batch's counts per column (tp, fp, fn, the labels' sum).
func (m *F1Score) add(state []float32) error {
	cols := len(m.tp)
	if len(state) != 4*cols+1 {
		return fmt.Errorf("%s: the device's state has %d values, want %d", m.Name(), len(state), 4*cols+1)
	}
	for j := range cols {
		m.tp[j] += float64(state[j])
		m.fp[j] += float64(state[cols+j])
		m.fn[j] += float64(state[2*cols+j])
		m.support[j] += float64(state[3*cols+j])
	}
	return nil
}

// check says whether the settings are valid.
func (m *F1Score) check() error {
	switch m.Average {
	case "", "micro", "macro", "weighted":
	default:
		return fmt.Errorf("%s: average %q is not micro, macro, weighted or empty (Keras' None)", m.Name(), m.Average)
	}
	if m.Threshold != 0 && !(m.Threshold > 0 && m.Threshold <= 1) {
		return fmt.Errorf("%s: threshold %v is not in (0, 1]", m.Name(), m.Threshold)
	}
	return nil
}

// begin makes the counts for cols columns at the first batch, and checks
// a later batch has as many.
func (m *F1Score) begin(cols int) error {
	switch {
	case m.tp == nil:
		m.tp, m.fp, m.fn, m.support = make([]float64, cols), make([]float64, cols), make([]float64, cols), make([]float64, cols)
	case len(m.tp) != cols:
		return fmt.Errorf("%s: outputs have %d columns, %d in earlier batches", m.Name(), cols, len(m.tp))
	}
	return nil
}

// DeviceParams is the F1 score's counting, when its settings are valid.
func (m *F1Score) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return m.params(), m.check() == nil && labelCols == predCols && predCols > 0
}

// AddDeviceBatch adds a batch the device counted.
func (m *F1Score) AddDeviceBatch(state []float32, rows int) error {
	if err := m.check(); err != nil {
		return err
	}
	if (len(state)-1)%4 != 0 || len(state) < 5 {
		return fmt.Errorf("%s: the device's state has %d values, which fit no number of columns", m.Name(), len(state))
	}
	if err := m.begin((len(state) - 1) / 4); err != nil {
		return err
	}
	return m.add(state)
}

// Scores is each column's F1 score since the last Reset, what Keras'
// average=None returns; nil before any batch.
func (m *F1Score) Scores() []float64 {
	if m.tp == nil {
		return nil
	}
	scores := make([]float64, len(m.tp))
	for j := range scores {
		scores[j] = f1(m.tp[j], m.fp[j], m.fn[j])
	}
	return scores
}

// Result is the F1 score averaged as Average says, over every batch since
// the last Reset; 0 before any.
func (m *F1Score) Result() float64 {
	if m.tp == nil {
		return 0
	}
	switch m.Average {
	case "micro":
		var tp, fp, fn float64
		for j := range m.tp {
			tp, fp, fn = tp+m.tp[j], fp+m.fp[j], fn+m.fn[j]
		}
		return f1(tp, fp, fn)
	case "weighted":
		var total, sum float64
		for _, s := range m.support {
			total += s
		}
		for j, score := range m.Scores() {
			sum += score * divideNoNaN(m.support[j], total)
		}
		return sum
	}
	var sum float64
	scores := m.Scores()
	for _, s := range scores {
		sum += s
	}
	return sum / float64(len(scores))
}

// f1 is the F1 score of confusion counts, with divide_no_nan's zeros.
func f1(tp, fp, fn float64) float64 {
	precision, recall := divideNoNaN(tp, tp+fp), divideNoNaN(tp, tp+fn)
	return 2 * divideNoNaN(precision*recall, precision+recall)
}
