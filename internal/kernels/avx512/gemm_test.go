package avx512_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
	"github.com/gokeras/gokeras/internal/kernels/gemmtest"
)

// The kernels' results must lie within the rounding-error bound of a
// float32 product (see package gemmtest) of the exact product, computed in
// float64 from the same operands, for every shape the kernels split
// differently: partial tiles, several depth blocks, one worker and many.
func TestSgemmWithinRoundingBound(t *testing.T) {
	if !avx512.Available() {
		t.Skip("no AVX-512 on this CPU: the kernels do not run here (package blas tests the fallbacks)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	type shape struct{ m, n, k int }
	shapes := []shape{
		{1, 1, 1}, {8, 48, 16}, {7, 47, 5}, {9, 49, 33}, {32, 100, 70},
		{33, 10, 20}, {40, 130, 600}, {16, 96, 1030}, {64, 12, 3}, {5, 200, 12},
		{300, 50, 40}, {70, 60, 2000},
	}
	worst := 0.0
	for _, s := range shapes {
		for _, mode := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}} {
			for _, ab := range []struct{ alpha, beta float32 }{{1, 0}, {1, 1}, {-0.01, 1}, {0.5, 0.9}} {
				for _, pad := range []int{0, 3} {
					tc := gemmtest.NewCase(rng, mode.ta, mode.tb, s.m, s.n, s.k, ab.alpha, ab.beta, pad)
					c := tc.Fresh()
					ws := avx512.NewWorkspace(0)
					if err := ws.Sgemm(tc.TransA, tc.TransB, tc.M, tc.N, tc.K, tc.Alpha, tc.A, tc.Lda, tc.B, tc.Ldb, tc.Beta, c, tc.Ldc); err != nil {
						t.Fatalf("%v: %v", tc, err)
					}
					w, err := tc.CheckFloat32(c)
					if err != nil {
						t.Fatal(err)
					}
					worst = max(worst, w)
				}
			}
		}
	}
	t.Logf("largest error: %.3g of the rounding-error bound", worst)
}

func TestSgemmRejects(t *testing.T) {
	ws := avx512.NewWorkspace(1)
	s := make([]float32, 10)
	if err := ws.Sgemm(false, false, 4, 4, 4, 1, s, 4, s, 4, 0, s, 4); err == nil && avx512.Available() {
		t.Error("short slices accepted")
	}
	if err := ws.Sgemm(true, true, 1, 1, 1, 1, s, 1, s, 1, 0, s, 1); err == nil {
		t.Error("transA and transB together accepted; it should send the caller to its fallback")
	}
}

// product is one matrix product of a training step.
type product struct {
	name           string
	transA, transB bool
	m, n, k        int
	beta           float32
}

// stepProducts are the products of one training step of the CIFAR-10 MLP
// at batch size b, as the CPU machine computes them: the forward products
// onto the bias, then the backward ones, weight gradients folded into the
// weights (beta 1).
func stepProducts(b int) []product {
	return []product{
		{"fwd1", false, false, b, 3000, 3072, 1},
		{"fwd2", false, false, b, 1000, 3000, 1},
		{"fwd3", false, false, b, 10, 1000, 1},
		{"dW3", true, false, 1000, 10, b, 1},
		{"dH2", false, true, b, 1000, 10, 0},
		{"dW2", true, false, 3000, 1000, b, 1},
		{"dH1", false, true, b, 3000, 1000, 0},
		{"dW1", true, false, 3072, 3000, b, 1},
	}
}

