package avx512

import (
	"fmt"
	"math"
	"testing"
)

func TestMaskPositive(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 1000} {
		x := make([]float32, n)
		v := make([]float32, n)
		for i := range x {
			x[i] = float32(i%5) - 2
			v[i] = float32(i) + 0.5
		}
		if n > 3 {
			x[0], x[1], x[2] = float32(math.NaN()), float32(math.Copysign(0, -1)), float32(math.Inf(1))
		}
		out := make([]float32, n)
		MaskPositive(x, v, out)
		for i := range x {
			want := float32(0)
			if x[i] > 0 {
				want = v[i]
			}
			if math.Float32bits(out[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: out[%d] = %v for x = %v, v = %v; want %v", n, i, out[i], x[i], v[i], want)
			}
		}
	}
}

func BenchmarkMaskPositive(b *testing.B) {
	for _, n := range []int{32 * 3000, 256 * 3000} {
		x, out := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32((i*7919)%13) - 6 // signs in no pattern a predictor learns
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				MaskPositive(x, x, out)
			}
		})
	}
}
