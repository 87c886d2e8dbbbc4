//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// TestImageTransformMatchesCPU: the GPU machine's image transforms
// (every kind, fill mode and interpolation, a shard from row 2^24+3)
// give package ops' images, the same bits, on batches large enough for
// grid-stride loops.
func TestImageTransformMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(28, 28))
	const b, ih, iw, c = 64, 12, 10, 3
	x := randn(rng, b*ih*iw*c, 1)
	dx := h.upload(x)
	for _, p := range []ops.TransformParams{
		{Kind: ops.TransformFlip, Horizontal: true, Vertical: true, Interpolation: ops.InterpolationNearest, Fill: ops.FillReflect, Key: 1},
		{Kind: ops.TransformTranslation, Height: [2]float64{-0.1, 0.1}, Width: [2]float64{-0.1, 0.1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 2},
		{Kind: ops.TransformTranslation, Height: [2]float64{-1, 1}, Width: [2]float64{-0.5, 1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillWrap, Key: 3},
		{Kind: ops.TransformTranslation, Height: [2]float64{-0.4, 0.2}, Width: [2]float64{-0.3, 0.3}, Interpolation: ops.InterpolationNearest, Fill: ops.FillConstant, FillValue: 0.25, Key: 4},
		{Kind: ops.TransformTranslation, Height: [2]float64{-0.4, 0.2}, Width: [2]float64{-0.3, 0.3}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillNearest, Key: 5},
		{Kind: ops.TransformZoom, Height: [2]float64{-0.3, 0.5}, Width: [2]float64{-0.2, 0.2}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillConstant, Key: 6},
		{Kind: ops.TransformRotation, Height: [2]float64{-1, 1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 7},
		{Kind: ops.TransformRotation, Height: [2]float64{-0.2, 0.2}, Interpolation: ops.InterpolationNearest, Fill: ops.FillNearest, Key: 8},
		{Kind: ops.TransformBrightness, Height: [2]float64{-0.4, 0.4}, ValueRange: [2]float64{-1.5, 1.5}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 9},
		{Kind: ops.TransformContrast, Height: [2]float64{0.7, 1.5}, ValueRange: [2]float64{-1.5, 1.5}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 10},
		{Kind: ops.TransformCrop, CropH: 3, CropW: 2, Interpolation: ops.InterpolationNearest, Fill: ops.FillConstant, Key: 11},
	} {
		p.H, p.W, p.C = ih, iw, c
		for _, sv := range [][4]float32{ops.StepValues(1<<33+5, 0), ops.StepValues(2, 1<<24+3)} {
			want := make([]float32, len(x))
			ops.TransformForward(p, sv[:], b, x, want)
			step, out := h.upload(sv[:]), h.zeros(len(x))
			h.do(func() error { return h.k.imageTransform(h.s, dx, step, out, b, p) })
			bitIdentical(t, fmt.Sprintf("image transform %v, step values %v", p, sv), h.download(out, len(x)), want)
		}
	}
}
