//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestResizeKernels: gk_pad2d, gk_crop2d, gk_upsample2d and
// gk_upsample2d_grad and gk_resize give ops' host kernels' bits under
// every launch.
func TestResizeKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 34))
	size := func(s []int) int { return s[0] * s[1] * s[2] * s[3] }
	run := func(l Launch, name string, x, out []float32, args ...int) {
		t.Helper()
		pin(t, x, out)
		a := []uint64{ptr(x), ptr(out)}
		for _, v := range args {
			a = append(a, uint64(v))
		}
		if err := LaunchKernel(name, l.Grid, l.Block, 0, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []ops.Pad2DParams{
		{Shape: [4]int{2, 3, 4, 2}, Top: 1, Bottom: 2, Left: 0, Right: 3},
		{Shape: [4]int{1, 2, 2, 3}, Top: 0, Bottom: 0, Left: 1, Right: 0},
	} {
		small := randn(rng, size(p.Small()), 1)
		wantLarge := make([]float32, size(p.Large()))
		ops.Pad2DForward(p, small, wantLarge)
		large := randn(rng, size(p.Large()), 1)
		wantSmall := make([]float32, len(small))
		ops.Crop2DForward(p, large, wantSmall)
		args := []int{p.Shape[0], p.Shape[1], p.Shape[2], p.Shape[3], p.Top, p.Bottom, p.Left, p.Right}
		for _, l := range launches {
			out := randn(rng, len(wantLarge), 1) // every value written, zeros too
			run(l, "gk_pad2d", small, out, args...)
			sameBits(t, fmt.Sprintf("pad %v, launch %v", p, l), out, wantLarge)
			out = make([]float32, len(wantSmall))
			run(l, "gk_crop2d", large, out, args...)
			sameBits(t, fmt.Sprintf("crop %v, launch %v", p, l), out, wantSmall)
		}
	}
	for _, p := range []ops.UpSampleParams{
		{Shape: [4]int{2, 3, 2, 2}, SizeH: 2, SizeW: 3},
		{Shape: [4]int{1, 2, 5, 1}, SizeH: 3, SizeW: 1},
	} {
		x := randn(rng, size(p.In()), 1)
		want := make([]float32, size(p.Out()))
		ops.UpSampleForward(p, x, want)
		dy := randn(rng, size(p.Out()), 1)
		wantDx := make([]float32, len(x))
		ops.UpSampleBackward(p, dy, wantDx)
		args := []int{p.Shape[0], p.Shape[1], p.Shape[2], p.Shape[3], p.SizeH, p.SizeW}
		for _, l := range launches {
			out := make([]float32, len(want))
			run(l, "gk_upsample2d", x, out, args...)
			sameBits(t, fmt.Sprintf("upsample %v, launch %v", p, l), out, want)
			dx := make([]float32, len(x))
			run(l, "gk_upsample2d_grad", dy, dx, args...)
			sameBits(t, fmt.Sprintf("upsample's gradient %v, launch %v", p, l), dx, wantDx)
		}
	}
	// gk_resize: bilinear and nearest, shrinking, growing, a box.
	for _, p := range []ops.ResizeParams{
		{Shape: [4]int{2, 4, 4, 3}, BoxH: 4, BoxW: 4, OutH: 3, OutW: 5, Interpolation: ops.InterpolationBilinear},
		{Shape: [4]int{2, 4, 4, 3}, BoxH: 4, BoxW: 4, OutH: 3, OutW: 5, Interpolation: ops.InterpolationNearest},
		{Shape: [4]int{1, 7, 5, 2}, Top: 2, Left: 1, BoxH: 3, BoxW: 4, OutH: 9, OutW: 7, Interpolation: ops.InterpolationBilinear},
		{Shape: [4]int{1, 7, 5, 2}, Top: 2, Left: 1, BoxH: 3, BoxW: 4, OutH: 9, OutW: 7, Interpolation: ops.InterpolationNearest},
	} {
		x := randn(rng, size(p.In()), 1)
		want := make([]float32, size(p.Out()))
		ops.ResizeForward(p, x, want)
		nearest := 0
		if p.Interpolation == ops.InterpolationNearest {
			nearest = 1
		}
		args := []int{p.Shape[0], p.Shape[1], p.Shape[2], p.Shape[3], p.Top, p.Left, p.BoxH, p.BoxW, p.OutH, p.OutW, nearest}
		for _, l := range launches {
			out := make([]float32, len(want))
			run(l, "gk_resize", x, out, args...)
			sameBits(t, fmt.Sprintf("resize %v, launch %v", p, l), out, want)
		}
	}
}
