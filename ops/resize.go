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

// ResizeParams describe a Resize op: the images of Shape (batch, height,
// width, channels), of which the box of BoxH×BoxW pixels from row Top and
// column Left is resized to OutH×OutW, as TensorFlow's tf.image.resize
// does without antialiasing (half-pixel centres).
type ResizeParams struct {
	Shape         [4]int
	Top, Left     int
	BoxH, BoxW    int
	OutH, OutW    int
	Interpolation Interpolation
}

// In is the input images' shape.
func (p ResizeParams) In() []int { return p.Shape[:] }

// Out is the output images' shape.
func (p ResizeParams) Out() []int { return []int{p.Shape[0], p.OutH, p.OutW, p.Shape[3]} }

func (p ResizeParams) String() string {
	return fmt.Sprintf("%v, box %d×%d at (%d, %d) -> %d×%d, %v", p.Shape, p.BoxH, p.BoxW, p.Top, p.Left, p.OutH, p.OutW, p.Interpolation)
}

// check says what is wrong with p, or returns nil.
func (p ResizeParams) check() error {
	for _, d := range p.Shape {
		if d <= 0 {
			return fmt.Errorf("resize: input of shape %v has an empty axis", p.Shape)
		}
	}
	if p.BoxH < 1 || p.BoxW < 1 || p.OutH < 1 || p.OutW < 1 {
		return fmt.Errorf("resize: %v: the box and the output need at least one row and one column", p)
	}
	if p.Top < 0 || p.Left < 0 || p.Top+p.BoxH > p.Shape[1] || p.Left+p.BoxW > p.Shape[2] {
		return fmt.Errorf("resize: %v: the box does not lie within the images", p)
	}
	if p.Interpolation != InterpolationBilinear && p.Interpolation != InterpolationNearest {
		return fmt.Errorf("resize: unknown interpolation %v", p.Interpolation)
	}
	return nil
}

// ResizeCoord is where output row (or column) i of out reads an axis of
// in pixels, TensorFlow's half-pixel scaler in float32: with scale
// in/out, bilinear reads lo and hi weighted by 1-frac and frac, at
// (i+0.5)·scale-0.5 (lo its floor, at least 0; hi its ceiling, at most
// in-1; frac the distance from its floor); nearest reads lo =
// min(floor((i+0.5)·scale), in-1) (hi = lo, frac 0).
func ResizeCoord(i, in, out int, nearest bool) (lo, hi int, frac float32) {
	scale := float32(in) / float32(out)
	c := float32(float32(i) + 0.5)
	if nearest {
		lo = max(min(int(math.Floor(float64(float32(c*scale)))), in-1), 0)
		return lo, lo, 0
	}
	v := float32(float32(c*scale) - 0.5)
	fl := float32(math.Floor(float64(v)))
	return max(int(fl), 0), min(int(math.Ceil(float64(v))), in-1), float32(v - fl)
}

// resizeImages writes the images x resized by p into y: the one place
// the sampling is defined, which the CUDA kernel gk_resize follows
// operation for operation. Bilinear computes TensorFlow's
// top + (bottom-top)·fy with top = tl + (tr-tl)·fx, each operation
// rounded.
func resizeImages[T float](p ResizeParams, x, y []T) {
	n, h, w, c := p.Shape[0], p.Shape[1], p.Shape[2], p.Shape[3]
	nearest := p.Interpolation == InterpolationNearest
	type coord struct {
		lo, hi int
		frac   T
	}
	coords := func(out, in, at int) []coord {
		cs := make([]coord, out)
		for i := range cs {
			lo, hi, f := ResizeCoord(i, in, out, nearest)
			cs[i] = coord{lo + at, hi + at, T(f)}
		}
		return cs
	}
	ys, xs := coords(p.OutH, p.BoxH, p.Top), coords(p.OutW, p.BoxW, p.Left)
	parallel(n, p.OutH*p.OutW*c, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			img := x[b*h*w*c : (b+1)*h*w*c]
			out := y[b*p.OutH*p.OutW*c:]
			for oy, cy := range ys {
				top, bottom := img[cy.lo*w*c:], img[cy.hi*w*c:]
				for ox, cx := range xs {
					o := out[(oy*p.OutW+ox)*c : (oy*p.OutW+ox+1)*c]
					if nearest {
						copy(o, top[cx.lo*c:(cx.lo+1)*c])
						continue
					}
					for k := range o {
						tl, tr := top[cx.lo*c+k], top[cx.hi*c+k]
						bl, br := bottom[cx.lo*c+k], bottom[cx.hi*c+k]
						t := tl + T(T(tr-tl)*cx.frac)
						bt := bl + T(T(br-bl)*cx.frac)
						o[k] = t + T(T(bt-t)*cy.frac)
					}
				}
			}
		}
	})
}

// ResizeForward writes the images x, of shape p.In(), resized into y, of
// p.Out(): a Resize node's Do and the CPU's kernel.
func ResizeForward(p ResizeParams, x, y []float32) { resizeImages(p, x, y) }

// Resize adds the node of the images x, (batch, height, width, channels),
// whose box p says (p.Shape is taken from x) resized to p.OutH×p.OutW:
// Keras' Resizing and CenterCrop. It has no gradient: x must not need
// one.
func Resize(x *gorgonia.Node, p ResizeParams) (*gorgonia.Node, error) {
	if err := checkImages("resize", x); err != nil {
		return nil, err
	}
	p.Shape = [4]int(x.Shape())
	if err := p.check(); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(resizeOp{p: p}, x)
}

type resizeOp struct {
	common
	p ResizeParams
}

func (op resizeOp) String() string        { return fmt.Sprintf("Resize{%v}", op.p) }
func (op resizeOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op resizeOp) Hashcode() uint32      { return hashOf(op) }
func (op resizeOp) Arity() int            { return 1 }

func (op resizeOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: 4, Of: a}
	return hm.NewFnType(t, t)
}

func (op resizeOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if _, err := shapeOf(op, in, 0); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Out()), nil
}

func (op resizeOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	if !slices.Equal([]int(x.Shape()), op.p.In()) {
		return nil, fmt.Errorf("%v: input of shape %v", op, x.Shape())
	}
	out := newLike(x.Dtype(), op.p.Out()...)
	switch od := out.Data().(type) {
	case []float32:
		resizeImages(op.p, x.Data().([]float32), od)
	case []float64:
		resizeImages(op.p, x.Data().([]float64), od)
	}
	return out, nil
}

func (op resizeOp) DiffWRT(int) []bool { return []bool{false} }

func (op resizeOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%v has no gradient: put Resizing (and CenterCrop or RandomCrop when they resize) before any layer with weights", op)
}
