package metrics

import (
	"math"
	"testing"
)

// TestRegressionMetrics works the errors out by hand.
func TestRegressionMetrics(t *testing.T) {
	// Keras' docstrings: labels (0 1 | 0 0), outputs (1 1 | 0 0): errors
	// (1 0 | 0 0), so per-sample means .5 and 0, mean .25 for both MAE and
	// MSE, and RMSE √.25 = .5.
	labels, preds := []float32{0, 1, 0, 0}, []float32{1, 1, 0, 0}
	// Labels (1 2 3), outputs (2 2 1): errors 1 0 -2, so MAE 3/3 = 1,
	// MSE (1+0+4)/3 = 5/3, RMSE √(5/3).
	labels2, preds2 := []float32{1, 2, 3}, []float32{2, 2, 1}
	runCases(t, []metricCase{
		{name: "MAE, Keras' example", metric: &MeanAbsoluteError{}, labels: labels, labelCols: 2, preds: preds, predCols: 2, want: 0.25},
		{name: "MSE, Keras' example", metric: &MeanSquaredError{}, labels: labels, labelCols: 2, preds: preds, predCols: 2, want: 0.25},
		{name: "RMSE, Keras' example", metric: &RootMeanSquaredError{}, labels: labels, labelCols: 2, preds: preds, predCols: 2, want: 0.5},
		{name: "MAE", metric: &MeanAbsoluteError{}, labels: labels2, labelCols: 3, preds: preds2, predCols: 3, want: 1},
		{name: "MSE", metric: &MeanSquaredError{}, labels: labels2, labelCols: 3, preds: preds2, predCols: 3, want: 5.0 / 3},
		{name: "RMSE", metric: &RootMeanSquaredError{}, labels: labels2, labelCols: 3, preds: preds2, predCols: 3, want: math.Sqrt(5.0 / 3)},
		{name: "MAE of mismatched columns", metric: &MeanAbsoluteError{}, labels: []float32{1}, labelCols: 1, preds: []float32{1, 2}, predCols: 2, wantErr: "columns"},
		{name: "MSE of rows that do not line up", metric: &MeanSquaredError{}, labels: []float32{1, 2}, labelCols: 1, preds: []float32{1}, predCols: 1, wantErr: "do not match"},
		{name: "RMSE of rows that do not line up", metric: &RootMeanSquaredError{}, labels: []float32{1, 2, 3}, labelCols: 1, preds: []float32{1, 2}, predCols: 1, wantErr: "do not match"},
	})
}

// TestRMSEIsTheRootOfTheRunningMean gives a batch of one sample with error
// 3 and a batch of three with error 1: the running mean of squares is
// (9+1+1+1)/4 = 3, so RMSE is √3 ≈ 1.732, not the mean of the batches'
// roots, (3+1)/2 = 2, nor their size-weighted mean (3+3·1)/4 = 1.5.
func TestRMSEIsTheRootOfTheRunningMean(t *testing.T) {
	m := &RootMeanSquaredError{}
	if err := m.Update([]float32{0}, 1, []float32{3}, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Update([]float32{0, 0, 0}, 1, []float32{1, -1, 1}, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Result(), math.Sqrt(3); math.Abs(got-want) > 1e-12 {
		t.Errorf("RMSE = %v, want √3 = %v", got, want)
	}
	m.Reset()
	if got := m.Result(); got != 0 {
		t.Errorf("RMSE after Reset = %v, want 0", got)
	}
}
