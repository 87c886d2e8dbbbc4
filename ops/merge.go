package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BinaryKind is an elementwise operation on two tensors: what Keras' merge
// layers Add, Subtract, Multiply, Maximum and Minimum compute (n inputs are
// a chain of binary ops; Average is an Add chain, then Scale), and the
// division Keras' Normalization divides by its standard deviations with.
type BinaryKind int

const (
	// BinaryAdd: a + b; gradients (dy, dy).
	BinaryAdd BinaryKind = iota + 1
	// BinarySubtract: a - b; gradients (dy, -dy).
	BinarySubtract
	// BinaryMultiply: a·b; gradients (dy·b, dy·a).
	BinaryMultiply
	// BinaryMaximum: a where a ≥ b, else b (NaN where either is NaN, as
	// tf.maximum); dy goes to a where a ≥ b, to b where a < b.
	BinaryMaximum
	// BinaryMinimum: a where a ≤ b, else b (NaN where either is NaN); dy
	// goes to a where a ≤ b, to b where a > b.
	BinaryMinimum
	// BinaryDivide: a/b; gradients (dy/b, dy·((-a/b)/b)), TensorFlow's
	// RealDiv gradient (math_grad.py, _RealDivGrad).
	BinaryDivide
)

var binaryNames = [...]string{BinaryAdd: "add", BinarySubtract: "subtract", BinaryMultiply: "multiply",
	BinaryMaximum: "maximum", BinaryMinimum: "minimum", BinaryDivide: "divide"}

func (k BinaryKind) String() string {
	if k <= 0 || int(k) >= len(binaryNames) {
		return fmt.Sprintf("BinaryKind(%d)", int(k))
	}
	return binaryNames[k]
}

// BinaryParams describe a binary op: its kind and its inputs' shapes, of
// one rank, equal on every axis or 1 on one side, which is broadcast (the
// output has the larger size on each axis), as Keras' merge layers allow
// (_compute_elemwise_op_output_shape: a dimension of 1 broadcasts).
type BinaryParams struct {
	Kind BinaryKind
	A, B []int
	// Wrt is, for OpBinaryGrad, the input whose gradient the op computes:
	// 0 for A, 1 for B.
	Wrt int
}

// Out is the output's shape: on each axis the larger of A's and B's sizes.
func (p BinaryParams) Out() []int {
	out := make([]int, len(p.A))
	for i := range out {
		out[i] = max(p.A[i], p.B[i])
	}
	return out
}

// MaxBroadcastDims is the most axes a binary op's BroadcastLayout may have:
// what the CUDA kernels take. Binary refuses shapes that need more.
const MaxBroadcastDims = 6

// BroadcastLayout maps a binary op's output onto its inputs: the output,
// row-major, seen as Dims (runs of consecutive axes that the inputs
// broadcast alike merged into one, axes of size 1 dropped), and on each of
// those axes the stride of A and of B in their own row-major values, 0
// where the input is broadcast along it. Without broadcasting it is one
// axis of all the values, strides 1.
type BroadcastLayout struct {
	Dims             []int
	StrideA, StrideB []int
}

// Layout is p's BroadcastLayout.
func (p BinaryParams) Layout() BroadcastLayout {
	var l BroadcastLayout
	last := -1 // the broadcast pattern of the last axis kept
	for i := range p.A {
		n := max(p.A[i], p.B[i])
		if n == 1 {
			continue
		}
		pattern := 0
		if p.A[i] == 1 {
			pattern |= 1
		}
		if p.B[i] == 1 {
			pattern |= 2
		}
		if pattern == last {
			l.Dims[len(l.Dims)-1] *= n
			continue
		}
		l.Dims = append(l.Dims, n)
		l.StrideA = append(l.StrideA, pattern&1)
		l.StrideB = append(l.StrideB, pattern&2)
		last = pattern
	}
	if len(l.Dims) == 0 {
		return BroadcastLayout{Dims: []int{1}, StrideA: []int{1}, StrideB: []int{1}}
	}
	// Strides, last axis first: an input broadcast along an axis (flagged
	// above) has stride 0 there and does not advance.
	sa, sb := 1, 1
	for k := len(l.Dims) - 1; k >= 0; k-- {
		if l.StrideA[k] != 0 {
			l.StrideA[k] = 0
		} else {
			l.StrideA[k], sa = sa, sa*l.Dims[k]
		}
		if l.StrideB[k] != 0 {
			l.StrideB[k] = 0
		} else {
			l.StrideB[k], sb = sb, sb*l.Dims[k]
		}
	}
	return l
}

