package metrics

import (
	"fmt"

	"github.com/gokeras/gokeras/ops"
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

// confusionCounts are Precision's and Recall's counts.
type confusionCounts struct{ tp, fp, fn float64 }

// params is the device metric of Precision or Recall with these settings,
// checked against outputs of predCols columns.
func confusionParams(name string, threshold float32, topK int, classID *int, predCols int) (ops.MetricParams, error) {
	switch {
	case !(threshold >= 0 && threshold <= 1):
		return ops.MetricParams{}, fmt.Errorf("%s: threshold %v is not in [0, 1]", name, threshold)
	case topK < 0 || topK > predCols:
		return ops.MetricParams{}, fmt.Errorf("%s: top_k %d is not in [1, %d], the number of outputs", name, topK, predCols)
	case classID != nil && (*classID < 0 || *classID >= predCols):
		return ops.MetricParams{}, fmt.Errorf("%s: class_id %d is not in [0, %d), the outputs' columns", name, *classID, predCols)
	}
	p := ops.MetricParams{Kind: ops.MetricPrecisionRecall, Threshold: threshold, K: topK, ClassID: -1}
	if classID != nil {
		p.ClassID = *classID
	}
	return p, nil
}

// update adds a batch, computed on the host.
func (c *confusionCounts) update(name string, threshold float32, topK int, classID *int, labels []float32, labelCols int, preds []float32, predCols int) error {
	if _, err := sameShape(name, labels, labelCols, preds, predCols); err != nil {
		return err
	}
	p, err := confusionParams(name, threshold, topK, classID, predCols)
	if err != nil {
		return err
	}
	if err := checkProbabilities(name, preds); err != nil {
		return err
	}
	var state [4]float32
	ops.MetricBatch(p, labels, labelCols, preds, predCols, state[:])
	return c.add(name, state[:])
}

// add adds a batch's counts, refusing one with outputs that are not
// probabilities.
func (c *confusionCounts) add(name string, state []float32) error {
	if len(state) != 4 {
		return fmt.Errorf("%s: the device's state has %d values, want 4", name, len(state))
	}
	if bad := int(state[3]); bad > 0 {
		return fmt.Errorf("%s: %d outputs of the batch are not in [0, 1]: predictions must be probabilities (a model that outputs logits needs a sigmoid or softmax first)", name, bad)
	}
	c.tp, c.fp, c.fn = c.tp+float64(state[0]), c.fp+float64(state[1]), c.fn+float64(state[2])
	return nil
}

// DeviceParams is Precision's counting, when its settings fit the outputs.
func (m *Precision) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	p, err := confusionParams(m.Name(), m.Threshold, m.TopK, m.ClassID, predCols)
	return p, err == nil && labelCols == predCols
}

// DeviceParams is Recall's counting, when its settings fit the outputs.
func (m *Recall) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	p, err := confusionParams(m.Name(), m.Threshold, m.TopK, m.ClassID, predCols)
	return p, err == nil && labelCols == predCols
}

// AddDeviceBatch adds a batch the device counted.
func (m *Precision) AddDeviceBatch(state []float32, rows int) error {
	return m.counts.add(m.Name(), state)
}

// AddDeviceBatch adds a batch the device counted.
func (m *Recall) AddDeviceBatch(state []float32, rows int) error {
	return m.counts.add(m.Name(), state)
}
