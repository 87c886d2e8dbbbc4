//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/ops"
)

// launchBinary runs gk_binary (wrt < 0) or gk_binary_grad (input wrt) by
// name, with the arguments device/cuda gives them (launch.BroadcastArgs).
func launchBinary(t *testing.T, l Launch, p ops.BinaryParams, wrt int, a, b, dy, out []float32) {
	t.Helper()
	bc, err := launch.BroadcastArgs(p.Layout())
	if err != nil {
		t.Fatal(err)
	}
	pin(t, a, b, out)
	args := []uint64{uint64(p.Kind)}
	name := "gk_binary"
	if wrt >= 0 {
		pin(t, dy)
		name = "gk_binary_grad"
		args = append(args, uint64(wrt), ptr(a), ptr(b), ptr(dy))
	} else {
		args = append(args, ptr(a), ptr(b))
	}
	args = append(args, ptr(out), uint64(len(out)))
	for _, v := range bc {
		args = append(args, uint64(uint32(int32(v))))
	}
	if err := LaunchKernel(name, l.Grid, l.Block, 0, args); err != nil {
		t.Fatal(err)
	}
}

// TestBinaryKernels: gk_binary and gk_binary_grad, every kind, shapes
// broadcast on either side, NaNs and ties, under every launch shape,
// give ops' host kernels' bits.
func TestBinaryKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	shapes := [][2][]int{
		{{3, 4}, {3, 4}},
		{{3, 1}, {3, 4}},
		{{3, 4}, {1, 4}},
		{{1, 1}, {3, 4}},
		{{2, 1, 3, 2}, {2, 4, 1, 2}},
		{{2, 5, 1}, {2, 1, 1}},
	}
	size := func(s []int) int {
		n := 1
		for _, d := range s {
			n *= d
		}
		return n
	}
	for _, sh := range shapes {
		for _, kind := range []ops.BinaryKind{ops.BinaryAdd, ops.BinarySubtract, ops.BinaryMultiply, ops.BinaryMaximum, ops.BinaryMinimum, ops.BinaryDivide} {
			p := ops.BinaryParams{Kind: kind, A: sh[0], B: sh[1]}
			what := fmt.Sprintf("%v of %v and %v", kind, p.A, p.B)
			a, b := randn(rng, size(p.A), 1), randn(rng, size(p.B), 1)
			b[0] = a[0] // a tie
			if len(a) > 2 {
				a[2] = float32(math.NaN())
			}
			n := size(p.Out())
			dy := randn(rng, n, 1)
			want := make([]float32, n)
			ops.BinaryForward(p, a, b, want)
			for _, l := range launches {
				got := make([]float32, n)
				launchBinary(t, l, p, -1, a, b, nil, got)
				sameBits(t, fmt.Sprintf("%s, launch %v", what, l), got, want)
				for wrt, m := range []int{len(a), len(b)} {
					p.Wrt = wrt
					want := make([]float32, m)
					ops.BinaryBackward(p, a, b, dy, want)
					got := make([]float32, m)
					launchBinary(t, l, p, wrt, a, b, dy, got)
					sameBits(t, fmt.Sprintf("%s: gradient of input %d, launch %v", what, wrt, l), got, want)
				}
				p.Wrt = 0
			}
		}
	}
}

// TestScaleToKernel: gk_scale_to multiplies or divides as ops does.
func TestScaleToKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 32))
	x := randn(rng, 1001, 5)
	for _, p := range []ops.ScaleParams{{Factor: 0.25}, {Factor: -3}, {Factor: 3, Divide: true}, {Factor: 1.0 / 255, Offset: -1}, {Factor: 3, Divide: true, Offset: 0.5}} {
		want := make([]float32, len(x))
		ops.ScaleForward(p, x, want)
		for _, l := range launches {
			out := make([]float32, len(x))
			pin(t, x, out)
			if err := LaunchKernel("gk_scale_to", l.Grid, l.Block, 0, []uint64{ptr(x), ptr(out), uint64(len(x)), f32(float32(p.Factor)), boolSlot(p.Divide), f32(float32(p.Offset))}); err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("scale %v, launch %v", p, l), out, want)
		}
	}
}

func boolSlot(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestCopyColsKernel: gk_copy_cols joins blocks as ops.ConcatForward does
// and takes them back out as ops.ConcatBackward does, under every launch.
func TestCopyColsKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 33))
	p := ops.ConcatParams{Axis: 2, Shapes: [][]int{{3, 2, 1}, {3, 2, 4}, {3, 2, 2}}}
	ins := make([][]float32, len(p.Shapes))
	for i := range ins {
		ins[i] = randn(rng, p.Rows()*p.Cols(i), 1)
	}
	want := make([]float32, p.Rows()*p.OutCols())
	ops.ConcatForward(p, ins, want)
	copyCols := func(l Launch, src []float32, srcLd, srcOff int, dst []float32, dstLd, dstOff, rows, cols int) {
		t.Helper()
		pin(t, src, dst)
		args := []uint64{ptr(src), uint64(srcLd), uint64(srcOff), ptr(dst), uint64(dstLd), uint64(dstOff), uint64(rows), uint64(cols)}
		if err := LaunchKernel("gk_copy_cols", l.Grid, l.Block, 0, args); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range launches {
		out := make([]float32, len(want))
		for i, in := range ins {
			copyCols(l, in, p.Cols(i), 0, out, p.OutCols(), p.Offset(i), p.Rows(), p.Cols(i))
		}
		sameBits(t, fmt.Sprintf("concatenate, launch %v", l), out, want)
		for i := range ins {
			p.Piece = i
			wantPiece := make([]float32, len(ins[i]))
			ops.ConcatBackward(p, want, wantPiece)
			piece := make([]float32, len(ins[i]))
			copyCols(l, out, p.OutCols(), p.Offset(i), piece, p.Cols(i), 0, p.Rows(), p.Cols(i))
			sameBits(t, fmt.Sprintf("slice %d, launch %v", i, l), piece, wantPiece)
		}
	}
}
