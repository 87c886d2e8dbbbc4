package avx512

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
)

// The AVX-512 gates run avx2's instructions on 16 lanes: the same bits as
// avx2's kernels, which are checked against float64 there. Lengths cover
// whole vectors and the copied tail.
func TestGatesSameBitsAsAVX2(t *testing.T) {
	if !Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	var xs []float32
	for b := uint32(0); b <= math.Float32bits(120); b += 997 {
		v := math.Float32frombits(b)
		xs = append(xs, v, -v)
	}
	xs = append(xs, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 104, -104, 0.625, -0.625, math.MaxFloat32)
	for _, g := range []struct {
		name      string
		got       func(x, y []float32) bool
		want      func(x, y []float32)
		wantCheck func(float64) float64
	}{
		{"Sigmoid", Sigmoid, avx2.Sigmoid, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"Tanh", Tanh, avx2.Tanh, math.Tanh},
	} {
		want := make([]float32, len(xs))
		g.want(xs, want)
		for _, n := range []int{1, 15, 16, 17, 100, len(xs)} {
			got := make([]float32, len(xs))
			for lo := 0; lo < len(xs); lo += n {
				if !g.got(xs[lo:min(lo+n, len(xs))], got[lo:]) {
					t.Fatalf("%s reports no kernel", g.name)
				}
			}
			for i := range xs {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("%s(%v) in slices of %d = %v, avx2 gives %v (float64: %v)", g.name, xs[i], n, got[i], want[i], g.wantCheck(float64(xs[i])))
				}
			}
		}
	}
}

func TestGateGradsSameBitsAsGo(t *testing.T) {
	if !Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	for _, n := range []int{1, 15, 16, 17, 64, 133} {
		y, dy := make([]float32, n), make([]float32, n)
		for i := range y {
			y[i] = float32(math.Sin(float64(i)*1.7)) * 0.999
			dy[i] = float32(math.Cos(float64(i)*0.3)) * 3
		}
		got := make([]float32, n)
		SigmoidGrad(y, dy, got)
		for i := range got {
			if want := dy[i] * y[i] * (1 - y[i]); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: SigmoidGrad value %d = %v, want %v", n, i, got[i], want)
			}
		}
		TanhGrad(y, dy, got)
		for i := range got {
			if want := dy[i] * (1 - y[i]*y[i]); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: TanhGrad value %d = %v, want %v", n, i, got[i], want)
			}
		}
	}
}