// Size is the number of output values.
func (l BroadcastLayout) Size() int {
	n := 1
	for _, d := range l.Dims {
		n *= d
	}
	return n
}

// broadcastShapes checks that a and b broadcast together (Keras' rule for
// its merge layers, on inputs of one rank).
func broadcastShapes(what string, a, b tensor.Shape) error {
	if len(a) != len(b) {
		return fmt.Errorf("%s: inputs of shapes %v and %v have different ranks: expand the smaller with Reshape first (Keras' merge layers insert axes of 1 after the batch axis)", what, a, b)
	}
	for i := range a {
		if a[i] != b[i] && a[i] != 1 && b[i] != 1 {
			return fmt.Errorf("%s: inputs have incompatible shapes %v and %v: axis %d has sizes %d and %d, and only a size of 1 broadcasts", what, a, b, i, a[i], b[i])
		}
		if a[i] <= 0 || b[i] <= 0 {
			return fmt.Errorf("%s: shapes %v and %v have an empty axis", what, a, b)
		}
	}
	return nil
}

// Binary adds the node of kind applied to a and b elementwise: tensors of
// one rank whose sizes are equal on each axis or 1 on one side, which is
// broadcast along it. The gradient of a broadcast input is summed over the
// axes it was broadcast along.
func Binary(kind BinaryKind, a, b *gorgonia.Node) (*gorgonia.Node, error) {
	if kind <= 0 || int(kind) >= len(binaryNames) {
		return nil, fmt.Errorf("binary op: unknown kind %d", int(kind))
	}
	if a.Dims() == 0 || b.Dims() == 0 {
		return nil, fmt.Errorf("%v: inputs must be tensors, got shapes %v and %v", kind, a.Shape(), b.Shape())
	}
	if err := broadcastShapes(kind.String(), a.Shape(), b.Shape()); err != nil {
		return nil, err
	}
	p := BinaryParams{Kind: kind, A: a.Shape().Clone(), B: b.Shape().Clone()}
	if l := p.Layout(); len(l.Dims) > MaxBroadcastDims {
		return nil, fmt.Errorf("%v: shapes %v and %v broadcast along %d alternating runs of axes; the kernels take at most %d", kind, a.Shape(), b.Shape(), len(l.Dims), MaxBroadcastDims)
	}
	return gorgonia.ApplyOp(binaryOp{p: p}, a, b)
}

// Add adds the node of a + b (see Binary).
func Add(a, b *gorgonia.Node) (*gorgonia.Node, error) { return Binary(BinaryAdd, a, b) }

// Subtract adds the node of a - b (see Binary).
func Subtract(a, b *gorgonia.Node) (*gorgonia.Node, error) { return Binary(BinarySubtract, a, b) }

// Multiply adds the node of a·b, elementwise (see Binary).
func Multiply(a, b *gorgonia.Node) (*gorgonia.Node, error) { return Binary(BinaryMultiply, a, b) }

// Maximum adds the node of the elementwise maximum of a and b (see Binary).
func Maximum(a, b *gorgonia.Node) (*gorgonia.Node, error) { return Binary(BinaryMaximum, a, b) }

// Minimum adds the node of the elementwise minimum of a and b (see Binary).
func Minimum(a, b *gorgonia.Node) (*gorgonia.Node, error) { return Binary(BinaryMinimum, a, b) }

// Divide adds the node of a/b, elementwise (see Binary).
func Divide(a, b *gorgonia.Node) (*gorgonia.Node, error) { return Binary(BinaryDivide, a, b) }

func shapeString(s []int) string { return fmt.Sprint(s) }

// binaryOp applies p.Kind to its two inputs.
type binaryOp struct {
	common
	p BinaryParams
}

func (op binaryOp) String() string {
	return fmt.Sprintf("Binary{%v, %s, %s}", op.p.Kind, shapeString(op.p.A), shapeString(op.p.B))
}
func (op binaryOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op binaryOp) Hashcode() uint32      { return hashOf(op) }
func (op binaryOp) Arity() int            { return 2 }

func (op binaryOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: len(op.p.A), Of: a}
	return hm.NewFnType(t, t, t)
}

