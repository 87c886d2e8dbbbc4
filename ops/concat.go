package ops

import (
	"fmt"
	"hash"
	"strings"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ConcatParams describe a Concatenate op: its inputs' shapes, equal but on
// Axis, along which they are joined in order.
type ConcatParams struct {
	Axis   int
	Shapes [][]int
	// Piece is, for OpConcatGrad, the input whose slice of the output's
	// gradient the op takes.
	Piece int
}

// Out is the output's shape.
func (p ConcatParams) Out() []int {
	out := append([]int(nil), p.Shapes[0]...)
	out[p.Axis] = 0
	for _, s := range p.Shapes {
		out[p.Axis] += s[p.Axis]
	}
	return out
}

// Rows is the number of blocks each input contributes, one after another
// in the output: the product of the sizes before Axis.
func (p ConcatParams) Rows() int {
	n := 1
	for _, d := range p.Shapes[0][:p.Axis] {
		n *= d
	}
	return n
}

// Cols is the size of input i's blocks: its size along Axis times the
// sizes after it. The output's rows are the inputs' blocks side by side.
func (p ConcatParams) Cols(i int) int {
	n := 1
	for _, d := range p.Shapes[i][p.Axis:] {
		n *= d
	}
	return n
}

// Offset is where input i's block starts in a row of the output.
func (p ConcatParams) Offset(i int) int {
	off := 0
	for j := range i {
		off += p.Cols(j)
	}
	return off
}

// OutCols is the length of a row of the output: the sum of the Cols.
func (p ConcatParams) OutCols() int { return p.Offset(len(p.Shapes)) }

// Concatenate adds the node joining xs along axis (negative: from the
// end, -1 the last axis, Keras' default), as Keras' Concatenate layer
// does: one op of len(xs) inputs of one rank, equal on every axis but
// axis, which may not be the batch axis 0. The gradient of each input is
// its slice of the output's. A single input is returned as it is.
func Concatenate(axis int, xs ...*gorgonia.Node) (*gorgonia.Node, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("concatenate: no inputs")
	}
	rank := xs[0].Dims()
	if axis < 0 {
		axis += rank
	}
	if rank < 2 || axis <= 0 || axis >= rank {
		return nil, fmt.Errorf("concatenate: axis %d of inputs of shape %v: the axis must be one of the non-batch axes 1 to %d (or -1 to -%d)", axis, xs[0].Shape(), rank-1, rank-1)
	}
	p := ConcatParams{Axis: axis, Shapes: make([][]int, len(xs))}
	for i, x := range xs {
		s := x.Shape()
		if x.Dims() != rank {
			return nil, fmt.Errorf("concatenate: input %d has shape %v, input 0 %v: the inputs must have one rank", i, s, xs[0].Shape())
		}
		for k := range rank {
			if k != axis && s[k] != xs[0].Shape()[k] {
				return nil, fmt.Errorf("concatenate: inputs of shapes %v and %v differ on axis %d: a Concatenate along axis %d needs inputs of matching shapes except on that axis", xs[0].Shape(), s, k, axis)
			}
			if s[k] <= 0 {
				return nil, fmt.Errorf("concatenate: input %d has an empty shape %v", i, s)
			}
		}
		p.Shapes[i] = s.Clone()
	}
	if len(xs) == 1 {
		return xs[0], nil
	}
	return gorgonia.ApplyOp(concatOp{p: p}, xs...)
}

func (p ConcatParams) String() string {
	parts := make([]string, len(p.Shapes))
	for i, s := range p.Shapes {
		parts[i] = shapeString(s)
	}
	return fmt.Sprintf("axis=%d, %s", p.Axis, strings.Join(parts, " "))
}

// concatOp joins its inputs along p.Axis.
type concatOp struct {
	common
	p ConcatParams
}

func (op concatOp) String() string        { return fmt.Sprintf("Concatenate{%v}", op.p) }
func (op concatOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op concatOp) Hashcode() uint32      { return hashOf(op) }
func (op concatOp) Arity() int            { return len(op.p.Shapes) }

func (op concatOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: len(op.p.Shapes[0]), Of: a}
	ts := make([]hm.Type, len(op.p.Shapes)+1)
	for i := range ts {
		ts[i] = t
	}
	return hm.NewFnType(ts...)
}

func (op concatOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.p.Shapes...); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Out()), nil
}

func (op concatOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.p.Shapes...)
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Out()...)
	switch od := out.Data().(type) {
	case []float32:
		ins := make([][]float32, len(ds))
		for i, d := range ds {
			ins[i] = d.Data().([]float32)
		}
		concat(op.p, ins, od)
	case []float64:
		ins := make([][]float64, len(ds))
		for i, d := range ds {
			ins[i] = d.Data().([]float64)
		}
		concat(op.p, ins, od)
	}
	return out, nil
}

