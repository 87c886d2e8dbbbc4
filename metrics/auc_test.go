package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestAUCByHand works small curves out by hand.
//
// Keras' docstring example, AUC(num_thresholds=3) on labels 0 0 1 1 and
// outputs 0 .5 .3 .9: thresholds -1e-7, .5, 1+1e-7, so
// TP = 2 1 0, FP = 2 0 0, P = TP+FP = 4 1 0 (2 positives, 2 negatives),
// recall = 1 .5 0, fpr = 1 0 0, precision = .5 1 0 (0/0 is 0).
//
//   - ROC, interpolation: (1-0)·(1+.5)/2 + (0-0)·(.5+0)/2 = .75.
//   - ROC, minoring: 1·min(1, .5) = .5; majoring: 1·max(1, .5) = 1.
//   - PR, minoring (x recall, y precision):
//     (1-.5)·min(.5, 1) + (.5-0)·min(1, 0) = .25; majoring .5·1 + .5·1 = 1.
//   - PR, interpolation: interval 0 has dTP = 1, dP = 3, slope 1/3,
//     intercept 1 - 1/3 = 2/3, ratio 4/1, so (1/3)·(1 + (2/3)·ln 4)/2;
//     interval 1 has dTP = 1, dP = 1, slope 1, intercept 0 - 1·0 = 0,
//     ratio 1 (P = 0), so 1·(1 + 0)/2. Sum: .5 + (1 + (2/3)·ln 4)/6.
func TestAUCByHand(t *testing.T) {
	labels, preds := []float32{0, 0, 1, 1}, []float32{0, 0.5, 0.3, 0.9}
	// Two columns, labels (0 0 | 1 1), outputs (.65 .15 | .95 .45), at 11
	// thresholds (buckets ceil(10p)-1: 6 1 | 9 4). Each column alone ranks
	// its positive above its negative: AUC 1 each, mean 1. Flattened, the
	// positives .95 .45 and negatives .65 .15 make 4 pairs of which 3 are
	// ordered (.45 < .65), and with no two in one bucket the trapezoids
	// give that exactly: .75.
	mlLabels, mlPreds := []float32{0, 0, 1, 1}, []float32{0.65, 0.15, 0.95, 0.45}
	runCases(t, []metricCase{
		{name: "ROC interpolation, Keras' example", metric: &AUC{NumThresholds: 3}, labels: labels, labelCols: 1, preds: preds, predCols: 1, want: 0.75},
		{name: "ROC minoring", metric: &AUC{NumThresholds: 3, SummationMethod: "minoring"}, labels: labels, labelCols: 1, preds: preds, predCols: 1, want: 0.5},
		{name: "ROC majoring", metric: &AUC{NumThresholds: 3, SummationMethod: "Majoring"}, labels: labels, labelCols: 1, preds: preds, predCols: 1, want: 1},
		{name: "PR minoring", metric: &AUC{NumThresholds: 3, Curve: "PR", SummationMethod: "minoring"}, labels: labels, labelCols: 1, preds: preds, predCols: 1, want: 0.25},
		{name: "PR majoring", metric: &AUC{NumThresholds: 3, Curve: "pr", SummationMethod: "majoring"}, labels: labels, labelCols: 1, preds: preds, predCols: 1, want: 1},
		{name: "PR interpolation", metric: &AUC{NumThresholds: 3, Curve: "PR"}, labels: labels, labelCols: 1, preds: preds, predCols: 1, want: 0.5 + (1+2.0/3*math.Log(4))/6},
		{name: "multi-label: mean of the columns", metric: &AUC{NumThresholds: 11, MultiLabel: true}, labels: mlLabels, labelCols: 2, preds: mlPreds, predCols: 2, want: 1},
		{name: "flattened columns", metric: &AUC{NumThresholds: 11}, labels: mlLabels, labelCols: 2, preds: mlPreds, predCols: 2, want: 0.75},
		// A positive and a negative in one bucket: the ROC is the diagonal.
		{name: "a tie is one half", metric: &AUC{}, labels: []float32{0, 1}, labelCols: 1, preds: []float32{0.5, 0.5}, predCols: 1, want: 0.5},
		// Outputs of exactly 0 and 1 are inside the end thresholds.
		{name: "outputs 0 and 1", metric: &AUC{}, labels: []float32{0, 1}, labelCols: 1, preds: []float32{0, 1}, predCols: 1, want: 1},
		// sigmoid(-2) = .12, sigmoid(3) = .95: ranked right.
		{name: "from logits", metric: &AUC{FromLogits: true}, labels: []float32{0, 1}, labelCols: 1, preds: []float32{-2, 3}, predCols: 1, want: 1},
		{name: "only negatives", metric: &AUC{}, labels: []float32{0, 0}, labelCols: 1, preds: []float32{0.2, 0.7}, predCols: 1, want: 0},

		{name: "logits without FromLogits", metric: &AUC{}, labels: []float32{0, 1}, labelCols: 1, preds: []float32{-2, 3}, predCols: 1, wantErr: "[0, 1]"},
		{name: "one threshold", metric: &AUC{NumThresholds: 1}, labels: []float32{0}, labelCols: 1, preds: []float32{0.5}, predCols: 1, wantErr: "num_thresholds"},
		{name: "unknown curve", metric: &AUC{Curve: "DET"}, labels: []float32{0}, labelCols: 1, preds: []float32{0.5}, predCols: 1, wantErr: "curve"},
		{name: "unknown summation", metric: &AUC{SummationMethod: "trapezoid"}, labels: []float32{0}, labelCols: 1, preds: []float32{0.5}, predCols: 1, wantErr: "summation_method"},
		{name: "class indices as labels", metric: &AUC{}, labels: []float32{1}, labelCols: 1, preds: []float32{0.5, 0.5}, predCols: 2, wantErr: "columns"},
	})
}

