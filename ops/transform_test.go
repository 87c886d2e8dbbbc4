package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestTransformImageByHand: a row a b c d = 1 2 3 4 shifted by whole and
// half pixels, in each fill mode and with each interpolation, against
// images worked out by hand from TensorFlow's ImageProjectiveTransformV3
// rules (the output pixel x reads the input at x - dx).
func TestTransformImageByHand(t *testing.T) {
	row := []float32{1, 2, 3, 4}
	const k = 9 // the constant fill
	for _, c := range []struct {
		dx     float32
		interp Interpolation
		fill   FillMode
		want   []float32
	}{
		{2, InterpolationNearest, FillReflect, []float32{2, 1, 1, 2}}, // b a | a b
		{2, InterpolationNearest, FillWrap, []float32{3, 4, 1, 2}},    // c d | a b
		{2, InterpolationNearest, FillConstant, []float32{k, k, 1, 2}},
		{2, InterpolationNearest, FillNearest, []float32{1, 1, 1, 2}},
		{-2, InterpolationNearest, FillReflect, []float32{3, 4, 4, 3}}, // c d | d c
		{-2, InterpolationNearest, FillWrap, []float32{3, 4, 1, 2}},
		{-2, InterpolationNearest, FillConstant, []float32{3, 4, k, k}},
		{-2, InterpolationNearest, FillNearest, []float32{3, 4, 4, 4}},
		{-5, InterpolationNearest, FillReflect, []float32{3, 2, 1, 1}}, // d c b a | a b c d: from 5
		{-5, InterpolationNearest, FillWrap, []float32{2, 3, 4, 1}},
		{2, InterpolationBilinear, FillReflect, []float32{2, 1, 1, 2}}, // whole pixels: no blending
		{0.5, InterpolationBilinear, FillReflect, []float32{1, 1.5, 2.5, 3.5}},
		{0.5, InterpolationBilinear, FillWrap, []float32{4, 1.5, 2.5, 3.5}},
		{0.5, InterpolationBilinear, FillConstant, []float32{(k + 1) / 2.0, 1.5, 2.5, 3.5}},
		{0.5, InterpolationBilinear, FillNearest, []float32{1, 1.5, 2.5, 3.5}},
		{-0.25, InterpolationBilinear, FillConstant, []float32{1.25, 2.25, 3.25, 0.75*4 + 0.25*k}},
		{0.5, InterpolationNearest, FillConstant, []float32{k, 2, 3, 4}}, // halves round away from zero
		{-0.5, InterpolationNearest, FillConstant, []float32{2, 3, 4, k}},
	} {
		p := TransformParams{Interpolation: c.interp, Fill: c.fill, FillValue: k, H: 1, W: 4, C: 1}
		got := make([]float32, 4)
		TransformImage(p, [6]float32{1, 0, -c.dx, 0, 1, 0}, row, got)
		if !slices.Equal(got, c.want) {
			t.Errorf("shift %v, %v, fill %v: %v, want %v", c.dx, c.interp, c.fill, got, c.want)
		}
	}

	// Both flips of a 2×3 image of two channels: out[y][x] = in[1-y][2-x].
	img := []float32{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6}
	got := make([]float32, len(img))
	p := TransformParams{Interpolation: InterpolationBilinear, Fill: FillReflect, H: 2, W: 3, C: 2}
	TransformImage(p, [6]float32{-1, 0, 2, 0, -1, 1}, img, got)
	if want := []float32{6, -6, 5, -5, 4, -4, 3, -3, 2, -2, 1, -1}; !slices.Equal(got, want) {
		t.Errorf("both flips: %v, want %v", got, want)
	}
	// A zoom out by 2 about the centre of 1 2 3 4 5 reads x at 2x-2.
	p = TransformParams{Kind: TransformZoom, Height: [2]float64{1, 1}, Width: [2]float64{1, 1}, Interpolation: InterpolationNearest,
		Fill: FillConstant, FillValue: k, H: 1, W: 5, C: 1}
	a := p.SampleTransform(3, 4)
	if a != [6]float32{2, 0, -2, 0, 2, 0} {
		t.Fatalf("zoom by 2 of a 1×5 image: map %v, want x' = 2x-2, y' = 2y", a)
	}
	got = make([]float32, 5)
	TransformImage(p, a, []float32{1, 2, 3, 4, 5}, got)
	if want := []float32{k, 1, 3, 5, k}; !slices.Equal(got, want) {
		t.Errorf("zoom out by 2: %v, want %v", got, want)
	}
}

