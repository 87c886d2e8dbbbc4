package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Pad2DParams describe a Pad2D or a Crop2D op: Shape is the smaller of its
// images, (batch, height, width, channels), channels last, and the larger
// are them with Top and Bottom rows and Left and Right columns more. Pad2D
// takes the smaller and writes the larger, zeros around; Crop2D takes the
// larger and writes the smaller. Each is the other's gradient.
type Pad2DParams struct {
	Shape                    [4]int
	Top, Bottom, Left, Right int
}

// Small is the smaller images' shape: Pad2D's input, Crop2D's output.
func (p Pad2DParams) Small() []int { return p.Shape[:] }

// Large is the larger images' shape: Pad2D's output, Crop2D's input.
func (p Pad2DParams) Large() []int {
	s := p.Shape
	return []int{s[0], s[1] + p.Top + p.Bottom, s[2] + p.Left + p.Right, s[3]}
}

func (p Pad2DParams) String() string {
	return fmt.Sprintf("%v, top=%d bottom=%d left=%d right=%d", p.Shape, p.Top, p.Bottom, p.Left, p.Right)
}

// Pad2D adds the node padding the images x, (batch, height, width,
// channels), with top and bottom rows and left and right columns of
// zeros, as Keras' ZeroPadding2D does. Its gradient is Crop2D's.
func Pad2D(x *gorgonia.Node, top, bottom, left, right int) (*gorgonia.Node, error) {
	p, err := pad2DParams("pad2d", x, top, bottom, left, right)
	if err != nil {
		return nil, err
	}
	p.Shape = [4]int(x.Shape())
	return gorgonia.ApplyOp(padOp{p: p}, x)
}

// Crop2D adds the node cropping top and bottom rows and left and right
// columns off the images x, (batch, height, width, channels), as Keras'
// Cropping2D does; at least one row and one column must be left. Its
// gradient is Pad2D's: zeros where the crop took values away.
func Crop2D(x *gorgonia.Node, top, bottom, left, right int) (*gorgonia.Node, error) {
	p, err := pad2DParams("crop2d", x, top, bottom, left, right)
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	h, w := s[1]-top-bottom, s[2]-left-right
	if h <= 0 || w <= 0 {
		return nil, fmt.Errorf("crop2d: cropping %d+%d rows and %d+%d columns off images of shape %v leaves %d×%d: at least one row and one column must remain",
			top, bottom, left, right, s, h, w)
	}
	p.Shape = [4]int{s[0], h, w, s[3]}
	return gorgonia.ApplyOp(padOp{p: p, crop: true}, x)
}

func pad2DParams(what string, x *gorgonia.Node, top, bottom, left, right int) (Pad2DParams, error) {
	if err := checkImages(what, x); err != nil {
		return Pad2DParams{}, err
	}
	if top < 0 || bottom < 0 || left < 0 || right < 0 {
		return Pad2DParams{}, fmt.Errorf("%s: top %d, bottom %d, left %d, right %d: none may be negative", what, top, bottom, left, right)
	}
	return Pad2DParams{Top: top, Bottom: bottom, Left: left, Right: right}, nil
}

// checkImages refuses an input that is not images (batch, height, width,
// channels) of at least one value on each axis.
func checkImages(what string, x *gorgonia.Node) error {
	if x.Dims() != 4 {
		return fmt.Errorf("%s: input of shape %v: want images (batch, height, width, channels)", what, x.Shape())
	}
	for _, d := range x.Shape() {
		if d <= 0 {
			return fmt.Errorf("%s: input of shape %v has an empty axis", what, x.Shape())
		}
	}
	return nil
}

// padOp pads (crop false) or crops images by p.
type padOp struct {
	common
	p    Pad2DParams
	crop bool
}

func (op padOp) String() string {
	if op.crop {
		return fmt.Sprintf("Crop2D{%v}", op.p)
	}
	return fmt.Sprintf("Pad2D{%v}", op.p)
}
func (op padOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op padOp) Hashcode() uint32      { return hashOf(op) }
func (op padOp) Arity() int            { return 1 }

func (op padOp) Type() hm.Type {
	t := gorgonia.TensorType{Dims: 4, Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t)
}

// shapes are the op's input and output shapes.
func (op padOp) shapes() (in, out []int) {
	if op.crop {
		return op.p.Large(), op.p.Small()
	}
	return op.p.Small(), op.p.Large()
}

func (op padOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	want, out := op.shapes()
	if err := checkShapes(op, s, want); err != nil {
		return nil, err
	}
	return tensor.Shape(out), nil
}

func (op padOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	inShape, outShape := op.shapes()
	ds, err := denseArgs(op, args, inShape)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), outShape...)
	switch od := out.Data().(type) {
	case []float32:
		padOrCrop(op.p, op.crop, ds[0].Data().([]float32), od)
	case []float64:
		padOrCrop(op.p, op.crop, ds[0].Data().([]float64), od)
	}
	return out, nil
}

