package layers

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestDenseBuildsKerasDefaults(t *testing.T) {
	d := Dense(1000)
	out, err := d.Build([]int{3000}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0] != 1000 {
		t.Fatalf("output shape %v", out)
	}
	params := d.Params()
	if len(params) != 2 || params[0].Name != "kernel" || params[1].Name != "bias" {
		t.Fatalf("params %v", params)
	}
	if s := params[0].Value.Shape(); s[0] != 3000 || s[1] != 1000 {
		t.Errorf("kernel shape %v, want (3000, 1000) as Keras stores it", s)
	}
	limit := math.Sqrt(6.0 / 4000)
	var maxAbs, sum float64
	for _, v := range params[0].Value.Data().([]float32) {
		maxAbs = math.Max(maxAbs, math.Abs(float64(v)))
		sum += float64(v)
	}
	if maxAbs > limit || maxAbs < 0.99*limit {
		t.Errorf("glorot_uniform: largest |w| = %v, want just under the limit %v", maxAbs, limit)
	}
	if mean := sum / 3e6; math.Abs(mean) > 1e-3 {
		t.Errorf("glorot_uniform mean %v, want about 0", mean)
	}
	for _, v := range params[1].Value.Data().([]float32) {
		if v != 0 {
			t.Fatal("bias is not zero-initialised")
		}
	}
	if len(Dense(4, WithoutBias()).mustBuild(t, 3).Params()) != 1 {
		t.Error("WithoutBias still has a bias")
	}
}

func (d *DenseLayer) mustBuild(t *testing.T, in int) *DenseLayer {
	t.Helper()
	if _, err := d.Build([]int{in}, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSameSeedSameWeights(t *testing.T) {
	a, b := Dense(8).mustBuild(t, 5), Dense(8).mustBuild(t, 5)
	da, db := a.Params()[0].Value.Data().([]float32), b.Params()[0].Value.Data().([]float32)
	for i := range da {
		if da[i] != db[i] {
			t.Fatal("same seed gave different kernels")
		}
	}
}

func TestActivationKeepsLogitsForCrossEntropy(t *testing.T) {
	for _, tc := range []struct {
		act        Activation
		wantLogits bool
	}{{Sigmoid, true}, {Softmax, true}, {ReLU, false}, {Tanh, false}, {Linear, false}} {
		g := gorgonia.NewGraph()
		x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
		out, err := NewActivation(tc.act).Call(Flow{Node: x, NeedsGrad: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (out.Logits != nil) != tc.wantLogits || (tc.wantLogits && out.Logits != x) {
			t.Errorf("%v: logits %v, want kept=%v", tc.act, out.Logits, tc.wantLogits)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Dense works on the last axis of samples of more (as Keras' Dense).
	d := Dense(5)
	if out, err := d.Build([]int{32, 32, 3}, rng); err != nil || !slices.Equal(out, []int{32, 32, 5}) || !slices.Equal([]int(d.Params()[0].Value.Shape()), []int{3, 5}) {
		t.Errorf("Dense on images: %v %v, want (32, 32, 5) from a kernel (3, 5)", out, err)
	}
	if _, err := Dense(3).Build([]int{}, rng); err == nil || !strings.Contains(err.Error(), "at least one axis") {
		t.Errorf("Dense on samples of no axis: %v", err)
	}
	if _, err := Dense(-1).Build([]int{3}, rng); err == nil {
		t.Error("Dense(-1) built")
	}
	if out, err := Flatten().Build([]int{32, 32, 3}, rng); err != nil || out[0] != 3072 {
		t.Errorf("Flatten: %v %v", out, err)
	}
}
