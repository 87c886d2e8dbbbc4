//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// TestPermuteKernelsMatchCPU: the GPU machine's permutations, batches of
// transposes (gk_transpose) and others (gk_permute), give package ops'
// values, the same bits, on shapes large enough for grid-stride loops.
func TestPermuteKernelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(29, 29))
	for _, p := range []ops.PermuteParams{
		{Shape: []int{3, 5, 7}, Perm: []int{0, 2, 1}},
		{Shape: []int{32, 128, 128}, Perm: []int{0, 2, 1}},
		{Shape: []int{16, 37, 2, 5}, Perm: []int{0, 3, 1, 2}},
		{Shape: []int{2, 3, 4}, Perm: []int{0, 1, 2}},
		{Shape: []int{64, 30, 20, 8}, Perm: []int{0, 2, 1, 3}},
		{Shape: []int{8, 12, 10, 9}, Perm: []int{0, 3, 2, 1}},
	} {
		n := 1
		for _, d := range p.Shape {
			n *= d
		}
		x := randn(rng, n, 1)
		want := make([]float32, n)
		ops.PermuteForward(p, x, want)
		dx, out := h.upload(x), h.upload(randn(rng, n, 1))
		h.do(func() error { return h.k.permute(h.s, p, dx, out) })
		bitIdentical(t, fmt.Sprintf("permute %v", p), h.download(out, n), want)
	}
}

// TestPermuteGraphTrainsAsOnCPU trains opstest.PermuteGraph (a batch of
// transposes, another permutation, both permuted back in the gradients)
// on /GPU:0 and on /CPU:0 from the same values, 20 steps of Adam: the same
// loss at every step and the same weights at the end, within 1e-5.
func TestPermuteGraphTrainsAsOnCPU(t *testing.T) {
	trainsAsOnCPU(t, func() gpuTestGraph {
		m, err := opstest.BuildPermuteGraph(18, 16)
		if err != nil {
			t.Fatal(err)
		}
		return gpuTestGraph{m.G, m.Learnables, &m.LossValue}
	})
}
