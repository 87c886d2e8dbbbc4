package metrics

import (
	"math"

	"github.com/gokeras/gokeras/ops"
)

// MeanAbsoluteError is the mean of |label - output|,
// keras.metrics.MeanAbsoluteError: each sample's mean over its outputs,
// averaged over the samples. Its zero value is ready to use:
// &metrics.MeanAbsoluteError{}.
type MeanAbsoluteError struct {
	name string // "mean_absolute_error" when empty; Get("mae") sets "mae"
	mean Mean
}

// MeanSquaredError is the mean of (label - output)²,
// keras.metrics.MeanSquaredError: each sample's mean over its outputs,
// averaged over the samples. Its zero value is ready to use:
// &metrics.MeanSquaredError{}.
type MeanSquaredError struct {
	name string // "mean_squared_error" when empty; Get("mse") sets "mse"
	mean Mean
}

// RootMeanSquaredError is the square root of the mean of
// (label - output)² over every output since the last Reset,
// keras.metrics.RootMeanSquaredError: the root of the running mean, not a
// mean of each batch's root. Its zero value is ready to use:
// &metrics.RootMeanSquaredError{}.
type RootMeanSquaredError struct{ mean Mean }

// Name is "mean_absolute_error", or "mae" when Get was given "mae", as
// Keras reports it.
func (m *MeanAbsoluteError) Name() string {
	if m.name == "" {
		return "mean_absolute_error"
	}
	return m.name
}

// Name is "mean_squared_error", or "mse" when Get was given "mse", as
// Keras reports it.
func (m *MeanSquaredError) Name() string {
	if m.name == "" {
		return "mean_squared_error"
	}
	return m.name
}

// Name is "root_mean_squared_error".
func (m *RootMeanSquaredError) Name() string { return "root_mean_squared_error" }

// Update adds a batch: labels and outputs of the same shape.
func (m *MeanAbsoluteError) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return addErrors(&m.mean, m.Name(), ops.MetricAbsoluteError, labels, labelCols, preds, predCols)
}

// Update adds a batch: labels and outputs of the same shape.
func (m *MeanSquaredError) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return addErrors(&m.mean, m.Name(), ops.MetricSquaredError, labels, labelCols, preds, predCols)
}

// Update adds a batch: labels and outputs of the same shape.
func (m *RootMeanSquaredError) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return addErrors(&m.mean, m.Name(), ops.MetricSquaredError, labels, labelCols, preds, predCols)
}

// Result is the mean absolute error over all samples since the last Reset.
func (m *MeanAbsoluteError) Result() float64 { return m.mean.Result() }

// Result is the mean squared error over all samples since the last Reset.
func (m *MeanSquaredError) Result() float64 { return m.mean.Result() }

// Result is the root of the mean squared error over all samples since the
// last Reset.
func (m *RootMeanSquaredError) Result() float64 { return math.Sqrt(m.mean.Result()) }

// Reset forgets all batches.
func (m *MeanAbsoluteError) Reset() { m.mean.Reset() }

// Reset forgets all batches.
func (m *MeanSquaredError) Reset() { m.mean.Reset() }

// Reset forgets all batches.
func (m *RootMeanSquaredError) Reset() { m.mean.Reset() }

// addErrors adds to mean each sample's mean over its outputs of the error
// kind (ops.MetricAbsoluteError or ops.MetricSquaredError). Every sample
// has as many outputs, so the running mean is also the mean over every
// output.
func addErrors(mean *Mean, name string, kind ops.MetricKind, labels []float32, labelCols int, preds []float32, predCols int) error {
	rows, err := sameShape(name, labels, labelCols, preds, predCols)
	if err != nil {
		return err
	}
	p := ops.MetricParams{Kind: kind}
	for r := 0; r < rows; r++ {
		score, _ := ops.MetricScore(p, labels[r*labelCols:(r+1)*labelCols], preds[r*predCols:(r+1)*predCols])
		mean.Add(score, 1)
	}
	return nil
}
