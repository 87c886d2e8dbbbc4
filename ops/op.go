package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"io"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// float is the element type every kernel of this package is written for.
type float interface{ ~float32 | ~float64 }

// common holds the methods every op of this package answers the same way.
// Ops produce fresh output values and never write into their inputs.
type common struct{}

func (common) ReturnsPtr() bool     { return false }
func (common) CallsExtern() bool    { return false }
func (common) OverwritesInput() int { return -1 }

// hashOf hashes an op by its String form, which names the op and every
// parameter that changes what it computes. gorgonia merges nodes whose op
// hash and children are equal, so two ops may hash alike only if they are
// interchangeable.
func hashOf(op fmt.Stringer) uint32 {
	h := fnv.New32a()
	writeHash(h, op)
	return h.Sum32()
}

func writeHash(h hash.Hash, op fmt.Stringer) { _, _ = io.WriteString(h, op.String()) }

// denseArg returns argument i of an op as a float32 or float64 dense tensor.
func denseArg(op fmt.Stringer, args []gorgonia.Value, i int) (*tensor.Dense, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("%v: expected at least %d arguments, got %d", op, i+1, len(args))
	}
	d, ok := args[i].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%v: argument %d is a %T, want a dense tensor", op, i, args[i])
	}
	if dt := d.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("%v: argument %d has dtype %v; only float32 and float64 are supported", op, i, dt)
	}
	return d, nil
}

// scalarArg reads argument i of an op as a number: gorgonia passes the seed
// of a gradient as a scalar value.
func scalarArg(op fmt.Stringer, args []gorgonia.Value, i int) (float64, error) {
	if i >= len(args) {
		return 0, fmt.Errorf("%v: expected at least %d arguments, got %d", op, i+1, len(args))
	}
	switch v := args[i].(type) {
	case *gorgonia.F32:
		return float64(*v), nil
	case *gorgonia.F64:
		return float64(*v), nil
	case *tensor.Dense:
		if v.Size() == 1 {
			switch data := v.Data().(type) {
			case []float32:
				return float64(data[0]), nil
			case []float64:
				return data[0], nil
			case float32:
				return float64(data), nil
			case float64:
				return data, nil
			}
		}
	}
	return 0, fmt.Errorf("%v: argument %d is a %T, want a scalar", op, i, args[i])
}

// scalarValue wraps a number as a scalar of the given dtype.
func scalarValue(v float64, dt tensor.Dtype) gorgonia.Value {
	if dt == tensor.Float64 {
		return gorgonia.NewF64(v)
	}
	return gorgonia.NewF32(float32(v))
}

// newLike allocates a zeroed tensor of dtype dt and the given shape.
func newLike(dt tensor.Dtype, shape ...int) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
}

// sameDtype checks that all tensors share the first one's dtype.
func sameDtype(op fmt.Stringer, ts ...*tensor.Dense) error {
	for _, t := range ts[1:] {
		if t.Dtype() != ts[0].Dtype() {
			return fmt.Errorf("%v: mixed dtypes %v and %v", op, ts[0].Dtype(), t.Dtype())
		}
	}
	return nil
}

// shapeOf reads the i-th DimSizer handed to InferShape as a shape.
func shapeOf(op fmt.Stringer, in []gorgonia.DimSizer, i int) (tensor.Shape, error) {
	if i >= len(in) {
		return nil, fmt.Errorf("%v: expected at least %d inputs, got %d", op, i+1, len(in))
	}
	s, ok := in[i].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input %d has no concrete shape (%T)", op, i, in[i])
	}
	return s, nil
}

// rowsCols views a shape as a matrix: all leading dimensions are rows.
func rowsCols(s tensor.Shape) (rows, cols int) {
	if len(s) == 0 {
		return 1, 1
	}
	cols = s[len(s)-1]
	rows = 1
	for _, d := range s[:len(s)-1] {
		rows *= d
	}
	return rows, cols
}
