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

// BatchMatMulParams describe a BatchMatMul op: for each of Batch samples,
// the product op(a)·op(b) of the sample's values of a, M×K (stored K×M
// with TransA), and of b, K×N (stored N×K with TransB), written as the
// sample's M×N values of the output. A, B and Out are the shapes of the
// two inputs and of the output, batch first; each holds a sample's matrix
// in row-major order, whatever its rank ((batch, n) is a 1×n or an n×1
// matrix per sample).
type BatchMatMulParams struct {
	Batch, M, K, N int
	TransA, TransB bool
	A, B, Out      []int
}

func (p BatchMatMulParams) String() string {
	return fmt.Sprintf("%d×(%d×%d·%d×%d) transA=%t transB=%t, %s %s -> %s", p.Batch, p.M, p.K, p.K, p.N, p.TransA, p.TransB,
		shapeString(p.A), shapeString(p.B), shapeString(p.Out))
}

// clone copies p's shapes, so that an Info never shares an op's.
func (p BatchMatMulParams) clone() BatchMatMulParams {
	p.A, p.B, p.Out = slices.Clone(p.A), slices.Clone(p.B), slices.Clone(p.Out)
	return p
}

// DotParams are the BatchMatMulParams of Keras' batch_dot of inputs of
// shapes a and b (batch first) along axisA of a and axisB of b, counted
// with the batch axis as 0, negative from the end; neither may be the
// batch axis. Both inputs must have rank 2, (batch, n), or both rank 3.
// For rank 2 the output is (batch, 1), each sample's Σ a·b; for rank 3 it
// is (batch, m, k), a sample's axes that are not summed over, a's first:
// (batch, m, n)·(batch, k, n) along (2, 2), (batch, m, n)·(batch, n, k)
// along (2, 1), (batch, n, m)·(batch, n, k) along (1, 1) and (batch, n,
// m)·(batch, k, n) along (1, 2) all give (batch, m, k), a summed axis 1
// making its input's factor transposed.
func DotParams(a, b []int, axisA, axisB int) (BatchMatMulParams, error) {
	rank := len(a)
	if len(b) != rank || rank < 2 || rank > 3 {
		return BatchMatMulParams{}, fmt.Errorf("batch dot: inputs of shapes %v and %v: want two inputs of rank 2, (batch, n), or two of rank 3, (batch, rows, cols)", a, b)
	}
	for _, d := range append(slices.Clone(a), b...) {
		if d <= 0 {
			return BatchMatMulParams{}, fmt.Errorf("batch dot: inputs of shapes %v and %v: an input has an empty axis", a, b)
		}
	}
	if a[0] != b[0] {
		return BatchMatMulParams{}, fmt.Errorf("batch dot: inputs of shapes %v and %v have different batch sizes", a, b)
	}
	ax, bx := axisA, axisB
	if ax < 0 {
		ax += rank
	}
	if bx < 0 {
		bx += rank
	}
	if ax <= 0 || ax >= rank || bx <= 0 || bx >= rank {
		return BatchMatMulParams{}, fmt.Errorf("batch dot: axes (%d, %d) of inputs of shapes %v and %v: each axis must be one of the non-batch axes 1 to %d (or -1 to -%d); the dot product cannot be taken over the batch axis 0",
			axisA, axisB, a, b, rank-1, rank-1)
	}
	if a[ax] != b[bx] {
		return BatchMatMulParams{}, fmt.Errorf("batch dot: dimension incompatibility using dot product: %d != %d (axis %d of shape %v, axis %d of shape %v)",
			a[ax], b[bx], ax, a, bx, b)
	}
	p := BatchMatMulParams{Batch: a[0], A: slices.Clone(a), B: slices.Clone(b)}
	if rank == 2 {
		// A row of n times a column of n, per sample.
		p.M, p.K, p.N = 1, a[1], 1
		p.Out = []int{a[0], 1}
		return p, nil
	}
	p.TransA, p.TransB = ax == 1, bx == 2
	p.M, p.K, p.N = a[3-ax], a[ax], b[3-bx]
	p.Out = []int{a[0], p.M, p.N}
	return p, nil
}

