package metrics

import (
	"fmt"
	"math"
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
	switch m.Average {
	case "", "micro", "macro", "weighted":
	default:
		return fmt.Errorf("%s: average %q is not micro, macro, weighted or empty (Keras' None)", m.Name(), m.Average)
	}
	if m.Threshold != 0 && !(m.Threshold > 0 && m.Threshold <= 1) {
		return fmt.Errorf("%s: threshold %v is not in (0, 1]", m.Name(), m.Threshold)
	}
	rows, err := sameShape(m.Name(), labels, labelCols, preds, predCols)
	if err != nil {
		return err
	}
	switch {
	case m.tp == nil:
		m.tp, m.fp, m.fn, m.support = make([]float64, predCols), make([]float64, predCols), make([]float64, predCols), make([]float64, predCols)
	case len(m.tp) != predCols:
		return fmt.Errorf("%s: outputs have %d columns, %d in earlier batches", m.Name(), predCols, len(m.tp))
	}
	for r := 0; r < rows; r++ {
		lr, pr := labels[r*predCols:(r+1)*predCols], preds[r*predCols:(r+1)*predCols]
		threshold := m.Threshold
		if threshold == 0 {
			threshold = pr[0]
			for _, p := range pr {
				threshold = max(threshold, p)
			}
		}
		for j, p := range pr {
			var pred float64
			if m.Threshold == 0 && p >= threshold && math.Abs(float64(p)) > 1e-12 || m.Threshold != 0 && p > threshold {
				pred = 1
			}
			label := float64(lr[j])
			m.tp[j] += pred * label
			m.fp[j] += pred * (1 - label)
			m.fn[j] += (1 - pred) * label
			m.support[j] += label
		}
	}
	return nil
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
