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

func TestSumRowsBitIdenticalToTheLoop(t *testing.T) {
	if !Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	for _, shape := range [][2]int{{1, 1}, {3, 15}, {1000, 16}, {7, 17}, {33, 40}, {5, 64}, {2, 100}, {0, 8}} {
		rows, cols := shape[0], shape[1]
		a := make([]float32, rows*cols)
		for i := range a {
			a[i] = float32(i%11)*0.37 - 1.9 + float32(i)*1e-3
		}
		if len(a) > 5 {
			a[5] = float32(math.Inf(1))
		}
		want, got := make([]float32, cols+3), make([]float32, cols+3)
		for i := range want {
			want[i] = float32(i) * 0.25
			got[i] = want[i]
		}
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				want[c] += a[r*cols+c]
			}
		}
		if !SumRows(rows, cols, a, got[:cols]) {
			t.Fatal("SumRows did nothing")
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d×%d: out[%d] = %v, want %v", rows, cols, i, got[i], want[i])
			}
		}
	}
}
