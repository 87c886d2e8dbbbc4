package ops

import (
	"fmt"
	"hash"
	"slices"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Flatten adds a node that reshapes x from (batch, d1, d2, ...) to
// (batch, d1·d2·...). inputGrad says whether gradients must flow back into x.
func Flatten(x *gorgonia.Node, inputGrad bool) (*gorgonia.Node, error) {
	if x.Dims() < 1 {
		return nil, fmt.Errorf("flatten: input must have a batch axis, got shape %v", x.Shape())
	}
	return gorgonia.ApplyOp(reshapeOp{from: x.Shape().Clone(), to: flatShape(x.Shape()), inputGrad: inputGrad}, x)
}

// Reshape adds a node holding x's values in shape to, which must have as
// many values. inputGrad says whether gradients must flow back into x.
func Reshape(x *gorgonia.Node, to []int, inputGrad bool) (*gorgonia.Node, error) {
	target := tensor.Shape(append([]int(nil), to...))
	if target.TotalSize() != x.Shape().TotalSize() || len(target) == 0 {
		return nil, fmt.Errorf("reshape: cannot hold the %d values of shape %v in shape %v", x.Shape().TotalSize(), x.Shape(), target)
	}
	for _, d := range target {
		if d <= 0 {
			return nil, fmt.Errorf("reshape: shape %v has a non-positive dimension", target)
		}
	}
	// The same shape, axis for axis (tensor.Shape.Eq would take (4) for
	// (1, 4), a vector for a row, and leave the axis out).
	if slices.Equal(target, x.Shape()) {
		return x, nil
	}
	return gorgonia.ApplyOp(reshapeOp{from: x.Shape().Clone(), to: target, inputGrad: inputGrad}, x)
}

func flatShape(s tensor.Shape) tensor.Shape {
	n := 1
	for _, d := range s[1:] {
		n *= d
	}
	return tensor.Shape{s[0], n}
}

// reshapeOp copies its input into a new shape of the same size.
type reshapeOp struct {
	common
	from, to  tensor.Shape
	inputGrad bool
}

func (op reshapeOp) String() string {
	return fmt.Sprintf("Reshape{%v->%v, inputGrad=%t}", op.from, op.to, op.inputGrad)
}
func (op reshapeOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op reshapeOp) Hashcode() uint32      { return hashOf(op) }
func (op reshapeOp) Arity() int            { return 1 }

func (op reshapeOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: len(op.from), Of: a}, gorgonia.TensorType{Dims: len(op.to), Of: a})
}

func (op reshapeOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	if !s.Eq(op.from) {
		return nil, fmt.Errorf("%v: input has shape %v", op, s)
	}
	return op.to.Clone(), nil
}

func (op reshapeOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	if !x.Shape().Eq(op.from) {
		return nil, fmt.Errorf("%v: input has shape %v", op, x.Shape())
	}
	out := newLike(x.Dtype(), op.to...)
	switch od := out.Data().(type) {
	case []float32:
		copy(od, x.Data().([]float32))
	case []float64:
		copy(od, x.Data().([]float64))
	}
	return out, nil
}

func (op reshapeOp) DiffWRT(inputs int) []bool { return []bool{op.inputGrad} }

func (op reshapeOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if !op.inputGrad {
		return gorgonia.Nodes{nil}, nil
	}
	back := reshapeOp{from: op.to, to: op.from, inputGrad: true}
	dx, err := gorgonia.ApplyOp(back, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx}, nil
}