// BatchDot adds the node of Keras' batch_dot of a and b along axisA of a
// and axisB of b: each sample's dot product, of the shape DotParams says.
// It is one BatchMatMul node; its gradients are BatchMatMuls too.
func BatchDot(a, b *gorgonia.Node, axisA, axisB int) (*gorgonia.Node, error) {
	p, err := DotParams(a.Shape(), b.Shape(), axisA, axisB)
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(batchMatMulOp{p: p}, a, b)
}

// batchMatMulOp multiplies its inputs' samples: see BatchMatMulParams.
type batchMatMulOp struct {
	common
	p BatchMatMulParams
}

func (op batchMatMulOp) String() string        { return fmt.Sprintf("BatchMatMul{%v}", op.p) }
func (op batchMatMulOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op batchMatMulOp) Hashcode() uint32      { return hashOf(op) }
func (op batchMatMulOp) Arity() int            { return 2 }

func (op batchMatMulOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: len(op.p.A), Of: a}, gorgonia.TensorType{Dims: len(op.p.B), Of: a},
		gorgonia.TensorType{Dims: len(op.p.Out), Of: a})
}

func (op batchMatMulOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.p.A, op.p.B); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Out).Clone(), nil
}

func (op batchMatMulOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.p.A, op.p.B)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Out...)
	switch od := out.Data().(type) {
	case []float32:
		batchMatMul(op.p, ds[0].Data().([]float32), ds[1].Data().([]float32), od)
	case []float64:
		batchMatMul(op.p, ds[0].Data().([]float64), ds[1].Data().([]float64), od)
	}
	return out, nil
}

func (op batchMatMulOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: with dC the output's gradient (each sample M×N), op(a)'s
// gradient is dC·op(b)ᵀ and op(b)'s op(a)ᵀ·dC; where an input is stored
// transposed, its gradient is the transpose of that, the product of the
// same two factors the other way round, transposed. Each is a BatchMatMul
// of the output's gradient and the other input.
func (op batchMatMulOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want 2", op, len(inputs))
	}
	p := op.p
	a, b := inputs[0], inputs[1]
	ga := BatchMatMulParams{Batch: p.Batch, Out: p.A}
	var gaArgs [2]*gorgonia.Node
	if !p.TransA { // da = dC·op(b)ᵀ, M×K
		ga.M, ga.K, ga.N, ga.TransA, ga.TransB, ga.A, ga.B = p.M, p.N, p.K, false, !p.TransB, p.Out, p.B
		gaArgs = [2]*gorgonia.Node{grad, b}
	} else { // da = op(b)·dCᵀ, K×M
		ga.M, ga.K, ga.N, ga.TransA, ga.TransB, ga.A, ga.B = p.K, p.N, p.M, p.TransB, true, p.B, p.Out
		gaArgs = [2]*gorgonia.Node{b, grad}
	}
	gb := BatchMatMulParams{Batch: p.Batch, Out: p.B}
	var gbArgs [2]*gorgonia.Node
	if !p.TransB { // db = op(a)ᵀ·dC, K×N
		gb.M, gb.K, gb.N, gb.TransA, gb.TransB, gb.A, gb.B = p.K, p.M, p.N, !p.TransA, false, p.A, p.Out
		gbArgs = [2]*gorgonia.Node{a, grad}
	} else { // db = dCᵀ·op(a), N×K
		gb.M, gb.K, gb.N, gb.TransA, gb.TransB, gb.A, gb.B = p.N, p.M, p.K, true, p.TransA, p.Out, p.A
		gbArgs = [2]*gorgonia.Node{grad, a}
	}
	da, err := gorgonia.ApplyOp(batchMatMulOp{p: ga.clone()}, gaArgs[0], gaArgs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient of the first input: %w", op, err)
	}
	db, err := gorgonia.ApplyOp(batchMatMulOp{p: gb.clone()}, gbArgs[0], gbArgs[1])
	if err != nil {
		return nil, fmt.Errorf("%v: gradient of the second input: %w", op, err)
	}
	return gorgonia.Nodes{da, db}, nil
}

