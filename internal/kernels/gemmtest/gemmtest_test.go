package gemmtest

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestGamma(t *testing.T) {
	cases := []struct {
		n    int
		u    float64
		want float64
	}{
		{0, U32, 0},
		{1, U32, 0x1p-24 / (1 - 0x1p-24)},
		{1000, U32, 1000 * 0x1p-24 / (1 - 1000*0x1p-24)},
		{1 << 24, U32, math.Inf(1)},
		{2, U64, 2 * 0x1p-53 / (1 - 2*0x1p-53)},
	}
	for _, tc := range cases {
		if got := Gamma(tc.n, tc.u); got != tc.want {
			t.Errorf("Gamma(%d, %g) = %g, want %g", tc.n, tc.u, got, tc.want)
		}
	}
}

// exact returns the float32 rounding of the reference: the best any
// float32 product can do.
func exact(c Case) []float32 {
	got := c.Fresh()
	for i := 0; i < c.M; i++ {
		for j := 0; j < c.N; j++ {
			want, _ := c.reference(i, j)
			got[i*c.Ldc+j] = float32(want)
		}
	}
	return got
}

// The check accepts a correctly rounded result and rejects one element
// moved past its bound, a NaN, and a write into the stride padding.
func TestCheckCatchesErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tr := range []struct{ a, b bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		c := NewCase(rng, tr.a, tr.b, 5, 7, 300, -0.5, 0.75, 2)
		if len(c.C) != 4*c.Ldc+7 {
			t.Fatalf("%v: c holds %d values, want exactly the 4 full rows and the last row's 7", c, len(c.C))
		}
		good := exact(c)
		if worst, err := c.CheckFloat32(good); err != nil || worst > 0.01 {
			t.Fatalf("%v: the correctly rounded result: %v, worst %.3g of the bound", c, err, worst)
		}
		_, mag := c.reference(2, 3)
		for _, tc := range []struct {
			name string
			set  func(c []float32)
			want string
		}{
			{"past the bound", func(g []float32) { g[2*c.Ldc+3] += float32(2 * c.Bound(mag, U32)) }, "c[2,3]"},
			{"NaN", func(g []float32) { g[2*c.Ldc+3] = float32(math.NaN()) }, "c[2,3]"},
			{"padding", func(g []float32) { g[c.Ldc-1] = 42 }, "padding"},
		} {
			bad := append([]float32(nil), good...)
			tc.set(bad)
			if _, err := c.CheckFloat32(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %s: error %v, want one naming %q", c, tc.name, err, tc.want)
			}
		}
	}
}
