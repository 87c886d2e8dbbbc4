package avx2_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/gemmtest"
)

// The kernels' results must lie within the rounding-error bound of a
// float32 product (see package gemmtest) of the exact product, computed in
// float64 from the same operands, for every shape the kernels split
// differently: partial tiles in rows and columns, several depth blocks,
// one worker and many, padded strides, beta 0 over a c of NaN.
func TestSgemmWithinRoundingBound(t *testing.T) {
	if !avx2.Available() {
		t.Skip("no AVX2+FMA on this CPU: the kernels do not run here (package blas tests the fallbacks)")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	type shape struct{ m, n, k int }
	shapes := []shape{
		{1, 1, 1}, {3, 7, 1}, {4, 24, 16}, {6, 16, 5}, {7, 31, 33},
		{31, 33, 47}, {33, 47, 49}, {49, 49, 7}, {32, 100, 70}, {33, 10, 20},
		{40, 130, 600}, {16, 96, 1030}, {64, 12, 3}, {5, 200, 12}, {100, 3, 31},
		{300, 50, 40}, {70, 60, 2000}, {1, 3000, 3}, {3000, 1, 7},
	}
	if testing.Short() {
		shapes = shapes[:12]
	}
	worst := 0.0
	for _, s := range shapes {
		for _, mode := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}} {
			for _, ab := range []struct{ alpha, beta float32 }{{1, 0}, {1, 1}, {-0.01, 1}, {0.5, 0.9}} {
				for _, pad := range []int{0, 3} {
					for _, workers := range []int{1, 0} {
						tc := gemmtest.NewCase(rng, mode.ta, mode.tb, s.m, s.n, s.k, ab.alpha, ab.beta, pad)
						c := tc.Fresh()
						ws := avx2.NewWorkspace(workers)
						if err := ws.Sgemm(tc.TransA, tc.TransB, tc.M, tc.N, tc.K, tc.Alpha, tc.A, tc.Lda, tc.B, tc.Ldb, tc.Beta, c, tc.Ldc); err != nil {
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
	}
	t.Logf("largest error: %.3g of the rounding-error bound", worst)
}

// The tall products (avx2.Tall: a convolution's, many rows of examples
// against a few dozen filters) within the same bound: partial tiles in
// rows and columns, two depth blocks, c read in place or packed.
func TestTallWithinRoundingBound(t *testing.T) {
	if !avx2.Available() {
		t.Skip("no AVX2+FMA on this CPU: the kernels do not run here (package blas tests the fallbacks)")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	tests := []struct {
		ta, tb  bool
		m, n, k int
	}{
		{false, false, 2053, 33, 45}, {false, true, 2053, 33, 45},
		{false, false, 2100, 16, 400}, {false, true, 2049, 5, 3},
		{true, false, 20, 40, 2300}, {true, false, 7, 5, 4200}, {true, false, 12, 32, 2049},
	}
	for _, s := range tests {
		if !avx2.Tall(s.ta, s.tb, s.m, s.n, s.k) {
			t.Fatalf("%+v is not a tall product", s)
		}
		for _, ab := range []struct{ alpha, beta float32 }{{1, 0}, {-0.01, 1}, {0.5, 0.9}} {
			for _, pad := range []int{0, 3} {
				for _, workers := range []int{1, 0} {
					tc := gemmtest.NewCase(rng, s.ta, s.tb, s.m, s.n, s.k, ab.alpha, ab.beta, pad)
					c := tc.Fresh()
					ws := avx2.NewWorkspace(workers)
					if err := ws.Sgemm(tc.TransA, tc.TransB, tc.M, tc.N, tc.K, tc.Alpha, tc.A, tc.Lda, tc.B, tc.Ldb, tc.Beta, c, tc.Ldc); err != nil {
						t.Fatalf("%v: %v", tc, err)
					}
					if _, err := tc.CheckFloat32(c); err != nil {
						t.Fatalf("workers %d: %v", workers, err)
					}
				}
			}
		}
	}
}

// Each product of a CIFAR-10 MLP training step, at batch 32 and at a few
// odd batches, with the SGD fold (alpha = -lr, beta = 1) for the weight
// gradients, on two workers.
func TestTrainingShapes(t *testing.T) {
	if !avx2.Available() {
		t.Skip("no AVX2+FMA on this CPU")
	}
	if testing.Short() {
		t.Skip("full-size products take a few seconds; skipped with -short")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	ws := avx2.NewWorkspace(2)
	for _, batch := range []int{32, 7} {
		for _, p := range stepProducts(batch) {
			alpha := float32(1)
			if p.transA {
				alpha = -0.01
			}
			tc := gemmtest.NewCase(rng, p.transA, p.transB, p.m, p.n, p.k, alpha, p.beta, 0)
			c := tc.Fresh()
			if err := ws.Sgemm(tc.TransA, tc.TransB, tc.M, tc.N, tc.K, tc.Alpha, tc.A, tc.Lda, tc.B, tc.Ldb, tc.Beta, c, tc.Ldc); err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			if _, err := tc.CheckFloat32(c); err != nil {
				t.Fatalf("batch %d, %s: %v", batch, p.name, err)
			}
		}
	}
}

func TestSgemmRejects(t *testing.T) {
	ws := avx2.NewWorkspace(1)
	s := make([]float32, 10)
	if err := ws.Sgemm(false, false, 4, 4, 4, 1, s, 4, s, 4, 0, s, 4); err == nil && avx2.Available() {
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
// on the kernels and, for comparison, on the library blas.Load finds. The
// kernels run first: OpenBLAS's threads spin for a while after each of its
// products and would slow whatever runs next.
func BenchmarkStepProducts(bm *testing.B) {
	ws := avx2.NewWorkspace(0)
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
					if impl.name == "kernels" && !avx2.Available() {
						bm.Skip("no AVX2+FMA")
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

// A tall aᵀ·b (a convolution's kernel gradient) gives the same bits on
// any number of workers: the depth's parts are fixed by the shape alone.
func TestTallTNSameBitsOnAnyWorkers(t *testing.T) {
	if !avx2.Available() {
		t.Skip("no AVX2+FMA on this CPU")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	tc := gemmtest.NewCase(rng, true, false, 27, 32, 9000, -0.01, 1, 0)
	var first []float32
	for _, workers := range []int{1, 2, 3, 5} {
		c := tc.Fresh()
		if err := avx2.NewWorkspace(workers).Sgemm(tc.TransA, tc.TransB, tc.M, tc.N, tc.K, tc.Alpha, tc.A, tc.Lda, tc.B, tc.Ldb, tc.Beta, c, tc.Ldc); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = c
			continue
		}
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
				t.Fatalf("workers %d: c[%d] = %v, with one worker %v", workers, i, c[i], first[i])
			}
		}
	}
}
