package ops

import (
	"fmt"
	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Patches adds the node that gathers every window position of images x,
// (batch, h, w, c), into a row: the result is (batch·oh·ow, kh·kw·c), its
// columns ordered (row of the window, column of the window, channel). A
// convolution is Patches followed by Affine with the kernel, of Keras'
// shape (kh, kw, c, filters), read as a (kh·kw·c, filters) matrix; the
// product is then the (batch, oh, ow, filters) output, channels last.
// Padded positions read zero. inputGrad says whether gradients must flow
// back into x.
func Patches(x *gorgonia.Node, spec WindowSpec, inputGrad bool) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("patches: want images (batch, height, width, channels), got shape %v", s)
	}
	win, err := spec.On(s[0], s[1], s[2], s[3])
	if err != nil {
		return nil, fmt.Errorf("patches: %w", err)
	}
	return gorgonia.ApplyOp(patchesOp{win: win, inputGrad: inputGrad}, x)
}

type patchesOp struct {
	common
	win       Window
	inputGrad bool
}

func (op patchesOp) String() string {
	return fmt.Sprintf("Patches{%v, inputGrad=%t}", op.win, op.inputGrad)
}
func (op patchesOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op patchesOp) Hashcode() uint32      { return hashOf(op) }
func (op patchesOp) Arity() int            { return 1 }

func (op patchesOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: 4, Of: a}, gorgonia.TensorType{Dims: 2, Of: a})
}

func (op patchesOp) images() tensor.Shape {
	return tensor.Shape{op.win.Batch, op.win.H, op.win.W, op.win.C}
}

func (op patchesOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if !s.Eq(op.images()) {
		return nil, fmt.Errorf("%v: input has shape %v", op, s)
	}
	return tensor.Shape{op.win.Positions(), op.win.PatchSize()}, nil
}

func (op patchesOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	if !x.Shape().Eq(op.images()) {
		return nil, fmt.Errorf("%v: input has shape %v", op, x.Shape())
	}
	out := newLike(x.Dtype(), op.win.Positions(), op.win.PatchSize())
	switch od := out.Data().(type) {
	case []float32:
		patches(op.win, x.Data().([]float32), od)
	case []float64:
		patches(op.win, x.Data().([]float64), od)
	}
	return out, nil
}

func (op patchesOp) DiffWRT(inputs int) []bool { return []bool{op.inputGrad} }

func (op patchesOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if !op.inputGrad {
		return gorgonia.Nodes{nil}, nil
	}
	dx, err := gorgonia.ApplyOp(patchesGradOp{win: op.win}, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx}, nil
}

// patchesGradOp adds each patch value back to the pixel it was read from:
// the gradient of Patches.
type patchesGradOp struct {
	common
	win Window
}

func (op patchesGradOp) String() string        { return fmt.Sprintf("PatchesGrad{%v}", op.win) }
func (op patchesGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op patchesGradOp) Hashcode() uint32      { return hashOf(op) }
func (op patchesGradOp) Arity() int            { return 1 }

func (op patchesGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: 2, Of: a}, gorgonia.TensorType{Dims: 4, Of: a})
}

func (op patchesGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if !s.Eq(tensor.Shape{op.win.Positions(), op.win.PatchSize()}) {
		return nil, fmt.Errorf("%v: input has shape %v", op, s)
	}
	return tensor.Shape{op.win.Batch, op.win.H, op.win.W, op.win.C}, nil
}

func (op patchesGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	d, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	if d.Shape().TotalSize() != op.win.Positions()*op.win.PatchSize() {
		return nil, fmt.Errorf("%v: input has shape %v", op, d.Shape())
	}
	out := newLike(d.Dtype(), op.win.Batch, op.win.H, op.win.W, op.win.C)
	switch od := out.Data().(type) {
	case []float32:
		patchesBack(op.win, d.Data().([]float32), od)
	case []float64:
		patchesBack(op.win, d.Data().([]float64), od)
	}
	return out, nil
}

// patches writes every window position of x into a row of cols.
func patches[T float](w Window, x, cols []T) {
	row := w.PatchSize()
	parallel(w.Batch, w.OH*w.OW*row, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			img := x[b*w.H*w.W*w.C : (b+1)*w.H*w.W*w.C]
			for oh := 0; oh < w.OH; oh++ {
				for ow := 0; ow < w.OW; ow++ {
					dst := cols[((b*w.OH+oh)*w.OW+ow)*row:][:row]
					iw0 := ow*w.StrideW - w.PadLeft
					// Without dilation, a window row inside the image is one
					// run of KW·C values in the input.
					inside := w.DilationW == 1 && iw0 >= 0 && iw0+w.KW <= w.W
					for kh := 0; kh < w.KH; kh++ {
						ih := oh*w.StrideH + kh*w.DilationH - w.PadTop
						if inside && ih >= 0 && ih < w.H {
							copy(dst[kh*w.KW*w.C:][:w.KW*w.C], img[(ih*w.W+iw0)*w.C:])
							continue
						}
						for kw := 0; kw < w.KW; kw++ {
							iw := ow*w.StrideW + kw*w.DilationW - w.PadLeft
							d := dst[(kh*w.KW+kw)*w.C:][:w.C]
							if ih < 0 || ih >= w.H || iw < 0 || iw >= w.W {
								clear(d)
								continue
							}
							copy(d, img[(ih*w.W+iw)*w.C:][:w.C])
						}
					}
				}
			}
		}
	})
}

// patchesBack overwrites dx with the sum, for each pixel, of the patch
// values read from it.
func patchesBack[T float](w Window, cols, dx []T) {
	row := w.PatchSize()
	parallel(w.Batch, w.OH*w.OW*row, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			img := dx[b*w.H*w.W*w.C : (b+1)*w.H*w.W*w.C]
			clear(img)
			for oh := 0; oh < w.OH; oh++ {
				for ow := 0; ow < w.OW; ow++ {
					src := cols[((b*w.OH+oh)*w.OW+ow)*row:][:row]
					iw0 := ow*w.StrideW - w.PadLeft
					inside := w.DilationW == 1 && iw0 >= 0 && iw0+w.KW <= w.W
					for kh := 0; kh < w.KH; kh++ {
						ih := oh*w.StrideH + kh*w.DilationH - w.PadTop
						if ih < 0 || ih >= w.H {
							continue
						}
						if inside {
							// The window row is one run of KW·C values.
							addTo(img[(ih*w.W+iw0)*w.C:][:w.KW*w.C], src[kh*w.KW*w.C:][:w.KW*w.C])
							continue
						}
						for kw := 0; kw < w.KW; kw++ {
							iw := ow*w.StrideW + kw*w.DilationW - w.PadLeft
							if iw < 0 || iw >= w.W {
								continue
							}
							d := img[(ih*w.W+iw)*w.C:][:w.C]
							for c, v := range src[(kh*w.KW+kw)*w.C:][:w.C] {
								d[c] += v
							}
						}
					}
				}
			}
		}
	})
}

// addTo adds src into dst, with the AVX2 kernel for float32 (the same bits
// as the loop).
func addTo[T float](dst, src []T) {
	if d, ok := any(dst).([]float32); ok {
		avx2.AddTo(d, any(src).([]float32))
		return
	}
	for i, v := range src {
		dst[i] += v
	}
}
