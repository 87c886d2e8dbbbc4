package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MovingParams are the factors of a moving average's update (see
// MovingAverage): moving = Momentum·moving + (1-Momentum)·stat·Bessel.
type MovingParams struct {
	// Momentum is how much of the moving value each update keeps, in
	// [0, 1] (Keras' BatchNormalization momentum, 0.99 by default).
	Momentum float64
	// Bessel multiplies the new statistic: n/(n-1) where a biased
	// variance of n values is to enter unbiased (BatchNormalization on
	// rank-4 and rank-5 inputs, as Keras 2 runs TensorFlow's fused
	// kernel); 0 means 1.
	Bessel float64
}

// Factor is the statistic's extra factor: Bessel, or 1 when Bessel is 0.
func (p MovingParams) Factor() float64 {
	if p.Bessel == 0 {
		return 1
	}
	return p.Bessel
}

// MovingAverage adds the node of moving's next value once a training step
// has computed stat: Momentum·moving + (1-Momentum)·stat·Bessel per value
// (MovingUpdate), computed in float64 and rounded to moving's dtype. moving
// is a non-trainable weight (BatchNormalization's moving mean or
// variance), a vector the shape of stat.
//
// The node is an update of moving, not a value other nodes read: a
// machine that trains the graph writes it into moving's own memory after
// the step's forward pass (the plan compiler's MovingAverage steps, on the
// model's device), and nothing flows back through it (it has no gradient).
// Its Do, the host reference, returns the new values without touching
// moving. Under data-parallel training the machines first average stat
// over the replicas: the update is linear in stat, so updating every
// replica with the mean of the statistics gives the mean of the moving
// values each replica's own updates would give.
func MovingAverage(moving, stat *gorgonia.Node, p MovingParams) (*gorgonia.Node, error) {
	if !(p.Momentum >= 0 && p.Momentum <= 1) {
		return nil, fmt.Errorf("moving average: momentum must be in [0, 1], got %v", p.Momentum)
	}
	if f := p.Factor(); !(f > 0) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("moving average: the Bessel factor must be a positive finite number, got %v", p.Bessel)
	}
	if moving.Dims() != 1 || !moving.Shape().Eq(stat.Shape()) {
		return nil, fmt.Errorf("moving average: %q has shape %v and the statistic %q %v; want two vectors of one shape",
			moving.Name(), moving.Shape(), stat.Name(), stat.Shape())
	}
	if moving.Dtype() != stat.Dtype() {
		return nil, fmt.Errorf("moving average: %q is %v and the statistic %q %v", moving.Name(), moving.Dtype(), stat.Name(), stat.Dtype())
	}
	return gorgonia.ApplyOp(movingOp{p: p}, moving, stat)
}

// movingOp maps (moving, stat) to moving's next value.
type movingOp struct {
	common
	p MovingParams
}

func (op movingOp) String() string {
	return fmt.Sprintf("MovingAverage{momentum=%v, bessel=%v}", op.p.Momentum, op.p.Factor())
}
func (op movingOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op movingOp) Hashcode() uint32      { return hashOf(op) }
func (op movingOp) Arity() int            { return 2 }

func (op movingOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t := gorgonia.TensorType{Dims: 1, Of: a}
	return hm.NewFnType(t, t, t)
}

func (op movingOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op, in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op movingOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	moving, err := denseArg(op, args, 0)
	if err != nil {
		return nil, err
	}
	stat, err := denseArg(op, args, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDtype(op, moving, stat); err != nil {
		return nil, err
	}
	if moving.Size() != stat.Size() {
		return nil, fmt.Errorf("%v: %d moving values and %d statistics", op, moving.Size(), stat.Size())
	}
	out := moving.Clone().(*tensor.Dense)
	switch od := out.Data().(type) {
	case []float32:
		movingUpdate(op.p, od, stat.Data().([]float32))
	case []float64:
		movingUpdate(op.p, od, stat.Data().([]float64))
	}
	return out, nil
}

// DiffWRT: nothing flows back through an update.
func (op movingOp) DiffWRT(int) []bool { return []bool{false, false} }

func (op movingOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%v: an update of a non-trainable weight has no gradient", op)
}

// movingUpdate is the one definition of the arithmetic: in float64,
// m·moving + ((1-m)·stat)·bessel, rounded to T.
func movingUpdate[T float](p MovingParams, moving, stat []T) {
	m, b := p.Momentum, p.Factor()
	for i, s := range stat[:len(moving)] {
		moving[i] = T(m*float64(moving[i]) + (1-m)*float64(s)*b)
	}
}

// MovingUpdate applies p's update to moving in place with the statistics
// stat, as a MovingAverage node computes its value: the host kernel that
// the backends are tested against.
func MovingUpdate(p MovingParams, moving, stat []float32) { movingUpdate(p, moving, stat) }
