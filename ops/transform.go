package ops

import (
	"fmt"
	"hash"
	"math"
	"slices"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TransformKind is the family of the random transforms an ImageTransform
// op draws, one per sample: Keras' RandomFlip, RandomTranslation,
// RandomZoom, RandomRotation, RandomBrightness, RandomContrast and
// RandomCrop.
type TransformKind int

const (
	// TransformFlip mirrors the image left to right (Horizontal) and top
	// to bottom (Vertical), each with probability 1/2 per sample.
	TransformFlip TransformKind = iota + 1
	// TransformTranslation shifts the image down by a fraction of its
	// height drawn uniformly from Height (lower, upper), and right by one
	// of its width drawn from Width.
	TransformTranslation
	// TransformZoom scales the sampled region about the image's centre by
	// 1+h down and 1+w across, h drawn from Height and w from Width (h
	// for both with KeepAspect): a positive factor zooms out, as Keras'.
	TransformZoom
	// TransformRotation turns the image about its centre by an angle
	// drawn uniformly from Height (lower, upper), fractions of a full
	// turn: counter-clockwise for positive angles, as Keras'.
	TransformRotation
	// TransformBrightness moves no pixel: it adds to every value of the
	// image one delta, a fraction drawn uniformly from Height (lower,
	// upper) of ValueRange's width, and clips the sums to ValueRange, as
	// Keras' RandomBrightness.
	TransformBrightness
	// TransformContrast moves no pixel: it scales each channel of the
	// image about its mean over the image by one factor drawn uniformly
	// from Height (lower, upper), (x - mean)·factor + mean, and clips the
	// results to ValueRange, as Keras' RandomContrast (tf.image's
	// adjust_contrast, then a clip to (0, 255)).
	TransformContrast
	// TransformCrop shifts the image up by a whole number of rows drawn
	// uniformly from 0 to H-CropH and left by one of columns from 0 to
	// W-CropW, so that its top-left CropH×CropW pixels are a random
	// window of it (Keras' RandomCrop then crops them, with Crop2D).
	TransformCrop
)

var transformNames = [...]string{TransformFlip: "flip", TransformTranslation: "translation", TransformZoom: "zoom",
	TransformRotation: "rotation", TransformBrightness: "brightness", TransformContrast: "contrast", TransformCrop: "crop"}

func (k TransformKind) String() string {
	if k <= 0 || int(k) >= len(transformNames) {
		return fmt.Sprintf("TransformKind(%d)", int(k))
	}
	return transformNames[k]
}

// Interpolation is how a transformed image reads its input between
// pixels, TensorFlow's ImageProjectiveTransformV3 interpolation.
type Interpolation int

const (
	// InterpolationBilinear weighs the four pixels around the point.
	InterpolationBilinear Interpolation = iota + 1
	// InterpolationNearest reads the pixel nearest the point, halves
	// rounded away from zero.
	InterpolationNearest
)

var interpolationNames = [...]string{InterpolationBilinear: "bilinear", InterpolationNearest: "nearest"}

func (i Interpolation) String() string {
	if i <= 0 || int(i) >= len(interpolationNames) {
		return fmt.Sprintf("Interpolation(%d)", int(i))
	}
	return interpolationNames[i]
}

// ParseInterpolation reads Keras' interpolation argument: "bilinear" or
// "nearest".
func ParseInterpolation(s string) (Interpolation, error) {
	for i, n := range interpolationNames {
		if n != "" && n == s {
			return Interpolation(i), nil
		}
	}
	return 0, fmt.Errorf("interpolation %q: give \"bilinear\" or \"nearest\"", s)
}

// FillMode is what a transformed image reads outside its input,
// TensorFlow's ImageProjectiveTransformV3 fill modes.
type FillMode int

const (
	// FillReflect mirrors the image about its edges: d c b a | a b c d |
	// d c b a.
	FillReflect FillMode = iota + 1
	// FillWrap repeats it: a b c d | a b c d | a b c d.
	FillWrap
	// FillConstant reads FillValue: k k k k | a b c d | k k k k.
	FillConstant
	// FillNearest repeats the edge pixel: a a a a | a b c d | d d d d.
	FillNearest
)

var fillNames = [...]string{FillReflect: "reflect", FillWrap: "wrap", FillConstant: "constant", FillNearest: "nearest"}

func (f FillMode) String() string {
	if f <= 0 || int(f) >= len(fillNames) {
		return fmt.Sprintf("FillMode(%d)", int(f))
	}
	return fillNames[f]
}

// ParseFillMode reads Keras' fill_mode argument: "reflect", "wrap",
// "constant" or "nearest".
func ParseFillMode(s string) (FillMode, error) {
	for i, n := range fillNames {
		if n != "" && n == s {
			return FillMode(i), nil
		}
	}
	return 0, fmt.Errorf("fill mode %q: give \"reflect\", \"wrap\", \"constant\" or \"nearest\"", s)
}

// TransformParams describe an ImageTransform op: which transforms it
// draws, how it samples its input, and its key. H, W and C are the
// images' height, width and channels (channels last).
type TransformParams struct {
	Kind                 TransformKind
	Horizontal, Vertical bool       // TransformFlip
	Height, Width        [2]float64 // TransformTranslation, TransformZoom, TransformRotation, TransformBrightness and TransformContrast (Height): (lower, upper)
	ValueRange           [2]float64 // TransformBrightness and TransformContrast: the values' range, (0, 255) in Keras
	KeepAspect           bool       // TransformZoom: the width's factor is the height's
	CropH, CropW         int        // TransformCrop: the window's size
	Interpolation        Interpolation
	Fill                 FillMode
	FillValue            float64
	Key                  uint64
	H, W, C              int
}

func (p TransformParams) String() string {
	var what string
	switch p.Kind {
	case TransformFlip:
		what = fmt.Sprintf("flip horizontal=%t vertical=%t", p.Horizontal, p.Vertical)
	case TransformCrop:
		what = fmt.Sprintf("crop %dx%d", p.CropH, p.CropW)
	default:
		what = fmt.Sprintf("%v height %v width %v", p.Kind, p.Height, p.Width)
	}
	return fmt.Sprintf("%s, %v, fill %v (%v), key %#x, %dx%dx%d", what, p.Interpolation, p.Fill, p.FillValue, p.Key, p.H, p.W, p.C)
}

// uniform24 is a random word's top 24 bits as a float32 in [0, 1), exact.
func uniform24(w uint32) float32 { return float32(w>>8) * (1.0 / (1 << 24)) }

// lerp is lo + u·(hi-lo), each operation rounded to float32.
func lerp(r [2]float64, u float32) float32 {
	lo, hi := float32(r[0]), float32(r[1])
	return lo + float32(u*float32(hi-lo))
}

// SampleTransform is the affine map p draws for the sample of the given
// index in the step's whole batch: an output pixel (x, y) reads the input
// at (a[0]x + a[1]y + a[2], a[3]x + a[4]y + a[5]), as the first six of
// TensorFlow's eight transform values. Its random words are Philox4x32-10
// with counter (sample low and high 32 bits, step low and high 32 bits)
// and key (Key low, high 32 bits); a word's top 24 bits make a uniform
// u in [0, 1), and a flip is a word's top bit. Each value is computed in
// float32, one rounding per operation (the CUDA kernel's _rn intrinsics).
func (p TransformParams) SampleTransform(step, sample uint64) [6]float32 {
	w := Philox4x32([4]uint32{uint32(sample), uint32(sample >> 32), uint32(step), uint32(step >> 32)},
		[2]uint32{uint32(p.Key), uint32(p.Key >> 32)})
	a := [6]float32{1, 0, 0, 0, 1, 0}
	h, wd := float32(p.H), float32(p.W)
	switch p.Kind {
	case TransformFlip:
		if p.Horizontal && w[0]>>31 != 0 {
			a[0], a[2] = -1, wd-1
		}
		if p.Vertical && w[1]>>31 != 0 {
			a[4], a[5] = -1, h-1
		}
	case TransformTranslation:
		dy := float32(lerp(p.Height, uniform24(w[0])) * h)
		dx := float32(lerp(p.Width, uniform24(w[1])) * wd)
		a[2], a[5] = -dx, -dy
	case TransformZoom:
		// Keras draws a zoom from (1+lower, 1+upper).
		zy := lerp([2]float64{1 + p.Height[0], 1 + p.Height[1]}, uniform24(w[0]))
		zx := zy
		if !p.KeepAspect {
			zx = lerp([2]float64{1 + p.Width[0], 1 + p.Width[1]}, uniform24(w[1]))
		}
		a[0], a[4] = zx, zy
		a[2] = float32(float32(float32(wd-1)/2) * float32(1-zx))
		a[5] = float32(float32(float32(h-1)/2) * float32(1-zy))
	case TransformRotation:
		// Keras draws the angle from (2π·lower, 2π·upper).
		theta := lerp([2]float64{2 * math.Pi * p.Height[0], 2 * math.Pi * p.Height[1]}, uniform24(w[0]))
		s64, c64 := SinCos(float64(theta))
		s, c := float32(s64), float32(c64)
		w1, h1 := wd-1, h-1
		a[0], a[1], a[3], a[4] = c, -s, s, c
		a[2] = float32(w1-float32(float32(c*w1)-float32(s*h1))) / 2
		a[5] = float32(h1-float32(float32(s*w1)+float32(c*h1))) / 2
	case TransformCrop:
		a[5] = cropOffset(uniform24(w[0]), p.H-p.CropH+1)
		a[2] = cropOffset(uniform24(w[1]), p.W-p.CropW+1)
	}
	return a
}

// cropOffset is a whole number drawn uniformly from 0 to n-1 with u:
// floor(u·n) in float32, at most n-1.
func cropOffset(u float32, n int) float32 {
	nf := float32(n)
	return min(float32(math.Floor(float64(float32(u*nf)))), nf-1)
}

// SinCos returns sin x and cos x for |x| up to a few turns, computed with
// +, -, × and ÷ only, each rounded to float64 (no fused multiply-add): x
// is reduced to [-π, π] by a whole number of turns, then summed as 24
// terms of each Taylor series. The CUDA kernel's gk_sincos does the same
// operations, so the CPU and the GPU rotate by the same bits, which their
// math libraries' sin and cos do not promise. Within 2e-15 of math.Sin
// and math.Cos for |x| up to 13 (two turns): far below the float32 the
// rotation is computed in.
func SinCos(x float64) (sin, cos float64) {
	const twoPi = 2 * math.Pi
	k := math.Round(float64(x / twoPi))
	x = float64(x - float64(k*twoPi))
	x2 := float64(x * x)
	st, ct := x, 1.0 // the series' current terms
	sin, cos = st, ct
	for n := 1; n <= 24; n++ {
		st = float64(float64(st*-x2) / float64((2*n)*(2*n+1)))
		ct = float64(float64(ct*-x2) / float64((2*n-1)*(2*n)))
		sin, cos = float64(sin+st), float64(cos+ct)
	}
	return sin, cos
}

// mapCoord maps a coordinate along an axis of n pixels into the image as
// the fill mode says (TensorFlow's map_coordinate), in float32: reflect
// about the edges, wrap, or clamp; FillConstant leaves it, for the read
// to give the fill value outside.
func mapCoord(c float32, n int, fill FillMode) float32 {
	last := float32(n - 1)
	switch fill {
	case FillReflect:
		if n <= 1 {
			return 0
		}
		sz2 := float32(2 * n)
		if c < 0 {
			c = float32(sz2*float32(int64(-c/sz2))) + c
			if c < float32(-n) {
				c += sz2
			} else {
				c = -c - 1
			}
		} else if c > last {
			c -= float32(sz2 * float32(int64(c/sz2)))
			if c >= float32(n) {
				c = sz2 - c - 1
			}
		}
	case FillWrap:
		if n <= 1 {
			return 0
		}
		nf := float32(n)
		if c < 0 || c > last {
			c -= float32(nf * float32(math.Floor(float64(float32(c/nf)))))
		}
	case FillConstant:
		return c
	}
	return min(max(c, 0), last)
}

// TransformImage writes into y the image x (h×w×c, channels last)
// sampled at the map a, as p's interpolation and fill mode say: the one
// place the sampling is defined, which the CUDA kernel gk_image_transform
// follows operation for operation.
func TransformImage(p TransformParams, a [6]float32, x, y []float32) { transformImage(p, a, x, y) }

func transformImage[T float](p TransformParams, a [6]float32, x, y []T) {
	h, w, c := p.H, p.W, p.C
	fill := T(float32(p.FillValue))
	read := func(iy, ix float32, ch int) T {
		if iy >= 0 && iy < float32(h) && ix >= 0 && ix < float32(w) {
			return x[(int(iy)*w+int(ix))*c+ch]
		}
		return fill
	}
	for oy := range h {
		for ox := range w {
			fx, fy := float32(ox), float32(oy)
			inX := float32(float32(a[0]*fx)+float32(a[1]*fy)) + a[2]
			inY := float32(float32(a[3]*fx)+float32(a[4]*fy)) + a[5]
			mx, my := mapCoord(inX, w, p.Fill), mapCoord(inY, h, p.Fill)
			out := y[(oy*w+ox)*c : (oy*w+ox+1)*c]
			if p.Interpolation == InterpolationNearest {
				rx, ry := float32(math.Round(float64(mx))), float32(math.Round(float64(my)))
				for ch := range out {
					out[ch] = read(ry, rx, ch)
				}
				continue
			}
			x0, y0 := float32(math.Floor(float64(mx))), float32(math.Floor(float64(my)))
			x1, y1 := x0+1, y0+1
			wx0, wx1 := T(x1-mx), T(mx-x0)
			wy0, wy1 := T(y1-my), T(my-y0)
			for ch := range out {
				top := T(wx0*read(y0, x0, ch)) + T(wx1*read(y0, x1, ch))
				bottom := T(wx0*read(y1, x0, ch)) + T(wx1*read(y1, x1, ch))
				out[ch] = T(wy0*top) + T(wy1*bottom)
			}
		}
	}
}

// TransformForward writes into y the images x (batch of them) each
// transformed by the map p draws for it (SampleTransform) at the step
// and first row that stepValues hold (StepValues): the ImageTransform
// node's Do and the CPU's kernel.
func TransformForward(p TransformParams, stepValues []float32, batch int, x, y []float32) {
	transformBatch(p, stepValues, batch, x, y)
}

func transformBatch[T float](p TransformParams, stepValues []float32, batch int, x, y []T) {
	var v [4]float64
	for i := range v {
		v[i] = float64(stepValues[i])
	}
	step, first := stepOf(v, 1)
	per := p.H * p.W * p.C
	parallel(batch, per, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			switch p.Kind {
			case TransformBrightness:
				brighten(p, p.SampleDelta(step, uint64(first+b)), x[b*per:(b+1)*per], y[b*per:(b+1)*per])
				continue
			case TransformContrast:
				contrast(p, p.SampleDelta(step, uint64(first+b)), x[b*per:(b+1)*per], y[b*per:(b+1)*per])
				continue
			}
			a := p.SampleTransform(step, uint64(first+b))
			transformImage(p, a, x[b*per:(b+1)*per], y[b*per:(b+1)*per])
		}
	})
}

