package ops

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// lossTargets draws targets of the given kind for a batch × classes loss:
// "real" values in (-1.5, 1.5), "positive" ones in (0.5, 2), "probs" rows
// that sum to 1, "onehot" rows, "zeroone" labels, "sign" labels -1 or 1.
func lossTargets(rng *rand.Rand, kind string, batch, classes int) []float64 {
	d := make([]float64, batch*classes)
	for r := 0; r < batch; r++ {
		row := d[r*classes : (r+1)*classes]
		var sum float64
		for j := range row {
			switch kind {
			case "real":
				row[j] = (rng.Float64()*2 - 1) * 1.5
			case "positive":
				row[j] = 0.5 + 1.5*rng.Float64()
			case "probs":
				row[j] = 0.1 + rng.Float64()
				sum += row[j]
			case "zeroone":
				row[j] = float64(rng.IntN(2))
			case "sign":
				row[j] = float64(2*rng.IntN(2) - 1)
			}
		}
		switch kind {
		case "probs":
			for j := range row {
				row[j] /= sum
			}
		case "onehot":
			row[rng.IntN(classes)] = 1
		}
	}
	return d
}

// TestGradientsOfMoreLosses checks the gradient of every loss kind added
// for Keras' other losses, and of the label-smoothed cross-entropies,
// against finite differences, through a dense layer and the activation
// that usually comes before the loss.
func TestGradientsOfMoreLosses(t *testing.T) {
	const batch, in, out = 4, 5, 3
	tests := []struct {
		name    string
		act     Activation
		logits  bool // the loss reads the dense layer's output before act
		kind    LossKind
		p       LossParams
		targets string
	}{
		{"mae", Linear, false, MeanAbsoluteError, LossParams{}, "real"},
		{"mape", Linear, false, MeanAbsolutePercentageError, LossParams{}, "positive"},
		{"mape with negative targets", Linear, false, MeanAbsolutePercentageError, LossParams{}, "real"},
		{"msle on positive predictions", Sigmoid, false, MeanSquaredLogarithmicError, LossParams{}, "positive"},
		{"msle with clipped predictions", Linear, false, MeanSquaredLogarithmicError, LossParams{}, "positive"},
		{"huber", Linear, false, Huber, LossParams{}, "real"},
		{"huber delta 0.3", Linear, false, Huber, LossParams{Delta: 0.3}, "real"},
		{"huber delta 3", Linear, false, Huber, LossParams{Delta: 3}, "real"},
		{"log_cosh", Linear, false, LogCosh, LossParams{}, "real"},
		{"kld on softmax", Softmax, false, KLDivergence, LossParams{}, "probs"},
		{"kld with clipped predictions", Linear, false, KLDivergence, LossParams{}, "probs"},
		{"poisson", Sigmoid, false, Poisson, LossParams{}, "positive"},
		{"hinge with -1/1 labels", Tanh, false, Hinge, LossParams{}, "sign"},
		{"hinge with 0/1 labels", Linear, false, Hinge, LossParams{}, "zeroone"},
		{"squared_hinge with -1/1 labels", Linear, false, SquaredHinge, LossParams{}, "sign"},
		{"squared_hinge with 0/1 labels", Tanh, false, SquaredHinge, LossParams{}, "zeroone"},
		{"categorical_hinge", Linear, false, CategoricalHinge, LossParams{}, "onehot"},
		{"cosine_similarity", Linear, false, CosineSimilarity, LossParams{}, "real"},
		{"softmax+categorical_crossentropy smoothed", Softmax, false, CategoricalCrossentropy, LossParams{LabelSmoothing: 0.2}, "onehot"},
		{"sigmoid+categorical_crossentropy smoothed", Sigmoid, false, CategoricalCrossentropy, LossParams{LabelSmoothing: 0.1}, "onehot"},
		{"logits softmax cross-entropy smoothed", Linear, true, SoftmaxCrossEntropy, LossParams{LabelSmoothing: 0.2}, "onehot"},
		{"sigmoid+binary_crossentropy smoothed", Sigmoid, false, BinaryCrossentropy, LossParams{LabelSmoothing: 0.2}, "zeroone"},
		{"logits sigmoid cross-entropy smoothed", Linear, true, SigmoidCrossEntropy, LossParams{LabelSmoothing: 0.3}, "zeroone"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			g := gorgonia.NewGraph()
			x := matrix(g, "x", tensor.Shape{batch, in}, randomData(rng, batch*in, 1))
			w := matrix(g, "w", tensor.Shape{in, out}, randomData(rng, in*out, 1))
			b := matrix(g, "b", tensor.Shape{out}, randomData(rng, out, 0.5))
			z, err := Affine(x, w, b, true)
			if err != nil {
				t.Fatal(err)
			}
			pred := z
			if !tc.logits {
				if pred, err = Activate(tc.act, z); err != nil {
					t.Fatal(err)
				}
			}
			y := matrix(g, "target", tensor.Shape{batch, out}, lossTargets(rng, tc.targets, batch, out))
			cost, err := LossWith(tc.kind, tc.p, pred, y)
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, cost, x, w, b)
		})
	}
}

