//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// lossTol bounds the loss kernels' difference from ops, relative: the
// loss adds the rows in another order (a block's tree), and the gradients
// of the kinds whose formulas call exp, log or tanh meet another math
// library.
const lossTol = 1e-6

// exactGradient are the kinds whose gradients use only +, -, ×, ÷, √ and
// comparisons, each in ops' order: the emulator, which contracts nothing
// into fused multiply-adds, computes ops' bits.
var exactGradient = map[ops.LossKind]bool{
	ops.CategoricalCrossentropy: true, ops.SparseCategoricalCrossentropy: true, ops.BinaryCrossentropy: true,
	ops.MeanSquaredError: true, ops.MeanAbsoluteError: true, ops.MeanAbsolutePercentageError: true, ops.Huber: true,
	ops.KLDivergence: true, ops.Poisson: true, ops.Hinge: true, ops.SquaredHinge: true, ops.CategoricalHinge: true,
	ops.CosineSimilarity: true,
}

// relDiff is "" when got and want agree value by value within tol relative
// to the larger (NaN only with NaN, infinities only with themselves), else
// the first difference.
func relDiff(got, want []float32, tol float64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		a, b := float64(got[i]), float64(want[i])
		ok := a == b || math.IsNaN(a) && math.IsNaN(b) ||
			!math.IsInf(a, 0) && !math.IsInf(b, 0) && math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
		if !ok {
			return fmt.Sprintf("[%d] = %v, ops gives %v", i, got[i], want[i])
		}
	}
	return ""
}

// lossLaunches are the loss's blocks and the gradient's launches to try.
type lossLaunches struct {
	blocks []int
	grads  []Launch
}

var (
	allLossLaunches  = lossLaunches{[]int{32, 64, 256}, launches}
	someLossLaunches = lossLaunches{[]int{64}, []Launch{{1, 1}, {3, 64}}}
)

// checkLoss runs c's loss and its gradient (seeds 1 and 2.5) through the
// kernels in each of ls's launches and compares them with
// ops.LossValueWith and ops.LossGradientWith: the loss within lossTol, the
// gradient to the bit for the exactGradient kinds, else within lossTol.
func checkLoss(t *testing.T, what string, c LossCase, ls lossLaunches) {
	t.Helper()
	what = fmt.Sprintf("%s %v%+v weighted=%v %d×%d", what, c.Kind, c.Params, c.W != nil, c.Rows, c.Cols)
	want, err := ops.LossValueWith(c.Kind, c.Params, c.Rows, c.Cols, c.P, c.Y, c.W)
	if err != nil {
		t.Fatalf("%s: ops: %v", what, err)
	}
	for _, block := range ls.blocks {
		loss, bad, err := Loss(block, c)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if d := relDiff([]float32{loss}, []float32{float32(want)}, lossTol); d != "" {
			t.Errorf("%s: loss in a block of %d: %s", what, block, d)
		}
		if bad != math.MaxInt32 {
			t.Errorf("%s: valid targets flagged sample %d", what, bad)
		}
	}
	for _, seed := range []float32{1, 2.5} {
		wantDP := make([]float32, c.Rows*c.Cols)
		if err := ops.LossGradientWith(c.Kind, c.Params, c.Rows, c.Cols, c.P, c.Y, c.W, float64(seed), wantDP); err != nil {
			t.Fatalf("%s: ops gradient: %v", what, err)
		}
		for _, l := range ls.grads {
			dp := make([]float32, c.Rows*c.Cols)
			bad, err := LossGrad(l, c, seed, dp)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if bad != math.MaxInt32 {
				t.Errorf("%s gradient: valid targets flagged sample %d", what, bad)
			}
			g := fmt.Sprintf("%s gradient, seed %v, launch %v", what, seed, l)
			if exactGradient[c.Kind] {
				sameBits(t, g, dp, wantDP)
			} else if d := relDiff(dp, wantDP, lossTol); d != "" {
				t.Errorf("%s: %s", g, d)
			}
		}
	}
}

