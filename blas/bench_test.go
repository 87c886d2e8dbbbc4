package blas

import (
	"fmt"
	"testing"
)

// stepProducts are the matrix products of one training step of the
// flagship model, Flatten → Dense(3000) → Dense(1000) → Dense(10), at
// batch size b: the forward products, then the backward ones (weight
// gradients folded into the weights with beta 1, as the CPU machine does).
func stepProducts(b int) []struct {
	name           string
	transA, transB bool
	m, n, k        int
	beta           float32
} {
	return []struct {
		name           string
		transA, transB bool
		m, n, k        int
		beta           float32
	}{
		{"fwd1", false, false, b, 3000, 3072, 0},
		{"fwd2", false, false, b, 1000, 3000, 0},
		{"fwd3", false, false, b, 10, 1000, 0},
		{"dW3", true, false, 1000, 10, b, 1},
		{"dH2", false, true, b, 1000, 10, 0},
		{"dW2", true, false, 3000, 1000, b, 1},
		{"dH1", false, true, b, 3000, 1000, 0},
		{"dW1", true, false, 3072, 3000, b, 1},
	}
}

// BenchmarkStepProducts times each product of a flagship training step
// with the default library: their sum is the floor of a step's time.
func BenchmarkStepProducts(bm *testing.B) {
	lib := Default()
	bm.Logf("BLAS: %s", lib)
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
			for i := range a {
				a[i] = float32(i%7) * 1e-3
			}
			for i := range b {
				b[i] = float32(i%5) * 1e-3
			}
			bm.Run(fmt.Sprintf("b%d/%s", batch, p.name), func(bm *testing.B) {
				for bm.Loop() {
					if err := lib.Sgemm(p.transA, p.transB, p.m, p.n, p.k, -0.01, a, ac, b, bc, p.beta, c, p.n); err != nil {
						bm.Fatal(err)
					}
				}
				bm.ReportMetric(2*float64(p.m)*float64(p.n)*float64(p.k)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