// TestMoreLossValues checks each loss against values worked out by hand
// from Keras' formulas (the comments show the arithmetic).
func TestMoreLossValues(t *testing.T) {
	tests := []struct {
		name   string
		kind   LossKind
		p      LossParams
		shape  tensor.Shape
		pred   []float64
		target []float64
		want   float64
	}{
		// (|1-0| + |2-4|) / 2 = 1.5
		{"mae", MeanAbsoluteError, LossParams{}, tensor.Shape{1, 2}, []float64{1, 2}, []float64{0, 4}, 1.5},
		// rows (1+2)/2 = 1.5 and (|0-2| + |0+3|)/2 = 2.5, batch mean 2
		{"mae, batch mean", MeanAbsoluteError, LossParams{}, tensor.Shape{2, 2}, []float64{1, 2, 0, 0}, []float64{0, 4, 2, -3}, 2},
		// 100·(|2-1|/2 + |-4-2|/4) / 2 = 100·(0.5 + 1.5)/2 = 100
		{"mape", MeanAbsolutePercentageError, LossParams{}, tensor.Shape{1, 2}, []float64{1, 2}, []float64{2, -4}, 100},
		// a zero target divides by 1e-7: 100·0.5/1e-7 = 5e8
		{"mape at a zero target", MeanAbsolutePercentageError, LossParams{}, tensor.Shape{1, 1}, []float64{0.5}, []float64{0}, 5e8},
		// (log(e-1+1) - log(e²-1+1))² = (1-2)² = 1; a prediction of -5 and
		// a target of 0 are both raised to 1e-7: 0; mean 0.5
		{"msle", MeanSquaredLogarithmicError, LossParams{}, tensor.Shape{1, 2}, []float64{math.E - 1, -5}, []float64{math.E*math.E - 1, 0}, 0.5},
		// δ=1: ½·0.5² = 0.125 and 1·3 - ½ = 2.5, mean 1.3125
		{"huber", Huber, LossParams{}, tensor.Shape{1, 2}, []float64{0.5, 3}, []float64{0, 0}, 1.3125},
		// δ=2: 0.125 and 2·3 - ½·4 = 4, mean 2.0625
		{"huber delta 2", Huber, LossParams{Delta: 2}, tensor.Shape{1, 2}, []float64{0.5, 3}, []float64{0, 0}, 2.0625},
		// |e| = δ is the quadratic side: ½·1² = 0.5
		{"huber at delta", Huber, LossParams{}, tensor.Shape{1, 1}, []float64{-1}, []float64{0}, 0.5},
		// (log cosh 1 + log cosh(-2))/2 = (0.43378083048302717 + 1.3250027473578645)/2
		{"log_cosh", LogCosh, LossParams{}, tensor.Shape{1, 2}, []float64{1, 0}, []float64{0, 2}, (0.43378083048302717 + 1.3250027473578645) / 2},
		// 0.5·log(0.5/0.25) + 0.5·log(0.5/0.75) = 0.5·log(4/3), summed over the row
		{"kld", KLDivergence, LossParams{}, tensor.Shape{1, 2}, []float64{0.25, 0.75}, []float64{0.5, 0.5}, 0.5 * math.Log(4.0/3)},
		// y clipped to (1, 1e-7): 1·log(1/0.5) + 1e-7·log(1e-7/0.5); p = 2 clipped to 1
		{"kld clips", KLDivergence, LossParams{}, tensor.Shape{1, 3}, []float64{0.5, 0.5, 2}, []float64{1, 0, 1}, math.Ln2 + 1e-7*math.Log(1e-7/0.5) + 0},
		// (1 - 0·log(1+1e-7)) + (2 - 1·log(2+1e-7)), mean over 2
		{"poisson", Poisson, LossParams{}, tensor.Shape{1, 2}, []float64{1, 2}, []float64{0, 1}, (3 - math.Log(2+1e-7)) / 2},
		// max(1-0.3, 0) = 0.7 and max(1+0.5, 0) = 1.5, mean 1.1
		{"hinge", Hinge, LossParams{}, tensor.Shape{1, 2}, []float64{0.3, 0.5}, []float64{1, -1}, 1.1},
		// labels 1, 0 are read as 1, -1: 1.1 again
		{"hinge with 0/1 labels", Hinge, LossParams{}, tensor.Shape{1, 2}, []float64{0.3, 0.5}, []float64{1, 0}, 1.1},
		// the batch's labels are not all 0/1, so 0 stays 0: row 1 is
		// (0.7 + max(1-0·0.5, 0))/2 = 0.85, row 2 (max(1+2, 0) + max(1-2, 0))/2
		// = 1.5; mean 1.175 (converting row 1 alone would give 1.1)
		{"hinge converts the batch, not the row", Hinge, LossParams{}, tensor.Shape{2, 2}, []float64{0.3, 0.5, 2, 2}, []float64{1, 0, -1, 1}, 1.175},
		// (0.7² + 1.5²)/2 = (0.49 + 2.25)/2 = 1.37
		{"squared_hinge", SquaredHinge, LossParams{}, tensor.Shape{1, 2}, []float64{0.3, 0.5}, []float64{1, -1}, 1.37},
		{"squared_hinge with 0/1 labels", SquaredHinge, LossParams{}, tensor.Shape{1, 2}, []float64{0.3, 0.5}, []float64{1, 0}, 1.37},
		// pos = 0.5, neg = max(0.2, 0, 0.3) = 0.3: 0.3 - 0.5 + 1 = 0.8
		{"categorical_hinge", CategoricalHinge, LossParams{}, tensor.Shape{1, 3}, []float64{0.2, 0.5, 0.3}, []float64{0, 1, 0}, 0.8},
		// pos = 2, neg = 0: max(0 - 2 + 1, 0) = 0
		{"categorical_hinge past the margin", CategoricalHinge, LossParams{}, tensor.Shape{1, 3}, []float64{0, 2, 0}, []float64{0, 1, 0}, 0},
		// -(1, 0)·(3, 4)/5 = -0.6; -(1, 1)/√2·(2, 2)/√8 = -1; mean -0.8
		{"cosine_similarity", CosineSimilarity, LossParams{}, tensor.Shape{2, 2}, []float64{3, 4, 2, 2}, []float64{1, 0, 1, 1}, -0.8},
		// a zero target normalises to zero: 0
		{"cosine_similarity of a zero target", CosineSimilarity, LossParams{}, tensor.Shape{1, 2}, []float64{1, 1}, []float64{0, 0}, 0},
		// (0, 1, 0)·0.7 + 0.3/3 = (0.1, 0.8, 0.1): -(0.1·log 0.2 + 0.8·log 0.3 + 0.1·log 0.5)
		{"categorical CE smoothed", CategoricalCrossentropy, LossParams{LabelSmoothing: 0.3}, tensor.Shape{1, 3}, []float64{0.2, 0.3, 0.5}, []float64{0, 1, 0},
			-(0.1*math.Log(0.2) + 0.8*math.Log(0.3) + 0.1*math.Log(0.5))},
		// y' = (0.1, 0.1, 0.8), Σy' = 1: logsumexp(1, 2, 3) - Σy'·z = 3.40760596444438 - 2.7
		{"softmax CE smoothed", SoftmaxCrossEntropy, LossParams{LabelSmoothing: 0.3}, tensor.Shape{1, 3}, []float64{1, 2, 3}, []float64{0, 0, 1}, 3.40760596444438 - 2.7},
		// (1, 0)·0.8 + 0.1 = (0.9, 0.1):
		// [-(0.9·log(0.9+ε) + 0.1·log(0.1+ε)) - (0.1·log(0.2+ε) + 0.9·log(0.8+ε))] / 2
		{"binary CE smoothed", BinaryCrossentropy, LossParams{LabelSmoothing: 0.2}, tensor.Shape{1, 2}, []float64{0.9, 0.2}, []float64{1, 0},
			-(0.9*math.Log(0.9+1e-7) + 0.1*math.Log(0.1+1e-7) + 0.1*math.Log(0.2+1e-7) + 0.9*math.Log(0.8+1e-7)) / 2},
		// y' = 1·0.8 + 0.1 = 0.9: max(2, 0) - 2·0.9 + log(1 + e⁻²) = 0.2 + 0.12692801104297263
		{"sigmoid CE smoothed", SigmoidCrossEntropy, LossParams{LabelSmoothing: 0.2}, tensor.Shape{1, 1}, []float64{2}, []float64{1}, 0.2 + 0.12692801104297263},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			p := matrix(g, "p", tc.shape, tc.pred)
			y := matrix(g, "y", tc.shape, tc.target)
			cost, err := LossWith(tc.kind, tc.p, p, y)
			if err != nil {
				t.Fatal(err)
			}
			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			if got := evalScalar(t, m, cost); math.Abs(got-tc.want) > 1e-12*math.Max(1, math.Abs(tc.want)) {
				t.Errorf("loss = %.15g, want %.15g", got, tc.want)
			}
			// The float32 kernels machines call give the same value.
			p32, y32 := toFloat32(tc.pred), toFloat32(tc.target)
			got, err := LossValueWith(tc.kind, tc.p, tc.shape[0], tc.shape[1], p32, y32, nil)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-6*math.Max(1, math.Abs(tc.want)) {
				t.Errorf("LossValueWith = %.9g, want %.9g", got, tc.want)
			}
		})
	}
}

