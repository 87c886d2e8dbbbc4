package metrics

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
)

// TopKCategoricalAccuracy counts samples whose one-hot label's class (its
// argmax) is among the K largest outputs, keras.metrics.
// TopKCategoricalAccuracy. Its zero value is Keras' default, K = 5:
// &metrics.TopKCategoricalAccuracy{}.
//
// Ties are tf.math.in_top_k's: the class is in the top K when fewer than K
// outputs are strictly larger than its own, so that every class tied at
// the boundary is in; a row with a NaN or infinite output is never right.
type TopKCategoricalAccuracy struct {
	// K is the number of largest outputs a sample's class must be among.
	// Zero means Keras' default, 5.
	K       int
	correct Mean
}

// SparseTopKCategoricalAccuracy is TopKCategoricalAccuracy for labels that
// are class indices, keras.metrics.SparseTopKCategoricalAccuracy. Its zero
// value is Keras' default, K = 5: &metrics.SparseTopKCategoricalAccuracy{}.
// A label is truncated to an integer, as Keras' cast to int32 does; one
// that is not then a class of the outputs fails Update, as in_top_k does.
type SparseTopKCategoricalAccuracy struct {
	// K: see TopKCategoricalAccuracy.K.
	K       int
	correct Mean
}

// Name is "top_k_categorical_accuracy".
func (m *TopKCategoricalAccuracy) Name() string { return "top_k_categorical_accuracy" }

// Name is "sparse_top_k_categorical_accuracy".
func (m *SparseTopKCategoricalAccuracy) Name() string { return "sparse_top_k_categorical_accuracy" }

// Result is the fraction of samples right since the last Reset.
func (m *TopKCategoricalAccuracy) Result() float64 { return m.correct.Result() }

// Result is the fraction of samples right since the last Reset.
func (m *SparseTopKCategoricalAccuracy) Result() float64 { return m.correct.Result() }

// Reset forgets all batches.
func (m *TopKCategoricalAccuracy) Reset() { m.correct.Reset() }

// Reset forgets all batches.
func (m *SparseTopKCategoricalAccuracy) Reset() { m.correct.Reset() }

// Update adds a batch: one-hot labels, one column per output.
func (m *TopKCategoricalAccuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	rows, err := sameShape(m.Name(), labels, labelCols, preds, predCols)
	if err != nil {
		return err
	}
	k, err := topK(m.Name(), m.K)
	if err != nil {
		return err
	}
	p := ops.MetricParams{Kind: ops.MetricTopK, K: k}
	for r := 0; r < rows; r++ {
		score, _ := ops.MetricScore(p, labels[r*labelCols:(r+1)*labelCols], preds[r*predCols:(r+1)*predCols])
		m.correct.Add(score, 1)
	}
	return nil
}

// Update adds a batch: one class index per sample.
func (m *SparseTopKCategoricalAccuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	rows, err := batchRows(m.Name(), labels, labelCols, preds, predCols)
	if err != nil {
		return err
	}
	if labelCols != 1 {
		return fmt.Errorf("%s: labels have %d columns: it needs one class index per sample", m.Name(), labelCols)
	}
	k, err := topK(m.Name(), m.K)
	if err != nil {
		return err
	}
	for r, l := range labels {
		if t := math.Trunc(float64(l)); !(t >= 0 && t < float64(predCols)) {
			return fmt.Errorf("%s: label %v of sample %d is not a class index in [0, %d)", m.Name(), l, r, predCols)
		}
	}
	p := ops.MetricParams{Kind: ops.MetricSparseTopK, K: k}
	for r := 0; r < rows; r++ {
		score, _ := ops.MetricScore(p, labels[r:r+1], preds[r*predCols:(r+1)*predCols])
		m.correct.Add(score, 1)
	}
	return nil
}

// topK returns k, or Keras' default 5 for 0.
func topK(name string, k int) (int, error) {
	switch {
	case k == 0:
		return 5, nil
	case k < 0:
		return 0, fmt.Errorf("%s: k %d is negative", name, k)
	}
	return k, nil
}