// TestTransformDraws: over 10,000 samples RandomFlip's transform flips
// each axis of half of them within 1%, independently; translations are
// uniform over their range (mean, spread, bounds) and the two axes'
// uncorrelated; another key or step draws otherwise, the same ones the
// same.
func TestTransformDraws(t *testing.T) {
	const n = 10000
	flip := TransformParams{Kind: TransformFlip, Horizontal: true, Vertical: true, Key: 77, H: 8, W: 8, C: 3}
	var h, v, both int
	for s := range uint64(n) {
		a := flip.SampleTransform(5, s)
		h += int((1 - a[0]) / 2)
		v += int((1 - a[4]) / 2)
		if a[0] == -1 && a[4] == -1 {
			both++
		}
		if (a[0] == -1) != (a[2] == 7) || (a[4] == -1) != (a[5] == 7) {
			t.Fatalf("sample %d: map %v is not a flip of an 8×8 image", s, a)
		}
	}
	for what, c := range map[string][2]int{"horizontally": {h, n / 2}, "vertically": {v, n / 2}, "both ways": {both, n / 4}} {
		if math.Abs(float64(c[0]-c[1])) > n/100 {
			t.Errorf("%d of %d samples flipped %s, want %d within 1%%", c[0], n, what, c[1])
		}
	}

	tr := TransformParams{Kind: TransformTranslation, Height: [2]float64{-0.2, 0.3}, Width: [2]float64{-0.1, 0.1}, Key: 3, H: 10, W: 20, C: 1}
	var sy, syy, sx, sxx, sxy float64
	minY, maxY := math.Inf(1), math.Inf(-1)
	for s := range uint64(n) {
		a := tr.SampleTransform(9, s)
		fy, fx := -float64(a[5])/10, -float64(a[2])/20
		sy, syy, sx, sxx, sxy = sy+fy, syy+fy*fy, sx+fx, sxx+fx*fx, sxy+fx*fy
		minY, maxY = min(minY, fy), max(maxY, fy)
		if fx < -0.1 || fx >= 0.1+1e-7 {
			t.Fatalf("sample %d: width shift %v outside [-0.1, 0.1)", s, fx)
		}
	}
	meanY, meanX := sy/n, sx/n
	sdY, sdX := math.Sqrt(syy/n-meanY*meanY), math.Sqrt(sxx/n-meanX*meanX)
	corr := (sxy/n - meanX*meanY) / (sdX * sdY)
	if math.Abs(meanY-0.05) > 0.005 || math.Abs(sdY-0.5/math.Sqrt(12)) > 0.005 || minY < -0.2 || maxY > 0.3 || minY > -0.199 || maxY < 0.299 {
		t.Errorf("height shifts: mean %.4f, sd %.4f, range [%.4f, %.4f]; want uniform on [-0.2, 0.3): mean 0.05, sd %.4f", meanY, sdY, minY, maxY, 0.5/math.Sqrt(12))
	}
	if math.Abs(meanX) > 0.002 || math.Abs(sdX-0.2/math.Sqrt(12)) > 0.002 {
		t.Errorf("width shifts: mean %.4f, sd %.4f; want uniform on [-0.1, 0.1): mean 0, sd %.4f", meanX, sdX, 0.2/math.Sqrt(12))
	}
	if math.Abs(corr) > 0.03 {
		t.Errorf("the height and width shifts correlate: %.3f", corr)
	}

	// Zooms: 1+z with z uniform on [-0.3, 0.5), the same across and down
	// with KeepAspect, else drawn apart.
	zoom := TransformParams{Kind: TransformZoom, Height: [2]float64{-0.3, 0.5}, Width: [2]float64{-0.1, 0.1}, Key: 8, H: 9, W: 9, C: 1}
	var sz, apart float64
	for s := range uint64(n) {
		a := zoom.SampleTransform(2, s)
		if a[4] < 0.7 || a[4] >= 1.5 || a[0] < 0.9 || a[0] >= 1.1 || a[5] != float32(4*float32(1-a[4])) {
			t.Fatalf("sample %d: zoom map %v outside the ranges or not about the centre", s, a)
		}
		sz += float64(a[4])
		k := zoom
		k.KeepAspect = true
		if b := k.SampleTransform(2, s); b[0] != b[4] || b[4] != a[4] {
			t.Fatalf("sample %d: KeepAspect zooms %v, %v; want the height's, %v, across and down", s, b[0], b[4], a[4])
		}
		if a[0] != a[4] {
			apart++
		}
	}
	if mean := sz / n; math.Abs(mean-1.1) > 0.01 || apart < n-10 {
		t.Errorf("zooms down: mean %.4f, want 1.1; %v of %d drawn apart across", mean, apart, n)
	}

	same, otherKey, otherStep := 0, 0, 0
	for s := range uint64(1000) {
		a := tr.SampleTransform(9, s)
		if a == tr.SampleTransform(9, s) {
			same++
		}
		k := tr
		k.Key = 4
		if a == k.SampleTransform(9, s) {
			otherKey++
		}
		if a == tr.SampleTransform(10, s) {
			otherStep++
		}
	}
	if same != 1000 || otherKey > 5 || otherStep > 5 {
		t.Errorf("of 1000 samples' maps, %d are drawn again the same, %d the same with another key, %d at another step", same, otherKey, otherStep)
	}
}

