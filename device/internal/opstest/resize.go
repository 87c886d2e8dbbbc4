package opstest

import (
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// ResizeGraph is a small float32 training graph of the ops of Keras'
// ZeroPadding2D, UpSampling2D and Cropping2D, built with package ops
// directly, for the machines' tests: images x (Batch × 3 × 4 × 2) times a
// learnable s (1 × 3 × 4 × 2, broadcast along the batch), then
//
//	p = Pad2D(x·s, 1, 0, 2, 1)      Batch × 4 × 7 × 2
//	u = UpSample2D(p, 2, 1)         Batch × 8 × 7 × 2
//	c = Crop2D(u, 1, 2, 0, 3)       Batch × 5 × 4 × 2
//	z = flatten(c)·wo               Batch × 3, mean squared error against y
//
// so that each op and its gradient (Crop2D's is a Pad2D, Pad2D's a Crop2D,
// UpSample2D's the sum of each block) run forward and backward.
type ResizeGraph = Graph

// BuildResizeGraph builds a ResizeGraph with its gradients, its values
// drawn from seed: two graphs of one seed start from the same values.
func BuildResizeGraph(seed uint64, batch int) (*ResizeGraph, error) {
	rng := rand.New(rand.NewPCG(seed, 13))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return normalTensor(g, rng, name, scale, shape...)
	}
	m := &ResizeGraph{G: g, X: mk("x", 1, batch, 3, 4, 2), Y: mk("y", 1, batch, 3)}
	s, wo := mk("s", 1, 1, 3, 4, 2), mk("wo", 0.3, 5*4*2, 3)
	m.Learnables = []*gorgonia.Node{s, wo}
	h, err := ops.Multiply(m.X, s)
	if err != nil {
		return nil, err
	}
	p, err := ops.Pad2D(h, 1, 0, 2, 1)
	if err != nil {
		return nil, err
	}
	u, err := ops.UpSample2D(p, 2, 1)
	if err != nil {
		return nil, err
	}
	c, err := ops.Crop2D(u, 1, 2, 0, 3)
	if err != nil {
		return nil, err
	}
	f, err := ops.Flatten(c, true)
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
	if err := withGradients(m.Loss, &m.LossValue, m.Learnables, "resize"); err != nil {
		return nil, err
	}
	return m, nil
}