// checkShapes checks that the shapes handed to InferShape, or the shapes of
// the values handed to Do, are want.
func checkShapes(op fmt.Stringer, got []tensor.Shape, want ...[]int) error {
	if len(got) != len(want) {
		return fmt.Errorf("%v: %d inputs, want %d", op, len(got), len(want))
	}
	for i := range want {
		if !got[i].Eq(tensor.Shape(want[i])) {
			return fmt.Errorf("%v: input %d has shape %v, want %v", op, i, got[i], shapeString(want[i]))
		}
	}
	return nil
}

func inferShapes(op fmt.Stringer, in []gorgonia.DimSizer) ([]tensor.Shape, error) {
	out := make([]tensor.Shape, len(in))
	for i := range in {
		s, err := shapeOf(op, in, i)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (op binaryOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.p.A, op.p.B); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Out()), nil
}

// denseArgs reads n dense arguments of one dtype and checks their shapes.
func denseArgs(op fmt.Stringer, args []gorgonia.Value, shapes ...[]int) ([]*tensor.Dense, error) {
	if len(args) != len(shapes) {
		return nil, fmt.Errorf("%v: %d arguments, want %d", op, len(args), len(shapes))
	}
	ds := make([]*tensor.Dense, len(shapes))
	got := make([]tensor.Shape, len(shapes))
	for i := range shapes {
		d, err := denseArg(op, args, i)
		if err != nil {
			return nil, err
		}
		ds[i], got[i] = d, d.Shape()
	}
	if err := sameDtype(op, ds...); err != nil {
		return nil, err
	}
	if err := checkShapes(op, got, shapes...); err != nil {
		return nil, err
	}
	return ds, nil
}

func (op binaryOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.p.A, op.p.B)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Out()...)
	l := op.p.Layout()
	switch od := out.Data().(type) {
	case []float32:
		binaryForward(op.p.Kind, l, ds[0].Data().([]float32), ds[1].Data().([]float32), od)
	case []float64:
		binaryForward(op.p.Kind, l, ds[0].Data().([]float64), ds[1].Data().([]float64), od)
	}
	return out, nil
}

func (op binaryOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: each input's gradient is a BinaryGrad node of (a, b, dy), or dy
// itself where it is dy unchanged (an Add's or a Subtract's first input,
// not broadcast).
func (op binaryOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	out := tensor.Shape(op.p.Out())
	grads := make(gorgonia.Nodes, 2)
	for wrt, shape := range [][]int{op.p.A, op.p.B} {
		identity := op.p.Kind == BinaryAdd || op.p.Kind == BinarySubtract && wrt == 0
		if identity && out.Eq(tensor.Shape(shape)) {
			grads[wrt] = grad
			continue
		}
		p := op.p
		p.Wrt = wrt
		g, err := gorgonia.ApplyOp(binaryGradOp{p: p}, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, fmt.Errorf("%v: gradient: %w", op, err)
		}
		grads[wrt] = g
	}
	return grads, nil
}

// binaryGradOp maps (a, b, dy) to the gradient of input p.Wrt of the
// binary op p, summed over the axes that input is broadcast along.
type binaryGradOp struct {
	common
	p BinaryParams
}

func (op binaryGradOp) String() string {
	return fmt.Sprintf("BinaryGrad{%v, %s, %s, wrt=%d}", op.p.Kind, shapeString(op.p.A), shapeString(op.p.B), op.p.Wrt)
}
func (op binaryGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op binaryGradOp) Hashcode() uint32      { return hashOf(op) }
func (op binaryGradOp) Arity() int            { return 3 }

func (op binaryGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: len(op.p.A), Of: a}
	return hm.NewFnType(t, t, t, t)
}

func (op binaryGradOp) target() []int {
	if op.p.Wrt == 1 {
		return op.p.B
	}
	return op.p.A
}

func (op binaryGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.p.A, op.p.B, op.p.Out()); err != nil {
		return nil, err
	}
	return tensor.Shape(op.target()).Clone(), nil
}

func (op binaryGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.p.A, op.p.B, op.p.Out())
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.target()...)
	l := op.p.Layout()
	switch od := out.Data().(type) {
	case []float32:
		binaryGrad(op.p.Kind, op.p.Wrt, l, ds[0].Data().([]float32), ds[1].Data().([]float32), ds[2].Data().([]float32), od)
	case []float64:
		binaryGrad(op.p.Kind, op.p.Wrt, l, ds[0].Data().([]float64), ds[1].Data().([]float64), ds[2].Data().([]float64), od)
	}
	return out, nil
}

