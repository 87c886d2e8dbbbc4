package metrics

import (
	"math"
	"testing"
)

// TestTopKAccuracy works in_top_k out by hand: a sample is right when fewer
// than k outputs are strictly above its class's.
func TestTopKAccuracy(t *testing.T) {
	nan := float32(math.NaN())
	// Keras' docstring, k=1: row (.1 .9 .8) of class 2 has .9 above it,
	// wrong; row (.05 .95 0) of class 1 has none above, right: 1/2.
	preds := []float32{0.1, 0.9, 0.8, 0.05, 0.95, 0}
	runCases(t, []metricCase{
		{name: "Keras' example", metric: &TopKCategoricalAccuracy{K: 1}, labels: []float32{0, 0, 1, 0, 1, 0}, labelCols: 3, preds: preds, predCols: 3, want: 0.5},
		{name: "sparse, Keras' example", metric: &SparseTopKCategoricalAccuracy{K: 1}, labels: []float32{2, 1}, labelCols: 1, preds: preds, predCols: 3, want: 0.5},
		// k = 2: class 2's .8 has one output above it: both right.
		{name: "k 2", metric: &TopKCategoricalAccuracy{K: 2}, labels: []float32{0, 0, 1, 0, 1, 0}, labelCols: 3, preds: preds, predCols: 3, want: 1},
		// Keras' default k = 5 is above 3 classes: every sample is right.
		{name: "default k", metric: &TopKCategoricalAccuracy{}, labels: []float32{1, 0, 0, 1, 0, 0}, labelCols: 3, preds: preds, predCols: 3, want: 1},
		{name: "sparse default k", metric: &SparseTopKCategoricalAccuracy{}, labels: []float32{0, 0}, labelCols: 1, preds: preds, predCols: 3, want: 1},
		// Ties at the boundary are all in: with k 1, both .4s of
		// (.4 .4 .2) are in the top 1, though argmax picks the first.
		{name: "tie, first index", metric: &SparseTopKCategoricalAccuracy{K: 1}, labels: []float32{0}, labelCols: 1, preds: []float32{0.4, 0.4, 0.2}, predCols: 3, want: 1},
		{name: "tie, second index", metric: &SparseTopKCategoricalAccuracy{K: 1}, labels: []float32{1}, labelCols: 1, preds: []float32{0.4, 0.4, 0.2}, predCols: 3, want: 1},
		{name: "one-hot tie", metric: &TopKCategoricalAccuracy{K: 1}, labels: []float32{0, 1, 0}, labelCols: 3, preds: []float32{0.4, 0.4, 0.2}, predCols: 3, want: 1},
		// k 2 on (.5 .3 .3 .1): class 2 has one above (in, tied with
		// class 1), class 3 has three above (out).
		{name: "tie straddling k", metric: &SparseTopKCategoricalAccuracy{K: 2}, labels: []float32{2, 3}, labelCols: 1, preds: []float32{0.5, 0.3, 0.3, 0.1, 0.5, 0.3, 0.3, 0.1}, predCols: 4, want: 0.5},
		// A NaN anywhere in the row makes it wrong, as in_top_k does.
		{name: "NaN output", metric: &SparseTopKCategoricalAccuracy{}, labels: []float32{1}, labelCols: 1, preds: []float32{nan, 0.9, 0.1}, predCols: 3, want: 0},
		{name: "infinite output", metric: &TopKCategoricalAccuracy{}, labels: []float32{0, 1, 0}, labelCols: 3, preds: []float32{float32(math.Inf(1)), 0.9, 0.1}, predCols: 3, want: 0},
		// Labels are cast to int32 as Keras does: 1.9 is class 1.
		{name: "label truncated", metric: &SparseTopKCategoricalAccuracy{K: 1}, labels: []float32{1.9}, labelCols: 1, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, want: 1},

		{name: "label out of range", metric: &SparseTopKCategoricalAccuracy{}, labels: []float32{3}, labelCols: 1, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, wantErr: "class index"},
		{name: "negative label", metric: &SparseTopKCategoricalAccuracy{}, labels: []float32{-1}, labelCols: 1, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, wantErr: "class index"},
		{name: "NaN label", metric: &SparseTopKCategoricalAccuracy{}, labels: []float32{nan}, labelCols: 1, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, wantErr: "class index"},
		{name: "one-hot labels to sparse", metric: &SparseTopKCategoricalAccuracy{}, labels: []float32{0, 1, 0}, labelCols: 3, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, wantErr: "one class index"},
		{name: "class indices to one-hot", metric: &TopKCategoricalAccuracy{}, labels: []float32{1}, labelCols: 1, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, wantErr: "columns"},
		{name: "negative k", metric: &TopKCategoricalAccuracy{K: -1}, labels: []float32{0, 1, 0}, labelCols: 3, preds: []float32{0.1, 0.8, 0.1}, predCols: 3, wantErr: "negative"},
	})
}
