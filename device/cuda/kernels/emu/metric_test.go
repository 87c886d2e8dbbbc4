//go:build kernelemu && cgo

package emu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// gk_metric_sum gives ops.MetricBatch's sum and bad-label count for every
// kind, on outputs with ties, NaN and infinities, labels that are and are
// not class indices, and block sizes smaller and larger than the batch.
func TestMetricSumMatchesOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const rows, cols = 37, 6
	pred := make([]float32, rows*cols)
	for i := range pred {
		pred[i] = float32(rng.IntN(5)) / 4 // ties
	}
	pred[3], pred[cols+2], pred[2*cols] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	oneHot := make([]float32, rows*cols)
	sparse := make([]float32, rows)
	for r := range rows {
		c := rng.IntN(cols)
		oneHot[r*cols+c] = 1
		sparse[r] = float32(c)
	}
	sparse[4], sparse[5], sparse[6], sparse[7] = 2.5, -1, cols, float32(math.NaN())
	tests := []struct {
		p     ops.MetricParams
		y     []float32
		ycols int
	}{
		{ops.MetricParams{Kind: ops.MetricBinaryAccuracy, Threshold: 0.5}, oneHot, cols},
		{ops.MetricParams{Kind: ops.MetricBinaryAccuracy, Threshold: 0.3}, oneHot, cols},
		{ops.MetricParams{Kind: ops.MetricCategoricalAccuracy}, oneHot, cols},
		{ops.MetricParams{Kind: ops.MetricSparseCategoricalAccuracy}, sparse, 1},
		{ops.MetricParams{Kind: ops.MetricTopK, K: 2}, oneHot, cols},
		{ops.MetricParams{Kind: ops.MetricSparseTopK, K: 3}, sparse, 1},
		{ops.MetricParams{Kind: ops.MetricAbsoluteError}, oneHot, cols},
		{ops.MetricParams{Kind: ops.MetricSquaredError}, oneHot, cols},
	}
	finite := append([]float32(nil), pred...)
	finite[3], finite[cols+2], finite[2*cols] = 0.5, 1, 0
	for _, tt := range tests {
		p := pred
		if tt.p.Kind == ops.MetricAbsoluteError || tt.p.Kind == ops.MetricSquaredError {
			p = finite // sums of NaN compare as NaN: see the finite outputs' sums
		}
		var want [2]float32
		ops.MetricBatch(tt.p, tt.y, tt.ycols, p, cols, want[:])
		for _, block := range []int{32, 64} {
			got := MetricSum(block, tt.p, p, tt.y, rows, cols, tt.ycols)
			if got[1] != want[1] || ulps(got[0], want[0]) > 1 {
				t.Errorf("%v block %d: got sum %v, %v bad; ops: %v, %v", tt.p.Kind, block, got[0], got[1], want[0], want[1])
			}
		}
		if tt.p.Kind == ops.MetricSparseTopK && want[1] == 0 {
			t.Errorf("the test's labels must include bad ones")
		}
	}
}

// The confusion-count kernels give ops.MetricBatch's state, count for
// count, for every setting: thresholds, top-k with ties, one class,
// outputs outside [0, 1], AUC single- and multi-label from probabilities
// and logits, F1 at a threshold and at each row's maximum, on grids
// smaller and larger than the work.
func TestMetricCountsMatchOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const rows, cols = 29, 5
	probs := make([]float32, rows*cols)
	logits := make([]float32, rows*cols)
	for i := range probs {
		probs[i] = float32(rng.IntN(9)) / 8 // ties, 0 and 1
		logits[i] = float32(rng.NormFloat64() * 3)
	}
	bad := append([]float32(nil), probs...)
	bad[7], bad[40] = 1.5, float32(math.NaN())
	labels := make([]float32, rows*cols)
	for i := range labels {
		if rng.IntN(3) == 0 {
			labels[i] = 1
		}
	}
	tests := []struct {
		name string
		p    ops.MetricParams
		pred []float32
	}{
		{"precision", ops.MetricParams{Kind: ops.MetricPrecisionRecall, ClassID: -1}, probs},
		{"threshold 0.3", ops.MetricParams{Kind: ops.MetricPrecisionRecall, Threshold: 0.3, ClassID: -1}, probs},
		{"top 2", ops.MetricParams{Kind: ops.MetricPrecisionRecall, K: 2, ClassID: -1}, probs},
		{"top 2 of class 3", ops.MetricParams{Kind: ops.MetricPrecisionRecall, K: 2, ClassID: 3}, probs},
		{"bad outputs", ops.MetricParams{Kind: ops.MetricPrecisionRecall, ClassID: -1}, bad},
		{"auc", ops.MetricParams{Kind: ops.MetricAUC, Thresholds: 200}, probs},
		{"auc multi-label, 7 thresholds", ops.MetricParams{Kind: ops.MetricAUC, Thresholds: 7, MultiLabel: true}, probs},
		{"auc from logits", ops.MetricParams{Kind: ops.MetricAUC, Thresholds: 50, FromLogits: true}, logits},
		{"auc bad outputs", ops.MetricParams{Kind: ops.MetricAUC, Thresholds: 20}, bad},
		{"f1 at the maximum", ops.MetricParams{Kind: ops.MetricF1}, probs},
		{"f1 at 0.4", ops.MetricParams{Kind: ops.MetricF1, Threshold: 0.4}, probs},
	}
	for _, tt := range tests {
		want := make([]float32, ops.MetricStateSize(tt.p, cols))
		ops.MetricBatch(tt.p, labels, cols, tt.pred, cols, want)
		for _, l := range []Launch{{1, 32}, {3, 64}} {
			got := MetricCounts(64, l, tt.p, tt.pred, labels, rows, cols)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, grid %v: state[%d] = %v, ops %v (of %d)", tt.name, l, i, got[i], want[i], len(want))
				}
			}
		}
	}
}
