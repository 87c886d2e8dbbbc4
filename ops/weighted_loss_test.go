package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestWeightedLoss checks a weighted loss against Σ wᵢ·lossᵢ / batch
// computed from each sample's own loss, and its gradient against finite
// differences.
func TestWeightedLoss(t *testing.T) {
	const rows, cols = 5, 4
	for i, kind := range []LossKind{SoftmaxCrossEntropy, SparseSoftmaxCrossEntropy, MeanSquaredError, Huber} {
		t.Run(kind.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			pred := randomData(rng, rows*cols, 1)
			tgt := targets(rng, kind, rows, cols)
			w := []float64{0.5, 2, 0, 1, 3}
			var want float64
			for r := 0; r < rows; r++ {
				one, err := lossSum(kind, LossParams{}, 1, cols, pred[r*cols:(r+1)*cols], tgt.data[r*tgt.cols:(r+1)*tgt.cols], nil)
				if err != nil {
					t.Fatal(err)
				}
				want += w[r] * one
			}
			want /= rows
			g := gorgonia.NewGraph()
			p := matrix(g, "p", tensor.Shape{rows, cols}, pred)
			y := matrix(g, "y", tensor.Shape{rows, tgt.cols}, tgt.data)
			wn := matrix(g, "w", tensor.Shape{rows}, w)
			plain, err := LossWith(kind, LossParams{}, p, y)
			if err != nil {
				t.Fatal(err)
			}
			cost, err := WithSampleWeights(plain, wn)
			if err != nil {
				t.Fatal(err)
			}
			m := gorgonia.NewTapeMachine(g)
			if got := evalScalar(t, m, cost); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("weighted loss %v, want %v", got, want)
			}
			m.Close()
			checkGradients(t, g, cost, p)
		})
	}
}
