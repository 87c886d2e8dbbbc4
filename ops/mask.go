package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MaskParams describe a Mask op: Rows rows of Width values each, a row
// kept (1) when any of its values differs from Value, else masked (0).
type MaskParams struct {
	Rows, Width int
	Value       float64
}

func (p MaskParams) String() string {
	return fmt.Sprintf("rows=%d width=%d value=%v", p.Rows, p.Width, p.Value)
}

// Mask adds the node of a sequence mask, as Keras' Masking and
// Embedding(mask_zero=True) compute theirs: x is (batch, steps, features)
// (or (batch, steps), one feature a step), the output (batch, steps) is 1
// at the steps where some feature differs from value and 0 where all
// equal it. It has no gradient: the mask is constant almost everywhere.
func Mask(x *gorgonia.Node, value float64) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 2 && len(s) != 3 {
		return nil, fmt.Errorf("mask: x has shape %v, want (batch, steps) or (batch, steps, features)", s)
	}
	p := MaskParams{Rows: s[0] * s[1], Width: 1, Value: value}
	if len(s) == 3 {
		p.Width = s[2]
	}
	return gorgonia.ApplyOp(maskOp{p: p, shape: [2]int{s[0], s[1]}, dims: len(s)}, x)
}

type maskOp struct {
	common
	p     MaskParams
	shape [2]int
	dims  int
}

func (op maskOp) String() string        { return fmt.Sprintf("Mask{%v}", op.p) }
func (op maskOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op maskOp) Hashcode() uint32      { return hashOf(op) }
func (op maskOp) Arity() int            { return 1 }

func (op maskOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: op.dims, Of: a}, gorgonia.TensorType{Dims: 2, Of: a})
}

func (op maskOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if s.TotalSize() != op.p.Rows*op.p.Width {
		return nil, fmt.Errorf("%v: input of shape %v", op, s)
	}
	return tensor.Shape{op.shape[0], op.shape[1]}, nil
}

func (op maskOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	out := newLike(x.Dtype(), op.shape[0], op.shape[1])
	switch od := out.Data().(type) {
	case []float32:
		mask(op.p, x.Data().([]float32), od)
	case []float64:
		mask(op.p, x.Data().([]float64), od)
	}
	return out, nil
}

func (op maskOp) DiffWRT(int) []bool { return []bool{false} }

func (op maskOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{nil}, nil
}

// MaskForward computes a Mask op on float32 values: out is p.Rows values.
func MaskForward(p MaskParams, x, out []float32) { mask(p, x, out) }

func mask[T float](p MaskParams, x, out []T) {
	v := T(p.Value)
	for r := range p.Rows {
		out[r] = 0
		for _, e := range x[r*p.Width:][:p.Width] {
			if e != v {
				out[r] = 1
				break
			}
		}
	}
}