// apply is one value of a binary op. Maximum and Minimum return a NaN of
// either input, as tf.maximum and tf.minimum do.
func apply[T float](kind BinaryKind, a, b T) T {
	switch kind {
	case BinaryAdd:
		return a + b
	case BinarySubtract:
		return a - b
	case BinaryMultiply:
		return a * b
	case BinaryMaximum:
		if a != a || a >= b {
			return a
		}
		return b
	case BinaryMinimum:
		if a != a || a <= b {
			return a
		}
		return b
	case BinaryDivide:
		return a / b
	}
	return T(math.NaN())
}

// gradTerm is one output value's contribution to the gradient of input
// wrt, given a, b and the output's gradient dy there. Maximum and Minimum
// follow TensorFlow's gradients exactly (math_grad.py,
// _MaximumMinimumGrad with greater_equal for Maximum and less_equal for
// Minimum): the mask is a ≥ b (a ≤ b), a gets dy where it holds and b
// where it does not; so a tie gives all of dy to a, none to b, and a NaN a
// gives it to b.
func gradTerm[T float](kind BinaryKind, wrt int, a, b, dy T) T {
	switch kind {
	case BinaryAdd:
		return dy
	case BinarySubtract:
		if wrt == 1 {
			return -dy
		}
		return dy
	case BinaryMultiply:
		if wrt == 1 {
			return dy * a
		}
		return dy * b
	case BinaryMaximum, BinaryMinimum:
		mask := a >= b
		if kind == BinaryMinimum {
			mask = a <= b
		}
		if mask == (wrt == 0) {
			return dy
		}
		return 0
	case BinaryDivide:
		if wrt == 1 {
			return dy * ((-a / b) / b)
		}
		return dy / b
	}
	return T(math.NaN())
}

// elementwise reports whether neither operand is broadcast: output value
// i is the operands' values i.
func (l BroadcastLayout) elementwise() bool {
	return len(l.Dims) == 1 && l.StrideA[0] == 1 && l.StrideB[0] == 1
}

// offsets are the positions in A and in B of output value i.
func (l BroadcastLayout) offsets(i int) (ia, ib int) {
	for k := len(l.Dims) - 1; k >= 0; k-- {
		c := i % l.Dims[k]
		i /= l.Dims[k]
		ia += c * l.StrideA[k]
		ib += c * l.StrideB[k]
	}
	return ia, ib
}

func binaryForward[T float](kind BinaryKind, l BroadcastLayout, a, b, out []T) {
	if l.elementwise() {
		if o, ok := any(out).([]float32); ok && kind == BinaryAdd {
			AddValues(any(a).([]float32), any(b).([]float32), o) // the same bits
			return
		}
		a, b = a[:len(out)], b[:len(out)]
		for i := range out {
			out[i] = apply(kind, a[i], b[i])
		}
		return
	}
	for i := range out {
		ia, ib := l.offsets(i)
		out[i] = apply(kind, a[ia], b[ib])
	}
}

// binaryGrad writes the gradient of input wrt into out: for each of its
// values, in order, the terms of the output values it was broadcast to,
// in the output's order, summed in float64 from the first term (so that
// an input not broadcast gets its term exactly), then rounded. gk_binary_grad
// sums in the same order, to the same bits.
func binaryGrad[T float](kind BinaryKind, wrt int, l BroadcastLayout, a, b, dy, out []T) {
	nd := len(l.Dims)
	ts := l.StrideA
	if wrt == 1 {
		ts = l.StrideB
	}
	// The output's strides, and which axes the target keeps (stride > 0)
	// and which it is summed over.
	os := make([]int, nd)
	for k, s := nd-1, 1; k >= 0; k-- {
		os[k], s = s, s*l.Dims[k]
	}
	if sameLayout(l, os) {
		// Neither input is broadcast: each value has one term (the
		// general loop's sum of one term, to the same bits).
		elementGrad(kind, wrt, a, b, dy, out)
		return
	}
	var kept, reduced []int
	nr := 1
	for k := range nd {
		if ts[k] != 0 {
			kept = append(kept, k)
		} else {
			reduced = append(reduced, k)
			nr *= l.Dims[k]
		}
	}
	for e := range out {
		base, ba, bb := 0, 0, 0
		for i, j := len(kept)-1, e; i >= 0; i-- {
			k := kept[i]
			c := j % l.Dims[k]
			j /= l.Dims[k]
			base += c * os[k]
			ba += c * l.StrideA[k]
			bb += c * l.StrideB[k]
		}
		var sum float64
		for r := range nr {
			o, ia, ib := base, ba, bb
			for i, j := len(reduced)-1, r; i >= 0; i-- {
				k := reduced[i]
				c := j % l.Dims[k]
				j /= l.Dims[k]
				o += c * os[k]
				ia += c * l.StrideA[k]
				ib += c * l.StrideB[k]
			}
			t := float64(gradTerm(kind, wrt, a[ia], b[ib], dy[o]))
			if r == 0 {
				sum = t
			} else {
				sum += t
			}
		}
		out[e] = T(sum)
	}
}

