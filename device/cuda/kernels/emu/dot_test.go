//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// dotParams are products of every pair of transposes, and the rank-2
// Dot's row by column.
var dotParams = []ops.BatchMatMulParams{
	{Batch: 3, M: 1, K: 7, N: 1},
	{Batch: 2, M: 3, K: 4, N: 5},
	{Batch: 2, M: 3, K: 4, N: 5, TransA: true},
	{Batch: 2, M: 3, K: 4, N: 5, TransB: true},
	{Batch: 4, M: 2, K: 6, N: 3, TransA: true, TransB: true},
}

// TestDotKernels: gk_batch_matmul, gk_l2_normalize and
// gk_l2_normalize_grad give ops' host kernels' bits under every launch,
// runs below the norm's floor (a zero run, a tiny one) included.
func TestDotKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 35))
	run := func(l Launch, name string, bufs [][]float32, args ...int) {
		t.Helper()
		pin(t, bufs...)
		var a []uint64
		for _, b := range bufs {
			a = append(a, ptr(b))
		}
		for _, v := range args {
			a = append(a, uint64(v))
		}
		if err := LaunchKernel(name, l.Grid, l.Block, 0, a); err != nil {
			t.Fatal(err)
		}
	}
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	for _, p := range dotParams {
		a, b := randn(rng, p.Batch*p.M*p.K, 1), randn(rng, p.Batch*p.K*p.N, 1)
		want := make([]float32, p.Batch*p.M*p.N)
		ops.BatchMatMulForward(p, a, b, want)
		for _, l := range launches {
			out := randn(rng, len(want), 1)
			run(l, "gk_batch_matmul", [][]float32{a, b, out}, p.Batch, p.M, p.K, p.N, b2i(p.TransA), b2i(p.TransB))
			sameBits(t, fmt.Sprintf("batch matmul %v, launch %v", p, l), out, want)
		}
	}
	for _, p := range []ops.L2NormParams{
		{Shape: []int{3, 5}, Axis: 1},
		{Shape: []int{2, 4, 3}, Axis: 1},
		{Shape: []int{2, 4, 3}, Axis: 2},
	} {
		n := p.Outer() * p.Len() * p.Inner()
		x, dy := randn(rng, n, 1), randn(rng, n, 1)
		// The first run zero, the second tiny: both below the floor.
		for t := range p.Len() {
			x[t*p.Inner()] = 0
			x[p.Len()*p.Inner()+t*p.Inner()] = 1e-8
		}
		want, wantDx := make([]float32, n), make([]float32, n)
		ops.L2NormalizeForward(p, x, want)
		ops.L2NormalizeBackward(p, x, dy, wantDx)
		for _, l := range launches {
			out := randn(rng, n, 1)
			run(l, "gk_l2_normalize", [][]float32{x, out}, p.Outer(), p.Len(), p.Inner())
			sameBits(t, fmt.Sprintf("l2 normalize %v, launch %v", p, l), out, want)
			dx := randn(rng, n, 1)
			run(l, "gk_l2_normalize_grad", [][]float32{x, dy, dx}, p.Outer(), p.Len(), p.Inner())
			sameBits(t, fmt.Sprintf("l2 normalize's gradient %v, launch %v", p, l), dx, wantDx)
		}
	}
}
