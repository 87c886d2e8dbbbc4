package blas

import (
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// BenchmarkConvolutionShapes times the three products of the second
// convolution of Keras' cifar10_cnn at batch 32 (its forward product, the
// gradient of its patches and the gradient of its kernel) with the AVX2 or
// AVX-512 kernels forced on and with the native BLAS alone: the
// measurement behind kernelRows.
func BenchmarkConvolutionShapes(b *testing.B) {
	if !KernelsAvailable() || !Load().Native() {
		b.Skip("needs the AVX2 or AVX-512 kernels and a native BLAS to compare")
	}
	shapes := []struct {
		name    string
		ta, tb  bool
		m, n, k int
	}{
		{"fwd", false, false, 28800, 32, 288},
		{"dcols", false, true, 28800, 288, 32},
		{"dw", true, false, 288, 32, 28800},
	}
	type sgemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error
	kernels := sgemm(avx512.NewWorkspace(0).Sgemm)
	if useAVX2() {
		kernels = avx2.NewWorkspace(0).Sgemm
	}
	for _, lib := range []struct {
		name string
		m    sgemm
	}{{kernelsName() + " kernels", kernels}, {"native BLAS", Load().Sgemm}} {
		for _, s := range shapes {
			b.Run(fmt.Sprintf("%s/%s", lib.name, s.name), func(b *testing.B) {
				a := make([]float32, s.m*s.k)
				bb := make([]float32, s.k*s.n)
				c := make([]float32, s.m*s.n)
				for i := range a {
					a[i] = float32(i%7) * 0.1
				}
				for i := range bb {
					bb[i] = float32(i%5) * 0.1
				}
				lda, ldb := s.k, s.n
				if s.ta {
					lda = s.m
				}
				if s.tb {
					ldb = s.k
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := lib.m(s.ta, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
