package ops

import (
	"fmt"
	"hash"
	"slices"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PermuteParams describe a Permute op: Shape is its input's shape, batch
// first, and output axis i is input axis Perm[i]; Perm[0] is 0, the batch
// stays first. Its gradient is the permutation back (Inverse).
type PermuteParams struct {
	Shape []int
	Perm  []int
}

// In is the input's shape.
func (p PermuteParams) In() []int { return p.Shape }

// Out is the output's shape: input axis Perm[i]'s size as axis i.
func (p PermuteParams) Out() []int {
	out := make([]int, len(p.Perm))
	for i, a := range p.Perm {
		out[i] = p.Shape[a]
	}
	return out
}

// Inverse is the permutation that puts the output back: the gradient's.
func (p PermuteParams) Inverse() PermuteParams {
	inv := make([]int, len(p.Perm))
	for i, a := range p.Perm {
		inv[a] = i
	}
	return PermuteParams{Shape: p.Out(), Perm: inv}
}

func (p PermuteParams) String() string { return fmt.Sprintf("%v, perm %v", p.Shape, p.Perm) }

// clone copies p's slices, so that an Info never shares an op's.
func (p PermuteParams) clone() PermuteParams {
	return PermuteParams{Shape: slices.Clone(p.Shape), Perm: slices.Clone(p.Perm)}
}

// Merged is p in its smallest form, which moves the same values: axes of
// size 1 dropped, and input axes that stay next to each other, in order,
// merged into one. dims are the merged input's sizes (at least one axis)
// and output axis i is merged input axis perm[i]. A batch of transposes,
// (batch, rows, cols) → (batch, cols, rows), has dims (batch, rows, cols)
// and perm (0, 2, 1), or dims (rows, cols) and perm (1, 0) for one.
func (p PermuteParams) Merged() (dims, perm []int) {
	// The input axes that are kept, and their rank among them.
	rank := make([]int, len(p.Shape))
	var kept []int
	for a, d := range p.Shape {
		rank[a] = -1
		if d != 1 {
			rank[a] = len(kept)
			kept = append(kept, a)
		}
	}
	// The output's order of the kept axes, as ranks.
	var order []int
	for _, a := range p.Perm {
		if rank[a] >= 0 {
			order = append(order, rank[a])
		}
	}
	if len(order) == 0 {
		return []int{1}, []int{0}
	}
	// Runs of consecutive input axes in the output's order: each is one
	// merged axis, first holding its first input axis.
	var first []int
	for i, r := range order {
		if i == 0 || r != order[i-1]+1 {
			first = append(first, r)
		}
	}
	// The merged axes in input order, and each one's size.
	byInput := slices.Clone(first)
	slices.Sort(byInput)
	dims = make([]int, len(byInput))
	for j, r := range byInput {
		end := len(kept)
		if j+1 < len(byInput) {
			end = byInput[j+1]
		}
		dims[j] = 1
		for _, a := range kept[r:end] {
			dims[j] *= p.Shape[a]
		}
	}
	perm = make([]int, len(first))
	for i, r := range first {
		perm[i] = slices.Index(byInput, r)
	}
	return dims, perm
}

// Transposes says whether p moves values as a batch of matrix transposes,
// each of the batch's (rows, cols) matrices written as (cols, rows), and
// the sizes. A permutation that moves nothing is one transpose of one row.
func (p PermuteParams) Transposes() (batch, rows, cols int, ok bool) {
	dims, perm := p.Merged()
	switch {
	case len(dims) == 1:
		return 1, 1, dims[0], true
	case len(dims) == 2 && perm[0] == 1:
		return 1, dims[0], dims[1], true
	case len(dims) == 3 && perm[0] == 0 && perm[1] == 2:
		return dims[0], dims[1], dims[2], true
	}
	return 0, 0, 0, false
}

// Permute adds the node reordering the axes of x after the batch, as
// Keras' Permute layer does: output axis i (i ≥ 1) is x's axis dims[i-1],
// axes numbered from 1 after the batch, so dims lists each of 1..rank-1
// once; (2, 1) transposes each sample's matrix. Its gradient is the
// permutation back.
func Permute(x *gorgonia.Node, dims []int) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) < 2 {
		return nil, fmt.Errorf("permute: input of shape %v: want a batch of samples with at least one axis each", s)
	}
	if len(dims) != len(s)-1 {
		return nil, fmt.Errorf("permute: dims %v for an input of shape %v: want one entry per axis after the batch, %d", dims, s, len(s)-1)
	}
	perm := []int{0}
	seen := make([]bool, len(s))
	for _, d := range dims {
		if d < 1 || d >= len(s) || seen[d] {
			return nil, fmt.Errorf("permute: dims %v for an input of shape %v: want each of 1..%d once (the batch, axis 0, stays first)", dims, s, len(s)-1)
		}
		seen[d] = true
		perm = append(perm, d)
	}
	return gorgonia.ApplyOp(permuteOp{p: PermuteParams{Shape: slices.Clone([]int(s)), Perm: perm}}, x)
}

