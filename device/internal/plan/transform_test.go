package plan

import (
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestImageTransformStep: an image transform compiles to one
// ImageTransform step of the batch's images reading the step values,
// whose run on the host backend (the op's Do) gives TransformForward's
// images.
func TestImageTransformStep(t *testing.T) {
	const b, h, w, c = 5, 4, 6, 2
	x := make([]float32, b*h*w*c)
	for i := range x {
		x[i] = float32(i%17) - 8
	}
	g := gorgonia.NewGraph()
	xn := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(b, h, w, c), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(b, h, w, c), tensor.WithBacking(slices.Clone(x)))))
	sv := ops.StepValues(41, 2)
	st := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(4), gorgonia.WithName("step"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking(slices.Clone(sv[:])))))
	p := ops.TransformParams{Kind: ops.TransformTranslation, Height: [2]float64{-0.3, 0.3}, Width: [2]float64{-0.3, 0.3},
		Interpolation: ops.InterpolationBilinear, Fill: ops.FillReflect, Key: 12}
	y, err := ops.ImageTransform(xn, st, p)
	if err != nil {
		t.Fatal(err)
	}
	var got gorgonia.Value
	gorgonia.Read(y, &got)
	pl, err := Compile(g, nil, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	for _, s := range pl.Steps {
		if s.Kind == ImageTransform {
			steps = append(steps, s)
		}
	}
	if len(steps) != 1 || steps[0].M != b || steps[0].N != len(x) || steps[0].Op.Transform.H != h {
		t.Fatalf("steps %v: want one ImageTransform of %d images", pl.Steps, b)
	}
	m := hostMachine(t, g, nil)
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	p.H, p.W, p.C = h, w, c
	want := make([]float32, len(x))
	ops.TransformForward(p, sv[:], b, x, want)
	if got == nil || !slices.Equal(got.Data().([]float32), want) {
		t.Errorf("the plan's images differ from TransformForward's")
	}
}

// TestResizeStep: a resize compiles to one Resize step of the output's
// values, whose run on the host backend (the op's Do) gives
// ResizeForward's images.
func TestResizeStep(t *testing.T) {
	const b, h, w, c = 3, 5, 6, 2
	x := make([]float32, b*h*w*c)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	g := gorgonia.NewGraph()
	xn := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(b, h, w, c), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(b, h, w, c), tensor.WithBacking(slices.Clone(x)))))
	p := ops.ResizeParams{Top: 1, Left: 1, BoxH: 4, BoxW: 4, OutH: 3, OutW: 7, Interpolation: ops.InterpolationBilinear}
	y, err := ops.Resize(xn, p)
	if err != nil {
		t.Fatal(err)
	}
	var got gorgonia.Value
	gorgonia.Read(y, &got)
	pl, err := Compile(g, nil, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	for _, s := range pl.Steps {
		if s.Kind == Resize {
			steps = append(steps, s)
		}
	}
	if len(steps) != 1 || steps[0].N != b*3*7*c {
		t.Fatalf("steps %v: want one Resize of %d values", pl.Steps, b*3*7*c)
	}
	m := hostMachine(t, g, nil)
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	p.Shape = [4]int{b, h, w, c}
	want := make([]float32, b*3*7*c)
	ops.ResizeForward(p, x, want)
	if got == nil || !slices.Equal(got.Data().([]float32), want) {
		t.Errorf("the plan's images differ from ResizeForward's")
	}
}
