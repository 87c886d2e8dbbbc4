//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// TestResizeKernelsMatchCPU: the GPU machine's paddings, crops,
// upsamplings and upsamplings' gradients give package ops' values, the
// same bits, on shapes large enough for grid-stride loops.
func TestResizeKernelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(23, 23))
	size := func(s []int) int { return s[0] * s[1] * s[2] * s[3] }
	for _, p := range []ops.Pad2DParams{
		{Shape: [4]int{3, 5, 4, 2}, Top: 2, Bottom: 1, Left: 0, Right: 3},
		{Shape: [4]int{16, 30, 30, 64}, Top: 1, Bottom: 1, Left: 2, Right: 2},
	} {
		small, large := randn(rng, size(p.Small()), 1), randn(rng, size(p.Large()), 1)
		wantLarge, wantSmall := make([]float32, len(large)), make([]float32, len(small))
		ops.Pad2DForward(p, small, wantLarge)
		ops.Crop2DForward(p, large, wantSmall)
		ds, dl := h.upload(small), h.upload(large)
		out := h.upload(randn(rng, len(large), 1))
		h.do(func() error { return h.k.pad2d(h.s, p, false, ds, out) })
		bitIdentical(t, fmt.Sprintf("pad %v", p), h.download(out, len(large)), wantLarge)
		out = h.zeros(len(small))
		h.do(func() error { return h.k.pad2d(h.s, p, true, dl, out) })
		bitIdentical(t, fmt.Sprintf("crop %v", p), h.download(out, len(small)), wantSmall)
	}
	for _, p := range []ops.UpSampleParams{
		{Shape: [4]int{3, 4, 5, 2}, SizeH: 2, SizeW: 3},
		{Shape: [4]int{16, 16, 16, 32}, SizeH: 2, SizeW: 2},
	} {
		x, dy := randn(rng, size(p.In()), 1), randn(rng, size(p.Out()), 1)
		want, wantDx := make([]float32, len(dy)), make([]float32, len(x))
		ops.UpSampleForward(p, x, want)
		ops.UpSampleBackward(p, dy, wantDx)
		dx, ddy := h.upload(x), h.upload(dy)
		out := h.zeros(len(dy))
		h.do(func() error { return h.k.upSample(h.s, p, false, dx, out) })
		bitIdentical(t, fmt.Sprintf("upsample %v", p), h.download(out, len(dy)), want)
		out = h.zeros(len(x))
		h.do(func() error { return h.k.upSample(h.s, p, true, ddy, out) })
		bitIdentical(t, fmt.Sprintf("upsample's gradient %v", p), h.download(out, len(x)), wantDx)
	}
	for _, p := range []ops.ResizeParams{
		{Shape: [4]int{3, 9, 7, 3}, Top: 1, Left: 0, BoxH: 8, BoxW: 7, OutH: 5, OutW: 11, Interpolation: ops.InterpolationBilinear},
		{Shape: [4]int{16, 32, 32, 3}, Top: 0, Left: 0, BoxH: 32, BoxW: 32, OutH: 24, OutW: 40, Interpolation: ops.InterpolationNearest},
	} {
		x := randn(rng, size(p.In()), 1)
		want := make([]float32, size(p.Out()))
		ops.ResizeForward(p, x, want)
		dx, out := h.upload(x), h.zeros(len(want))
		h.do(func() error { return h.k.resize(h.s, p, dx, out) })
		bitIdentical(t, fmt.Sprintf("resize %v", p), h.download(out, len(want)), want)
	}
}

// TestResizeGraphTrainsAsOnCPU trains opstest.ResizeGraph (Pad2D,
// UpSample2D, Crop2D, forward and backward) on /GPU:0 and on /CPU:0 from
// the same values, 20 steps of Adam: the same loss at every step and the
// same weights at the end, within 1e-5.
func TestResizeGraphTrainsAsOnCPU(t *testing.T) {
	trainsAsOnCPU(t, func() gpuTestGraph {
		m, err := opstest.BuildResizeGraph(18, 16)
		if err != nil {
			t.Fatal(err)
		}
		return gpuTestGraph{m.G, m.Learnables, &m.LossValue}
	})
}