// TransposeSamples adds the node transposing each sample's matrix of x,
// (batch, rows, cols) → (batch, cols, rows): Permute(x, (2, 1)).
func TransposeSamples(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x.Dims() != 3 {
		return nil, fmt.Errorf("transpose: input of shape %v: want (batch, rows, columns)", x.Shape())
	}
	return Permute(x, []int{2, 1})
}

// permuteOp reorders its input's axes: see PermuteParams.
type permuteOp struct {
	common
	p PermuteParams
}

func (op permuteOp) String() string        { return fmt.Sprintf("Permute{%v}", op.p) }
func (op permuteOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op permuteOp) Hashcode() uint32      { return hashOf(op) }
func (op permuteOp) Arity() int            { return 1 }

func (op permuteOp) Type() hm.Type {
	t := gorgonia.TensorType{Dims: len(op.p.Shape), Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t)
}

func (op permuteOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inferShapes(op, in)
	if err != nil {
		return nil, err
	}
	if err := checkShapes(op, s, op.p.In()); err != nil {
		return nil, err
	}
	return tensor.Shape(op.p.Out()), nil
}

func (op permuteOp) Do(args ...gorgonia.Value) (gorgonia.Value, error) {
	ds, err := denseArgs(op, args, op.p.In())
	if err != nil {
		return nil, err
	}
	out := newLike(ds[0].Dtype(), op.p.Out()...)
	switch od := out.Data().(type) {
	case []float32:
		permute(op.p, ds[0].Data().([]float32), od)
	case []float64:
		permute(op.p, ds[0].Data().([]float64), od)
	}
	return out, nil
}

func (op permuteOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: the gradient is the output's gradient permuted back.
func (op permuteOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g, err := gorgonia.ApplyOp(permuteOp{p: op.p.Inverse()}, grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{g}, nil
}

// permute writes into out the values of x with its axes reordered by p,
// walking out in order and x by the strides of p's merged form.
func permute[T float](p PermuteParams, x, out []T) {
	dims, perm := p.Merged()
	n := len(dims)
	inStride := make([]int, n)
	s := 1
	for a := n - 1; a >= 0; a-- {
		inStride[a] = s
		s *= dims[a]
	}
	// The output's sizes and, for each of its axes, the input's stride.
	size, stride := make([]int, n), make([]int, n)
	for i, a := range perm {
		size[i], stride[i] = dims[a], inStride[a]
	}
	idx := make([]int, n)
	last, inner := n-1, size[n-1]
	src := 0
	for o := 0; o < len(out); o += inner {
		row := out[o : o+inner]
		for j := range row {
			row[j] = x[src+j*stride[last]]
		}
		// The next row: the odometer over the output's other axes.
		for a := last - 1; a >= 0; a-- {
			idx[a]++
			src += stride[a]
			if idx[a] < size[a] {
				break
			}
			src -= idx[a] * stride[a]
			idx[a] = 0
		}
	}
}

// PermuteForward writes x, of shape p.In(), with its axes reordered into
// out, of p.Out(): a Permute node's Do, and with p.Inverse() its gradient.
func PermuteForward(p PermuteParams, x, out []float32) { permute(p, x, out) }
