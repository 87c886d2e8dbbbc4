//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// TestDotKernelsMatchCPU: the GPU machine's batched products (every pair
// of transposes), L2 normalizations and their gradients give package ops'
// values, the same bits, on shapes large enough for grid-stride loops.
func TestDotKernelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(24, 24))
	for _, p := range []ops.BatchMatMulParams{
		{Batch: 300, M: 1, K: 33, N: 1},
		{Batch: 5, M: 7, K: 9, N: 6, TransA: true},
		{Batch: 64, M: 40, K: 24, N: 30, TransB: true},
		{Batch: 32, M: 50, K: 16, N: 45},
		{Batch: 3, M: 8, K: 5, N: 4, TransA: true, TransB: true},
	} {
		a, b := randn(rng, p.Batch*p.M*p.K, 1), randn(rng, p.Batch*p.K*p.N, 1)
		want := make([]float32, p.Batch*p.M*p.N)
		ops.BatchMatMulForward(p, a, b, want)
		da, db, out := h.upload(a), h.upload(b), h.zeros(len(want))
		h.do(func() error { return h.k.batchMatMul(h.s, p, da, db, out) })
		bitIdentical(t, fmt.Sprintf("batch matmul %v", p), h.download(out, len(want)), want)
	}
	for _, p := range []ops.L2NormParams{
		{Shape: []int{512, 64}, Axis: 1},
		{Shape: []int{32, 40, 50}, Axis: 1},
		{Shape: []int{3, 4, 5}, Axis: 2},
	} {
		n := p.Outer() * p.Len() * p.Inner()
		x, dy := randn(rng, n, 1), randn(rng, n, 1)
		for i := range p.Len() { // a zero run: the norm's floor
			x[i*p.Inner()] = 0
		}
		want, wantDx := make([]float32, n), make([]float32, n)
		ops.L2NormalizeForward(p, x, want)
		ops.L2NormalizeBackward(p, x, dy, wantDx)
		dx, ddy, out := h.upload(x), h.upload(dy), h.zeros(n)
		h.do(func() error { return h.k.l2Normalize(h.s, p, dx, 0, out) })
		bitIdentical(t, fmt.Sprintf("l2 normalize %v", p), h.download(out, n), want)
		out = h.zeros(n)
		h.do(func() error { return h.k.l2Normalize(h.s, p, dx, ddy, out) })
		bitIdentical(t, fmt.Sprintf("l2 normalize's gradient %v", p), h.download(out, n), wantDx)
	}
}

// TestDotGraphTrainsAsOnCPU trains opstest.DotGraph (BatchDot along every
// pair of transposes, L2Normalize, forward and backward) on /GPU:0 and on
// /CPU:0 from the same values, 20 steps of Adam: the same loss at every
// step and the same weights at the end, within 1e-5.
func TestDotGraphTrainsAsOnCPU(t *testing.T) {
	trainsAsOnCPU(t, func() gpuTestGraph {
		m, err := opstest.BuildDotGraph(19, 16)
		if err != nil {
			t.Fatal(err)
		}
		return gpuTestGraph{m.G, m.Learnables, &m.LossValue}
	})
}
