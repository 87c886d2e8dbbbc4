package avx512

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// laneSum is a row's sum as the layer-normalization kernels add it: term
// c into lane c mod 8 in order, the lanes added ((l0+l4)+(l2+l6)) +
// ((l1+l5)+(l3+l7)).
func laneSum(n int, term func(c int) float64) float64 {
	var l [8]float64
	for c := 0; c < n; c++ {
		l[c%8] += term(c)
	}
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// TestLayerNormKernels checks the three layer-normalization kernels, the
// AVX-512 and the AVX2 code where the CPU runs them, against layernorm.go's
// definition, written out per value, bit for bit:
// the gamma gradient's float64 sums (where any other order of its
// additions shows) starting from a value, the outputs in float32; one row
// and odd and even numbers of rows (the kernels take two at a time), rows
// of 8 to 136 values, values of widely spread magnitudes.
func TestLayerNormKernels(t *testing.T) {
	defer func(v bool) { lnAVX2 = v }(lnAVX2)
	ran := false
	for _, avx2 := range []bool{false, true} {
		if avx2 && !lnHaveAVX2 || !avx2 && !haveKernels {
			continue
		}
		lnAVX2, ran = avx2, true
		checkLayerNormKernels(t, avx2)
	}
	if !ran {
		t.Skip("neither AVX-512 nor AVX2 on this CPU")
	}
}

// checkLayerNormKernels is TestLayerNormKernels for the AVX-512 kernel or,
// with avx2, the AVX2 one.
func checkLayerNormKernels(t *testing.T, avx2 bool) {
	rng := rand.New(rand.NewPCG(30, 3))
	for _, sh := range [][2]int{{1, 8}, {2, 16}, {3, 24}, {5, 136}, {64, 128}, {33, 40}} {
		rows, cols := sh[0], sh[1]
		t.Run(fmt.Sprintf("avx2=%t/%dx%d", avx2, rows, cols), func(t *testing.T) {
			const eps = 1e-3
			x, dy := make([]float32, rows*cols), make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*7))
				dy[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*7))
			}
			gamma, beta := make([]float32, cols), make([]float32, cols)
			start := make([]float64, cols)
			for c := range gamma {
				gamma[c], beta[c], start[c] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), rng.NormFloat64()*100
			}
			n := float64(cols)
			wantY, wantDx := make([]float32, rows*cols), make([]float32, rows*cols)
			wantSum := append([]float64(nil), start...)
			for r := 0; r < rows; r++ {
				xv := func(c int) float64 { return float64(x[r*cols+c]) }
				mean := laneSum(cols, xv) / n
				rstd := 1 / math.Sqrt(laneSum(cols, func(c int) float64 {
					d := xv(c) - mean
					return float64(d * d)
				})/n+eps)
				g := func(c int) float64 { return float64(float64(gamma[c]) * float64(dy[r*cols+c])) }
				mg := laneSum(cols, g) / n
				mgx := laneSum(cols, func(c int) float64 { return float64(g(c) * (xv(c) - mean) * rstd) }) / n
				for c := 0; c < cols; c++ {
					wantY[r*cols+c] = float32(float64(float64(gamma[c])*(xv(c)-mean)*rstd) + float64(beta[c]))
					xhat := (xv(c) - mean) * rstd
					wantDx[r*cols+c] = float32(rstd * (g(c) - (mg + float64(xhat*mgx))))
					wantSum[c] += float64(float64(dy[r*cols+c]) * (xv(c) - mean) * rstd)
				}
			}
			y, dx := make([]float32, rows*cols), make([]float32, rows*cols)
			sum := append([]float64(nil), start...)
			if !LayerNormRows(x, gamma, beta, y, rows, cols, eps) || !LayerNormGradRows(x, gamma, dy, dx, rows, cols, eps) ||
				!LayerNormGammaGradRows(x, dy, rows, cols, eps, sum) {
				t.Fatal("a kernel did not run")
			}
			for i := range wantY {
				if math.Float32bits(y[i]) != math.Float32bits(wantY[i]) {
					t.Fatalf("LayerNormRows: value %d is %v, want %v", i, y[i], wantY[i])
				}
				if math.Float32bits(dx[i]) != math.Float32bits(wantDx[i]) {
					t.Fatalf("LayerNormGradRows: value %d is %v, want %v", i, dx[i], wantDx[i])
				}
			}
			for c := range wantSum {
				if math.Float64bits(sum[c]) != math.Float64bits(wantSum[c]) {
					t.Fatalf("LayerNormGammaGradRows: column %d is %v, want %v", c, sum[c], wantSum[c])
				}
			}
		})
	}
}

// TestLayerNormKernelsDecline checks that the kernels leave shapes they
// do not take to the caller: rows not a multiple of 8 values, slices too
// short.
func TestLayerNormKernelsDecline(t *testing.T) {
	x, out := make([]float32, 64), make([]float32, 64)
	gamma := make([]float32, 16)
	sum := make([]float64, 16)
	for _, tc := range []struct {
		name string
		ran  bool
	}{
		{"12 columns", LayerNormRows(x, gamma, gamma, out, 4, 12, 1e-3)},
		{"short x", LayerNormGradRows(x[:63], gamma, x, out, 4, 16, 1e-3)},
		{"short gamma", LayerNormRows(x, gamma[:15], gamma, out, 4, 16, 1e-3)},
		{"short sum", LayerNormGammaGradRows(x, x, 4, 16, 1e-3, sum[:8])},
		{"no rows", LayerNormRows(x, gamma, gamma, out, 0, 16, 1e-3)},
	} {
		if tc.ran {
			t.Errorf("%s: the kernel ran", tc.name)
		}
	}
}

// BenchmarkLayerNormKernels times the three kernels, AVX-512 and AVX2
// where the CPU runs them, on one goroutine over the rows of issue 30's
// transformer benchmark (4096 rows of 128 values).
func BenchmarkLayerNormKernels(b *testing.B) {
	defer func(v bool) { lnAVX2 = v }(lnAVX2)
	const rows, cols, eps = 4096, 128, 1e-3
	rng := rand.New(rand.NewPCG(1, 2))
	x, dy, out := make([]float32, rows*cols), make([]float32, rows*cols), make([]float32, rows*cols)
	for i := range x {
		x[i], dy[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	gamma, beta, sum := make([]float32, cols), make([]float32, cols), make([]float64, cols)
	for c := range gamma {
		gamma[c], beta[c] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for _, avx2 := range []bool{false, true} {
		if avx2 && !lnHaveAVX2 || !avx2 && !haveKernels {
			continue
		}
		lnAVX2 = avx2
		isa := map[bool]string{false: "avx512", true: "avx2"}[avx2]
		b.Run("LayerNorm/"+isa, func(b *testing.B) {
			for b.Loop() {
				LayerNormRows(x, gamma, beta, out, rows, cols, eps)
			}
		})
		b.Run("LayerNormGrad/"+isa, func(b *testing.B) {
			for b.Loop() {
				LayerNormGradRows(x, gamma, dy, out, rows, cols, eps)
			}
		})
		b.Run("LayerNormGammaGrad/"+isa, func(b *testing.B) {
			for b.Loop() {
				LayerNormGammaGradRows(x, dy, rows, cols, eps, sum)
			}
		})
	}
}