// TestImageTransformNode: the node's Do on a batch is TransformForward
// with the step's values; a shard given its first row (StepValues)
// draws what the whole batch draws for those samples, as a data-parallel
// replica does; and the node has no gradient.
func TestImageTransformNode(t *testing.T) {
	const b, h, w, c = 8, 5, 6, 3
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, b*h*w*c)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, p := range []TransformParams{
		{Kind: TransformFlip, Horizontal: true, Interpolation: InterpolationNearest, Fill: FillReflect, Key: 1},
		{Kind: TransformTranslation, Height: [2]float64{-0.3, 0.3}, Width: [2]float64{-0.4, 0.2}, Interpolation: InterpolationBilinear, Fill: FillReflect, Key: 2},
		{Kind: TransformTranslation, Height: [2]float64{0.1, 0.5}, Width: [2]float64{-1, 1}, Interpolation: InterpolationBilinear, Fill: FillConstant, FillValue: 0.5, Key: 2},
		{Kind: TransformZoom, Height: [2]float64{-0.3, 0.4}, KeepAspect: true, Interpolation: InterpolationBilinear, Fill: FillWrap, Key: 5},
	} {
		t.Run(fmt.Sprint(p.Kind, p.Fill), func(t *testing.T) {
			g := gorgonia.NewGraph()
			xn := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(b, h, w, c), gorgonia.WithValue(tensor.New(tensor.WithShape(b, h, w, c), tensor.WithBacking(slices.Clone(x)))))
			sv := StepValues(1<<30+7, 0)
			st := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(4), gorgonia.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking(sv[:]))))
			y, err := ImageTransform(xn, st, p)
			if err != nil {
				t.Fatal(err)
			}
			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			if err := m.RunAll(); err != nil {
				t.Fatal(err)
			}
			got := y.Value().Data().([]float32)
			p.H, p.W, p.C = h, w, c
			want := make([]float32, len(x))
			TransformForward(p, sv[:], b, x, want)
			if !slices.Equal(got, want) {
				t.Fatal("the node's value is not TransformForward's")
			}
			if slices.Equal(got, x) {
				t.Fatal("no image was transformed")
			}
			per := h * w * c
			shard := make([]float32, 5*per)
			sv3 := StepValues(1<<30+7, 3)
			TransformForward(p, sv3[:], 5, x[3*per:], shard)
			if !slices.Equal(shard, want[3*per:]) {
				t.Error("a shard from row 3 draws otherwise than the whole batch")
			}
			if _, err := y.Op().(gorgonia.SDOp).SymDiff(gorgonia.Nodes{xn, st}, y, y); err == nil {
				t.Error("the image transform has a gradient")
			}
		})
	}
	g := gorgonia.NewGraph()
	flat := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3))
	st := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(4))
	if _, err := ImageTransform(flat, st, TransformParams{Kind: TransformFlip, Interpolation: InterpolationNearest, Fill: FillReflect}); err == nil {
		t.Error("an image transform of a matrix was made")
	}
}