// batchMatMul writes p's products of a and b into out: each value the sum
// over K of the products, in float64 from the first term on, in order, then
// rounded; gk_batch_matmul sums in the same order, to the same bits.
func batchMatMul[T float](p BatchMatMulParams, a, b, out []T) {
	m, k, n := p.M, p.K, p.N
	// The strides of op(a)'s rows and columns, and of op(b)'s, in a sample.
	ar, ac := k, 1
	if p.TransA {
		ar, ac = 1, m
	}
	br, bc := n, 1
	if p.TransB {
		br, bc = 1, k
	}
	parallel(p.Batch*m, n*k, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			s, i := row/m, row%m
			as, bs := a[s*m*k:], b[s*k*n:]
			for j := range n {
				var sum float64
				for t := range k {
					sum += float64(float64(as[i*ar+t*ac]) * float64(bs[t*br+j*bc]))
				}
				out[row*n+j] = T(sum)
			}
		}
	})
}

// BatchMatMulForward writes p's products of a and b into out, as a
// BatchMatMul node's Do computes them (and its gradients: BatchMatMuls of
// other operands).
func BatchMatMulForward(p BatchMatMulParams, a, b, out []float32) { batchMatMul(p, a, b, out) }

// L2NormParams describe an L2Normalize op or its gradient: the values of
// a tensor of Shape divided by their L2 norm along Axis. The tensor is
// Outer()·Inner() runs of Len() values along the axis, Inner() apart, one
// run for each place on the other axes, each normalized on its own.
type L2NormParams struct {
	Shape []int
	Axis  int
}

// Outer is the product of the sizes before Axis.
func (p L2NormParams) Outer() int { return sizeOf(p.Shape[:p.Axis]) }

// Len is the size of Axis: the number of values normalized together.
func (p L2NormParams) Len() int { return p.Shape[p.Axis] }

// Inner is the product of the sizes after Axis: the stride of Axis.
func (p L2NormParams) Inner() int { return sizeOf(p.Shape[p.Axis+1:]) }

func (p L2NormParams) String() string {
	return fmt.Sprintf("%s, axis=%d", shapeString(p.Shape), p.Axis)
}

func (p L2NormParams) clone() L2NormParams {
	p.Shape = slices.Clone(p.Shape)
	return p
}

// sizeOf is the product of the sizes s, 1 for none.
func sizeOf(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// L2Normalize adds the node of x divided by the L2 norm of its values
// along axis (counted with the batch axis as 0, negative from the end):
// x/√max(Σx², 1e-12), tf.math.l2_normalize with its default epsilon, as
// Keras' Dot(normalize=True) applies it to each input along its dot axis.
// Runs whose Σx² is below 1e-12 are scaled by 1e6 and get no gradient
// through their norm, as TensorFlow's maximum gives none to the side it
// did not take.
func L2Normalize(x *gorgonia.Node, axis int) (*gorgonia.Node, error) {
	s := x.Shape()
	rank := len(s)
	a := axis
	if a < 0 {
		a += rank
	}
	if rank < 2 || a <= 0 || a >= rank {
		return nil, fmt.Errorf("l2 normalize: axis %d of an input of shape %v: the axis must be one of the non-batch axes 1 to %d (or -1 to -%d)", axis, s, rank-1, rank-1)
	}
	for _, d := range s {
		if d <= 0 {
			return nil, fmt.Errorf("l2 normalize: input of shape %v has an empty axis", s)
		}
	}
	return gorgonia.ApplyOp(l2NormOp{p: L2NormParams{Shape: s.Clone(), Axis: a}}, x)
}

// l2NormOp normalizes x (grad false), or maps (x, dy) to the gradient of
// x (grad true).
type l2NormOp struct {
	common
	p    L2NormParams
	grad bool
}

func (op l2NormOp) String() string {
	if op.grad {
		return fmt.Sprintf("L2NormalizeGrad{%v}", op.p)
	}
	return fmt.Sprintf("L2Normalize{%v}", op.p)
}
func (op l2NormOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op l2NormOp) Hashcode() uint32      { return hashOf(op) }

func (op l2NormOp) Arity() int {
	if op.grad {
		return 2
	}
	return 1
}

func (op l2NormOp) Type() hm.Type {
	t := gorgonia.TensorType{Dims: len(op.p.Shape), Of: hm.TypeVariable('a')}
	if op.grad {
		return hm.NewFnType(t, t, t)
	}
	return hm.NewFnType(t, t)
}

func (op l2NormOp) shapes() [][]int {
	if op.grad {
		return [][]int{op.p.Shape, op.p.Shape}
	}
	return [][]int{op.p.Shape}
}

func (op l2NormOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.shapes()...); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Shape).Clone(), nil
}

