package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PoolKind is how a pooling window combines its values.
type PoolKind int

const (
	// MaxPool takes the largest value of the window.
	MaxPool PoolKind = iota + 1
	// AvgPool takes the mean of the window's values, padding left out, as
	// Keras does (PyTorch's count_include_pad=False).
	AvgPool
)

func (k PoolKind) String() string {
	switch k {
	case MaxPool:
		return "max"
	case AvgPool:
		return "average"
	}
	return fmt.Sprintf("PoolKind(%d)", int(k))
}

// Pool adds the node that pools images x, (batch, h, w, c), over windows
// placed by spec: the result is (batch, oh, ow, c). Dilation is not
// allowed. inputGrad says whether gradients must flow back into x.
func Pool(x *gorgonia.Node, kind PoolKind, spec WindowSpec, inputGrad bool) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("%v pooling: want images (batch, height, width, channels), got shape %v", kind, s)
	}
	if kind != MaxPool && kind != AvgPool {
		return nil, fmt.Errorf("pooling: unknown kind %v", kind)
	}
	if spec.Dilation != [2]int{} && spec.Dilation != [2]int{1, 1} {
		return nil, fmt.Errorf("%v pooling: dilation %v is not supported", kind, spec.Dilation)
	}
	win, err := spec.On(s[0], s[1], s[2], s[3])
	if err != nil {
		return nil, fmt.Errorf("%v pooling: %w", kind, err)
	}
	return gorgonia.ApplyOp(poolOp{kind: kind, win: win, inputGrad: inputGrad}, x)
}

type poolOp struct {
	common
	kind      PoolKind
	win       Window
	inputGrad bool
}

func (op poolOp) String() string {
	return fmt.Sprintf("Pool{%v %v, inputGrad=%t}", op.kind, op.win, op.inputGrad)
}
func (op poolOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op poolOp) Hashcode() uint32      { return hashOf(op) }
func (op poolOp) Arity() int            { return 1 }

func (op poolOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: 4, Of: a}
	return hm.NewFnType(t, t)
}

func (op poolOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if !s.Eq(tensor.Shape{op.win.Batch, op.win.H, op.win.W, op.win.C}) {
		return nil, fmt.Errorf("%v: input has shape %v", op, s)
	}
	return tensor.Shape{op.win.Batch, op.win.OH, op.win.OW, op.win.C}, nil
}

func (op poolOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	if x.Shape().TotalSize() != op.win.InputSize() {
		return nil, fmt.Errorf("%v: input has shape %v", op, x.Shape())
	}
	out := newLike(x.Dtype(), op.win.Batch, op.win.OH, op.win.OW, op.win.C)
	switch od := out.Data().(type) {
	case []float32:
		pool(op.kind, op.win, x.Data().([]float32), od)
	case []float64:
		pool(op.kind, op.win, x.Data().([]float64), od)
	}
	return out, nil
}

func (op poolOp) DiffWRT(inputs int) []bool { return []bool{op.inputGrad} }

func (op poolOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if !op.inputGrad {
		return gorgonia.Nodes{nil}, nil
	}
	dx, err := gorgonia.ApplyOp(poolGradOp{kind: op.kind, win: op.win}, inputs[0], output, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx}, nil
}

// poolGradOp maps (x, y = pool(x), dy) to dx.
type poolGradOp struct {
	common
	kind PoolKind
	win  Window
}

func (op poolGradOp) String() string        { return fmt.Sprintf("PoolGrad{%v %v}", op.kind, op.win) }
func (op poolGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op poolGradOp) Hashcode() uint32      { return hashOf(op) }
func (op poolGradOp) Arity() int            { return 3 }

func (op poolGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: 4, Of: a}
	return hm.NewFnType(t, t, t, t)
}

