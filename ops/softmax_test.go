package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The float32 softmax and its gradient against the float64 definitions
// on rows of several lengths (vectors, tails, one value), with logits
// small and large; a row with a NaN or an infinity is NaN throughout, as
// in float64; y may be x.
func TestSoftmaxFloat32AgainstFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const tol = 8e-7 // relative to the row's largest probability; float32's spacing at 1 is 1.2e-7
	for _, cols := range []int{1, 2, 10, 15, 16, 17, 33, 128, 257} {
		for _, scale := range []float64{0.01, 1, 30} {
			rows := 5
			x := make([]float32, rows*cols)
			dy := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * scale)
				dy[i] = float32(rng.NormFloat64())
			}
			y := make([]float32, len(x))
			ActivationForward(Softmax, 0, cols, x, y)
			dx := make([]float32, len(x))
			ActivationBackward(Softmax, 0, cols, x, y, dy, dx)
			x64, y64, dy64, dx64 := to64(x), make([]float64, len(x)), to64(dy), make([]float64, len(x))
			activate(Softmax, 0, cols, x64, y64)
			activateGrad(Softmax, 0, cols, x64, to64(y), dy64, dx64)
			for r := range rows {
				var dyMax float64
				for c := range cols {
					dyMax = max(dyMax, math.Abs(dy64[r*cols+c]))
				}
				for c := range cols {
					i := r*cols + c
					if d := math.Abs(float64(y[i]) - y64[i]); d > tol {
						t.Fatalf("cols=%d scale=%g: softmax[%d,%d] = %v, float64 %v (off %.3g)", cols, scale, r, c, y[i], y64[i], d)
					}
					if d := math.Abs(float64(dx[i]) - dx64[i]); d > tol*dyMax*2 {
						t.Fatalf("cols=%d scale=%g: gradient[%d,%d] = %v, float64 %v (off %.3g)", cols, scale, r, c, dx[i], dx64[i], d)
					}
				}
			}
			// In place.
			in := append([]float32(nil), x...)
			ActivationForward(Softmax, 0, cols, in, in)
			for i := range in {
				if in[i] != y[i] {
					t.Fatalf("cols=%d: softmax in place [%d] = %v, not in place %v", cols, i, in[i], y[i])
				}
			}
		}
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, row := range [][]float32{
		{1, nan, 2}, {inf, 1, 2}, {-inf, -inf}, append(make([]float32, 20), nan), append(make([]float32, 40), inf),
	} {
		y := make([]float32, len(row))
		ActivationForward(Softmax, 0, len(row), row, y)
		for i, v := range y {
			if v == v {
				t.Errorf("softmax(%v)[%d] = %v, want NaN", row, i, v)
			}
		}
	}
	// A -Inf among finite logits is a probability of 0.
	y := make([]float32, 3)
	ActivationForward(Softmax, 0, 3, []float32{-inf, 0, 0}, y)
	if y[0] != 0 || y[1] != 0.5 || y[2] != 0.5 {
		t.Errorf("softmax(-Inf, 0, 0) = %v, want [0 0.5 0.5]", y)
	}
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