// SampleDelta is the value a TransformBrightness adds to the image of the
// given index in the step's whole batch: u from the random words' first
// (as SampleTransform's), the fraction lerp(Height, u) of ValueRange's
// width, each operation rounded to float32. For a TransformContrast it is
// the factor the image's contrast is scaled by: lerp((1-lower, 1+upper),
// u), Keras' range.
func (p TransformParams) SampleDelta(step, sample uint64) float32 {
	w := Philox4x32([4]uint32{uint32(sample), uint32(sample >> 32), uint32(step), uint32(step >> 32)},
		[2]uint32{uint32(p.Key), uint32(p.Key >> 32)})
	if p.Kind == TransformContrast {
		return lerp([2]float64{1 - p.Height[0], 1 + p.Height[1]}, uniform24(w[0]))
	}
	lo, hi := float32(p.ValueRange[0]), float32(p.ValueRange[1])
	return float32(lerp(p.Height, uniform24(w[0])) * float32(hi-lo))
}

// contrast writes into y the image x (p.H×p.W×p.C) with each channel
// scaled about its mean by factor, clipped to p.ValueRange: the mean the
// sum of the channel's values in double, in the image's order, divided
// by their count and rounded to float32 (as gk_image_transform computes
// it), then (x - mean)·factor + mean, each operation rounded.
func contrast[T float](p TransformParams, factor float32, x, y []T) {
	lo, hi, f := T(float32(p.ValueRange[0])), T(float32(p.ValueRange[1])), T(factor)
	n := p.H * p.W
	for ch := range p.C {
		var sum float64
		for i := range n {
			sum += float64(x[i*p.C+ch])
		}
		mean := T(float32(sum / float64(n)))
		for i := range n {
			v := T(T(x[i*p.C+ch]-mean)*f) + mean
			y[i*p.C+ch] = min(max(v, lo), hi)
		}
	}
}

