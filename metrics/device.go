package metrics

import (
	"fmt"

	"github.com/gokeras/gokeras/ops"
)

// OnDevice is a metric that the model's device computes: package nn adds
// its batch state to the compiled graph (ops.MetricState), so that only
// that state comes back instead of the outputs. DeviceParams says what to
// compute for labels of labelCols and outputs of predCols columns, false
// when the shapes or the metric's settings do not suit it (Update then
// reports why); AddDeviceBatch adds a batch of rows samples from the
// state the device computed (ops.MetricBatch's values).
//
// Every metric of this package is OnDevice.
type OnDevice interface {
	Metric
	DeviceParams(labelCols, predCols int) (ops.MetricParams, bool)
	AddDeviceBatch(state []float32, rows int) error
}

// DeviceParams is the accuracy Keras' "accuracy" resolves to for the shapes.
func (a *Accuracy) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return accuracyDevice(resolve(labelCols, predCols), 0.5, labelCols, predCols)
}

// DeviceParams is categorical accuracy, for one-hot labels.
func (a *CategoricalAccuracy) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return accuracyDevice(categorical, 0, labelCols, predCols)
}

// DeviceParams is sparse categorical accuracy, for class indices.
func (a *SparseCategoricalAccuracy) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return accuracyDevice(sparseCategorical, 0, labelCols, predCols)
}

// DeviceParams is binary accuracy at the metric's threshold.
func (a *BinaryAccuracy) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	threshold := a.Threshold
	if threshold == 0 {
		threshold = 0.5
	}
	return accuracyDevice(binary, threshold, labelCols, predCols)
}

// accuracyDevice is the device metric of an accuracy kind, when the shapes
// suit it (as count checks them).
func accuracyDevice(kind accuracyKind, threshold float32, labelCols, predCols int) (ops.MetricParams, bool) {
	ok := labelCols > 0 && predCols > 0
	switch kind {
	case sparseCategorical:
		ok = ok && labelCols == 1
	default:
		ok = ok && labelCols == predCols
	}
	return accuracyParams(kind, threshold), ok
}

// DeviceParams is the top-k accuracy for one-hot labels.
func (m *TopKCategoricalAccuracy) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	k, err := topK(m.Name(), m.K)
	return ops.MetricParams{Kind: ops.MetricTopK, K: k}, err == nil && labelCols == predCols && predCols > 0
}

// DeviceParams is the top-k accuracy for class indices.
func (m *SparseTopKCategoricalAccuracy) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	k, err := topK(m.Name(), m.K)
	return ops.MetricParams{Kind: ops.MetricSparseTopK, K: k}, err == nil && labelCols == 1 && predCols > 0
}

// DeviceParams is the mean absolute error.
func (m *MeanAbsoluteError) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return ops.MetricParams{Kind: ops.MetricAbsoluteError}, labelCols == predCols && predCols > 0
}

// DeviceParams is the mean squared error.
func (m *MeanSquaredError) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return ops.MetricParams{Kind: ops.MetricSquaredError}, labelCols == predCols && predCols > 0
}

// DeviceParams is the mean squared error, whose root Result takes.
func (m *RootMeanSquaredError) DeviceParams(labelCols, predCols int) (ops.MetricParams, bool) {
	return ops.MetricParams{Kind: ops.MetricSquaredError}, labelCols == predCols && predCols > 0
}

// addDevice adds a device batch, its sum of sample scores and count of
// bad labels, to a running mean of the scores.
func addDevice(mean *Mean, name string, state []float32, rows int) error {
	if len(state) != 2 {
		return fmt.Errorf("%s: the device's state has %d values, want 2", name, len(state))
	}
	if bad := int(state[1]); bad > 0 {
		return fmt.Errorf("%s: %d labels of the batch are not class indices of the outputs", name, bad)
	}
	mean.total += float64(state[0])
	mean.count += float64(rows)
	return nil
}

// AddDeviceBatch adds a batch the device computed.
func (a *Accuracy) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&a.correct, a.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (a *CategoricalAccuracy) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&a.correct, a.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (a *SparseCategoricalAccuracy) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&a.correct, a.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (a *BinaryAccuracy) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&a.correct, a.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *TopKCategoricalAccuracy) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&m.correct, m.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed: a label that is not a
// class index fails it, as Update fails.
func (m *SparseTopKCategoricalAccuracy) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&m.correct, m.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *MeanAbsoluteError) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&m.mean, m.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *MeanSquaredError) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&m.mean, m.Name(), state, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *RootMeanSquaredError) AddDeviceBatch(state []float32, rows int) error {
	return addDevice(&m.mean, m.Name(), state, rows)
}
