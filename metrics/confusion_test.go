package metrics

import (
	"math"
	"testing"
)

// TestPrecisionRecall works small batches out by hand: P marks a predicted
// positive, TP/FP/FN count over every element of the batch.
func TestPrecisionRecall(t *testing.T) {
	nan := float32(math.NaN())
	runCases(t, []metricCase{
		// Keras' docstring: labels 0 1 1 1, outputs 1 0 1 1 at 0.5:
		// TP = 2 (the last two), FP = 1 (the first), FN = 1 (the second).
		{name: "precision, Keras' example", metric: &Precision{}, labels: []float32{0, 1, 1, 1}, labelCols: 1, preds: []float32{1, 0, 1, 1}, predCols: 1, want: 2.0 / 3},
		{name: "recall, Keras' example", metric: &Recall{}, labels: []float32{0, 1, 1, 1}, labelCols: 1, preds: []float32{1, 0, 1, 1}, predCols: 1, want: 2.0 / 3},
		// Outputs 0.8 0.75 0.6 0.2 for labels 1 0 1 0: at 0.5 P P P -, so
		// TP 2, FP 1, FN 0; at 0.7 P P - -, so TP 1, FP 1, FN 1.
		{name: "precision at 0.5", metric: &Precision{}, labels: []float32{1, 0, 1, 0}, labelCols: 1, preds: []float32{0.8, 0.75, 0.6, 0.2}, predCols: 1, want: 2.0 / 3},
		{name: "recall at 0.5", metric: &Recall{}, labels: []float32{1, 0, 1, 0}, labelCols: 1, preds: []float32{0.8, 0.75, 0.6, 0.2}, predCols: 1, want: 1},
		{name: "precision at 0.7", metric: &Precision{Threshold: 0.7}, labels: []float32{1, 0, 1, 0}, labelCols: 1, preds: []float32{0.8, 0.75, 0.6, 0.2}, predCols: 1, want: 0.5},
		{name: "recall at 0.7", metric: &Recall{Threshold: 0.7}, labels: []float32{1, 0, 1, 0}, labelCols: 1, preds: []float32{0.8, 0.75, 0.6, 0.2}, predCols: 1, want: 0.5},
		// An output equal to the threshold is not above it: 0.5 is negative.
		{name: "threshold is strict", metric: &Recall{}, labels: []float32{1}, labelCols: 1, preds: []float32{0.5}, predCols: 1, want: 0},
		// Multi-label rows (1 0 1 | 0 1 0) against (.9 .6 .4 | .2 .7 .55):
		// TP .9 .7, FP .6 .55, FN .4; all six elements count.
		{name: "precision over all elements", metric: &Precision{}, labels: []float32{1, 0, 1, 0, 1, 0}, labelCols: 3, preds: []float32{0.9, 0.6, 0.4, 0.2, 0.7, 0.55}, predCols: 3, want: 0.5},
		{name: "recall over all elements", metric: &Recall{}, labels: []float32{1, 0, 1, 0, 1, 0}, labelCols: 3, preds: []float32{0.9, 0.6, 0.4, 0.2, 0.7, 0.55}, predCols: 3, want: 2.0 / 3},
		// Keras' top_k examples, one row 0 0 1 1 against 1 1 1 1: the top 2
		// of four ties are the first two (the lower indices), both
		// negatives; the top 4 are all, 2 TP and 2 FP.
		{name: "precision top 2 of ties", metric: &Precision{TopK: 2}, labels: []float32{0, 0, 1, 1}, labelCols: 4, preds: []float32{1, 1, 1, 1}, predCols: 4, want: 0},
		{name: "precision top 4", metric: &Precision{TopK: 4}, labels: []float32{0, 0, 1, 1}, labelCols: 4, preds: []float32{1, 1, 1, 1}, predCols: 4, want: 0.5},
		{name: "recall top 2 of ties", metric: &Recall{TopK: 2}, labels: []float32{0, 0, 1, 1}, labelCols: 4, preds: []float32{1, 1, 1, 1}, predCols: 4, want: 0},
		// With TopK and no threshold every kept output is positive, even a
		// small one: top 2 of (.3 .1 .2) are .3 and .2, labels 1 0 0.
		{name: "top_k keeps small outputs", metric: &Precision{TopK: 2}, labels: []float32{1, 0, 0}, labelCols: 3, preds: []float32{0.3, 0.1, 0.2}, predCols: 3, want: 0.5},
		// TopK then Threshold: top 2 of (.6 .3 .55 .1) are .6 and .55, both
		// above 0.5 (TP, FP); above 0.58 only .6 (TP).
		{name: "top_k and threshold 0.5", metric: &Precision{TopK: 2, Threshold: 0.5}, labels: []float32{1, 1, 0, 0}, labelCols: 4, preds: []float32{0.6, 0.3, 0.55, 0.1}, predCols: 4, want: 0.5},
		{name: "top_k and threshold 0.58", metric: &Precision{TopK: 2, Threshold: 0.58}, labels: []float32{1, 1, 0, 0}, labelCols: 4, preds: []float32{0.6, 0.3, 0.55, 0.1}, predCols: 4, want: 1},
		{name: "recall, top_k and threshold", metric: &Recall{TopK: 2, Threshold: 0.5}, labels: []float32{1, 1, 0, 0}, labelCols: 4, preds: []float32{0.6, 0.3, 0.55, 0.1}, predCols: 4, want: 0.5},
		// Column 1 of rows (1 0 | 0 1 | 0 1 | 1 0) and (.2 .9 | .3 .6 |
		// .7 .4 | .1 .8): labels 0 1 1 0, outputs P P - P: TP 1, FP 2, FN 1.
		{name: "precision of class 1", metric: &Precision{ClassID: new(1)}, labels: []float32{1, 0, 0, 1, 0, 1, 1, 0}, labelCols: 2, preds: []float32{0.2, 0.9, 0.3, 0.6, 0.7, 0.4, 0.1, 0.8}, predCols: 2, want: 1.0 / 3},
		{name: "recall of class 1", metric: &Recall{ClassID: new(1)}, labels: []float32{1, 0, 0, 1, 0, 1, 1, 0}, labelCols: 2, preds: []float32{0.2, 0.9, 0.3, 0.6, 0.7, 0.4, 0.1, 0.8}, predCols: 2, want: 0.5},
		// Column 0 of the same: labels 1 0 0 1, outputs - - P -: FP 1 only.
		{name: "precision of class 0", metric: &Precision{ClassID: new(0)}, labels: []float32{1, 0, 0, 1, 0, 1, 1, 0}, labelCols: 2, preds: []float32{0.2, 0.9, 0.3, 0.6, 0.7, 0.4, 0.1, 0.8}, predCols: 2, want: 0},
		// TopK applies over the row before ClassID: top 1 of (.6 .7) is
		// column 1, so column 0's .6 is not a positive.
		{name: "top_k before class_id", metric: &Recall{TopK: 1, ClassID: new(0)}, labels: []float32{1, 0}, labelCols: 2, preds: []float32{0.6, 0.7}, predCols: 2, want: 0},
		// A label counts as positive when it is not 0, as Keras' cast to bool.
		{name: "labels cast to bool", metric: &Precision{}, labels: []float32{2, 0}, labelCols: 1, preds: []float32{0.9, 0.1}, predCols: 1, want: 1},
		{name: "no predicted positive", metric: &Precision{}, labels: []float32{1, 0}, labelCols: 1, preds: []float32{0.1, 0.2}, predCols: 1, want: 0},
		{name: "no positive label", metric: &Recall{}, labels: []float32{0, 0}, labelCols: 1, preds: []float32{0.9, 0.2}, predCols: 1, want: 0},

		{name: "output above 1", metric: &Precision{}, labels: []float32{1}, labelCols: 1, preds: []float32{1.5}, predCols: 1, wantErr: "[0, 1]"},
		{name: "negative output", metric: &Recall{}, labels: []float32{1}, labelCols: 1, preds: []float32{-0.1}, predCols: 1, wantErr: "[0, 1]"},
		{name: "NaN output", metric: &Recall{}, labels: []float32{1}, labelCols: 1, preds: []float32{nan}, predCols: 1, wantErr: "[0, 1]"},
		{name: "threshold above 1", metric: &Precision{Threshold: 1.5}, labels: []float32{1}, labelCols: 1, preds: []float32{0.5}, predCols: 1, wantErr: "threshold"},
		{name: "top_k above the columns", metric: &Precision{TopK: 3}, labels: []float32{1, 0}, labelCols: 2, preds: []float32{0.5, 0.5}, predCols: 2, wantErr: "top_k"},
		{name: "negative top_k", metric: &Recall{TopK: -1}, labels: []float32{1, 0}, labelCols: 2, preds: []float32{0.5, 0.5}, predCols: 2, wantErr: "top_k"},
		{name: "class_id out of range", metric: &Recall{ClassID: new(2)}, labels: []float32{1, 0}, labelCols: 2, preds: []float32{0.5, 0.5}, predCols: 2, wantErr: "class_id"},
		{name: "class indices as labels", metric: &Precision{}, labels: []float32{1}, labelCols: 1, preds: []float32{0.5, 0.5}, predCols: 2, wantErr: "columns"},
		{name: "rows that do not line up", metric: &Recall{}, labels: []float32{1, 0}, labelCols: 1, preds: []float32{0.5}, predCols: 1, wantErr: "do not match"},
	})
}

// TestPrecisionRecallFailedUpdateCountsNothing checks that a batch Update
// refuses leaves the counts as they were.
func TestPrecisionRecallFailedUpdateCountsNothing(t *testing.T) {
	p := &Precision{}
	if err := p.Update([]float32{1, 0}, 1, []float32{0.9, 0.2}, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Update([]float32{0, 0}, 1, []float32{0.9, 1.2}, 1); err == nil {
		t.Fatal("Update accepted an output of 1.2")
	}
	if got := p.Result(); got != 1 {
		t.Errorf("precision = %v after a refused batch, want 1 (the first batch's)", got)
	}
	p.Reset()
	if err := p.Update([]float32{0}, 1, []float32{0.9}, 1); err != nil {
		t.Fatal(err)
	}
	if got := p.Result(); got != 0 {
		t.Errorf("precision = %v after Reset and one false positive, want 0", got)
	}
}