// sameLayout says whether both inputs of layout l have the output's
// strides os: neither is broadcast.
func sameLayout(l BroadcastLayout, os []int) bool {
	for k := range os {
		if l.StrideA[k] != os[k] || l.StrideB[k] != os[k] {
			return false
		}
	}
	return true
}

// elementGrad is binaryGrad of inputs that are not broadcast: out[e] is
// the one term of value e, the loops of Add, Subtract and Multiply
// written out.
func elementGrad[T float](kind BinaryKind, wrt int, a, b, dy, out []T) {
	switch {
	case kind == BinaryAdd || (kind == BinarySubtract && wrt == 0):
		copy(out, dy)
	case kind == BinarySubtract:
		for e := range out {
			out[e] = -dy[e]
		}
	case kind == BinaryMultiply && wrt == 0:
		for e := range out {
			out[e] = dy[e] * b[e]
		}
	case kind == BinaryMultiply:
		for e := range out {
			out[e] = dy[e] * a[e]
		}
	default:
		for e := range out {
			out[e] = gradTerm(kind, wrt, a[e], b[e], dy[e])
		}
	}
}

// ScaleParams describe a Scale op: x·Factor, or x/Factor with Divide (as
// Keras' Average divides its sum by the count of its inputs), plus Offset
// (Keras' Rescaling: x·scale + offset, the product rounded before the
// sum, as TensorFlow computes it).
type ScaleParams struct {
	Factor float64
	Divide bool
	Offset float64
}

func (p ScaleParams) String() string {
	s := fmt.Sprintf("*%v", p.Factor)
	if p.Divide {
		s = fmt.Sprintf("/%v", p.Factor)
	}
	if p.Offset != 0 {
		s += fmt.Sprintf("%+v", p.Offset)
	}
	return s
}

// Scale adds the node of x·c, c a constant: its gradient is dy·c. The
// product is of x and c rounded to x's dtype. x may be a scalar (a loss,
// weighted in a model of several outputs).
func Scale(x *gorgonia.Node, c float64) (*gorgonia.Node, error) {
	return scale(x, ScaleParams{Factor: c})
}

// DivideBy adds the node of x/d, d a constant other than 0, as Keras'
// Average divides its sum: its gradient is dy/d.
func DivideBy(x *gorgonia.Node, d float64) (*gorgonia.Node, error) {
	if d == 0 {
		return nil, fmt.Errorf("divide by: the divisor is 0")
	}
	return scale(x, ScaleParams{Factor: d, Divide: true})
}

// Rescale adds the node of x·scale + offset, scale and offset constants,
// Keras' Rescaling: the product is rounded to x's dtype before the offset
// is added. Its gradient is dy·scale.
func Rescale(x *gorgonia.Node, scale, offset float64) (*gorgonia.Node, error) {
	return scaleNode(x, ScaleParams{Factor: scale, Offset: offset})
}

func scale(x *gorgonia.Node, p ScaleParams) (*gorgonia.Node, error) { return scaleNode(x, p) }

func scaleNode(x *gorgonia.Node, p ScaleParams) (*gorgonia.Node, error) {
	if math.IsNaN(p.Factor) || math.IsInf(p.Factor, 0) {
		return nil, fmt.Errorf("scale: the factor %v is not a finite number", p.Factor)
	}
	if math.IsNaN(p.Offset) || math.IsInf(p.Offset, 0) {
		return nil, fmt.Errorf("scale: the offset %v is not a finite number", p.Offset)
	}
	return gorgonia.ApplyOp(scaleOp{p: p, dims: x.Dims()}, x)
}

