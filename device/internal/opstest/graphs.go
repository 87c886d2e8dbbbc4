package opstest

// What the small training graphs of this package (DotGraph, MergeGraph,
// ResizeGraph, PermuteGraph, RecurrenceGraph) share.

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// normalTensor adds a float32 input node of the given shape and name to
// g, its values drawn from rng's normal distribution times scale, in
// order.
func normalTensor(g *gorgonia.ExprGraph, rng *rand.Rand, name string, scale float64, shape ...int) *gorgonia.Node {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(scale * rng.NormFloat64())
	}
	return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
		gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))))
}

// NormalTensor is normalTensor, for the small graphs of other packages'
// tests.
func NormalTensor(g *gorgonia.ExprGraph, rng *rand.Rand, name string, scale float64, shape ...int) *gorgonia.Node {
	return normalTensor(g, rng, name, scale, shape...)
}

// withGradients has a gorgonia.Read of loss store it in *value and adds
// the gradients of the learnables; what names the graph in the error.
func withGradients(loss *gorgonia.Node, value *gorgonia.Value, learnables []*gorgonia.Node, what string) error {
	gorgonia.Read(loss, value)
	if _, err := gorgonia.Grad(loss, learnables...); err != nil {
		return fmt.Errorf("the %s graph's gradients: %w", what, err)
	}
	return nil
}

// Graph is a small training graph: its inputs X and labels Y, its
// learnables, its loss with the gradients, and where a gorgonia.Read of
// the loss stores its value. DotGraph, MergeGraph, ResizeGraph,
// PermuteGraph and RecurrenceGraph are Graphs.
type Graph struct {
	G          *gorgonia.ExprGraph
	X, Y       *gorgonia.Node
	Learnables []*gorgonia.Node
	Loss       *gorgonia.Node
	// LossValue is where a gorgonia.Read of the loss stores it.
	LossValue gorgonia.Value
}