func toFloat32(d []float64) []float32 {
	f := make([]float32, len(d))
	for i, v := range d {
		f[i] = float32(v)
	}
	return f
}

// TestMoreLossGradientValues checks gradients worked out by hand, where
// TensorFlow's conventions decide them: at the kinks of |x| and max, where
// a clip bites, and on ties of a max.
func TestMoreLossGradientValues(t *testing.T) {
	tests := []struct {
		name         string
		kind         LossKind
		p            LossParams
		pred, target []float32
		want         []float64
	}{
		// sign(p-y)/3, and |x|'s gradient at 0 is 0
		{"mae", MeanAbsoluteError, LossParams{}, []float32{1, 2, 3}, []float32{1, 0, 5}, []float64{0, 1.0 / 3, -1.0 / 3}},
		// 100·sign(1-2)/2
		{"mape", MeanAbsolutePercentageError, LossParams{}, []float32{1}, []float32{2}, []float64{-50}},
		// below 1e-7 the prediction is clipped: 0; else 2·(1-2)/e / 2
		{"msle", MeanSquaredLogarithmicError, LossParams{}, []float32{-1, float32(math.E - 1)}, []float32{0, float32(math.E*math.E - 1)}, []float64{0, -1 / math.E}},
		// e, then δ·sign(e), over 3
		{"huber", Huber, LossParams{}, []float32{0.5, 3, -3}, []float32{0, 0, 0}, []float64{0.5 / 3, 1.0 / 3, -1.0 / 3}},
		{"log_cosh", LogCosh, LossParams{}, []float32{1}, []float32{0}, []float64{math.Tanh(1)}},
		// p = 2 is clipped to 1: 0; -y/p = -0.5/0.5 = -1
		{"kld", KLDivergence, LossParams{}, []float32{2, 0.5}, []float32{0.5, 0.5}, []float64{0, -1}},
		// 1 - y/(p+1e-7)
		{"poisson", Poisson, LossParams{}, []float32{1}, []float32{2}, []float64{1 - 2/(1+1e-7)}},
		// 1 - y·p = 0 exactly: TensorFlow's max(x, 0) passes the gradient on a tie: -y
		{"hinge at the margin", Hinge, LossParams{}, []float32{1}, []float32{1}, []float64{-1}},
		// label 0 read as -1: 1 + 0.5 > 0, gradient +1, over 2; label 1 past the margin: 0
		{"hinge 0/1", Hinge, LossParams{}, []float32{0.5, 2}, []float32{0, 1}, []float64{0.5, 0}},
		// 2·max(1 - 0.3, 0)·(-1)
		{"squared_hinge", SquaredHinge, LossParams{}, []float32{0.3}, []float32{1}, []float64{-1.4}},
		// pos = 0.5, neg = 0.3 reached by classes 0 and 2, which share its gradient
		{"categorical_hinge tie", CategoricalHinge, LossParams{}, []float32{0.3, 0.5, 0.3, 0.1}, []float32{0, 1, 0, 0}, []float64{0.5, -1, 0.5, 0}},
		// past the margin: 0
		{"categorical_hinge past the margin", CategoricalHinge, LossParams{}, []float32{0, 2, 0}, []float32{0, 1, 0}, []float64{0, 0, 0}},
		// -y/|p| + (ŷ·p)·p/|p|³ = (-1/5 + 3·3/125, 3·4/125)
		{"cosine_similarity", CosineSimilarity, LossParams{}, []float32{3, 4}, []float32{1, 0}, []float64{-0.128, 0.096}},
		// y' = (0.9, 0.1), softmax(0, 0) = (0.5, 0.5): softmax - y'
		{"softmax CE smoothed", SoftmaxCrossEntropy, LossParams{LabelSmoothing: 0.2}, []float32{0, 0}, []float32{1, 0}, []float64{-0.4, 0.4}},
		// y' = 0.6: sigmoid(0) - 0.6
		{"sigmoid CE smoothed", SigmoidCrossEntropy, LossParams{LabelSmoothing: 0.8}, []float32{0}, []float32{1}, []float64{-0.1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]float32, len(tc.pred))
			if err := LossGradientWith(tc.kind, tc.p, 1, len(tc.pred), tc.pred, tc.target, nil, 1, got); err != nil {
				t.Fatal(err)
			}
			for j := range got {
				if math.Abs(float64(got[j])-tc.want[j]) > 1e-6*math.Max(1, math.Abs(tc.want[j])) {
					t.Fatalf("gradient %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestLossParamsAreChecked checks that a loss refuses parameters it does
// not take, or out of range, and that the parameters reach Inspect and
// tell loss ops apart (gorgonia merges nodes whose ops hash alike).
func TestLossParamsAreChecked(t *testing.T) {
	bad := []struct {
		kind LossKind
		p    LossParams
		want string
	}{
		{MeanSquaredError, LossParams{LabelSmoothing: 0.1}, "label smoothing applies to"},
		{SparseSoftmaxCrossEntropy, LossParams{LabelSmoothing: 0.1}, "label smoothing applies to"},
		{CategoricalCrossentropy, LossParams{LabelSmoothing: 1.1}, "in [0, 1]"},
		{SigmoidCrossEntropy, LossParams{LabelSmoothing: math.NaN()}, "in [0, 1]"},
		{MeanAbsoluteError, LossParams{Delta: 1}, "only the Huber loss"},
		{Huber, LossParams{Delta: -1}, "> 0"},
		{Huber, LossParams{Delta: math.Inf(1)}, "> 0"},
	}
	for _, tc := range bad {
		g := gorgonia.NewGraph()
		p := matrix(g, "p", tensor.Shape{1, 2}, []float64{0.5, 0.5})
		y := matrix(g, "y", tensor.Shape{1, 2}, []float64{1, 0})
		if tc.kind.Sparse() {
			y = matrix(g, "y", tensor.Shape{1, 1}, []float64{0})
		}
		if _, err := LossWith(tc.kind, tc.p, p, y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LossWith(%v, %+v): error %v, want one saying %q", tc.kind, tc.p, err, tc.want)
		}
	}

	g := gorgonia.NewGraph()
	p := matrix(g, "p", tensor.Shape{2, 3}, make([]float64, 6))
	y := matrix(g, "y", tensor.Shape{2, 3}, make([]float64, 6))
	plain, err := Loss(CategoricalCrossentropy, p, y)
	if err != nil {
		t.Fatal(err)
	}
	smoothed, err := LossWith(CategoricalCrossentropy, LossParams{LabelSmoothing: 0.1}, p, y)
	if err != nil {
		t.Fatal(err)
	}
	if plain == smoothed || plain.Op().Hashcode() == smoothed.Op().Hashcode() {
		t.Errorf("%v and %v are one node or hash alike", plain.Op(), smoothed.Op())
	}
	if _, err := gorgonia.Grad(smoothed, p); err != nil {
		t.Fatal(err)
	}
	found := map[OpKind]bool{}
	for _, n := range g.AllNodes() {
		if n.Op() == nil {
			continue
		}
		info, ok := Inspect(n.Op())
		if !ok || (info.Kind != OpLoss && info.Kind != OpLossGrad) || n == plain {
			continue
		}
		found[info.Kind] = true
		if info.LossParams.LabelSmoothing != 0.1 {
			t.Errorf("Inspect(%v) has parameters %+v, want label smoothing 0.1", n.Op(), info.LossParams)
		}
	}
	if !found[OpLoss] || !found[OpLossGrad] {
		t.Errorf("Inspect found the loss %t and its gradient %t", found[OpLoss], found[OpLossGrad])
	}
}

// TestNewLossKindsAreNamed checks that every loss kind has its name and
// that the kinds the CUDA kernels number keep their numbers.
func TestNewLossKindsAreNamed(t *testing.T) {
	for k := SoftmaxCrossEntropy; k <= CosineSimilarity; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "LossKind(") {
			t.Errorf("kind %d has no name", int(k))
		}
	}
	if MeanSquaredError != 6 || CosineSimilarity != 17 {
		t.Errorf("MeanSquaredError = %d, CosineSimilarity = %d; want 6 and 17", MeanSquaredError, CosineSimilarity)
	}
	if s := LossKind(18).String(); s != "LossKind(18)" {
		t.Errorf("an unknown kind is named %q", s)
	}
}