// brighten writes x + delta, clipped to p.ValueRange, into y.
func brighten[T float](p TransformParams, delta float32, x, y []T) {
	lo, hi, d := T(float32(p.ValueRange[0])), T(float32(p.ValueRange[1])), T(delta)
	for i, v := range x {
		y[i] = min(max(v+d, lo), hi)
	}
}

// ImageTransform adds the node of the images x (batch, height, width,
// channels) each transformed by a map p draws for it at the training step
// held by step (StepValues): Keras' random geometric augmentations,
// drawn from the sample's index in the step's whole batch, so every
// device and every data-parallel replica draws the same. p.H, p.W and
// p.C are taken from x. It has no gradient: x must not need one.
func ImageTransform(x, step *gorgonia.Node, p TransformParams) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("image transform: the input must be images (batch, height, width, channels), got shape %v", s)
	}
	if step.Shape().TotalSize() != StepValueCount {
		return nil, fmt.Errorf("image transform: the step input must hold %d values (StepValues), got shape %v", StepValueCount, step.Shape())
	}
	if p.Interpolation != InterpolationBilinear && p.Interpolation != InterpolationNearest {
		return nil, fmt.Errorf("image transform: unknown interpolation %v", p.Interpolation)
	}
	if p.Fill < FillReflect || p.Fill > FillNearest {
		return nil, fmt.Errorf("image transform: unknown fill mode %v", p.Fill)
	}
	if p.Kind < TransformFlip || p.Kind > TransformCrop {
		return nil, fmt.Errorf("image transform: unknown transform %v", p.Kind)
	}
	if (p.Kind == TransformBrightness || p.Kind == TransformContrast) && !(p.ValueRange[0] < p.ValueRange[1]) {
		return nil, fmt.Errorf("image transform: %v: the value range must be (low, high) with low < high", p)
	}
	for _, v := range []float64{p.Height[0], p.Height[1], p.Width[0], p.Width[1], p.FillValue, p.ValueRange[0], p.ValueRange[1]} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("image transform: %v: the factors and the fill value must be finite numbers", p)
		}
	}
	p.H, p.W, p.C = s[1], s[2], s[3]
	if p.Kind == TransformCrop && (p.CropH < 1 || p.CropW < 1 || p.CropH > p.H || p.CropW > p.W) {
		return nil, fmt.Errorf("image transform: %v: the window must fit in the images", p)
	}
	return gorgonia.ApplyOp(transformOp{p: p}, x, step)
}

