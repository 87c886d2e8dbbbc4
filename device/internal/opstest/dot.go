package opstest

import (
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// DotGraph is a small float32 training graph of the ops of Keras' Dot
// layer, built with package ops directly, for the machines' tests: x
// (Batch × 6) feeds four Affine branches, p = x·wp and q = x·wq reshaped
// to Batch × 3 × 4, r = x·wr to Batch × 4 × 2, and v = x·wv, Batch × 5;
// then
//
//	d1 = BatchDot(L2Normalize(p, 2), L2Normalize(q, -1), 2, -1) Batch × 3 × 3
//	d2 = BatchDot(p, q, 1, 1)                                   Batch × 4 × 4
//	d3 = BatchDot(p, r, 2, 1)                                   Batch × 3 × 2
//	d4 = BatchDot(L2Normalize(r, 1), p, 1, 2)                   Batch × 2 × 3
//	d5 = BatchDot(L2Normalize(v, 1), v·wu, 1, 1)                Batch × 1
//	z  = Concatenate(-1, the five flattened)·wo                 Batch × 3,
//
// mean squared error against y, so that a product of every pair of
// transposes and each normalization (along a middle and a last axis) run
// forward and backward.
type DotGraph = Graph

// BuildDotGraph builds a DotGraph with its gradients, its values drawn
// from seed: two graphs of one seed start from the same values.
func BuildDotGraph(seed uint64, batch int) (*DotGraph, error) {
	rng := rand.New(rand.NewPCG(seed, 17))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return normalTensor(g, rng, name, scale, shape...)
	}
	m := &DotGraph{G: g, X: mk("x", 1, batch, 6), Y: mk("y", 1, batch, 3)}
	wp, wq, wr, wv, wu := mk("wp", 0.2, 6, 12), mk("wq", 0.2, 6, 12), mk("wr", 0.2, 6, 8), mk("wv", 0.2, 6, 5), mk("wu", 0.3, 5, 5)
	wo := mk("wo", 0.1, 9+16+6+6+1, 3)
	m.Learnables = []*gorgonia.Node{wp, wq, wr, wv, wu, wo}
	branch := func(w *gorgonia.Node, shape ...int) (*gorgonia.Node, error) {
		h, err := ops.Affine(m.X, w, nil, false)
		if err != nil || shape == nil {
			return h, err
		}
		return ops.Reshape(h, append([]int{batch}, shape...), true)
	}
	// dot is BatchDot of a and b along (axisA, axisB), each first
	// normalized along its axis where asked.
	dot := func(a, b *gorgonia.Node, axisA, axisB int, normA, normB bool) (*gorgonia.Node, error) {
		var err error
		if normA {
			if a, err = ops.L2Normalize(a, axisA); err != nil {
				return nil, err
			}
		}
		if normB {
			if b, err = ops.L2Normalize(b, axisB); err != nil {
				return nil, err
			}
		}
		d, err := ops.BatchDot(a, b, axisA, axisB)
		if err != nil || d.Dims() == 2 {
			return d, err
		}
		return ops.Flatten(d, true)
	}
	p, err := branch(wp, 3, 4)
	if err != nil {
		return nil, err
	}
	q, err := branch(wq, 3, 4)
	if err != nil {
		return nil, err
	}
	r, err := branch(wr, 4, 2)
	if err != nil {
		return nil, err
	}
	v, err := branch(wv)
	if err != nil {
		return nil, err
	}
	u, err := ops.Affine(v, wu, nil, true)
	if err != nil {
		return nil, err
	}
	var ds []*gorgonia.Node
	for _, c := range []struct {
		a, b         *gorgonia.Node
		axisA, axisB int
		normA, normB bool
	}{
		{p, q, 2, -1, true, true},
		{p, q, 1, 1, false, false},
		{p, r, 2, 1, false, false},
		{r, p, 1, 2, true, false},
		{v, u, 1, 1, true, false},
	} {
		d, err := dot(c.a, c.b, c.axisA, c.axisB, c.normA, c.normB)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	j, err := ops.Concatenate(-1, ds...)
	if err != nil {
		return nil, err
	}
	z, err := ops.Affine(j, wo, nil, true)
	if err != nil {
		return nil, err
	}
	if m.Loss, err = ops.Loss(ops.MeanSquaredError, z, m.Y); err != nil {
		return nil, err
	}
	if err := withGradients(m.Loss, &m.LossValue, m.Learnables, "dot"); err != nil {
		return nil, err
	}
	return m, nil
}
