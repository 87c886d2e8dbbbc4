package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestPadCropUpSampleGradients checks Pad2D's, Crop2D's and UpSample2D's
// gradients by finite differences, each alone and chained.
func TestPadCropUpSampleGradients(t *testing.T) {
	cases := []struct {
		name  string
		shape []int
		f     func(x *gorgonia.Node) (*gorgonia.Node, error)
		want  []int
	}{
		{"pad 1,2,0,3", []int{2, 3, 2, 2}, func(x *gorgonia.Node) (*gorgonia.Node, error) { return Pad2D(x, 1, 2, 0, 3) }, []int{2, 6, 5, 2}},
		{"pad nothing", []int{1, 2, 2, 3}, func(x *gorgonia.Node) (*gorgonia.Node, error) { return Pad2D(x, 0, 0, 0, 0) }, []int{1, 2, 2, 3}},
		{"crop 1,0,2,1", []int{2, 4, 5, 2}, func(x *gorgonia.Node) (*gorgonia.Node, error) { return Crop2D(x, 1, 0, 2, 1) }, []int{2, 3, 2, 2}},
		{"upsample 2×3", []int{2, 2, 3, 2}, func(x *gorgonia.Node) (*gorgonia.Node, error) { return UpSample2D(x, 2, 3) }, []int{2, 4, 9, 2}},
		{"upsample 1×2", []int{1, 3, 2, 1}, func(x *gorgonia.Node) (*gorgonia.Node, error) { return UpSample2D(x, 1, 2) }, []int{1, 3, 4, 1}},
		{"pad, upsample, crop", []int{2, 2, 3, 2}, func(x *gorgonia.Node) (*gorgonia.Node, error) {
			p, err := Pad2D(x, 1, 0, 1, 2)
			if err != nil {
				return nil, err
			}
			u, err := UpSample2D(p, 2, 2)
			if err != nil {
				return nil, err
			}
			return Crop2D(u, 1, 2, 3, 0)
		}, []int{2, 3, 9, 2}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			rng := rand.New(rand.NewPCG(uint64(ci), 5))
			x := matrix(g, "x", tensor.Shape(c.shape), randomData(rng, tensor.Shape(c.shape).TotalSize(), 1))
			y, err := c.f(x)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(y.Shape(), c.want) {
				t.Fatalf("shape %v, want %v", y.Shape(), c.want)
			}
			checkGradients(t, g, flatCost(t, g, rng, y), x)
		})
	}
}

// TestPadCropUpSampleValues: values placed by hand.
func TestPadCropUpSampleValues(t *testing.T) {
	// One image of 2×2 pixels of 2 channels: pixel (i, j) holds 10i+j and
	// -(10i+j).
	x := []float64{0, 0, 1, -1, 10, -10, 11, -11}
	p := Pad2DParams{Shape: [4]int{1, 2, 2, 2}, Top: 1, Bottom: 0, Left: 0, Right: 1}
	padded := run(t, padOp{p: p}, t64(x, 1, 2, 2, 2))
	sameFloats(t, "pad top 1, right 1", padded, []float64{
		0, 0, 0, 0, 0, 0,
		0, 0, 1, -1, 0, 0,
		10, -10, 11, -11, 0, 0,
	})
	sameFloats(t, "crop it back", run(t, padOp{p: p, crop: true}, t64(padded, 1, 3, 3, 2)), x)
	// Cropping a 3×3 image of one channel to its centre column's bottom.
	img := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	c := Pad2DParams{Shape: [4]int{1, 2, 1, 1}, Top: 1, Bottom: 0, Left: 1, Right: 1}
	sameFloats(t, "crop", run(t, padOp{p: c, crop: true}, t64(img, 1, 3, 3, 1)), []float64{5, 8})
	sameFloats(t, "crop's gradient", run(t, padOp{p: c}, t64([]float64{5, 8}, 1, 2, 1, 1)), []float64{0, 0, 0, 0, 5, 0, 0, 8, 0})

	// Upsampling 2×3 of a 2×1 image of one channel.
	u := UpSampleParams{Shape: [4]int{1, 2, 1, 1}, SizeH: 2, SizeW: 3}
	sameFloats(t, "upsample", run(t, upSampleOp{p: u}, t64([]float64{1, 2}, 1, 2, 1, 1)),
		[]float64{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2})
	dy := []float64{1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60}
	sameFloats(t, "upsample's gradient: each block summed", run(t, upSampleOp{p: u, grad: true}, t64(dy, 1, 4, 3, 1)), []float64{21, 210})
	// Two channels stay apart.
	u = UpSampleParams{Shape: [4]int{1, 1, 1, 2}, SizeH: 1, SizeW: 2}
	sameFloats(t, "upsample of two channels", run(t, upSampleOp{p: u}, t64([]float64{1, -1}, 1, 1, 1, 2)), []float64{1, -1, 1, -1})
	sameFloats(t, "and its gradient", run(t, upSampleOp{p: u, grad: true}, t64([]float64{1, 2, 3, 4}, 1, 1, 2, 2)), []float64{4, 6})
}

func TestPadCropUpSampleRefuseBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	mk := func(shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...))
	}
	img := mk(2, 3, 4, 1)
	for i, f := range []func() (*gorgonia.Node, error){
		func() (*gorgonia.Node, error) { return Pad2D(mk(2, 3), 1, 1, 1, 1) },
		func() (*gorgonia.Node, error) { return Pad2D(img, -1, 0, 0, 0) },
		func() (*gorgonia.Node, error) { return Crop2D(img, 2, 1, 0, 0) }, // no row left
		func() (*gorgonia.Node, error) { return Crop2D(img, 0, 0, 4, 0) }, // no column left
		func() (*gorgonia.Node, error) { return Crop2D(img, 0, 0, 0, -1) },
		func() (*gorgonia.Node, error) { return UpSample2D(img, 0, 1) },
		func() (*gorgonia.Node, error) { return UpSample2D(mk(2, 3, 4), 2, 2) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("case %d was accepted", i)
		}
	}
	p := Pad2DParams{Shape: [4]int{2, 3, 4, 1}, Top: 1, Right: 2}
	for _, c := range []struct {
		op   gorgonia.Op
		kind OpKind
	}{{padOp{p: p}, OpPad2D}, {padOp{p: p, crop: true}, OpCrop2D}} {
		info, ok := Inspect(c.op)
		if !ok || info.Kind != c.kind || info.Pad2D != p {
			t.Errorf("Inspect(%v): %+v, %v", c.op, info, ok)
		}
	}
	u := UpSampleParams{Shape: [4]int{2, 3, 4, 1}, SizeH: 2, SizeW: 1}
	if info, ok := Inspect(upSampleOp{p: u, grad: true}); !ok || info.Kind != OpUpSample2DGrad || info.UpSample != u {
		t.Errorf("Inspect: %+v, %v", info, ok)
	}
	if fmt.Sprint(padOp{p: p}) == fmt.Sprint(padOp{p: p, crop: true}) {
		t.Error("a padding and a crop hash alike")
	}
}
