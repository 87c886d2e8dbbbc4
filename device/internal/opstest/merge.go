package opstest

import (
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// MergeGraph is a small float32 training graph of Keras' merge ops, built
// with package ops directly, for the machines' tests: x (Batch × 6) feeds
// three Affine branches, h1 = relu(x·w1 + b1) and h2 = tanh(x·w2), both
// Batch × 5, and a gate s = sigmoid(x·wg), Batch × 1; then
//
//	m1 = Multiply(h2, s)             s broadcast along the columns
//	m2 = Maximum(h1, m1)
//	m3 = Subtract(m2, Minimum(h1, c)) c (1 × 5) broadcast along the batch
//	m4 = DivideBy(Add(m3, h2), 2)    Keras' Average of two
//	j  = Concatenate(-1, Scale(m4, 1.5), s, h1)  Batch × 11
//	z  = j·wo                          Batch × 3, mean squared error against y
//
// so that every binary kind, both broadcasts, Scale and Concatenate run
// forward and backward, and gradients reach every learnable along several
// paths.
type MergeGraph = Graph

// BuildMergeGraph builds a MergeGraph with its gradients, its values drawn
// from seed: two graphs of one seed start from the same values.
func BuildMergeGraph(seed uint64, batch int) (*MergeGraph, error) {
	rng := rand.New(rand.NewPCG(seed, 11))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return normalTensor(g, rng, name, scale, shape...)
	}
	m := &MergeGraph{G: g, X: mk("x", 1, batch, 6), Y: mk("y", 1, batch, 3)}
	w1, b1, w2, wg := mk("w1", 0.5, 6, 5), mk("b1", 0.1, 5), mk("w2", 0.5, 6, 5), mk("wg", 0.5, 6, 1)
	c, wo := mk("c", 0.3, 1, 5), mk("wo", 0.5, 11, 3)
	m.Learnables = []*gorgonia.Node{w1, b1, w2, wg, c, wo}
	var err error
	must := func(n *gorgonia.Node, e error) *gorgonia.Node {
		if e != nil && err == nil {
			err = e
		}
		return n
	}
	affine := func(x, w, b *gorgonia.Node, act ops.Activation) *gorgonia.Node {
		z := must(ops.Affine(x, w, b, false))
		if err != nil {
			return nil
		}
		return must(ops.Activate(act, z))
	}
	h1, h2, s := affine(m.X, w1, b1, ops.ReLU), affine(m.X, w2, nil, ops.Tanh), affine(m.X, wg, nil, ops.Sigmoid)
	if err != nil {
		return nil, err
	}
	m1 := must(ops.Multiply(h2, s))
	m2 := must(ops.Maximum(h1, m1))
	lo := must(ops.Minimum(h1, c))
	if err != nil {
		return nil, err
	}
	m3 := must(ops.Subtract(m2, lo))
	sum := must(ops.Add(m3, h2))
	if err != nil {
		return nil, err
	}
	m4 := must(ops.DivideBy(sum, 2))
	if err != nil {
		return nil, err
	}
	head := must(ops.Scale(m4, 1.5))
	if err != nil {
		return nil, err
	}
	joined := must(ops.Concatenate(-1, head, s, h1))
	if err != nil {
		return nil, err
	}
	z := must(ops.Affine(joined, wo, nil, true))
	if err != nil {
		return nil, err
	}
	if m.Loss, err = ops.Loss(ops.MeanSquaredError, z, m.Y); err != nil {
		return nil, err
	}
	if err := withGradients(m.Loss, &m.LossValue, m.Learnables, "merge"); err != nil {
		return nil, err
	}
	return m, nil
}