// TestRotation: SinCos against the math package's within 4e-16 over
// several turns; a quarter turn (nearest) of a 3×3 image turns it
// counter-clockwise, as Keras' RandomRotation(0.25) does; angles are
// uniform over their range.
func TestRotation(t *testing.T) {
	for x := -13.0; x <= 13; x += 0.001 {
		s, c := SinCos(x)
		if math.Abs(s-math.Sin(x)) > 2e-15 || math.Abs(c-math.Cos(x)) > 2e-15 {
			t.Fatalf("SinCos(%v) = %v, %v; math: %v, %v", x, s, c, math.Sin(x), math.Cos(x))
		}
	}
	p := TransformParams{Kind: TransformRotation, Height: [2]float64{0.25, 0.25}, Interpolation: InterpolationNearest, Fill: FillConstant, H: 3, W: 3, C: 1}
	a := p.SampleTransform(1, 1)
	got := make([]float32, 9)
	TransformImage(p, a, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, got)
	if want := []float32{3, 6, 9, 2, 5, 8, 1, 4, 7}; !slices.Equal(got, want) {
		t.Errorf("a quarter turn of 1..9: %v (map %v), want %v", got, a, want)
	}
	// A half turn of a 2×3 image with bilinear sampling: cos π and sin π
	// are -1 and about 1e-7 in float32, so each pixel reads within 1e-6
	// of its mirror image's.
	p = TransformParams{Kind: TransformRotation, Height: [2]float64{0.5, 0.5}, Interpolation: InterpolationBilinear, Fill: FillReflect, H: 2, W: 3, C: 1}
	got = make([]float32, 6)
	TransformImage(p, p.SampleTransform(1, 1), []float32{1, 2, 3, 4, 5, 6}, got)
	for i, want := range []float32{6, 5, 4, 3, 2, 1} {
		if math.Abs(float64(got[i]-want)) > 1e-5 {
			t.Errorf("a half turn of [[1 2 3] [4 5 6]]: %v", got)
			break
		}
	}
	rot := TransformParams{Kind: TransformRotation, Height: [2]float64{-0.1, 0.2}, Key: 6, H: 8, W: 8, C: 1}
	const n = 10000
	var sum, sq float64
	for s := range uint64(n) {
		a := rot.SampleTransform(4, s)
		turn := math.Atan2(float64(a[3]), float64(a[0])) / (2 * math.Pi)
		if turn < -0.1-1e-6 || turn > 0.2+1e-6 || a[1] != -a[3] || a[0] != a[4] {
			t.Fatalf("sample %d: map %v is no rotation within [-0.1, 0.2) turns", s, a)
		}
		sum, sq = sum+turn, sq+turn*turn
	}
	mean := sum / n
	if sd := math.Sqrt(sq/n - mean*mean); math.Abs(mean-0.05) > 0.003 || math.Abs(sd-0.3/math.Sqrt(12)) > 0.003 {
		t.Errorf("turns: mean %.4f, sd %.4f; want uniform on [-0.1, 0.2): 0.05, %.4f", mean, sd, 0.3/math.Sqrt(12))
	}
}

// TestBrightness: a brightness adds one delta to every value of an image,
// a fraction of the value range drawn uniformly, and clips to the range;
// the node's Do and the host kernel agree.
func TestBrightness(t *testing.T) {
	p := TransformParams{Kind: TransformBrightness, Height: [2]float64{-0.2, 0.3}, ValueRange: [2]float64{0, 255}, Key: 5, H: 2, W: 2, C: 1}
	const n = 10000
	var sum float64
	for s := range uint64(n) {
		d := float64(p.SampleDelta(3, s)) / 255
		if d < -0.2-1e-6 || d > 0.3+1e-6 {
			t.Fatalf("sample %d: delta %v of the range, outside [-0.2, 0.3)", s, d)
		}
		sum += d
	}
	if mean := sum / n; math.Abs(mean-0.05) > 0.003 {
		t.Errorf("deltas: mean %.4f of the range, want 0.05", mean)
	}
	x := []float32{0, 100, 250, 255, 10, 20, 30, 40}
	sv := StepValues(3, 0)
	y := make([]float32, len(x))
	TransformForward(p, sv[:], 2, x, y)
	for b := range 2 {
		d := p.SampleDelta(3, uint64(b))
		for i, v := range x[b*4 : b*4+4] {
			if want := min(max(v+d, 0), 255); y[b*4+i] != want {
				t.Fatalf("image %d value %v with delta %v: %v, want %v", b, v, d, y[b*4+i], want)
			}
		}
	}
	if p.SampleDelta(3, 0) == p.SampleDelta(3, 1) {
		t.Error("two images got the same delta")
	}
}

