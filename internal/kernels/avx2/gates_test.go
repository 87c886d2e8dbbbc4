package avx2

import (
	"fmt"
	"math"
	"testing"
)

// gateInputs are float32 values across [-120, 120] (every 211th bit
// pattern, both signs), the edges of the formulas and the specials.
func gateInputs() []float32 {
	var xs []float32
	for b := uint32(0); b <= math.Float32bits(120); b += 211 {
		v := math.Float32frombits(b)
		xs = append(xs, v, -v)
	}
	for _, v := range []float32{0.625, 104, 52, 87.33655, 88.72284, 103.97, 1e-30, 1e-45, math.MaxFloat32, 1e6} {
		xs = append(xs, v, -v, math.Nextafter32(v, 0), -math.Nextafter32(v, 0), math.Nextafter32(v, 1e9), -math.Nextafter32(v, 1e9))
	}
	return xs
}

// ulps is how far got is from want, in units of the float32 spacing at
// want (the subnormal spacing below the smallest normal).
func ulps(got float32, want float64) float64 {
	w := float32(want)
	a := float32(math.Abs(float64(w)))
	spacing := float64(math.Nextafter32(a, float32(math.Inf(1))) - a)
	if a == math.MaxFloat32 {
		spacing = float64(a - math.Nextafter32(a, 0))
	}
	return math.Abs(float64(got)-want) / spacing
}

func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// The error bounds gates.go states.
const (
	maxSigmoidULP = 2.5
	maxTanhULP    = 2
)

// checkGate runs f over gateInputs in slices of several lengths (the
// kernel's whole vectors and its copied tail) and compares each value with
// the float64 function, within bound ulp; it returns the largest error.
func checkGate(t *testing.T, name string, f func(x, y []float32), ref func(float64) float64, bound float64) float64 {
	t.Helper()
	xs := gateInputs()
	y := make([]float32, len(xs))
	for lo, n := 0, 1; lo < len(xs); lo, n = lo+n, n%37+1 {
		hi := min(lo+n, len(xs))
		f(xs[lo:hi], y[lo:hi])
	}
	worst := 0.0
	for i, x := range xs {
		want := ref(float64(x))
		if u := ulps(y[i], want); u > worst {
			worst = u
			if u > bound {
				t.Fatalf("%s(%v) = %v, float64 gives %v: %.2f ulp, want <= %g", name, x, y[i], want, u, bound)
			}
		}
	}
	return worst
}

// goPath is a gate through the Go code the kernels follow.
func goPath(f func(float32) float32) func(x, y []float32) {
	return func(x, y []float32) {
		for i, v := range x {
			y[i] = f(v)
		}
	}
}

func TestGatesAgainstFloat64(t *testing.T) {
	paths := []struct {
		name           string
		sigmoid, tanh_ func(x, y []float32)
	}{{"go", goPath(sigmoidGo), goPath(tanhGo)}}
	if haveKernels {
		paths = append(paths, struct {
			name           string
			sigmoid, tanh_ func(x, y []float32)
		}{"avx2", Sigmoid, Tanh})
	}
	for _, p := range paths {
		s := checkGate(t, p.name+" sigmoid", p.sigmoid, sigmoid64, maxSigmoidULP)
		th := checkGate(t, p.name+" tanh", p.tanh_, math.Tanh, maxTanhULP)
		t.Logf("%s: sigmoid within %.2f ulp, tanh within %.2f ulp of float64", p.name, s, th)
	}
}

func TestGatesSpecialValues(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	cases := []struct {
		x, sigmoid, tanh float32
	}{
		{inf, 1, 1}, {-inf, 0, -1}, {0, 0.5, 0}, {negZero, 0.5, negZero},
		{200, 1, 1}, {-200, 0, -1}, {-104, 0, -1}, {1e-30, 0.5, 1e-30}, {-1e-30, 0.5, -1e-30},
	}
	fs := []struct {
		name string
		f    func(x, y []float32)
		want func(c struct{ x, sigmoid, tanh float32 }) float32
	}{
		{"Sigmoid", Sigmoid, func(c struct{ x, sigmoid, tanh float32 }) float32 { return c.sigmoid }},
		{"Tanh", Tanh, func(c struct{ x, sigmoid, tanh float32 }) float32 { return c.tanh }},
		{"sigmoidGo", goPath(sigmoidGo), func(c struct{ x, sigmoid, tanh float32 }) float32 { return c.sigmoid }},
		{"tanhGo", goPath(tanhGo), func(c struct{ x, sigmoid, tanh float32 }) float32 { return c.tanh }},
	}
	for _, f := range fs {
		for _, c := range cases {
			y := make([]float32, 1)
			f.f([]float32{c.x}, y)
			if want := f.want(c); math.Float32bits(y[0]) != math.Float32bits(want) {
				t.Errorf("%s(%v) = %v, want %v", f.name, c.x, y[0], want)
			}
		}
		y := make([]float32, 9)
		x := []float32{1, nan, 2, 3, 4, 5, 6, 7, -nan}
		f.f(x, y)
		if y[1] == y[1] || y[8] == y[8] {
			t.Errorf("%s(NaN) = %v and %v, want NaN", f.name, y[1], y[8])
		}
	}
	// The smallest sigmoids are subnormal, rounded once.
	x := []float32{-100, -95, -90, -88}
	y := make([]float32, len(x))
	Sigmoid(x, y)
	for i, v := range x {
		if want := float32(sigmoid64(float64(v))); math.Abs(float64(y[i]-want)) > 1e-45 {
			t.Errorf("Sigmoid(%v) = %v, want %v", v, y[i], want)
		}
	}
}

func TestGateGradsSameBitsAsGo(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 64, 133} {
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

func BenchmarkGates(b *testing.B) {
	x := make([]float32, 2048)
	for i := range x {
		x[i] = float32(i%200)/20 - 5
	}
	y := make([]float32, len(x))
	for _, f := range []struct {
		name string
		f    func(x, y []float32)
	}{{"Sigmoid", Sigmoid}, {"Tanh", Tanh}, {"sigmoidGo", goPath(sigmoidGo)}, {"tanhGo", goPath(tanhGo)}} {
		b.Run(fmt.Sprint(f.name, "/", len(x)), func(b *testing.B) {
			for b.Loop() {
				f.f(x, y)
			}
		})
	}
}

// Mul, Sub and AddProduct give the bits of their Go expressions, kernel or not.
func TestMulSubAddProductSameBitsAsGo(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 64, 133} {
		a, b, d := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range a {
			a[i] = float32(math.Sin(float64(i)*1.3)) * 7
			b[i] = float32(math.Cos(float64(i)*0.7)) / 3
			d[i] = float32(math.Sin(float64(i)*0.2)) * 5
		}
		got := make([]float32, n)
		Mul(got, a, b)
		for i := range got {
			if want := a[i] * b[i]; math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: Mul value %d = %v, want %v", n, i, got[i], want)
			}
		}
		Sub(got, a, b)
		for i := range got {
			if want := a[i] - b[i]; math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: Sub value %d = %v, want %v", n, i, got[i], want)
			}
		}
		copy(got, d)
		AddProduct(got, a, b)
		for i := range got {
			want := d[i] + float32(a[i]*b[i])
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: AddProduct value %d = %v, want %v", n, i, got[i], want)
			}
		}
	}
}
