package cpu

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestPermuteMatchesOps: the CPU's permutations give ops.PermuteForward's
// values, on batches of transposes smaller than a block, of sizes no
// multiple of one, large enough to be split between the cores, and on
// permutations that are no transposes.
func TestPermuteMatchesOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, p := range []ops.PermuteParams{
		{Shape: []int{3, 5, 7}, Perm: []int{0, 2, 1}},
		{Shape: []int{2, 33, 65}, Perm: []int{0, 2, 1}},
		{Shape: []int{32, 128, 128}, Perm: []int{0, 2, 1}},
		{Shape: []int{1, 100, 31}, Perm: []int{0, 2, 1}},
		{Shape: []int{4, 37, 2, 5}, Perm: []int{0, 3, 1, 2}},
		{Shape: []int{2, 3, 1}, Perm: []int{0, 2, 1}},
		{Shape: []int{2, 3, 4, 5}, Perm: []int{0, 2, 1, 3}},
		{Shape: []int{2, 3, 4, 5}, Perm: []int{0, 3, 2, 1}},
	} {
		n := 1
		for _, d := range p.Shape {
			n *= d
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		want, got := make([]float32, n), make([]float32, n)
		ops.PermuteForward(p, x, want)
		permute(p, x, got)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%v: value %d is %v, want %v", p, i, got[i], want[i])
				break
			}
		}
		// And back.
		back := make([]float32, n)
		permute(p.Inverse(), got, back)
		if !slices.Equal(back, x) {
			t.Errorf("%v: permuted back, the values differ", p)
		}
	}
}
