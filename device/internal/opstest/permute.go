package opstest

import (
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// PermuteGraph is a small float32 training graph of Permute, built with
// package ops directly, for the machines' tests: images x (Batch × 5 × 37
// × 2) times a learnable s (1 × 5 × 37 × 2, broadcast along the batch),
// then
//
//	p = Permute(x·s, (2, 3, 1))   Batch × 37 × 2 × 5, a batch of 5×74 transposes
//	q = Permute(p, (2, 1, 3))     Batch × 2 × 37 × 5, no transpose
//	z = flatten(q)·wo             Batch × 3, mean squared error against y
//
// so that both kinds of permutation run forward and, permuted back,
// backward, on sizes that are no multiple of a kernel's tiles.
type PermuteGraph = Graph

// BuildPermuteGraph builds a PermuteGraph with its gradients, its values
// drawn from seed: two graphs of one seed start from the same values.
func BuildPermuteGraph(seed uint64, batch int) (*PermuteGraph, error) {
	rng := rand.New(rand.NewPCG(seed, 29))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return normalTensor(g, rng, name, scale, shape...)
	}
	m := &PermuteGraph{G: g, X: mk("x", 1, batch, 5, 37, 2), Y: mk("y", 1, batch, 3)}
	s, wo := mk("s", 1, 1, 5, 37, 2), mk("wo", 0.1, 2*37*5, 3)
	m.Learnables = []*gorgonia.Node{s, wo}
	h, err := ops.Multiply(m.X, s)
	if err != nil {
		return nil, err
	}
	p, err := ops.Permute(h, []int{2, 3, 1})
	if err != nil {
		return nil, err
	}
	q, err := ops.Permute(p, []int{2, 1, 3})
	if err != nil {
		return nil, err
	}
	f, err := ops.Flatten(q, true)
	if err != nil {
		return nil, err
	}
	z, err := ops.Affine(f, wo, nil, true)
	if err != nil {
		return nil, err
	}
	if m.Loss, err = ops.Loss(ops.MeanSquaredError, z, m.Y); err != nil {
		return nil, err
	}
	if err := withGradients(m.Loss, &m.LossValue, m.Learnables, "permute"); err != nil {
		return nil, err
	}
	return m, nil
}
