package avx2

import (
	"math"
	"testing"
)

func TestMaskPositiveMatchesItsDefinition(t *testing.T) {
	x := []float32{1, -1, 0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-45,
		-2, 3, 0.5, -0.5, 7, 8, 9, -10, 11}
	v := make([]float32, len(x))
	for i := range v {
		v[i] = float32(i) - 3.5
	}
	out := make([]float32, len(x))
	MaskPositive(x, v, out)
	for i := range x {
		want := float32(0)
		if x[i] > 0 {
			want = v[i]
		}
		if math.Float32bits(out[i]) != math.Float32bits(want) {
			t.Errorf("x=%v: got %v, want %v (kernels: %t)", x[i], out[i], want, haveKernels)
		}
	}
	// In place, as the ReLU runs.
	in := append([]float32(nil), x...)
	MaskPositive(in, in, in)
	for i := range in {
		if x[i] > 0 && in[i] != x[i] || !(x[i] > 0) && math.Float32bits(in[i]) != 0 {
			t.Errorf("in place, x=%v: got %v", x[i], in[i])
		}
	}
}

func TestAddToAddsEachValueOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 33} {
		dst, src := make([]float32, n), make([]float32, n)
		want := make([]float32, n)
		for i := range dst {
			dst[i], src[i] = float32(i)*0.1, float32(n-i)*0.3
			want[i] = dst[i] + float32(src[i]) // src rounded: no multiply-add fused across the statements
		}
		AddTo(dst, src)
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
}

func TestAddAddsEachValueOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 33} {
		a, b, dst := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(i)*0.1, float32(n-i)*0.3
			dst[i] = float32(math.NaN())
		}
		Add(dst, a, b)
		for i := range dst {
			if want := a[i] + b[i]; math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], want)
			}
		}
		Add(a, a, b) // in place
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(dst[i]) {
				t.Fatalf("n=%d, in place: a[%d] = %v, want %v", n, i, a[i], dst[i])
			}
		}
	}
}

// MaxInto keeps Go's comparison: src wins only where it is greater, so a
// NaN in src never wins, a NaN in dst stays, and a zero keeps its sign.
func TestMaxIntoKeepsTheComparison(t *testing.T) {
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	pairs := [][2]float32{{1, 2}, {2, 1}, {-1, -1}, {nan, 1}, {1, nan}, {nan, nan}, {0, negZero}, {negZero, 0},
		{float32(math.Inf(-1)), -3}, {5, float32(math.Inf(1))}, {-2, -7}, {3.5, 3.25}}
	for _, n := range []int{0, 1, 7, 8, 9, 33, 100} {
		dst, src, want := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range dst {
			p := pairs[(i*5)%len(pairs)]
			dst[i], src[i] = p[0], p[1]
			want[i] = p[0]
			if p[1] > p[0] {
				want[i] = p[1]
			}
		}
		MaxInto(dst, src)
		for i := range dst {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: dst[%d] = %v (bits %#x), want %v (bits %#x)", n, i, dst[i], math.Float32bits(dst[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}
