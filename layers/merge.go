package layers

import (
	"math/rand/v2"

	"gorgonia.org/gorgonia"
)

// MultiInputLayer is a layer applied to several tensors at once in a
// functional model (nn.Apply): Keras' merge layers, such as Add and
// Concatenate. Its one-input Build and Call are not used; a model calls
// these instead.
type MultiInputLayer interface {
	Layer
	// PlanInputs returns the shape of the samples the layer outputs for
	// inputs of the given sample shapes, or the error BuildInputs would
	// return for them, in Keras' words. It changes nothing.
	PlanInputs(inputShapes [][]int) ([]int, error)
	// BuildInputs builds the layer for inputs of the given sample shapes
	// and returns the shape of the samples it outputs.
	BuildInputs(inputShapes [][]int, rng *rand.Rand) ([]int, error)
	// CallInputs adds the layer to a graph: in holds one Flow per input,
	// in the order the layer was applied to them.
	CallInputs(in []Flow, params []*gorgonia.Node) (Flow, error)
}
