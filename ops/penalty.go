package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PenaltyParams are a regularization penalty's factors: the penalty of
// values x is Scale·(L1·Σ|x| + L2·Σx²).
type PenaltyParams struct {
	L1, L2 float64
	// Scale multiplies the penalty; 0 means 1. An activity penalty is
	// divided by the batch size, as Keras divides it.
	Scale float64
}

// Factor is what the penalty is multiplied by: Scale, or 1 when Scale is 0.
func (p PenaltyParams) Factor() float64 {
	if p.Scale == 0 {
		return 1
	}
	return p.Scale
}

// Penalty adds the scalar node of p's penalty of x, any shape. Its gradient
// is Scale·(L1·sign(x) + 2·L2·x) times the gradient of the scalar.
func Penalty(x *gorgonia.Node, p PenaltyParams) (*gorgonia.Node, error) {
	if !(p.L1 >= 0 && p.L2 >= 0) || math.IsInf(p.L1, 0) || math.IsInf(p.L2, 0) {
		return nil, fmt.Errorf("penalty: l1 and l2 must be finite numbers >= 0, got %v and %v", p.L1, p.L2)
	}
	return gorgonia.ApplyOp(penaltyOp{p: p, dims: x.Dims()}, x)
}

type penaltyOp struct {
	common
	p    PenaltyParams
	dims int
}

func (op penaltyOp) String() string {
	return fmt.Sprintf("Penalty{l1=%v, l2=%v, scale=%v, dims=%d}", op.p.L1, op.p.L2, op.p.Factor(), op.dims)
}
func (op penaltyOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op penaltyOp) Hashcode() uint32      { return hashOf(op) }
func (op penaltyOp) Arity() int            { return 1 }

func (op penaltyOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: op.dims, Of: a}, a)
}

func (op penaltyOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op penaltyOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	var v float64
	switch d := x.Data().(type) {
	case []float32:
		v = penalty(op.p, d)
	case []float64:
		v = penalty(op.p, d)
	}
	return scalarValue(v, x.Dtype()), nil
}

func (op penaltyOp) DiffWRT(int) []bool { return []bool{true} }

func (op penaltyOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(penaltyGradOp(op), inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{dx}, nil
}

// penaltyGradOp maps (x, seed) to seed·Scale·(L1·sign(x) + 2·L2·x).
type penaltyGradOp penaltyOp

func (op penaltyGradOp) String() string {
	return fmt.Sprintf("PenaltyGrad{l1=%v, l2=%v, scale=%v, dims=%d}", op.p.L1, op.p.L2, op.p.Factor(), op.dims)
}
func (op penaltyGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op penaltyGradOp) Hashcode() uint32      { return hashOf(op) }
func (op penaltyGradOp) Arity() int            { return 2 }

func (op penaltyGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: op.dims, Of: a}
	return hm.NewFnType(t, a, t)
}

func (op penaltyGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op penaltyGradOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	seed, err := scalarArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	out := newLike(x.Dtype(), x.Shape().Clone()...)
	switch od := out.Data().(type) {
	case []float32:
		penaltyGrad(op.p, seed, x.Data().([]float32), od)
	case []float64:
		penaltyGrad(op.p, seed, x.Data().([]float64), od)
	}
	return out, nil
}

func penalty[T float](p PenaltyParams, x []T) float64 {
	var l1, l2 float64
	for _, v := range x {
		l1 += math.Abs(float64(v))
		l2 += float64(v) * float64(v)
	}
	return p.Factor() * (p.L1*l1 + p.L2*l2)
}

func penaltyGrad[T float](p PenaltyParams, seed float64, x, out []T) {
	s := seed * p.Factor()
	if p.L1 == 0 {
		// L1·sign is a zero then, whose only effect on the sum is to turn
		// a -0 into +0: so does adding +0.
		l2 := 2 * p.L2
		overValues(len(x), func(lo, hi int) {
			for i, v := range x[lo:hi] {
				out[lo+i] = T(s * (l2*float64(v) + 0))
			}
		})
		return
	}
	for i, v := range x {
		sign := 0.0
		switch {
		case v > 0:
			sign = 1
		case v < 0:
			sign = -1
		}
		out[i] = T(s * (p.L1*sign + 2*p.L2*float64(v)))
	}
}

// PenaltyValue returns p's penalty of x, as a Penalty node's Do computes it.
func PenaltyValue(p PenaltyParams, x []float32) float64 { return penalty(p, x) }

// PenaltyGradient writes seed times the gradient of p's penalty of x into
// out, as a Penalty's gradient op computes it.
func PenaltyGradient(p PenaltyParams, seed float64, x, out []float32) { penaltyGrad(p, seed, x, out) }