type scaleOp struct {
	common
	p    ScaleParams
	dims int
}

func (op scaleOp) String() string        { return fmt.Sprintf("Scale{%v, dims=%d}", op.p, op.dims) }
func (op scaleOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op scaleOp) Hashcode() uint32      { return hashOf(op) }
func (op scaleOp) Arity() int            { return 1 }

func (op scaleOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	if op.dims == 0 { // a scalar
		return hm.NewFnType(a, a)
	}
	t := gorgonia.TensorType{Dims: op.dims, Of: a}
	return hm.NewFnType(t, t)
}

func (op scaleOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op scaleOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	if op.dims == 0 && len(args) == 1 {
		switch v := args[0].(type) {
		case *gorgonia.F32:
			out := []float32{0}
			scaleValues(op.p, []float32{float32(*v)}, out)
			return gorgonia.NewF32(out[0]), nil
		case *gorgonia.F64:
			out := []float64{0}
			scaleValues(op.p, []float64{float64(*v)}, out)
			return gorgonia.NewF64(out[0]), nil
		}
	}
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	out := newLike(x.Dtype(), x.Shape().Clone()...)
	switch od := out.Data().(type) {
	case []float32:
		scaleValues(op.p, x.Data().([]float32), od)
	case []float64:
		scaleValues(op.p, x.Data().([]float64), od)
	}
	return out, nil
}

func (op scaleOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: the gradient of x·c (+ offset) is dy·c, of x/d dy/d
// (TensorFlow's RealDiv gradient divides too).
func (op scaleOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g := op
	g.p.Offset = 0
	dx, err := gorgonia.ApplyOp(g, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx}, nil
}

func scaleValues[T float](p ScaleParams, x, out []T) {
	c, o := T(p.Factor), T(p.Offset)
	x = x[:len(out)]
	if p.Divide {
		for i, v := range x {
			out[i] = v / c
		}
	} else {
		for i, v := range x {
			out[i] = v * c
		}
	}
	if o != 0 { // after the product is rounded: never fused into one
		for i := range out {
			out[i] += o
		}
	}
}

// clone copies p's shapes, so that an Info never shares an op's.
func (p BinaryParams) clone() BinaryParams {
	p.A, p.B = append([]int(nil), p.A...), append([]int(nil), p.B...)
	return p
}

// BinaryForward writes p's op of a and b into out (p.Out()'s values), as
// a Binary node's Do computes it.
func BinaryForward(p BinaryParams, a, b, out []float32) {
	l := p.Layout()
	binaryForward(p.Kind, l, a, b, out[:l.Size()])
}

// BinaryReLUForward writes the ReLU of BinaryForward's values into out
// (the value where it is above 0, else 0), a chunk of values at a time
// while it is in the caches where the op adds two operands of one shape:
// where a plan folds a ReLU into the op before it (plan.Capabilities).
func BinaryReLUForward(p BinaryParams, a, b, out []float32) {
	l := p.Layout()
	out = out[:l.Size()]
	if p.Kind == BinaryAdd && l.elementwise() {
		overValues(len(out), func(lo, hi int) {
			avx2.Add(out[lo:hi], a[lo:hi], b[lo:hi]) // as AddValues
			maskPositive(out[lo:hi], out[lo:hi], out[lo:hi])
		})
		return
	}
	binaryForward(p.Kind, l, a, b, out)
	ActivationForward(ReLU, 0, len(out), out, out)
}

// BinaryBackward writes the gradient of input p.Wrt of p's op into out,
// given its inputs a and b and the gradient dy of its output, as the
// op's gradient node computes it.
func BinaryBackward(p BinaryParams, a, b, dy, out []float32) {
	target := p.A
	if p.Wrt == 1 {
		target = p.B
	}
	n := 1
	for _, d := range target {
		n *= d
	}
	binaryGrad(p.Kind, p.Wrt, p.Layout(), a, b, dy, out[:n])
}

// ScaleForward writes x·p.Factor (x/p.Factor with p.Divide) + p.Offset
// into out, as a Scale node's Do computes it, len(out) values.
func ScaleForward(p ScaleParams, x, out []float32) { scaleValues(p, x, out) }
