package metrics

import (
	"math"
	"slices"
	"testing"
)

// Keras' docstring batch for F1Score(threshold=0.5): labels
// (1 1 1 | 1 0 0 | 1 1 0), outputs (.2 .6 .7 | .2 .6 .6 | .6 .8 0),
// decided (0 1 1 | 0 1 1 | 1 1 0). Per class:
//
//	0: TP 1, FP 0, FN 2: P 1, R 1/3, F1 .5; support 3
//	1: TP 2, FP 1, FN 0: P 2/3, R 1, F1 .8; support 2
//	2: TP 1, FP 1, FN 0: P 1/2, R 1, F1 2/3; support 1
//
// macro (.5+.8+2/3)/3; micro from TP 4, FP 2, FN 2: P = R = 2/3, F1 2/3;
// weighted (3·.5 + 2·.8 + 1·2/3)/6.
var (
	kerasF1Labels = []float32{1, 1, 1, 1, 0, 0, 1, 1, 0}
	kerasF1Preds  = []float32{0.2, 0.6, 0.7, 0.2, 0.6, 0.6, 0.6, 0.8, 0}
	kerasF1Scores = []float64{0.5, 0.8, 2.0 / 3}
)

// With no threshold each row's largest output is positive: labels
// (1 0 0 | 0 1 0 | 0 0 1 | 1 0 0), outputs (.7 .2 .1 | .5 .5 0 | 0 0 0 |
// .6 .3 .1) decide (1 0 0 | 1 1 0 | 0 0 0 | 1 0 0): the tie marks both,
// the row of zeros none. Per class:
//
//	0: TP 2, FP 1, FN 0: P 2/3, R 1, F1 .8; support 2
//	1: TP 1, FP 0, FN 0: F1 1; support 1
//	2: TP 0, FP 0, FN 1: F1 0; support 1
//
// macro 1.8/3 = .6; micro from TP 3, FP 1, FN 1: .75; weighted
// (2·.8 + 1 + 0)/4 = .65.
var (
	argmaxF1Labels = []float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0}
	argmaxF1Preds  = []float32{0.7, 0.2, 0.1, 0.5, 0.5, 0, 0, 0, 0, 0.6, 0.3, 0.1}
)

func TestF1Score(t *testing.T) {
	runCases(t, []metricCase{
		{name: "None reports the macro mean", metric: &F1Score{Threshold: 0.5}, labels: kerasF1Labels, labelCols: 3, preds: kerasF1Preds, predCols: 3, want: (0.5 + 0.8 + 2.0/3) / 3},
		{name: "macro", metric: &F1Score{Average: "macro", Threshold: 0.5}, labels: kerasF1Labels, labelCols: 3, preds: kerasF1Preds, predCols: 3, want: (0.5 + 0.8 + 2.0/3) / 3},
		{name: "micro", metric: &F1Score{Average: "micro", Threshold: 0.5}, labels: kerasF1Labels, labelCols: 3, preds: kerasF1Preds, predCols: 3, want: 2.0 / 3},
		{name: "weighted", metric: &F1Score{Average: "weighted", Threshold: 0.5}, labels: kerasF1Labels, labelCols: 3, preds: kerasF1Preds, predCols: 3, want: (3*0.5 + 2*0.8 + 2.0/3) / 6},
		{name: "argmax, macro", metric: &F1Score{}, labels: argmaxF1Labels, labelCols: 3, preds: argmaxF1Preds, predCols: 3, want: 0.6},
		{name: "argmax, micro", metric: &F1Score{Average: "micro"}, labels: argmaxF1Labels, labelCols: 3, preds: argmaxF1Preds, predCols: 3, want: 0.75},
		{name: "argmax, weighted", metric: &F1Score{Average: "weighted"}, labels: argmaxF1Labels, labelCols: 3, preds: argmaxF1Preds, predCols: 3, want: 0.65},

		{name: "unknown average", metric: &F1Score{Average: "samples"}, labels: argmaxF1Labels, labelCols: 3, preds: argmaxF1Preds, predCols: 3, wantErr: "average"},
		{name: "threshold above 1", metric: &F1Score{Threshold: 1.5}, labels: argmaxF1Labels, labelCols: 3, preds: argmaxF1Preds, predCols: 3, wantErr: "threshold"},
		{name: "negative threshold", metric: &F1Score{Threshold: -0.5}, labels: argmaxF1Labels, labelCols: 3, preds: argmaxF1Preds, predCols: 3, wantErr: "threshold"},
		{name: "class indices as labels", metric: &F1Score{}, labels: []float32{1}, labelCols: 1, preds: []float32{0.2, 0.8}, predCols: 2, wantErr: "columns"},
	})
}

func TestF1ScoreVectorAndState(t *testing.T) {
	m := &F1Score{Threshold: 0.5}
	if m.Scores() != nil || m.Result() != 0 {
		t.Errorf("before any batch: Scores %v, Result %v; want nil and 0", m.Scores(), m.Result())
	}
	if err := m.Update(kerasF1Labels, 3, kerasF1Preds, 3); err != nil {
		t.Fatal(err)
	}
	// Keras' docstring prints [0.5, 0.8, 0.6666667].
	if got := m.Scores(); !slices.EqualFunc(got, kerasF1Scores, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
		t.Errorf("Scores = %v, want %v", got, kerasF1Scores)
	}
	if err := m.Update([]float32{1, 0}, 2, []float32{0.9, 0.1}, 2); err == nil {
		t.Error("F1Score took 2 columns after 3")
	}
	m.Reset()
	if err := m.Update([]float32{1, 0}, 2, []float32{0.9, 0.1}, 2); err != nil {
		t.Fatalf("after Reset, F1Score refused a new width: %v", err)
	}
	// Class 0: TP 1, F1 1; class 1: nothing at all, F1 0.
	if got := m.Scores(); !slices.Equal(got, []float64{1, 0}) {
		t.Errorf("Scores after Reset = %v, want [1 0]", got)
	}
}
