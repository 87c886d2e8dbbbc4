package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The exported kernels must compute bit for bit what the ops' Do computes.
func TestKernelsMatchOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 7, 13
	x := make([]float32, rows*cols)
	dy := make([]float32, rows*cols)
	for i := range x {
		x[i] = rng.Float32()*4 - 2
		dy[i] = rng.Float32()*2 - 1
	}
	x[0], x[1], x[2] = 0, float32(math.Copysign(0, -1)), float32(math.NaN())
	for act := Linear; act <= Softmax; act++ {
		want, got := make([]float32, len(x)), make([]float32, len(x))
		activate(act, cols, x, want)
		ActivationForward(act, cols, x, got)
		sameBits(t, act.String(), got, want)
		wantDx, gotDx := make([]float32, len(x)), make([]float32, len(x))
		activateGrad(act, cols, x, want, dy, wantDx)
		ActivationBackward(act, cols, x, got, dy, gotDx)
		sameBits(t, act.String()+" gradient", gotDx, wantDx)
	}
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
			t.Fatalf("%s: value %d is %v, the op computes %v", what, i, got[i], want[i])
		}
	}
}

func TestLossKernels(t *testing.T) {
	// Softmax cross-entropy of logits (0, ln 3) against class 1:
	// softmax = (1/4, 3/4), loss = -ln(3/4); gradient = softmax - y.
	p := []float32{0, float32(math.Log(3))}
	y := []float32{0, 1}
	loss, err := LossValue(SoftmaxCrossEntropy, 1, 2, p, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := -math.Log(0.75); math.Abs(loss-want) > 1e-6 {
		t.Errorf("loss %v, want %v", loss, want)
	}
	g := make([]float32, 2)
	if err := LossGradient(SoftmaxCrossEntropy, 1, 2, p, y, 2, g); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(g[0])-0.5) > 1e-6 || math.Abs(float64(g[1])+0.5) > 1e-6 {
		t.Errorf("gradient with seed 2: %v, want [0.5 -0.5]", g)
	}
	out := []float32{1, 1}
	SumRows(2, 2, []float32{1, 2, 3, 4}, out)
	if out[0] != 5 || out[1] != 7 {
		t.Errorf("SumRows added %v, want [5 7]", out)
	}
}