func (op concatOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// SymDiff: each input's gradient is its slice of the output's gradient.
func (op concatOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	grads := make(gorgonia.Nodes, len(op.p.Shapes))
	for i := range grads {
		p := op.p
		p.Piece = i
		g, err := gorgonia.ApplyOp(concatGradOp{p: p}, grad)
		if err != nil {
			return nil, fmt.Errorf("%v: gradient: %w", op, err)
		}
		grads[i] = g
	}
	return grads, nil
}

// concatGradOp takes input p.Piece's slice of a Concatenate's output (its
// gradient).
type concatGradOp struct {
	common
	p ConcatParams
}

func (op concatGradOp) String() string {
	return fmt.Sprintf("ConcatenateGrad{%v, piece=%d}", op.p, op.p.Piece)
}
func (op concatGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op concatGradOp) Hashcode() uint32      { return hashOf(op) }
func (op concatGradOp) Arity() int            { return 1 }

// DiffWRT: the piece is not differentiated (no gradient of a gradient,
// and ColumnsOf's data needs none); saying so lets an input's piece feed
// a layer directly.
func (op concatGradOp) DiffWRT(int) []bool { return []bool{false} }

// SymDiff is never called: DiffWRT says there is nothing to differentiate.
func (op concatGradOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%v: no gradient: it takes a piece of data or of a gradient", op)
}

func (op concatGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: len(op.p.Shapes[0]), Of: a}
	return hm.NewFnType(t, t)
}

func (op concatGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.p.Out()); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Shapes[op.p.Piece]).Clone(), nil
}

func (op concatGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.p.Out())
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Shapes[op.p.Piece]...)
	switch od := out.Data().(type) {
	case []float32:
		concatPiece(op.p, ds[0].Data().([]float32), od)
	case []float64:
		concatPiece(op.p, ds[0].Data().([]float64), od)
	}
	return out, nil
}

// copyCols copies the rows×cols block at column srcOff of src, rows of
// srcLd values, to column dstOff of dst, rows of dstLd: gk_copy_cols.
func copyCols[T float](src []T, srcLd, srcOff int, dst []T, dstLd, dstOff, rows, cols int) {
	for r := range rows {
		copy(dst[r*dstLd+dstOff:r*dstLd+dstOff+cols], src[r*srcLd+srcOff:r*srcLd+srcOff+cols])
	}
}

func concat[T float](p ConcatParams, ins [][]T, out []T) {
	rows, ld := p.Rows(), p.OutCols()
	for i, in := range ins {
		copyCols(in, p.Cols(i), 0, out, ld, p.Offset(i), rows, p.Cols(i))
	}
}

func concatPiece[T float](p ConcatParams, dy, out []T) {
	i := p.Piece
	copyCols(dy, p.OutCols(), p.Offset(i), out, p.Cols(i), 0, p.Rows(), p.Cols(i))
}

// ConcatForward writes the inputs ins joined along p.Axis into out, as a
// Concatenate node's Do computes it.
func ConcatForward(p ConcatParams, ins [][]float32, out []float32) { concat(p, ins, out) }

// ConcatBackward writes input p.Piece's slice of dy, the gradient of a
// Concatenate's output, into out.
func ConcatBackward(p ConcatParams, dy, out []float32) { concatPiece(p, dy, out) }

// clone copies p's shapes, so that an Info never shares an op's.
func (p ConcatParams) clone() ConcatParams {
	shapes := make([][]int, len(p.Shapes))
	for i, s := range p.Shapes {
		shapes[i] = append([]int(nil), s...)
	}
	p.Shapes = shapes
	return p
}

// ColumnsOf adds the node of part i of x's rows, x of shape (rows, Σ
// cols): the cols[i] columns after the cols of the parts before it. A
// model of several inputs (or outputs) splits a batch of its samples (or
// labels), each row the parts' values one after another, with it. It is
// the piece of a Concatenate of the parts that the Concatenate's gradient
// takes, and has no gradient of its own: data needs none.
func ColumnsOf(x *gorgonia.Node, cols []int, i int) (*gorgonia.Node, error) {
	s := x.Shape()
	if x.Dims() != 2 {
		return nil, fmt.Errorf("columns: x has shape %v, want (rows, columns)", s)
	}
	if i < 0 || i >= len(cols) {
		return nil, fmt.Errorf("columns: part %d of %d", i, len(cols))
	}
	p := ConcatParams{Axis: 1, Shapes: make([][]int, len(cols)), Piece: i}
	total := 0
	for k, c := range cols {
		if c <= 0 {
			return nil, fmt.Errorf("columns: part %d has %d columns", k, c)
		}
		p.Shapes[k] = []int{s[0], c}
		total += c
	}
	if total != s[1] {
		return nil, fmt.Errorf("columns: parts of %v columns do not make x's %d", cols, s[1])
	}
	return gorgonia.ApplyOp(concatGradOp{p: p}, x)
}