type transformOp struct {
	common
	p TransformParams
}

func (op transformOp) String() string        { return fmt.Sprintf("ImageTransform{%v}", op.p) }
func (op transformOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op transformOp) Hashcode() uint32      { return hashOf(op) }
func (op transformOp) Arity() int            { return 2 }

func (op transformOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: 4, Of: a}
	return hm.NewFnType(t, gorgonia.TensorType{Dims: 1, Of: a}, t)
}

func (op transformOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op transformOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	st, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	if !slices.Equal([]int(s[1:]), []int{op.p.H, op.p.W, op.p.C}) || st.Shape().TotalSize() != StepValueCount {
		return nil, fmt.Errorf("%v: inputs of shapes %v and %v", op, s, st.Shape())
	}
	var sv [StepValueCount]float32
	for i := range sv {
		e, _ := st.At(i)
		sv[i] = float32(toFloat(e))
	}
	out := newLike(x.Dtype(), s.Clone()...)
	switch od := out.Data().(type) {
	case []float32:
		transformBatch(op.p, sv[:], s[0], x.Data().([]float32), od)
	case []float64:
		transformBatch(op.p, sv[:], s[0], x.Data().([]float64), od)
	}
	return out, nil
}

func (op transformOp) DiffWRT(int) []bool { return []bool{false, false} }

func (op transformOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%v has no gradient: random augmentation layers must come before any layer with weights", op)
}
