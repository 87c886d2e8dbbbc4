package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBatchesEqualOneBatch feeds each metric the same samples once in
// uneven batches and once in one batch: an epoch's figure must be the
// figure over all its samples at once.
func TestBatchesEqualOneBatch(t *testing.T) {
	const rows, cols = 61, 4
	rng := rand.New(rand.NewPCG(3, 5))
	oneHot, sparse := make([]float32, rows*cols), make([]float32, rows)
	multiHot, probs := make([]float32, rows*cols), make([]float32, rows*cols)
	for r := range rows {
		c := rng.IntN(cols)
		sparse[r], oneHot[r*cols+c] = float32(c), 1
		var sum float32
		for j := range cols {
			if rng.IntN(3) == 0 {
				multiHot[r*cols+j] = 1
			}
			probs[r*cols+j] = rng.Float32()
			if j == c {
				probs[r*cols+j] += 0.5 // right more often than not
			}
			sum += probs[r*cols+j]
		}
		for j := range cols {
			probs[r*cols+j] /= sum
		}
	}
	tests := []struct {
		name   string
		metric func() Metric
		labels []float32
	}{
		{"precision", func() Metric { return &Precision{} }, multiHot},
		{"recall", func() Metric { return &Recall{} }, multiHot},
		{"precision top_k class_id", func() Metric { return &Precision{Threshold: 0.3, TopK: 2, ClassID: new(1)} }, oneHot},
		{"recall top_k", func() Metric { return &Recall{TopK: 1} }, oneHot},
		{"auc", func() Metric { return &AUC{} }, oneHot},
		{"auc PR", func() Metric { return &AUC{Curve: "PR"} }, multiHot},
		{"auc multi-label minoring", func() Metric { return &AUC{MultiLabel: true, SummationMethod: "minoring"} }, multiHot},
		{"top_k", func() Metric { return &TopKCategoricalAccuracy{K: 2} }, oneHot},
		{"sparse top_k", func() Metric { return &SparseTopKCategoricalAccuracy{K: 2} }, sparse},
		{"mae", func() Metric { return &MeanAbsoluteError{} }, oneHot},
		{"mse", func() Metric { return &MeanSquaredError{} }, oneHot},
		{"rmse", func() Metric { return &RootMeanSquaredError{} }, oneHot},
		{"f1 argmax", func() Metric { return &F1Score{} }, oneHot},
		{"f1 micro", func() Metric { return &F1Score{Average: "micro", Threshold: 0.3} }, multiHot},
		{"f1 weighted", func() Metric { return &F1Score{Average: "weighted"} }, oneHot},
		{"categorical accuracy", func() Metric { return &CategoricalAccuracy{} }, oneHot},
	}
	for _, tc := range tests {
		whole, batched := tc.metric(), tc.metric()
		t.Run(tc.name, func(t *testing.T) {
			labelCols := len(tc.labels) / rows
			if err := whole.Update(tc.labels, labelCols, probs, cols); err != nil {
				t.Fatal(err)
			}
			for _, pass := range []int{0, 1} { // the second pass follows a Reset
				batched.Reset()
				for lo, size := 0, 1; lo < rows; lo, size = lo+size, size+5 {
					hi := min(lo+size, rows)
					if err := batched.Update(tc.labels[lo*labelCols:hi*labelCols], labelCols, probs[lo*cols:hi*cols], cols); err != nil {
						t.Fatal(err)
					}
				}
				want, got := whole.Result(), batched.Result()
				if math.Abs(got-want) > 1e-12 || got == 0 || math.IsNaN(got) {
					t.Errorf("pass %d: in batches %.15g, in one batch %.15g (want equal and not 0)", pass, got, want)
				}
			}
		})
	}
}