// TestLossesAndGradients checks every loss kind, with each of its
// parameters (opstest.LossParamsFor), unweighted and weighted, on
// opstest.LossInputs' data, against ops.
func TestLossesAndGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, kind := range opstest.LossKinds() {
		// {4, 700}: rows wider than a block, which the softmax kinds' block
		// per row and the elementwise kinds' thread per value cover in
		// strides.
		for _, shape := range [][2]int{{32, 10}, {70, 3}, {1, 1}, {5, 2}, {4, 700}} {
			rows, cols := shape[0], shape[1]
			if kind.Sparse() && cols == 1 {
				continue
			}
			p, y, _ := opstest.LossInputs(rng.Float64, rng.NormFloat64, rng.IntN, kind, rows, cols)
			w := opstest.SampleWeights(rng.Float64, rows)
			for i, prm := range opstest.LossParamsFor(kind) {
				for _, weights := range [][]float32{nil, w} {
					ls := someLossLaunches
					if i == 0 && weights == nil {
						ls = allLossLaunches
					}
					checkLoss(t, "random", LossCase{Kind: kind, Params: prm, Rows: rows, Cols: cols, P: p, Y: y, W: weights}, ls)
				}
			}
		}
	}
}

// edgeCase is a batch that reaches the losses' edges: clips that bite,
// maxima that tie, zero vectors, labels on both sides of the hinge
// losses' 0/1 test.
type edgeCase struct {
	name       string
	kind       ops.LossKind
	rows, cols int
	p, y       []float32
}