func TestAUCStateAndErrors(t *testing.T) {
	m := &AUC{}
	if got := m.Result(); got != 0 {
		t.Errorf("AUC before any batch = %v, want 0", got)
	}
	ml := &AUC{MultiLabel: true}
	if err := ml.Update([]float32{0, 1}, 2, []float32{0.2, 0.8}, 2); err != nil {
		t.Fatal(err)
	}
	if err := ml.Update([]float32{0, 1, 0}, 3, []float32{0.2, 0.8, 0.1}, 3); err == nil {
		t.Error("multi-label AUC took 3 columns after 2")
	}
	ml.Reset()
	if err := ml.Update([]float32{0, 1, 0}, 3, []float32{0.2, 0.8, 0.1}, 3); err != nil {
		t.Errorf("after Reset, multi-label AUC refused a new width: %v", err)
	}
	m.NumThresholds = 3
	if err := m.Update([]float32{0, 1}, 1, []float32{0.2, 0.8}, 1); err != nil {
		t.Fatal(err)
	}
	m.NumThresholds = 5
	if err := m.Update([]float32{0, 1}, 1, []float32{0.2, 0.8}, 1); err == nil {
		t.Error("AUC took a new num_thresholds without a Reset")
	}
	m.Curve = "DET"
	if got := m.Result(); !math.IsNaN(got) {
		t.Errorf("AUC with an invalid curve = %v, want NaN", got)
	}
}

// directAUC computes Keras' AUC from its definition: counts at each of the
// n thresholds by comparing every output with it (in float32, as Keras'
// unoptimized path does), then the ROC trapezoids, or for PR the integral
// of precision over recall with TP and P = TP+FP linear in each interval,
// taken numerically by the midpoint rule (not Keras' closed form).
func directAUC(labels, preds []float32, n int, pr bool) float64 {
	thresholds := make([]float32, n)
	thresholds[0], thresholds[n-1] = float32(0-1e-7), float32(1+1e-7)
	for i := 1; i < n-1; i++ {
		thresholds[i] = float32(float64(i) / float64(n-1))
	}
	tp, fp := make([]float64, n), make([]float64, n)
	var pos, neg float64
	for k, l := range labels {
		if l != 0 {
			pos++
		} else {
			neg++
		}
		for i, th := range thresholds {
			if preds[k] > th {
				if l != 0 {
					tp[i]++
				} else {
					fp[i]++
				}
			}
		}
	}
	var area float64
	for i := 0; i < n-1; i++ {
		if !pr {
			area += (fp[i]/neg - fp[i+1]/neg) * (tp[i]/pos + tp[i+1]/pos) / 2
			continue
		}
		dtp, dp := tp[i]-tp[i+1], (tp[i]+fp[i])-(tp[i+1]+fp[i+1])
		if dtp == 0 {
			continue // recall does not move
		}
		const steps = 2000
		var integral float64
		for s := 0; s < steps; s++ {
			u := (float64(s) + 0.5) / steps
			integral += (tp[i+1] + u*dtp) / (tp[i+1] + fp[i+1] + u*dp)
		}
		area += integral / steps * dtp / pos // d(recall) = dtp/pos du
	}
	return area
}

// TestAUCAgainstDirectComputation compares AUC, fed in uneven batches,
// with directAUC on random outputs at Keras' 200 thresholds; and the ROC
// area with the exact one (the fraction of positive-negative pairs ranked
// right), which 200 thresholds approximate.
func TestAUCAgainstDirectComputation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 600
	labels, preds := make([]float32, n), make([]float32, n)
	for i := range labels {
		if rng.Float64() < 0.3 {
			labels[i] = 1
		}
		// Overlapping scores: positives shifted up, squashed into (0, 1).
		preds[i] = ops.Sigmoid32(float32(rng.NormFloat64() + 1.2*float64(labels[i]) - 0.5))
	}
	var ordered, pairs float64
	for i := range labels {
		for j := range labels {
			if labels[i] == 1 && labels[j] == 0 {
				pairs++
				switch {
				case preds[i] > preds[j]:
					ordered++
				case preds[i] == preds[j]:
					ordered += 0.5
				}
			}
		}
	}
	exact := ordered / pairs
	for _, tc := range []struct {
		name string
		pr   bool
	}{{"ROC", false}, {"PR", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &AUC{}
			if tc.pr {
				m.Curve = "PR"
			}
			for lo, size := 0, 1; lo < n; lo, size = lo+size, size*2 {
				hi := min(lo+size, n)
				if err := m.Update(labels[lo:hi], 1, preds[lo:hi], 1); err != nil {
					t.Fatal(err)
				}
			}
			got, want := m.Result(), directAUC(labels, preds, 200, tc.pr)
			if math.Abs(got-want) > 1e-7 {
				t.Errorf("AUC = %.10f, direct computation %.10f", got, want)
			}
			if !tc.pr && math.Abs(got-exact) > 0.005 {
				t.Errorf("ROC AUC = %.5f, far from the exact %.5f", got, exact)
			}
			if !(got > 0.5 && got < 1) {
				t.Errorf("AUC = %v for overlapping classes, want in (0.5, 1)", got)
			}
		})
	}
}
