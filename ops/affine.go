package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Affine adds the node x·w + b to the graph: the linear part of a dense
// layer. x is (batch, in), w is (in, out) and b, which may be nil, is (out).
// inputGrad says whether gradients must flow back into x: false when x is
// the model's input data, which saves a third of the layer's backward work.
func Affine(x, w, b *gorgonia.Node, inputGrad bool) (*gorgonia.Node, error) {
	if x.Dims() != 2 || w.Dims() != 2 {
		return nil, fmt.Errorf("affine: want a matrix input and kernel, got shapes %v and %v", x.Shape(), w.Shape())
	}
	if x.Shape()[1] != w.Shape()[0] {
		return nil, fmt.Errorf("affine: input has %d features per sample but the kernel expects %d (input shape %v, kernel shape %v)",
			x.Shape()[1], w.Shape()[0], x.Shape(), w.Shape())
	}
	op := affineOp{bias: b != nil, inputGrad: inputGrad}
	if b == nil {
		return gorgonia.ApplyOp(op, x, w)
	}
	if b.Dims() != 1 || b.Shape()[0] != w.Shape()[1] {
		return nil, fmt.Errorf("affine: bias shape %v does not match kernel shape %v", b.Shape(), w.Shape())
	}
	return gorgonia.ApplyOp(op, x, w, b)
}

type affineOp struct {
	common
	bias      bool
	inputGrad bool
}

func (op affineOp) String() string {
	return fmt.Sprintf("Affine{bias=%t, inputGrad=%t}", op.bias, op.inputGrad)
}
func (op affineOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op affineOp) Hashcode() uint32      { return hashOf(op) }

func (op affineOp) Arity() int {
	if op.bias {
		return 3
	}
	return 2
}

func (op affineOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	if op.bias {
		return hm.NewFnType(m, m, gorgonia.TensorType{Dims: 1, Of: a}, m)
	}
	return hm.NewFnType(m, m, m)
}

func (op affineOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	xs, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	ws, err := shapeOf(op, in, 1)
	if err != nil {
		return nil, err
	}
	if len(xs) != 2 || len(ws) != 2 || xs[1] != ws[0] {
		return nil, fmt.Errorf("%v: cannot multiply shapes %v and %v", op, xs, ws)
	}
	return tensor.Shape{xs[0], ws[1]}, nil
}

func (op affineOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	w, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	ts := []*tensor.Dense{x, w}
	if op.bias {
		b, err := denseArg(op, args, 2)
		if err != nil {
			return nil, err
		}
		ts = append(ts, b)
	}
	if err := sameDtype(op, ts...); err != nil {
		return nil, err
	}
	m, k, n := x.Shape()[0], x.Shape()[1], w.Shape()[1]
	out := newLike(x.Dtype(), m, n)
	switch od := out.Data().(type) {
	case []float32:
		affine(m, n, k, x.Data().([]float32), w.Data().([]float32), biasData[float32](ts), od)
	case []float64:
		affine(m, n, k, x.Data().([]float64), w.Data().([]float64), biasData[float64](ts), od)
	}
	return out, nil
}

func biasData[T float](ts []*tensor.Dense) []T {
	if len(ts) < 3 {
		return nil
	}
	return ts[2].Data().([]T)
}

// affine computes out = x·w + b, with b broadcast over the rows.
func affine[T float](m, n, k int, x, w, b, out []T) {
	var beta T
	if b != nil {
		for r := 0; r < m; r++ {
			copy(out[r*n:(r+1)*n], b)
		}
		beta = 1
	}
	gemm(false, false, m, n, k, 1, x, w, beta, out)
}

func (op affineOp) DiffWRT(inputs int) []bool {
	diff := make([]bool, inputs)
	for i := range diff {
		diff[i] = i > 0 || op.inputGrad
	}
	return diff
}

func (op affineOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != op.Arity() {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want %d", op, len(inputs), op.Arity())
	}
	x, w := inputs[0], inputs[1]
	grads := make(gorgonia.Nodes, len(inputs))
	var err error
	if op.inputGrad {
		if grads[0], err = gorgonia.ApplyOp(matMulOp{transB: true}, grad, w); err != nil {
			return nil, fmt.Errorf("%v: input gradient: %w", op, err)
		}
	}
	if grads[1], err = gorgonia.ApplyOp(matMulOp{transA: true}, x, grad); err != nil {
		return nil, fmt.Errorf("%v: kernel gradient: %w", op, err)
	}
	if op.bias {
		if grads[2], err = gorgonia.ApplyOp(sumRowsOp{}, grad); err != nil {
			return nil, fmt.Errorf("%v: bias gradient: %w", op, err)
		}
	}
	return grads, nil
}

// matMulOp is op(a)·op(b), where op transposes when asked: the products in
// the gradient of Affine.
type matMulOp struct {
	common
	transA, transB bool
}

func (op matMulOp) String() string {
	return fmt.Sprintf("MatMul{transA=%t, transB=%t}", op.transA, op.transB)
}
func (op matMulOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op matMulOp) Hashcode() uint32      { return hashOf(op) }
func (op matMulOp) Arity() int            { return 2 }