var lossEdgeCases = []edgeCase{
	// ∂/∂p is 0 where p is clipped (below ε, above 1-ε; NaN-free), and
	// the targets clipped too.
	{"clips", ops.CategoricalCrossentropy, 3, 3, []float32{0, 1, 0.5, 1e-9, 0.3, 0.7, 0.2, 0.2, 0.6}, []float32{1, 0, 0, 0, 1, 0, 0.5, 0.5, 0}},
	{"clips", ops.BinaryCrossentropy, 2, 4, []float32{0, 1, 1e-8, 0.9999999, 0.5, 0.25, 1, 0}, []float32{1, 0, 1, 1, 0.5, 0, 1, 1}},
	{"clips", ops.SparseCategoricalCrossentropy, 2, 3, []float32{0, 1, 0.5, 1e-9, 0.999, 0.001}, []float32{0, 2}},
	{"clips", ops.KLDivergence, 2, 4, []float32{0, 1, 1.5, 1e-8, 0.2, 0.5, 1, 0.3}, []float32{0, 1, 2, 0.5, -1, 0.3, 1e-9, 1}},
	{"clips", ops.MeanSquaredLogarithmicError, 2, 4, []float32{-1, 0, 1e-8, 2, 1e-7, 3, 0.5, 7}, []float32{-1, 0, 3, 2, 1e-8, -2, 0.5, 0}},
	{"floor", ops.MeanAbsolutePercentageError, 2, 3, []float32{1, 0, -2, 3, 3, 1e-8}, []float32{0, 0, 1e-9, 3, -3, 0}},
	{"ties", ops.MeanAbsoluteError, 2, 3, []float32{1, 0, -2, 3, 3, 1e-8}, []float32{1, 0, -2, 2, 4, 0}},
	{"poles", ops.Poisson, 2, 3, []float32{0, 0, 1, 2, 1e-8, 5}, []float32{0, 3, 1, 0, 2, 5}},
	{"far", ops.LogCosh, 2, 3, []float32{50, -50, 0, 400, 1e-4, -3}, []float32{0, 0, 0, -400, 0, -3}},
	// |e| = δ = 1 exactly, either side, and far out.
	{"bends", ops.Huber, 2, 4, []float32{1, 1.5, -1, 0.5, 2, -7, 0, 1.25}, []float32{0, 0.5, 0, 0, 1, 0, 0, 0.25}},
	// Ties in the maximum over the negative classes, a row below the
	// hinge (zero gradient), one on it (neg-pos+1 = 0), signed zeros.
	{"ties", ops.CategoricalHinge, 5, 4, []float32{
		0.5, 0.5, 0.5, 0.2,
		3, 0.1, 0.1, 0.1,
		1, 0, 0, 0,
		-1, -2, -3, -4,
		0.25, 0.75, 0.75, -0.5,
	}, []float32{
		0, 0, 0, 1,
		1, 0, 0, 0,
		1, 0, 0, 0,
		1, 0, 0, 0,
		0, 0.5, 0.5, 0,
	}},
	// Zero predictions, zero targets, both, and tiny vectors under the
	// normalization's floor.
	{"zeros", ops.CosineSimilarity, 5, 3, []float32{
		0, 0, 0,
		1, 2, -3,
		0, 0, 0,
		1e-7, 0, 0,
		0.5, -0.25, 2,
	}, []float32{
		1, -1, 2,
		0, 0, 0,
		0, 0, 0,
		1, 0, 0,
		-1, 0.5, 3,
	}},
	// 0/1 labels, read as -1/1, with rows on the hinge (1 - t·p = 0).
	{"0/1 labels", ops.Hinge, 2, 3, []float32{1, -1, 0.5, 2, -0.25, 0}, []float32{1, 0, 1, 0, 0, 1}},
	{"0/1 labels", ops.SquaredHinge, 2, 3, []float32{1, -1, 0.5, 2, -0.25, 0}, []float32{1, 0, 1, 0, 0, 1}},
	// -1/1 labels, as they are.
	{"-1/1 labels", ops.Hinge, 2, 3, []float32{1, -1, 0.5, 2, -0.25, 0}, []float32{1, -1, 1, -1, -1, 1}},
	{"-1/1 labels", ops.SquaredHinge, 2, 3, []float32{1, -1, 0.5, 2, -0.25, 0}, []float32{1, -1, 1, -1, -1, 1}},
	// 0/1 labels but one: none is converted.
	{"0/1 labels and a 0.5", ops.Hinge, 2, 3, []float32{1, -1, 0.5, 2, -0.25, 0}, []float32{1, 0, 1, 0, 0.5, 1}},
	{"-1/0/1 labels", ops.SquaredHinge, 2, 3, []float32{1, -1, 0.5, 2, -0.25, 0}, []float32{1, 0, -1, 0, 0, 1}},
	// All 0, all 1: converted.
	{"all 0", ops.Hinge, 2, 2, []float32{1, -1, 0.5, -2}, []float32{0, 0, 0, 0}},
	{"all 1", ops.SquaredHinge, 2, 2, []float32{1, -1, 0.5, -2}, []float32{1, 1, 1, 1}},
	// Smoothing with targets that are not one-hot, and logits far out.
	{"far", ops.SoftmaxCrossEntropy, 2, 3, []float32{100, -100, 0, 3, 3, 3}, []float32{0.5, 0.5, 0, 1, 0, 0}},
	{"far", ops.SigmoidCrossEntropy, 2, 3, []float32{100, -100, 0, 3, -3, 30}, []float32{0.5, 1, 0, 1, 0, 0.25}},
	{"far", ops.SparseSoftmaxCrossEntropy, 2, 3, []float32{100, -100, 0, 3, 3, 3}, []float32{1, 2}},
}

// TestLossEdgeCases checks the kernels against ops on lossEdgeCases, with
// each of the kind's parameters, unweighted and weighted.
func TestLossEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, e := range lossEdgeCases {
		w := opstest.SampleWeights(rng.Float64, e.rows)
		for _, prm := range opstest.LossParamsFor(e.kind) {
			for _, weights := range [][]float32{nil, w} {
				checkLoss(t, e.name, LossCase{Kind: e.kind, Params: prm, Rows: e.rows, Cols: e.cols, P: e.p, Y: e.y, W: weights},
					someLossLaunches)
			}
		}
	}
}