func (op poolGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op poolGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	var ts [3]*tensor.Dense
	for i := range ts {
		t, err := denseArg(op, args, i)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	if err := sameDtype(op, ts[:]...); err != nil {
		return nil, err
	}
	outSize := op.win.Positions() * op.win.C
	if ts[0].Shape().TotalSize() != op.win.InputSize() || ts[1].Shape().TotalSize() != outSize || ts[2].Shape().TotalSize() != outSize {
		return nil, fmt.Errorf("%v: inputs have shapes %v, %v, %v", op, ts[0].Shape(), ts[1].Shape(), ts[2].Shape())
	}
	out := newLike(ts[0].Dtype(), ts[0].Shape().Clone()...)
	switch od := out.Data().(type) {
	case []float32:
		poolBack(op.kind, op.win, ts[0].Data().([]float32), ts[1].Data().([]float32), ts[2].Data().([]float32), od)
	case []float64:
		poolBack(op.kind, op.win, ts[0].Data().([]float64), ts[1].Data().([]float64), ts[2].Data().([]float64), od)
	}
	return out, nil
}

// windowRange returns the rows (or columns) of the input a window at
// output position o covers, clipped to the image: [lo, hi).
func windowRange(o, stride, k, pad, size int) (lo, hi int) {
	start := o*stride - pad
	return max(start, 0), min(start+k, size)
}

// pool writes the pooled images of x into y.
func pool[T float](kind PoolKind, w Window, x, y []T) {
	parallel(w.Batch, w.H*w.W*w.C, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			img := x[b*w.H*w.W*w.C : (b+1)*w.H*w.W*w.C]
			for oh := 0; oh < w.OH; oh++ {
				h0, h1 := windowRange(oh, w.StrideH, w.KH, w.PadTop, w.H)
				for ow := 0; ow < w.OW; ow++ {
					w0, w1 := windowRange(ow, w.StrideW, w.KW, w.PadLeft, w.W)
					out := y[((b*w.OH+oh)*w.OW+ow)*w.C:][:w.C]
					copy(out, img[(h0*w.W+w0)*w.C:][:w.C])
					for ih := h0; ih < h1; ih++ {
						for iw := w0; iw < w1; iw++ {
							if ih == h0 && iw == w0 {
								continue
							}
							in := img[(ih*w.W+iw)*w.C:][:w.C]
							if kind == MaxPool {
								maxInto(out, in)
							} else {
								for c, v := range in {
									out[c] += v
								}
							}
						}
					}
					if kind == AvgPool {
						n := T((h1 - h0) * (w1 - w0))
						for c := range out {
							out[c] /= n
						}
					}
				}
			}
		}
	})
}

// poolBack overwrites dx with the gradient of pool: each output's
// gradient goes, for max pooling, to the first position of its window (in
// reading order) that holds the maximum; for average pooling, to every
// position of the window, divided by their number.
func poolBack[T float](kind PoolKind, w Window, x, y, dy, dx []T) {
	parallel(w.Batch, w.H*w.W*w.C, func(lo, hi int) {
		offs := make([]int, 0, w.KH*w.KW)
		for b := lo; b < hi; b++ {
			img := x[b*w.H*w.W*w.C : (b+1)*w.H*w.W*w.C]
			dimg := dx[b*w.H*w.W*w.C : (b+1)*w.H*w.W*w.C]
			clear(dimg)
			for oh := 0; oh < w.OH; oh++ {
				h0, h1 := windowRange(oh, w.StrideH, w.KH, w.PadTop, w.H)
				for ow := 0; ow < w.OW; ow++ {
					w0, w1 := windowRange(ow, w.StrideW, w.KW, w.PadLeft, w.W)
					at := ((b*w.OH+oh)*w.OW + ow) * w.C
					g := dy[at:][:w.C]
					if kind == AvgPool {
						n := T((h1 - h0) * (w1 - w0))
						for ih := h0; ih < h1; ih++ {
							for iw := w0; iw < w1; iw++ {
								d := dimg[(ih*w.W+iw)*w.C:][:w.C]
								for c, v := range g {
									d[c] += v / n
								}
							}
						}
						continue
					}
					// Each channel's gradient goes to its first maximum: the
					// window's positions in reading order, tried one after
					// another for each channel.
					offs = offs[:0]
					for ih := h0; ih < h1; ih++ {
						for iw := w0; iw < w1; iw++ {
							offs = append(offs, (ih*w.W+iw)*w.C)
						}
					}
					done := maxPoolBack(dimg, img, y[at:][:w.C], g, offs)
					for c := done; c < w.C; c++ {
						mc := y[at+c]
						for _, px := range offs {
							if img[px+c] == mc {
								dimg[px+c] += g[c]
								break
							}
						}
					}
				}
			}
		}
	})
}

// maxInto sets out[c] to in[c] where in[c] is greater (a NaN never wins,
// a NaN in out stays): with the AVX2 kernel for float32, the same bits as
// the loop, without a branch a value.
func maxInto[T float](out, in []T) {
	if o, ok := any(out).([]float32); ok {
		avx2.MaxInto(o, any(in).([]float32))
		return
	}
	for c, v := range in {
		if v > out[c] {
			out[c] = v
		}
	}
}

// maxPoolBack does poolBack's work for one max-pooling window on the
// channels the AVX2 kernel takes (float32, whole vectors), the same bits
// as the loop, and returns how many it did.
func maxPoolBack[T float](dimg, img, y, g []T, offs []int) int {
	if d, ok := any(dimg).([]float32); ok {
		return avx2.MaxPoolBack(d, any(img).([]float32), any(y).([]float32), any(g).([]float32), offs)
	}
	return 0
}
