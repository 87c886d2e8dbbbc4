package ops

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestResizeValues: a 4×4 image of one channel, pixel (y, x) = 4y + x,
// resized as tf.image.resize computes without antialiasing (half-pixel
// centres), values worked out by hand.
func TestResizeValues(t *testing.T) {
	img := make([]float32, 16)
	for i := range img {
		img[i] = float32(i)
	}
	cases := []struct {
		name                  string
		top, left, boxH, boxW int
		outH, outW            int
		interp                Interpolation
		want                  []float32
	}{
		// Scale 2: row i reads (i+0.5)·2-0.5 = 2i+0.5, halfway between
		// rows 2i and 2i+1 (columns alike): the mean of each 2×2 block,
		// (0+1+4+5)/4 = 2.5, ...
		{"bilinear 4x4 to 2x2", 0, 0, 4, 4, 2, 2, InterpolationBilinear, []float32{2.5, 4.5, 10.5, 12.5}},
		// Row i reads row floor((i+0.5)·2) = 2i+1: rows and columns 1, 3.
		{"nearest 4x4 to 2x2", 0, 0, 4, 4, 2, 2, InterpolationNearest, []float32{5, 7, 13, 15}},
		// Rows: scale 4/3, at (i+0.5)·4/3-0.5 = 1/6, 3/2, 17/6; columns:
		// scale 4/5, at (j+0.5)·0.8-0.5 = -0.1 (clamped to column 0), 0.7,
		// 1.5, 2.3, 3.1 (clamped to 3). The image is linear, 4y + x, so
		// each output is 4·row + column: 2/3 + (0, 0.7, 1.5, 2.3, 3), ...
		{"bilinear 4x4 to 3x5", 0, 0, 4, 4, 3, 5, InterpolationBilinear, []float32{
			2.0 / 3, 2.0/3 + 0.7, 2.0/3 + 1.5, 2.0/3 + 2.3, 2.0/3 + 3,
			6, 6.7, 7.5, 8.3, 9,
			34.0 / 3, 34.0/3 + 0.7, 34.0/3 + 1.5, 34.0/3 + 2.3, 34.0/3 + 3}},
		// Rows floor((i+0.5)·4/3) = 0, 2, 3; columns floor((j+0.5)·0.8) =
		// 0, 1, 2, 2, 3.
		{"nearest 4x4 to 3x5", 0, 0, 4, 4, 3, 5, InterpolationNearest, []float32{0, 1, 2, 2, 3, 8, 9, 10, 10, 11, 12, 13, 14, 14, 15}},
		// A 2×2 box at (1, 1) kept at its size is a crop, either way.
		{"crop nearest", 1, 1, 2, 2, 2, 2, InterpolationNearest, []float32{5, 6, 9, 10}},
		{"crop bilinear", 1, 1, 2, 2, 2, 2, InterpolationBilinear, []float32{5, 6, 9, 10}},
		// The 2×2 box at (2, 0) to 4×3: rows at (i+0.5)/2-0.5 = -0.25
		// (row 0), 0.25, 0.75, 1.25 (row 1); columns at (j+0.5)·2/3-0.5 =
		// -1/6 (column 0), 0.5, 7/6 (column 1); box pixel (y, x) is
		// 8 + 4y + x.
		{"bilinear upsize of a box", 2, 0, 2, 2, 4, 3, InterpolationBilinear, []float32{
			8, 8.5, 9, 9, 9.5, 10, 11, 11.5, 12, 12, 12.5, 13}},
	}
	for _, c := range cases {
		p := ResizeParams{Shape: [4]int{1, 4, 4, 1}, Top: c.top, Left: c.left, BoxH: c.boxH, BoxW: c.boxW, OutH: c.outH, OutW: c.outW, Interpolation: c.interp}
		got := make([]float32, c.outH*c.outW)
		ResizeForward(p, img, got)
		for i := range c.want {
			if math.Abs(float64(got[i]-c.want[i])) > 2e-6 {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestResizeNode: the node's Do on a batch of three channels equals the
// host kernel, channels resized apart, and bad boxes are refused.
func TestResizeNode(t *testing.T) {
	g := gorgonia.NewGraph()
	x := make([]float32, 2*5*6*3)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	xn := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(2, 5, 6, 3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 5, 6, 3), tensor.WithBacking(x))))
	p := ResizeParams{Top: 1, Left: 0, BoxH: 4, BoxW: 6, OutH: 3, OutW: 7, Interpolation: InterpolationBilinear}
	y, err := Resize(xn, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 3, 7, 3}; !equalInts(y.Shape(), want) {
		t.Fatalf("shape %v, want %v", y.Shape(), want)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := y.Value().Data().([]float32)
	p.Shape = [4]int{2, 5, 6, 3}
	want := make([]float32, len(got))
	ResizeForward(p, x, want)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: %v, want %v", i, got[i], want[i])
		}
	}
	// Channel 1 of image 1 alone gives the same values.
	one := make([]float32, 5*6)
	for i := range one {
		one[i] = x[5*6*3+i*3+1]
	}
	q := p
	q.Shape = [4]int{1, 5, 6, 1}
	alone := make([]float32, 3*7)
	ResizeForward(q, one, alone)
	for i := range alone {
		if alone[i] != want[3*7*3+i*3+1] {
			t.Fatalf("channel 1 of image 1 resized alone differs at %d", i)
		}
	}
	for _, bad := range []ResizeParams{
		{Top: 2, BoxH: 4, BoxW: 6, OutH: 1, OutW: 1, Interpolation: InterpolationNearest},
		{BoxH: 4, BoxW: 6, OutH: 0, OutW: 1, Interpolation: InterpolationNearest},
		{BoxH: 4, BoxW: 6, OutH: 1, OutW: 1},
	} {
		if _, err := Resize(xn, bad); err == nil || !strings.Contains(err.Error(), "resize") {
			t.Errorf("%v: error %v", bad, err)
		}
	}
}

func equalInts(a tensor.Shape, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