// TestHingeLabelsConvertedPerBatch checks the label pass against the
// loss: a batch whose labels are all 0/1 is the loss of the same batch
// with -1/1 labels, and one stray label elsewhere in the batch stops the
// conversion of every row.
func TestHingeLabelsConvertedPerBatch(t *testing.T) {
	p := []float32{0.5, 0.5, 1, 0.25, 3, -1}
	for _, kind := range []ops.LossKind{ops.Hinge, ops.SquaredHinge} {
		zeroOne := LossCase{Kind: kind, Rows: 3, Cols: 2, P: p, Y: []float32{1, 0, 0, 1, 1, 1}}
		signs := zeroOne
		signs.Y = []float32{1, -1, -1, 1, 1, 1}
		a, _, err := Loss(32, zeroOne)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := Loss(32, signs)
		if a != b {
			t.Errorf("%v: 0/1 labels give %v, -1/1 labels %v", kind, a, b)
		}
		stray := zeroOne
		stray.Y = []float32{1, 0, 0, 1, 1, 2}
		first := LossCase{Kind: kind, Rows: 1, Cols: 2, P: p[:2], Y: stray.Y[:2]}
		dp, dpFirst := make([]float32, 6), make([]float32, 2)
		if _, err := LossGrad(Launch{3, 32}, stray, 3, dp); err != nil {
			t.Fatal(err)
		}
		if _, err := LossGrad(Launch{1, 32}, first, 1, dpFirst); err != nil {
			t.Fatal(err)
		}
		// first's own labels are 0/1, so it is converted alone, but not
		// within stray: the rows differ.
		if dp[0] == dpFirst[0] && dp[1] == dpFirst[1] {
			t.Errorf("%v: the first row's gradient %v is the converted row's %v: a label of another row did not stop the conversion", kind, dp[:2], dpFirst)
		}
	}
}

func TestZeroOneLabels(t *testing.T) {
	long := make([]float32, 1000)
	for i := range long {
		long[i] = float32(i % 2)
	}
	longBad := append([]float32(nil), long...)
	longBad[999] = 0.5
	for _, tc := range []struct {
		name string
		y    []float32
		want int
	}{
		{"empty", nil, 1},
		{"0/1", []float32{0, 1, 1, 0}, 1},
		{"-0", []float32{float32(math.Copysign(0, -1)), 1}, 1},
		{"-1", []float32{0, 1, -1}, 0},
		{"0.5", []float32{0.5}, 0},
		{"NaN", []float32{0, float32(math.NaN())}, 0},
		{"long", long, 1},
		{"long, the last 0.5", longBad, 0},
	} {
		for _, block := range []int{1, 32, 256} {
			if got := ZeroOneLabels(block, tc.y); got != tc.want {
				t.Errorf("%s in a block of %d: %d, want %d", tc.name, block, got, tc.want)
			}
		}
	}
}

func TestSparseTargetFlagged(t *testing.T) {
	rows, cols := 6, 4
	p := make([]float32, rows*cols)
	y := []float32{0, 3, 1.5, 2, 4, -1}
	for _, kind := range []ops.LossKind{ops.SparseSoftmaxCrossEntropy, ops.SparseCategoricalCrossentropy} {
		for _, w := range [][]float32{nil, {1, 1, 1, 1, 1, 1}} {
			c := LossCase{Kind: kind, Rows: rows, Cols: cols, P: p, Y: y, W: w}
			if _, bad, err := Loss(32, c); err != nil || bad != 2 {
				t.Errorf("%v: flagged sample %d (%v), want 2", kind, bad, err)
			}
			dp := make([]float32, rows*cols)
			if bad, err := LossGrad(Launch{2, 32}, c, 1, dp); err != nil || bad != 2 {
				t.Errorf("%v gradient: flagged sample %d (%v), want 2", kind, bad, err)
			}
		}
	}
}

// TestLossRefusesWhatItCannotCompute: the emulator's launches go through
// launch.ForLoss, as the backend's do.
func TestLossRefusesWhatItCannotCompute(t *testing.T) {
	c := LossCase{Kind: 42, Rows: 1, Cols: 1, P: []float32{1}, Y: []float32{1}}
	if _, _, err := Loss(32, c); err == nil {
		t.Error("LossKind(42): no error")
	}
	c = LossCase{Kind: ops.MeanSquaredError, Params: ops.LossParams{LabelSmoothing: 0.1}, Rows: 1, Cols: 1, P: []float32{1}, Y: []float32{1}}
	if _, err := LossGrad(Launch{1, 32}, c, 1, make([]float32, 1)); err == nil {
		t.Error("smoothed MSE: no error")
	}
}
