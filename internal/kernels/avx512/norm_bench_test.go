package avx512

import "testing"

// BenchmarkNormKernels times the batch-normalization kernels on one
// BatchNormalization of ResNet-20's first stage at batch 32 (32·32·32
// rows, 16 channels); out is offset from a page boundary, as x is not.
func BenchmarkNormKernels(b *testing.B) {
	rows, cols := 32768, 16
	x, dy, out := make([]float32, rows*cols), make([]float32, rows*cols), make([]float32, rows*cols+1024)[16:]
	for i := range x {
		x[i], dy[i] = float32(i%7)-3, float32(i%5)-2
	}
	f := func() []float64 {
		v := make([]float64, cols)
		for i := range v {
			v[i] = 0.5 + float64(i)
		}
		return v
	}
	s32 := make([]float32, cols)
	k := NormGrad{Mean: f(), Rstd: f(), GammaRstd: f(), SumDy: f(), SumDyXhat: f(), N: float64(rows), BatchStats: true}
	b.Run("sums", func(b *testing.B) {
		for b.Loop() {
			ColumnSums(x, cols, rows, cols, f())
		}
	})
	b.Run("gradsums", func(b *testing.B) {
		for b.Loop() {
			ColumnGradSums(x, dy, cols, rows, cols, k.Mean, k.Rstd, f(), f())
		}
	})
	b.Run("scaleshift", func(b *testing.B) {
		b.SetBytes(int64(8 * rows * cols))
		for b.Loop() {
			ScaleShiftRows(x, out, cols, rows, cols, s32, s32, false)
		}
	})
	b.Run("gradrows", func(b *testing.B) {
		b.SetBytes(int64(12 * rows * cols))
		for b.Loop() {
			NormGradRows(x, dy, out, cols, rows, cols, &k)
		}
	})
	b.Run("mask", func(b *testing.B) {
		b.SetBytes(int64(8 * rows * cols))
		for b.Loop() {
			MaskPositive(x, x, out)
		}
	})
}
