//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

// transformCases are image transforms of every kind, fill mode and
// interpolation, with factors that move pixels by fractions and by more
// than an image (reflect and wrap past one period).
var transformCases = []ops.TransformParams{
	{Kind: ops.TransformFlip, Horizontal: true, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 0x0123456789abcdef},
	{Kind: ops.TransformFlip, Horizontal: true, Vertical: true, Interpolation: ops.InterpolationNearest, Fill: ops.FillReflect, Key: 7},
	{Kind: ops.TransformTranslation, Height: [2]float64{-0.1, 0.1}, Width: [2]float64{-0.1, 0.1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 3},
	{Kind: ops.TransformTranslation, Height: [2]float64{-1, 1}, Width: [2]float64{-1, 1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillWrap, Key: 4},
	{Kind: ops.TransformTranslation, Height: [2]float64{-0.5, 0.5}, Width: [2]float64{0, 0.7}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillConstant, FillValue: -2.5, Key: 5},
	{Kind: ops.TransformTranslation, Height: [2]float64{-0.9, 0.9}, Width: [2]float64{-0.9, 0.2}, Interpolation: ops.InterpolationNearest, Fill: ops.FillNearest, Key: 6},
	{Kind: ops.TransformTranslation, Height: [2]float64{-1, 1}, Width: [2]float64{-1, 1}, Interpolation: ops.InterpolationNearest, Fill: ops.FillReflect, Key: 8},
	{Kind: ops.TransformZoom, Height: [2]float64{-0.5, 0.8}, Width: [2]float64{-0.2, 0.3}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 9},
	{Kind: ops.TransformZoom, Height: [2]float64{-0.4, 0.4}, KeepAspect: true, Interpolation: ops.InterpolationNearest, Fill: ops.FillConstant, FillValue: 1, Key: 10},
	{Kind: ops.TransformRotation, Height: [2]float64{-1, 1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 11},
	{Kind: ops.TransformRotation, Height: [2]float64{-0.1, 0.3}, Interpolation: ops.InterpolationNearest, Fill: ops.FillWrap, Key: 12},
	{Kind: ops.TransformRotation, Height: [2]float64{-2, 2}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillConstant, FillValue: 3, Key: 13},
	{Kind: ops.TransformBrightness, Height: [2]float64{-0.5, 0.5}, ValueRange: [2]float64{-1, 1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 14},
	{Kind: ops.TransformBrightness, Height: [2]float64{0.1, 0.3}, ValueRange: [2]float64{0, 255}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 15},
	{Kind: ops.TransformContrast, Height: [2]float64{0.5, 2}, ValueRange: [2]float64{-1, 1}, Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 16},
	{Kind: ops.TransformCrop, CropH: 1, CropW: 4, Interpolation: ops.InterpolationNearest, Fill: ops.FillConstant, Key: 17},
}

// transformArgs are gk_image_transform's arguments for p, as the CUDA
// machine's launcher passes them.
func transformArgs(x, y, step []float32, batch int, p ops.TransformParams) []uint64 {
	lo, hi := p.Height, p.Width
	switch p.Kind {
	case ops.TransformZoom:
		lo, hi = [2]float64{1 + lo[0], 1 + lo[1]}, [2]float64{1 + hi[0], 1 + hi[1]}
	case ops.TransformRotation:
		lo = [2]float64{2 * math.Pi * lo[0], 2 * math.Pi * lo[1]}
	case ops.TransformBrightness:
		hi = p.ValueRange
	case ops.TransformContrast:
		lo, hi = [2]float64{1 - lo[0], 1 + lo[1]}, p.ValueRange
	case ops.TransformCrop:
		lo, hi = [2]float64{float64(p.H - p.CropH + 1), 0}, [2]float64{float64(p.W - p.CropW + 1), 0}
	}
	return []uint64{ptr(x), ptr(y), uint64(batch), uint64(p.H), uint64(p.W), uint64(p.C), ptr(step),
		uint64(uint32(p.Key)), uint64(uint32(p.Key >> 32)), uint64(p.Kind), boolSlot(p.Horizontal), boolSlot(p.Vertical),
		f32(float32(lo[0])), f32(float32(lo[1])), f32(float32(hi[0])), f32(float32(hi[1])), boolSlot(p.KeepAspect),
		uint64(p.Interpolation), uint64(p.Fill), f32(float32(p.FillValue))}
}

// TestImageTransformKernel: gk_image_transform gives ops.TransformForward's
// bits under every launch, for every case, at a step past 2^24 and for a
// shard from row 2^24+3 (both words of the step values).
func TestImageTransformKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 28))
	for _, shape := range [][4]int{{6, 7, 5, 3}, {3, 1, 9, 2}, {2, 8, 8, 1}} {
		b, h, w, c := shape[0], shape[1], shape[2], shape[3]
		x := randn(rng, b*h*w*c, 1)
		for _, p := range transformCases {
			p.H, p.W, p.C = h, w, c
			for _, sv := range [][4]float32{ops.StepValues(3<<24+12345, 0), ops.StepValues(9, 1<<24+3)} {
				step := slices.Clone(sv[:])
				want := make([]float32, len(x))
				ops.TransformForward(p, step, b, x, want)
				for _, l := range launches {
					y := randn(rng, len(x), 1)
					pin(t, x, y, step)
					if err := LaunchKernel("gk_image_transform", l.Grid, l.Block, 0, transformArgs(x, y, step, b, p)); err != nil {
						t.Fatal(err)
					}
					sameBits(t, fmt.Sprintf("%v, step values %v, launch %v", p, sv, l), y, want)
				}
			}
		}
	}
}
