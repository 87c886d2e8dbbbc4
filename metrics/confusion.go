package metrics

import (
	"cmp"
	"fmt"
	"slices"
)

// Precision is the fraction of predicted positives that are positive,
// TP / (TP + FP), keras.metrics.Precision. Its zero value is Keras'
// default, a threshold of 0.5: &metrics.Precision{}.
//
// As in Keras every output is a binary decision, compared with the label
// in its place: the counts run over all elements of the batch, whether the
// model has one sigmoid output, several independent ones (multi-label) or
// a softmax. A label counts as positive when it is not 0; an output is a
// predicted positive when it is above Threshold (and, with TopK, among its
// row's TopK largest). Outputs must be probabilities in [0, 1], as Keras
// asserts: Update fails otherwise. The result is 0 while there is no
// predicted positive, as Keras' divide_no_nan makes it.
type Precision struct {
	// Threshold is Keras' thresholds argument, one value in [0, 1]: an
	// output above it is a predicted positive. Zero means Keras' default,
	// 0.5, or with TopK no threshold at all (Keras' -1e10); for a threshold
	// of 0 itself use math.SmallestNonzeroFloat32, which differs from 0
	// only for that one output value. A list of thresholds, for which
	// Keras returns a list, is not supported.
	Threshold float32
	// TopK, when positive, keeps only the TopK largest outputs of each row
	// as predicted positives (ties going to the lower index, as in
	// tf.math.top_k), before Threshold and ClassID apply. Zero means none.
	TopK int
	// ClassID, when set, counts only that column of the labels and
	// outputs: &metrics.Precision{ClassID: new(2)}. Nil counts all.
	ClassID *int
	counts  confusionCounts
}

// Recall is the fraction of positives predicted positive, TP / (TP + FN),
// keras.metrics.Recall. Its fields and counting are Precision's; its zero
// value is Keras' default: &metrics.Recall{}. The result is 0 while no
// label was positive.
type Recall struct {
	// Threshold: see Precision.Threshold.
	Threshold float32
	// TopK: see Precision.TopK.
	TopK int
	// ClassID: see Precision.ClassID.
	ClassID *int
	counts  confusionCounts
}

// Name is "precision".
func (m *Precision) Name() string { return "precision" }

// Name is "recall".
func (m *Recall) Name() string { return "recall" }

// Update adds a batch: labels and outputs of the same shape.
func (m *Precision) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return m.counts.update(m.Name(), m.Threshold, m.TopK, m.ClassID, labels, labelCols, preds, predCols)
}

// Update adds a batch: labels and outputs of the same shape.
func (m *Recall) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return m.counts.update(m.Name(), m.Threshold, m.TopK, m.ClassID, labels, labelCols, preds, predCols)
}

// Result is TP / (TP + FP) over every batch since the last Reset.
func (m *Precision) Result() float64 { return divideNoNaN(m.counts.tp, m.counts.tp+m.counts.fp) }

// Result is TP / (TP + FN) over every batch since the last Reset.
func (m *Recall) Result() float64 { return divideNoNaN(m.counts.tp, m.counts.tp+m.counts.fn) }

// Reset forgets all batches.
func (m *Precision) Reset() { m.counts = confusionCounts{} }

// Reset forgets all batches.
func (m *Recall) Reset() { m.counts = confusionCounts{} }

// confusionCounts are the true positives, false positives and false
// negatives of one threshold, over every element seen.
type confusionCounts struct{ tp, fp, fn float64 }

// update adds a batch to the counts, deciding each output as Keras'
// update_confusion_matrix_variables does for one threshold.
func (c *confusionCounts) update(name string, threshold float32, topK int, classID *int, labels []float32, labelCols int, preds []float32, predCols int) error {
	rows, err := sameShape(name, labels, labelCols, preds, predCols)
	if err != nil {
		return err
	}
	switch {
	case !(threshold >= 0 && threshold <= 1):
		return fmt.Errorf("%s: threshold %v is not in [0, 1]", name, threshold)
	case topK < 0 || topK > predCols:
		return fmt.Errorf("%s: top_k %d is not in [1, %d], the number of outputs", name, topK, predCols)
	case classID != nil && (*classID < 0 || *classID >= predCols):
		return fmt.Errorf("%s: class_id %d is not in [0, %d), the outputs' columns", name, *classID, predCols)
	}
	if err := checkProbabilities(name, preds); err != nil {
		return err
	}
	if threshold == 0 && topK == 0 {
		threshold = 0.5
	}
	lo, hi := 0, predCols
	if classID != nil {
		lo, hi = *classID, *classID+1
	}
	var inTop []bool
	var order []int
	if topK > 0 {
		inTop, order = make([]bool, predCols), make([]int, predCols)
	}
	var tp, fp, fn float64
	for r := 0; r < rows; r++ {
		lr, pr := labels[r*predCols:(r+1)*predCols], preds[r*predCols:(r+1)*predCols]
		if topK > 0 {
			markTopK(inTop, order, pr, topK)
		}
		for j := lo; j < hi; j++ {
			// With TopK and no threshold, Keras compares the kept outputs
			// (in [0, 1]) with -1e10: all of them are positive.
			predicted := (topK == 0 || inTop[j]) && (pr[j] > threshold || threshold == 0)
			switch positive := lr[j] != 0; {
			case positive && predicted:
				tp++
			case predicted:
				fp++
			case positive:
				fn++
			}
		}
	}
	c.tp, c.fp, c.fn = c.tp+tp, c.fp+fp, c.fn+fn
	return nil
}

// markTopK sets inTop[j] for the k largest values of row, the lower index
// first among equal values, as tf.math.top_k chooses; order is scratch
// space of len(row).
func markTopK(inTop []bool, order []int, row []float32, k int) {
	for j := range order {
		order[j] = j
		inTop[j] = false
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(row[b], row[a]) })
	for _, j := range order[:k] {
		inTop[j] = true
	}
}
