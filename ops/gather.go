package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gather adds the node that looks up rows of table, (rows, width), at the
// class indices held as numbers in indices, a vector: the result is
// (len(indices), width), an embedding. Its gradient adds each row's
// gradient into the row of table it came from; no gradient flows into
// the indices.
func Gather(table, indices *gorgonia.Node) (*gorgonia.Node, error) {
	if table.Dims() != 2 || indices.Dims() != 1 {
		return nil, fmt.Errorf("gather: want a (rows, width) table and a vector of indices, got shapes %v and %v", table.Shape(), indices.Shape())
	}
	return gorgonia.ApplyOp(gatherOp{rows: table.Shape()[0], width: table.Shape()[1]}, table, indices)
}

type gatherOp struct {
	common
	rows, width int
}

func (op gatherOp) String() string        { return fmt.Sprintf("Gather{%d×%d}", op.rows, op.width) }
func (op gatherOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op gatherOp) Hashcode() uint32      { return hashOf(op) }
func (op gatherOp) Arity() int            { return 2 }

func (op gatherOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, gorgonia.TensorType{Dims: 1, Of: a}, m)
}

func (op gatherOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 1)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s.TotalSize(), op.width}, nil
}

func (op gatherOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	table, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	idx, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDtype(op, table, idx); err != nil {
		return nil, err
	}
	out := newLike(table.Dtype(), idx.Shape().TotalSize(), op.width)
	switch od := out.Data().(type) {
	case []float32:
		err = gather(op.rows, op.width, table.Data().([]float32), idx.Data().([]float32), od)
	case []float64:
		err = gather(op.rows, op.width, table.Data().([]float64), idx.Data().([]float64), od)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (op gatherOp) DiffWRT(inputs int) []bool { return []bool{true, false} }

func (op gatherOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dt, err := gorgonia.ApplyOp(scatterAddOp(op), inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dt, nil}, nil
}

// scatterAddOp maps (indices, dy) to the table's gradient: row i is the
// sum of the rows of dy whose index is i.
type scatterAddOp gatherOp

func (op scatterAddOp) String() string        { return fmt.Sprintf("ScatterAdd{%d×%d}", op.rows, op.width) }
func (op scatterAddOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op scatterAddOp) Hashcode() uint32      { return hashOf(op) }
func (op scatterAddOp) Arity() int            { return 2 }

func (op scatterAddOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(gorgonia.TensorType{Dims: 1, Of: a}, m, m)
}

func (op scatterAddOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.rows, op.width}, nil
}

func (op scatterAddOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	idx, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	dy, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDtype(op, idx, dy); err != nil {
		return nil, err
	}
	out := newLike(dy.Dtype(), op.rows, op.width)
	switch od := out.Data().(type) {
	case []float32:
		err = scatterAdd(op.rows, op.width, idx.Data().([]float32), dy.Data().([]float32), od)
	case []float64:
		err = scatterAdd(op.rows, op.width, idx.Data().([]float64), dy.Data().([]float64), od)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// IndexError is an index that names no row of an embedding's table.
type IndexError struct {
	At    int     // position among the indices (sample·length + step)
	Value float64 // the value found there
	Rows  int     // the table's rows: indices must be in [0, Rows)
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("index %d is %v, but it must be an integer in [0, %d): the Embedding's input_dim must exceed every index in the data", e.At, e.Value, e.Rows)
}

func rowIndex[T float](v T, at, rows int) (int, error) {
	f := float64(v)
	if f != math.Trunc(f) || f < 0 || f >= float64(rows) {
		return 0, &IndexError{At: at, Value: f, Rows: rows}
	}
	return int(f), nil
}

func gather[T float](rows, width int, table, idx, out []T) error {
	for i, v := range idx {
		r, err := rowIndex(v, i, rows)
		if err != nil {
			return err
		}
		copy(out[i*width:(i+1)*width], table[r*width:(r+1)*width])
	}
	return nil
}

func scatterAdd[T float](rows, width int, idx, dy, out []T) error {
	clear(out[:rows*width])
	for i, v := range idx {
		r, err := rowIndex(v, i, rows)
		if err != nil {
			return err
		}
		o := out[r*width : (r+1)*width]
		for c, g := range dy[i*width : (i+1)*width] {
			o[c] += g
		}
	}
	return nil
}

// GatherForward looks up the rows of table (rows × width) at idx into out,
// as a Gather node's Do does; an index that is not a row fails with an
// *IndexError.
func GatherForward(rows, width int, table, idx, out []float32) error {
	return gather(rows, width, table, idx, out)
}

// ScatterAddForward overwrites out (rows × width) with the gradient of
// Gather's table given the gradient dy of its output.
func ScatterAddForward(rows, width int, idx, dy, out []float32) error {
	return scatterAdd(rows, width, idx, dy, out)
}
