package layers

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// augmentGraph is a batch of images and a step node in a new graph.
func augmentGraph(x []float32, shape []int, step uint64) (*gorgonia.Node, *gorgonia.Node) {
	g := gorgonia.NewGraph()
	xn := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(shape...), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(slices.Clone(x)))))
	sv := ops.StepValues(step, 0)
	st := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(4), gorgonia.WithName("step"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking(sv[:]))))
	return xn, st
}

// TestAugmentationCalls: in a training graph RandomFlip and
// RandomTranslation transform their images as ops draws for their key
// (the Seed, else one drawn from the model's stream: two unseeded layers
// draw differently); in an inference graph they add nothing; an input
// that needs a gradient is refused, saying where to put them.
func TestAugmentationCalls(t *testing.T) {
	shape := []int{16, 5, 6, 2}
	x := make([]float32, 16*5*6*2)
	for i := range x {
		x[i] = float32(i%23) * 0.5
	}
	rng := rand.New(rand.NewPCG(1, 1))
	flip, flip2 := RandomFlip("horizontal"), RandomFlip("horizontal")
	shift := RandomTranslation(0.2, 0.3, Seed(5), FillMode("nearest"), Interpolation("nearest"))
	zoom := RandomZoom(0.4, FillMode("constant"), FillValue(-1))
	turn := RandomRotation(0.3, FillMode("wrap"))
	light := RandomBrightness(0.2, ValueRange(0, 8))
	sharp := RandomContrastRange([2]float64{0.5, 1})
	for _, l := range []Layer{flip, flip2, shift, zoom, turn, light, sharp} {
		if _, err := l.Build(shape[1:], rng); err != nil {
			t.Fatal(err)
		}
	}
	if shift.key != 5 || flip.key == flip2.key {
		t.Fatalf("keys %d (Seed(5)), %d and %d (drawn)", shift.key, flip.key, flip2.key)
	}
	run := func(l Layer) []float32 {
		t.Helper()
		xn, st := augmentGraph(x, shape, 7)
		out, err := l.Call(Flow{Node: xn, Training: true, Step: st}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.NeedsGrad {
			t.Error("the output needs a gradient")
		}
		m := gorgonia.NewTapeMachine(xn.Graph())
		defer m.Close()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(out.Node.Value().Data().([]float32))
	}
	sv := ops.StepValues(7, 0)
	for _, c := range []struct {
		l Layer
		p ops.TransformParams
	}{
		{flip, ops.TransformParams{Kind: ops.TransformFlip, Horizontal: true, Key: flip.key}},
		{shift, ops.TransformParams{Kind: ops.TransformTranslation, Height: [2]float64{-0.2, 0.2}, Width: [2]float64{-0.3, 0.3}, Key: 5,
			Interpolation: ops.InterpolationNearest, Fill: ops.FillNearest}},
		{zoom, ops.TransformParams{Kind: ops.TransformZoom, Height: [2]float64{-0.4, 0.4}, Width: [2]float64{-0.4, 0.4}, KeepAspect: true,
			Key: zoom.key, Fill: ops.FillConstant, FillValue: -1}},
		{turn, ops.TransformParams{Kind: ops.TransformRotation, Height: [2]float64{-0.3, 0.3}, Key: turn.key, Fill: ops.FillWrap}},
		{light, ops.TransformParams{Kind: ops.TransformBrightness, Height: [2]float64{-0.2, 0.2}, ValueRange: [2]float64{0, 8}, Key: light.key}},
		{sharp, ops.TransformParams{Kind: ops.TransformContrast, Height: [2]float64{0.5, 1}, ValueRange: [2]float64{0, 255}, Key: sharp.key}},
	} {
		p := c.p
		if p.Interpolation == 0 {
			p.Interpolation = ops.InterpolationBilinear
		}
		if p.Fill == 0 {
			p.Fill = ops.FillReflect
		}
		p.H, p.W, p.C = 5, 6, 2
		want := make([]float32, len(x))
		ops.TransformForward(p, sv[:], 16, x, want)
		if got := run(c.l); !slices.Equal(got, want) {
			t.Errorf("%s: the training graph's images are not ops.TransformForward's", c.l.Type())
		}
		if slices.Equal(want, x) {
			t.Errorf("%s: no image changed", c.l.Type())
		}
	}
	if slices.Equal(run(flip), run(flip2)) {
		t.Error("two unseeded RandomFlip layers flip the same images")
	}

	for _, l := range []Layer{flip, shift, zoom, turn, light, sharp} {
		xn, st := augmentGraph(x, shape, 7)
		out, err := l.Call(Flow{Node: xn}, nil)
		if err != nil || out.Node != xn {
			t.Errorf("%s in inference: %v, %v; want its input", l.Type(), out.Node, err)
		}
		_, err = l.Call(Flow{Node: xn, NeedsGrad: true, Training: true, Step: st}, nil)
		if err == nil || !strings.Contains(err.Error(), "before any layer with weights") {
			t.Errorf("%s after a layer with weights: %v", l.Type(), err)
		}
		if _, err := l.Build([]int{30}, rng); err == nil || !strings.Contains(err.Error(), "must be images (height, width, channels)") {
			t.Errorf("%s of vectors: %v", l.Type(), err)
		}
	}
	if err := RandomFlip("vertical", FillMode("constant")).CheckConfig(); err == nil || !strings.Contains(err.Error(), "takes no fill mode") {
		t.Errorf("RandomFlip with a fill mode: %v", err)
	}
	if err := RandomBrightness(0.1, FillMode("constant")).CheckConfig(); err == nil || !strings.Contains(err.Error(), "takes no fill mode") {
		t.Errorf("RandomBrightness with a fill mode: %v", err)
	}
	if err := RandomContrast(0.1, Interpolation("nearest")).CheckConfig(); err == nil || !strings.Contains(err.Error(), "takes no fill mode") {
		t.Errorf("RandomContrast with an interpolation: %v", err)
	}
	if err := RandomContrast(0.1, ValueRange(0, 1)).CheckConfig(); err == nil || !strings.Contains(err.Error(), "only RandomBrightness takes a value range") {
		t.Errorf("RandomContrast with a value range: %v", err)
	}
	if err := RandomZoom(0.1, ValueRange(0, 1)).CheckConfig(); err == nil || !strings.Contains(err.Error(), "only RandomBrightness takes a value range") {
		t.Errorf("RandomZoom with a value range: %v", err)
	}
}

// TestRandomCropCalls: in a training graph RandomCrop takes each image's
// window at the offsets ops draws for its key (the shifted image's
// top-left window); in an inference graph, and for images smaller than
// the window, it resizes them as Keras 2's smart_resize (ops.Resize of
// the centre box with the window's aspect); a window of the image's size
// passes it through; an input that needs a gradient is refused.
func TestRandomCropCalls(t *testing.T) {
	shape := []int{4, 5, 6, 2}
	x := make([]float32, 4*5*6*2)
	for i := range x {
		x[i] = float32(i%29) * 0.5
	}
	rng := rand.New(rand.NewPCG(2, 2))
	crop := RandomCrop(3, 4, Seed(3))
	if _, err := crop.Build(shape[1:], rng); err != nil {
		t.Fatal(err)
	}
	run := func(training bool) []float32 {
		t.Helper()
		xn, st := augmentGraph(x, shape, 9)
		out, err := crop.Call(Flow{Node: xn, Training: training, Step: st}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Node.Shape(), []int{4, 3, 4, 2}) {
			t.Fatalf("output shape %v", out.Node.Shape())
		}
		m := gorgonia.NewTapeMachine(xn.Graph())
		defer m.Close()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(out.Node.Value().Data().([]float32))
	}
	p := ops.TransformParams{Kind: ops.TransformCrop, CropH: 3, CropW: 4, Interpolation: ops.InterpolationNearest, Fill: ops.FillConstant, Key: 3, H: 5, W: 6, C: 2}
	sv := ops.StepValues(9, 0)
	shifted := make([]float32, len(x))
	ops.TransformForward(p, sv[:], 4, x, shifted)
	want := make([]float32, 4*3*4*2)
	ops.Crop2DForward(ops.Pad2DParams{Shape: [4]int{4, 3, 4, 2}, Bottom: 2, Right: 2}, shifted, want)
	if got := run(true); !slices.Equal(got, want) {
		t.Errorf("training: %v, want the windows %v", got, want)
	}
	// Inference: the centre 4×6 box (aspect 3:4; rows 0 to 3) resized to
	// 3×4.
	resized := make([]float32, len(want))
	ops.ResizeForward(ops.ResizeParams{Shape: [4]int{4, 5, 6, 2}, BoxH: 4, BoxW: 6, OutH: 3, OutW: 4, Interpolation: ops.InterpolationBilinear}, x, resized)
	if got := run(false); !slices.Equal(got, resized) {
		t.Errorf("inference: %v, want the resized images %v", got, resized)
	}
	xn, st := augmentGraph(x, shape, 9)
	if _, err := crop.Call(Flow{Node: xn, NeedsGrad: true, Training: true, Step: st}, nil); err == nil || !strings.Contains(err.Error(), "before any layer with weights") {
		t.Errorf("after a layer with weights: %v", err)
	}
	same := RandomCrop(5, 6)
	if _, err := same.Build(shape[1:], rng); err != nil {
		t.Fatal(err)
	}
	if out, err := same.Call(Flow{Node: xn, Training: true, Step: st}, nil); err != nil || out.Node != xn {
		t.Errorf("a window of the image's size: %v, %v; want its input", out.Node, err)
	}
	if err := RandomCrop(3, 4, FillMode("constant")).CheckConfig(); err == nil || !strings.Contains(err.Error(), "takes no fill mode") {
		t.Errorf("RandomCrop with a fill mode: %v", err)
	}
	if err := RandomCrop(0, 4).CheckConfig(); err == nil || !strings.Contains(err.Error(), "1 or more") {
		t.Errorf("RandomCrop(0, 4): %v", err)
	}
}
