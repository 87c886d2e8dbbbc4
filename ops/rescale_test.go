package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestRescale: Keras' Rescaling, x·scale + offset with the product
// rounded to float32 before the sum (TensorFlow's two ops), its gradient
// dy·scale (checked against finite differences), and its refusals.
func TestRescale(t *testing.T) {
	x := []float32{0, 1, 127, 255, 16777215}
	p := ScaleParams{Factor: 1.0 / 127.5, Offset: -1}
	got := make([]float32, len(x))
	ScaleForward(p, x, got)
	for i, v := range x {
		prod := v * float32(p.Factor)
		want := float32(prod) + float32(p.Offset) // two roundings
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			t.Errorf("%v·%v - 1 = %v, want %v", v, float32(p.Factor), got[i], want)
		}
	}
	if got[0] != -1 || got[3] != 1 {
		t.Errorf("0 and 255 rescaled to %v and %v, want -1 and 1", got[0], got[3])
	}
	// (2²⁴-1)·3 + 1 = 50331646 exactly, a tie that one rounding (a fused
	// multiply-add) takes to 50331648; the product rounded first is
	// 50331644, and adding 1 keeps it.
	fused := make([]float32, 1)
	ScaleForward(ScaleParams{Factor: 3, Offset: 1}, []float32{16777215}, fused)
	if fused[0] != 50331644 {
		t.Errorf("16777215·3 + 1 = %v, want 50331644 (the product rounded first)", fused[0])
	}

	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(3, 3))
	a := matrix(g, "a", tensor.Shape{3, 4}, randomData(rng, 12, 1))
	y, err := Rescale(a, 0.25, 2)
	if err != nil {
		t.Fatal(err)
	}
	if info, ok := Inspect(y.Op()); !ok || info.Kind != OpScale || info.Scale != (ScaleParams{Factor: 0.25, Offset: 2}) {
		t.Errorf("Inspect: %+v", info)
	}
	checkGradients(t, g, flatCost(t, g, rng, y), a)
	for _, bad := range [][2]float64{{math.NaN(), 0}, {1, math.Inf(1)}} {
		if _, err := Rescale(a, bad[0], bad[1]); err == nil {
			t.Errorf("Rescale(x, %v, %v) accepted", bad[0], bad[1])
		}
	}
}
