package metrics

import (
	"fmt"

	"github.com/gokeras/gokeras/ops"
)

// OnDevice is a metric that the model's device can compute: package nn
// adds its batch sum to the compiled graph (ops.MetricSum), so that only
// two numbers a batch come back instead of the outputs. DeviceParams says
// what to compute for labels of labelCols and outputs of predCols columns,
// false when the shapes do not suit the metric (Update then reports why);
// AddDeviceBatch adds a batch of rows samples from the device's sum of
// their scores and its count of bad labels.
//
// The accuracies, the top-k accuracies and the mean errors are OnDevice;
// Precision, Recall, AUC and F1Score compute on the host from the
// outputs.
type OnDevice interface {
	Metric
	DeviceParams(labelCols, predCols int) (ops.MetricParams, bool)
	AddDeviceBatch(sum float64, bad, rows int) error
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

// addDevice adds a device batch to a running mean of sample scores.
func addDevice(mean *Mean, name string, sum float64, bad, rows int) error {
	if bad > 0 {
		return fmt.Errorf("%s: %d labels of the batch are not class indices of the outputs", name, bad)
	}
	mean.total += sum
	mean.count += float64(rows)
	return nil
}

// AddDeviceBatch adds a batch the device computed.
func (a *Accuracy) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&a.correct, a.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (a *CategoricalAccuracy) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&a.correct, a.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (a *SparseCategoricalAccuracy) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&a.correct, a.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (a *BinaryAccuracy) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&a.correct, a.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *TopKCategoricalAccuracy) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&m.correct, m.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed: a label that is not a
// class index fails it, as Update fails.
func (m *SparseTopKCategoricalAccuracy) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&m.correct, m.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *MeanAbsoluteError) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&m.mean, m.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *MeanSquaredError) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&m.mean, m.Name(), sum, bad, rows)
}

// AddDeviceBatch adds a batch the device computed.
func (m *RootMeanSquaredError) AddDeviceBatch(sum float64, bad, rows int) error {
	return addDevice(&m.mean, m.Name(), sum, bad, rows)
}
