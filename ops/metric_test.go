package ops

import (
	"math"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MetricBatch's sums and bad-label counts, computed by hand for two
// samples of three outputs.
func TestMetricBatchByHand(t *testing.T) {
	nan := float32(math.NaN())
	pred := []float32{0.2, 0.7, 0.1, 0.4, 0.4, 0.2}
	oneHot := []float32{0, 1, 0, 0, 0, 1}
	tests := []struct {
		name   string
		p      MetricParams
		labels []float32
		lcols  int
		pred   []float32
		sum    float32
		bad    float32
	}{
		// row 0: 0.2≤.5 (label 0 ✓), 0.7>.5 (1 ✓), 0.1 (0 ✓): 1; row 1: ✓, ✓, 0.2 vs 1 ✗: 2/3
		{"binary", MetricParams{Kind: MetricBinaryAccuracy, Threshold: 0.5}, oneHot, 3, pred, 1 + 2.0/3, 0},
		// argmax row 0: 1 = label; row 1: first of the tie, 0 ≠ 2
		{"categorical", MetricParams{Kind: MetricCategoricalAccuracy}, oneHot, 3, pred, 1, 0},
		{"sparse categorical", MetricParams{Kind: MetricSparseCategoricalAccuracy}, []float32{1, 0}, 1, pred, 2, 0},
		{"sparse categorical, a fraction", MetricParams{Kind: MetricSparseCategoricalAccuracy}, []float32{1.5, 0}, 1, pred, 1, 0},
		// row 1: class 2 (0.2) has two larger outputs: in the top 3, not the top 2
		{"top 2", MetricParams{Kind: MetricTopK, K: 2}, oneHot, 3, pred, 1, 0},
		{"top 3", MetricParams{Kind: MetricTopK, K: 3}, oneHot, 3, pred, 2, 0},
		{"top 2, a NaN output", MetricParams{Kind: MetricTopK, K: 2}, oneHot, 3, []float32{nan, 0.7, 0.1, 0.4, 0.4, 0.2}, 0, 0},
		{"sparse top 1, bad labels", MetricParams{Kind: MetricSparseTopK, K: 1}, []float32{1.9, 3}, 1, pred, 1, 1},
		// |0.2|+|0.3|+|0.1| = 0.6 → 0.2; |0.4|+|0.4|+|0.8| = 1.6 → 0.5333
		{"absolute error", MetricParams{Kind: MetricAbsoluteError}, oneHot, 3, pred, float32((0.2+0.3+0.1)/3.0 + (0.4+0.4+0.8)/3.0), 0},
		{"squared error", MetricParams{Kind: MetricSquaredError}, oneHot, 3, pred, float32((0.04+0.09+0.01)/3.0 + (0.16+0.16+0.64)/3.0), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out [2]float32
			MetricBatch(tt.p, tt.labels, tt.lcols, tt.pred, 3, out[:])
			if math.Abs(float64(out[0]-tt.sum)) > 1e-6 || out[1] != tt.bad {
				t.Fatalf("sum %v, bad %v; want %v, %v", out[0], out[1], tt.sum, tt.bad)
			}
		})
	}
}

// MetricState refuses labels that do not suit the metric, and a graph
// computes MetricBatch's two values.
func TestMetricSumNode(t *testing.T) {
	g := gorgonia.NewGraph()
	pred := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("p"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{0.2, 0.7, 0.1, 0.4, 0.4, 0.2}))))
	y := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 1), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float32{1, 0}))))
	if _, err := MetricState(pred, y, MetricParams{Kind: MetricCategoricalAccuracy}); err == nil {
		t.Fatal("categorical accuracy took one label column for three outputs")
	}
	if _, err := MetricState(pred, y, MetricParams{Kind: MetricSparseTopK}); err == nil {
		t.Fatal("top-k took k = 0")
	}
	sum, err := MetricState(pred, y, MetricParams{Kind: MetricSparseCategoricalAccuracy})
	if err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if got := sum.Value().Data().([]float32); got[0] != 2 || got[1] != 0 {
		t.Fatalf("MetricState = %v, want [2 0]", got)
	}
}