// BenchmarkStepProducts times each product of a CIFAR-10 MLP training step
// on the kernels and, for comparison, on the library blas.Load finds
// (OpenBLAS where it is installed): the sum over a step's products is the
// floor of its time. The kernels run first: OpenBLAS's threads spin for a
// while after each of its products and would slow whatever runs next.
func BenchmarkStepProducts(bm *testing.B) {
	ws := avx512.NewWorkspace(0)
	lib := blas.Load()
	bm.Logf("blas: %s", lib)
	for _, impl := range []struct {
		name  string
		sgemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error
	}{{"kernels", ws.Sgemm}, {"blas", lib.Sgemm}} {
		for _, batch := range []int{32, 256} {
			for _, p := range stepProducts(batch) {
				ar, ac := p.m, p.k
				if p.transA {
					ar, ac = p.k, p.m
				}
				br, bc := p.k, p.n
				if p.transB {
					br, bc = p.n, p.k
				}
				a := make([]float32, ar*ac)
				b := make([]float32, br*bc)
				c := make([]float32, p.m*p.n)
				bm.Run(fmt.Sprintf("%s/b%d/%s", impl.name, batch, p.name), func(bm *testing.B) {
					if impl.name == "kernels" && !avx512.Available() {
						bm.Skip("no AVX-512")
					}
					for bm.Loop() {
						if err := impl.sgemm(p.transA, p.transB, p.m, p.n, p.k, -0.01, a, ac, b, bc, p.beta, c, p.n); err != nil {
							bm.Fatal(err)
						}
					}
					bm.ReportMetric(2*float64(p.m)*float64(p.n)*float64(p.k)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// The tall products (avx512.Tall: a convolution's, many rows of examples
// against a few dozen filters) within the same bound, for every tile
// (widths 16 to 64 and beyond), partial panels of columns, a last group of
// rows that does not fill its tile, one and several parts of the depth,
// padded strides, beta 0 over a c of NaN, one worker and two.
func TestTallWithinRoundingBound(t *testing.T) {
	if !avx512.Available() {
		t.Skip("no AVX-512 on this CPU: the kernels do not run here (package blas tests the fallbacks)")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	tests := []struct {
		ta, tb  bool
		m, n, k int
	}{
		{false, false, 1024, 16, 27}, {false, false, 1031, 16, 144}, {false, false, 1025, 32, 17},
		{false, false, 1027, 48, 5}, {false, false, 1029, 64, 33}, {false, false, 1033, 7, 9},
		{false, false, 1030, 20, 3}, {false, false, 1100, 100, 70}, {false, false, 1035, 61, 1},
		{false, true, 1024, 144, 16}, {false, true, 1031, 288, 32}, {false, true, 1037, 576, 64},
		{false, true, 1029, 27, 16}, {false, true, 1026, 33, 5}, {false, true, 1050, 130, 3},
		{true, false, 27, 16, 1031}, {true, false, 144, 16, 4097}, {true, false, 16, 32, 1024},
		{true, false, 60, 64, 9000}, {true, false, 25, 20, 1500}, {true, false, 50, 49, 4100},
		{true, false, 6, 64, 1030}, {true, false, 12, 61, 2000}, {true, false, 30, 3, 1200},
	}
	worst := 0.0
	for _, s := range tests {
		if !avx512.Tall(s.ta, s.tb, s.m, s.n, s.k) {
			t.Fatalf("%+v is not a tall product", s)
		}
		for _, ab := range []struct{ alpha, beta float32 }{{1, 0}, {-0.01, 1}, {0.5, 0.9}} {
			for _, pad := range []int{0, 3} {
				for _, workers := range []int{1, 2} {
					tc := gemmtest.NewCase(rng, s.ta, s.tb, s.m, s.n, s.k, ab.alpha, ab.beta, pad)
					c := tc.Fresh()
					// On two workers, every c that can be (beta 0,
					// 64-byte aligned, whole panels) is streamed past the
					// caches.
					stream := 1 << 62
					if workers == 2 {
						stream = 0
					}
					old := avx512.SetTallStreamBytes(stream)
					err := avx512.NewWorkspace(workers).Sgemm(tc.TransA, tc.TransB, tc.M, tc.N, tc.K, tc.Alpha, tc.A, tc.Lda, tc.B, tc.Ldb, tc.Beta, c, tc.Ldc)
					avx512.SetTallStreamBytes(old)
					if err != nil {
						t.Fatalf("%v: %v", tc, err)
					}
					w, err := tc.CheckFloat32(c)
					if err != nil {
						t.Fatalf("workers %d: %v", workers, err)
					}
					worst = max(worst, w)
				}
			}
		}
	}
	t.Logf("largest error: %.3g of the rounding-error bound", worst)
}

// A tall aᵀ·b gives the same bits on any number of workers: its depth is
// reduced in fixed parts summed in order.
func TestTallTNBitsIndependentOfWorkers(t *testing.T) {
	if !avx512.Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, s := range []struct{ m, n, k int }{{144, 16, 20000}, {27, 32, 9000}, {288, 64, 5000}} {
		tc := gemmtest.NewCase(rng, true, false, s.m, s.n, s.k, 1, 0, 0)
		var first []float32
		for _, workers := range []int{1, 2, 3, 8} {
			c := tc.Fresh()
			if err := avx512.NewWorkspace(workers).Sgemm(true, false, s.m, s.n, s.k, 1, tc.A, tc.Lda, tc.B, tc.Ldb, 0, c, tc.Ldc); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = c
				continue
			}
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%+v: %d workers give c[%d] = %v, one worker %v", s, workers, i, c[i], first[i])
				}
			}
		}
	}
}
