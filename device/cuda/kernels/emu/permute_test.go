//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestPermuteKernels: gk_transpose (a batch of transposes through shared
// memory) and gk_permute (any permutation) give ops.PermuteForward's bits
// under every launch, on matrices smaller than a tile and of sizes no
// multiple of one; gk_transpose has no race between a block's threads
// under the race mode's schedules.
func TestPermuteKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	size := func(s []int) int {
		n := 1
		for _, d := range s {
			n *= d
		}
		return n
	}
	transposes := []ops.PermuteParams{
		{Shape: []int{2, 3, 5}, Perm: []int{0, 2, 1}},
		{Shape: []int{2, 33, 70}, Perm: []int{0, 2, 1}},
		{Shape: []int{1, 64, 32}, Perm: []int{0, 2, 1}},
		{Shape: []int{3, 5, 37, 2}, Perm: []int{0, 2, 3, 1}},
	}
	for _, p := range transposes {
		batch, rows, cols, ok := p.Transposes()
		if !ok {
			t.Fatalf("%v is no batch of transposes", p)
		}
		x := randn(rng, size(p.Shape), 1)
		want := make([]float32, len(x))
		ops.PermuteForward(p, x, want)
		for _, l := range launches {
			out := randn(rng, len(x), 1)
			pin(t, x, out)
			if err := LaunchKernel("gk_transpose", l.Grid, l.Block, 32*33*4, []uint64{ptr(x), ptr(out), uint64(batch), uint64(rows), uint64(cols)}); err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("transpose %v, launch %v", p, l), out, want)
		}
	}
	t.Run("race", func(t *testing.T) {
		x := randn(rng, 2*33*40, 1)
		want := make([]float32, len(x))
		ops.PermuteForward(ops.PermuteParams{Shape: []int{2, 33, 40}, Perm: []int{0, 2, 1}}, x, want)
		for _, seed := range raceSeeds[:2] {
			setRace(t, seed)
			out := make([]float32, len(x))
			pin(t, x, out)
			if err := LaunchKernel("gk_transpose", 3, 64, 32*33*4, []uint64{ptr(x), ptr(out), 2, 33, 40}); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			sameBits(t, fmt.Sprintf("transpose under race seed %d", seed), out, want)
		}
	})
	for _, p := range append(transposes,
		ops.PermuteParams{Shape: []int{2, 3, 4, 5}, Perm: []int{0, 2, 1, 3}},
		ops.PermuteParams{Shape: []int{2, 3, 4, 5}, Perm: []int{0, 3, 2, 1}},
		ops.PermuteParams{Shape: []int{2, 2, 3, 2, 3, 2}, Perm: []int{0, 5, 3, 1, 4, 2}},
	) {
		// y's sizes and x's strides, the last axis last, in six.
		dims, perm := p.Merged()
		size6, stride6 := []int{1, 1, 1, 1, 1, 1}, make([]int, 6)
		for i, a := range perm {
			st := 1
			for _, d := range dims[a+1:] {
				st *= d
			}
			size6[6-len(perm)+i], stride6[6-len(perm)+i] = dims[a], st
		}
		x := randn(rng, size(p.Shape), 1)
		want := make([]float32, len(x))
		ops.PermuteForward(p, x, want)
		for _, l := range launches {
			out := randn(rng, len(x), 1)
			pin(t, x, out)
			args := []uint64{ptr(x), ptr(out), uint64(len(x))}
			for _, v := range append(size6, stride6...) {
				args = append(args, uint64(v))
			}
			if err := LaunchKernel("gk_permute", l.Grid, l.Block, 0, args); err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("permute %v, launch %v", p, l), out, want)
		}
	}
}