func (op l2NormOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.shapes()...)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Shape...)
	switch od := out.Data().(type) {
	case []float32:
		if op.grad {
			l2NormalizeGrad(op.p, ds[0].Data().([]float32), ds[1].Data().([]float32), od)
		} else {
			l2Normalize(op.p, ds[0].Data().([]float32), od)
		}
	case []float64:
		if op.grad {
			l2NormalizeGrad(op.p, ds[0].Data().([]float64), ds[1].Data().([]float64), od)
		} else {
			l2Normalize(op.p, ds[0].Data().([]float64), od)
		}
	}
	return out, nil
}

func (op l2NormOp) DiffWRT(inputs int) []bool {
	if op.grad {
		return make([]bool, inputs)
	}
	return []bool{true}
}

// SymDiff: the gradient of x is an L2NormalizeGrad node of (x, dy).
func (op l2NormOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%v: no second derivative", op)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: SymDiff got %d inputs, want 1", op, len(inputs))
	}
	g, err := gorgonia.ApplyOp(l2NormOp{p: op.p.clone(), grad: true}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{g}, nil
}

// run returns the run of values at outer place o and inner place i:
// its first value's index and the stride between its values.
func (p L2NormParams) run(o, i int) (first, stride int) {
	inner := p.Inner()
	return o*p.Len()*inner + i, inner
}

// l2Norm returns √max(Σx², 1e-12) over one run of x, the squares summed
// in float64 in order, and whether Σx² is at least 1e-12, so that the norm
// has a gradient.
func l2Norm[T float](x []T, first, stride, n int) (norm float64, normed bool) {
	var s float64
	for t := range n {
		v := float64(x[first+t*stride])
		s += float64(v * v)
	}
	return math.Sqrt(math.Max(s, normEpsilon)), s >= normEpsilon
}

// l2Normalize writes x's runs, each divided by its l2Norm, into out: what
// gk_l2_normalize computes, to the same bits.
func l2Normalize[T float](p L2NormParams, x, out []T) {
	n, inner := p.Len(), p.Inner()
	parallel(p.Outer(), n*inner, func(lo, hi int) {
		for o := lo; o < hi; o++ {
			for i := range inner {
				first, stride := p.run(o, i)
				norm, _ := l2Norm(x, first, stride, n)
				for t := range n {
					k := first + t*stride
					out[k] = T(float64(x[k]) / norm)
				}
			}
		}
	})
}

// l2NormalizeGrad writes the gradient of x given the gradient dy of x/ν,
// ν = √max(Σx², 1e-12) over each run: dx = dy/ν - x·(Σ x·dy)/ν³ where
// Σx² ≥ 1e-12, dy/ν where the floor was taken. In float64, rounded at the
// end: what gk_l2_normalize_grad computes, to the same bits.
func l2NormalizeGrad[T float](p L2NormParams, x, dy, out []T) {
	n, inner := p.Len(), p.Inner()
	parallel(p.Outer(), 2*n*inner, func(lo, hi int) {
		for o := lo; o < hi; o++ {
			for i := range inner {
				first, stride := p.run(o, i)
				norm, normed := l2Norm(x, first, stride, n)
				var c float64
				if normed {
					var d float64
					for t := range n {
						k := first + t*stride
						d += float64(float64(x[k]) * float64(dy[k]))
					}
					c = d / (norm * norm * norm)
				}
				for t := range n {
					k := first + t*stride
					out[k] = T(float64(dy[k])/norm - float64(float64(x[k])*c))
				}
			}
		}
	})
}

// L2NormalizeForward writes x normalized by p into out, as an L2Normalize
// node's Do computes it.
func L2NormalizeForward(p L2NormParams, x, out []float32) { l2Normalize(p, x, out) }

// L2NormalizeBackward writes the gradient of an L2Normalize's input x
// given its output's, dy, into out.
func L2NormalizeBackward(p L2NormParams, x, dy, out []float32) { l2NormalizeGrad(p, x, dy, out) }