func (op matMulOp) Type() hm.Type {
	m := gorgonia.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(m, m, m)
}

// dims returns m, k, n of op(a)·op(b).
func (op matMulOp) dims(as, bs tensor.Shape) (m, k, n int, err error) {
	if len(as) != 2 || len(bs) != 2 {
		return 0, 0, 0, fmt.Errorf("%v: want matrices, got shapes %v and %v", op, as, bs)
	}
	m, k = as[0], as[1]
	if op.transA {
		m, k = k, m
	}
	k2, n := bs[0], bs[1]
	if op.transB {
		k2, n = n, k2
	}
	if k != k2 {
		return 0, 0, 0, fmt.Errorf("%v: inner dimensions differ: shapes %v and %v", op, as, bs)
	}
	return m, k, n, nil
}

func (op matMulOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	as, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	bs, err := shapeOf(op, in, 1)
	if err != nil {
		return nil, err
	}
	m, _, n, err := op.dims(as, bs)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{m, n}, nil
}

func (op matMulOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	a, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	b, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDtype(op, a, b); err != nil {
		return nil, err
	}
	m, k, n, err := op.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	out := newLike(a.Dtype(), m, n)
	switch od := out.Data().(type) {
	case []float32:
		gemm(op.transA, op.transB, m, n, k, 1, a.Data().([]float32), b.Data().([]float32), 0, od)
	case []float64:
		gemm(op.transA, op.transB, m, n, k, 1, a.Data().([]float64), b.Data().([]float64), 0, od)
	}
	return out, nil
}

// sumRowsOp sums a matrix over its rows: (batch, n) to (n). It is the
// gradient of a bias added to every row.
type sumRowsOp struct{ common }

func (op sumRowsOp) String() string        { return "SumRows" }
func (op sumRowsOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op sumRowsOp) Hashcode() uint32      { return hashOf(op) }
func (op sumRowsOp) Arity() int            { return 1 }

func (op sumRowsOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: 2, Of: a}, gorgonia.TensorType{Dims: 1, Of: a})
}

func (op sumRowsOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if len(s) != 2 {
		return nil, fmt.Errorf("%v: want a matrix, got shape %v", op, s)
	}
	return tensor.Shape{s[1]}, nil
}

func (op sumRowsOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	a, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	rows, cols := rowsCols(a.Shape())
	out := newLike(a.Dtype(), cols)
	switch od := out.Data().(type) {
	case []float32:
		sumRows(rows, cols, a.Data().([]float32), od)
	case []float64:
		sumRows(rows, cols, a.Data().([]float64), od)
	}
	return out, nil
}

// sumRowsBlock is the rows sumRows sums at a time: each block's columns
// are summed in row order from 0 (a block of a few hundred rows stays in
// the caches while the kernel goes over its columns), then the blocks'
// sums are added to out in block order, the blocks split over the cores.
// The blocks do not depend on the number of cores, so neither do the
// bits; up to sumRowsBlock rows (a dense layer's batch) the sum is the
// plain row-order sum.
const sumRowsBlock = 512

// sumRows adds the sum of the rows×cols matrix a's rows to out (a bias's
// gradient: a convolution's over its output positions).
func sumRows[T float](rows, cols int, a, out []T) { sumRowsAfter(rows, cols, a, out, nil) }

// sumRowsAfter is sumRows of a matrix that write (nil for none) writes,
// rows [r0, r1) at a time, before the sums read them: each block of
// sumRowsBlock rows is written, then summed from the caches. The sums
// have sumRows' bits.
func sumRowsAfter[T float](rows, cols int, a, out []T, write func(r0, r1 int)) {
	if rows <= sumRowsBlock {
		if write != nil {
			write(0, rows)
		}
		sumRowsInOrder(rows, cols, a, out)
		return
	}
	blocks := (rows + sumRowsBlock - 1) / sumRowsBlock
	buf := normScratchT[T](blocks * cols)
	defer normScratchPoolT[T]().Put(buf)
	partial := *buf
	parallel(blocks, sumRowsBlock*cols, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			p := partial[b*cols : (b+1)*cols]
			clear(p)
			r0 := b * sumRowsBlock
			r1 := min(rows, r0+sumRowsBlock)
			if write != nil {
				write(r0, r1)
			}
			sumRowsInOrder(r1-r0, cols, a[r0*cols:], p)
		}
	})
	for b := range blocks {
		addTo(out[:cols], partial[b*cols:(b+1)*cols])
	}
}

// sumRowsInOrder adds a's rows to out one after another.
func sumRowsInOrder[T float](rows, cols int, a, out []T) {
	if af, ok := asFloat32(a); ok && avx512.SumRows(rows, cols, af, any(out).([]float32)) {
		return // the same bits, each column's sum in row order
	}
	for r := 0; r < rows; r++ {
		addTo(out[:cols], a[r*cols:(r+1)*cols])
	}
}