func (op padOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: a padding's gradient is the crop of the output's gradient, a
// crop's the padding of it.
func (op padOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g, err := gorgonia.ApplyOp(padOp{p: op.p, crop: !op.crop}, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{g}, nil
}

// padOrCrop writes into out the padding (crop false) or crop of x by p:
// every value of out, the padding's zeros included.
func padOrCrop[T float](p Pad2DParams, crop bool, x, out []T) {
	n, h, w, c := p.Shape[0], p.Shape[1], p.Shape[2], p.Shape[3]
	lw := w + p.Left + p.Right
	lh := h + p.Top + p.Bottom
	if !crop {
		clear(out)
	}
	row := w * c
	for b := range n {
		for i := range h {
			small := (b*h + i) * row
			large := ((b*lh+i+p.Top)*lw + p.Left) * c
			if crop {
				copy(out[small:small+row], x[large:large+row])
			} else {
				copy(out[large:large+row], x[small:small+row])
			}
		}
	}
}

// Pad2DForward writes the images x, of shape p.Small(), padded with zeros
// into out, of p.Large(): every value of out. It is a Pad2D node's Do and
// a Crop2D's gradient.
func Pad2DForward(p Pad2DParams, x, out []float32) { padOrCrop(p, false, x, out) }

// Crop2DForward writes the images x, of shape p.Large(), cropped into out,
// of p.Small(). It is a Crop2D node's Do and a Pad2D's gradient.
func Crop2DForward(p Pad2DParams, x, out []float32) { padOrCrop(p, true, x, out) }

// UpSampleParams describe an UpSample2D op or its gradient: Shape is the
// input images', (batch, height, width, channels), each pixel repeated
// SizeH times down and SizeW times across.
type UpSampleParams struct {
	Shape        [4]int
	SizeH, SizeW int
}

// In is the input images' shape.
func (p UpSampleParams) In() []int { return p.Shape[:] }

// Out is the output images' shape.
func (p UpSampleParams) Out() []int {
	s := p.Shape
	return []int{s[0], s[1] * p.SizeH, s[2] * p.SizeW, s[3]}
}

func (p UpSampleParams) String() string {
	return fmt.Sprintf("%v, size=%d×%d", p.Shape, p.SizeH, p.SizeW)
}

// UpSample2D adds the node repeating each pixel of the images x, (batch,
// height, width, channels), sizeH times down and sizeW times across, as
// Keras' UpSampling2D with interpolation "nearest" does. The gradient of a
// pixel is the sum of its block of the output's gradient.
func UpSample2D(x *gorgonia.Node, sizeH, sizeW int) (*gorgonia.Node, error) {
	if err := checkImages("upsample2d", x); err != nil {
		return nil, err
	}
	if sizeH < 1 || sizeW < 1 {
		return nil, fmt.Errorf("upsample2d: size %d×%d: both must be at least 1", sizeH, sizeW)
	}
	return gorgonia.ApplyOp(upSampleOp{p: UpSampleParams{Shape: [4]int(x.Shape()), SizeH: sizeH, SizeW: sizeW}}, x)
}

// upSampleOp repeats each pixel (grad false), or sums each block of the
// output's gradient (grad true).
type upSampleOp struct {
	common
	p    UpSampleParams
	grad bool
}

func (op upSampleOp) String() string {
	if op.grad {
		return fmt.Sprintf("UpSample2DGrad{%v}", op.p)
	}
	return fmt.Sprintf("UpSample2D{%v}", op.p)
}
func (op upSampleOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op upSampleOp) Hashcode() uint32      { return hashOf(op) }
func (op upSampleOp) Arity() int            { return 1 }

func (op upSampleOp) Type() hm.Type {
	t := gorgonia.TensorType{Dims: 4, Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t)
}

func (op upSampleOp) shapes() (in, out []int) {
	if op.grad {
		return op.p.Out(), op.p.In()
	}
	return op.p.In(), op.p.Out()
}

func (op upSampleOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	want, out := op.shapes()
	if err := checkShapes(op, s, want); err != nil {
		return nil, err
	}
	return tensor.Shape(out), nil
}

func (op upSampleOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	inShape, outShape := op.shapes()
	ds, err := denseArgs(op, args, inShape)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), outShape...)
	switch od := out.Data().(type) {
	case []float32:
		upSample(op.p, op.grad, ds[0].Data().([]float32), od)
	case []float64:
		upSample(op.p, op.grad, ds[0].Data().([]float64), od)
	}
	return out, nil
}

func (op upSampleOp) DiffWRT(int) []bool { return []bool{!op.grad} }

// SymDiff: the gradient of each input pixel is the sum of its block of
// the output's gradient.
func (op upSampleOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: no second derivative", op)
	}
	g, err := gorgonia.ApplyOp(upSampleOp{p: op.p, grad: true}, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{g}, nil
}

// upSample writes into out the upsampling of x by p (grad false), or the
// gradient of its input given x, the output's gradient: each input
// pixel's block summed in reading order (down the block's rows, across
// each), as gk_upsample2d_grad sums it.
func upSample[T float](p UpSampleParams, grad bool, x, out []T) {
	n, h, w, c := p.Shape[0], p.Shape[1], p.Shape[2], p.Shape[3]
	sh, sw := p.SizeH, p.SizeW
	oh, ow := h*sh, w*sw
	for b := range n {
		for i := range h {
			for j := range w {
				px := ((b*h+i)*w + j) * c
				for k := range c {
					if grad {
						var s T
						for a := range sh {
							for e := range sw {
								s += x[((b*oh+i*sh+a)*ow+j*sw+e)*c+k]
							}
						}
						out[px+k] = s
						continue
					}
					for a := range sh {
						for e := range sw {
							out[((b*oh+i*sh+a)*ow+j*sw+e)*c+k] = x[px+k]
						}
					}
				}
			}
		}
	}
}

// UpSampleForward writes the images x, of shape p.In(), upsampled into
// out, of p.Out(), as an UpSample2D node's Do.
func UpSampleForward(p UpSampleParams, x, out []float32) { upSample(p, false, x, out) }

// UpSampleBackward writes the gradient of an UpSample2D's input, of shape
// p.In(), given dy, its output's, into out: each pixel's block of dy
// summed, in float32, down the block's rows and across each.
func UpSampleBackward(p UpSampleParams, dy, out []float32) { upSample(p, true, dy, out) }