// TestContrast: a contrast draws its factors uniformly from [1-lower,
// 1+upper], one per image, and scales each channel about its mean over
// the image, clipping to the value range: values worked out by hand for a
// fixed factor, and the host kernel against them.
func TestContrast(t *testing.T) {
	p := TransformParams{Kind: TransformContrast, Height: [2]float64{0.2, 0.5}, ValueRange: [2]float64{0, 255}, Key: 6, H: 2, W: 2, C: 2}
	const n = 10000
	var sum, sq float64
	for s := range uint64(n) {
		f := float64(p.SampleDelta(4, s))
		if f < 0.8-1e-6 || f > 1.5+1e-6 {
			t.Fatalf("sample %d: factor %v, outside [0.8, 1.5)", s, f)
		}
		sum, sq = sum+f, sq+f*f
	}
	mean := sum / n
	if sd := math.Sqrt(sq/n - mean*mean); math.Abs(mean-1.15) > 0.005 || math.Abs(sd-0.7/math.Sqrt(12)) > 0.005 {
		t.Errorf("factors: mean %.4f, sd %.4f; want uniform on [0.8, 1.5): 1.15, %.4f", mean, sd, 0.7/math.Sqrt(12))
	}
	// Channel 0 holds 10, 20, 30, 40 (mean 25), channel 1 0, 0, 250, 250
	// (mean 125): with factor 2, channel 0 becomes (x-25)·2+25 = -5 (clipped
	// to 0), 15, 35, 55; channel 1 -125 (0) and 375 (255).
	x := []float32{10, 0, 20, 0, 30, 250, 40, 250}
	y := make([]float32, len(x))
	contrast(p, 2, x, y)
	if want := []float32{0, 0, 15, 0, 35, 255, 55, 255}; !slices.Equal(y, want) {
		t.Errorf("contrast 2: %v, want %v", y, want)
	}
	sv := StepValues(4, 0)
	got := make([]float32, 2*len(x))
	TransformForward(p, sv[:], 2, append(slices.Clone(x), x...), got)
	for b := range 2 {
		want := make([]float32, len(x))
		contrast(p, p.SampleDelta(4, uint64(b)), x, want)
		if !slices.Equal(got[b*len(x):(b+1)*len(x)], want) {
			t.Errorf("image %d: %v, want %v", b, got[b*len(x):(b+1)*len(x)], want)
		}
	}
	if p.SampleDelta(4, 0) == p.SampleDelta(4, 1) {
		t.Error("two images got the same factor")
	}
}

// TestCropOffsets: a crop's offsets are whole numbers drawn uniformly
// from 0 to H-CropH and 0 to W-CropW (each count within 5% of its share
// over 20,000 images), and the shifted image's top-left window is the
// input's window at those offsets, exactly.
func TestCropOffsets(t *testing.T) {
	p := TransformParams{Kind: TransformCrop, CropH: 3, CropW: 6, Interpolation: InterpolationNearest, Fill: FillConstant, Key: 8, H: 7, W: 9, C: 2}
	const n = 20000
	var rows [5]int
	var cols [4]int
	for s := range uint64(n) {
		a := p.SampleTransform(5, s)
		dy, dx := a[5], a[2]
		if dy != float32(int(dy)) || dx != float32(int(dx)) || dy < 0 || dy > 4 || dx < 0 || dx > 3 || a[0] != 1 || a[4] != 1 || a[1] != 0 || a[3] != 0 {
			t.Fatalf("sample %d: map %v: want a shift by whole rows in [0, 4] and columns in [0, 3]", s, a)
		}
		rows[int(dy)]++
		cols[int(dx)]++
	}
	for i, c := range rows {
		if math.Abs(float64(c)-n/5) > 0.05*n/5 {
			t.Errorf("row offset %d drawn %d times of %d, want about %d", i, c, n, n/5)
		}
	}
	for i, c := range cols {
		if math.Abs(float64(c)-n/4) > 0.05*n/4 {
			t.Errorf("column offset %d drawn %d times of %d, want about %d", i, c, n, n/4)
		}
	}
	x := make([]float32, 3*7*9*2)
	for i := range x {
		x[i] = float32(i)
	}
	y := make([]float32, len(x))
	sv := StepValues(5, 0)
	TransformForward(p, sv[:], 3, x, y)
	for b := range 3 {
		a := p.SampleTransform(5, uint64(b))
		dy, dx := int(a[5]), int(a[2])
		for r := range p.CropH {
			for c := range p.CropW {
				for ch := range 2 {
					got, want := y[((b*7+r)*9+c)*2+ch], x[((b*7+r+dy)*9+c+dx)*2+ch]
					if got != want {
						t.Fatalf("image %d (offsets %d, %d): window pixel (%d, %d, %d) is %v, want %v", b, dy, dx, r, c, ch, got, want)
					}
				}
			}
		}
	}
}
