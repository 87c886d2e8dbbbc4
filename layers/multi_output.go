package layers

import "gorgonia.org/gorgonia"

// MultiOutputLayer is a layer whose call can output several tensors, as
// a Keras layer called on a tensor may return a list: a recurrent layer
// with ReturnState outputs its output, then its last states. In a
// functional model nn.ApplyAll returns every output (nn.Apply the first);
// a Sequential model takes only layers of one output.
type MultiOutputLayer interface {
	Layer
	// OutputShapes are the sample shapes of the layer's outputs for
	// inputs of the given sample shapes; one shape for a layer that
	// outputs one tensor.
	OutputShapes(inputShapes [][]int) ([][]int, error)
	// CallOutputs adds the layer to a graph, as Call does, and returns
	// every output.
	CallOutputs(in []Flow, params []*gorgonia.Node) ([]Flow, error)
}

// StateInputLayer is a layer that takes, after its input, tensors of its
// initial states, as Keras' recurrent layers take initial_state=[h, c]:
// nn.Apply(layer, x, h, c). In a saved config they are the call's
// initial_state keyword argument (Keras 3), or inputs after the first
// (Keras 2).
type StateInputLayer interface {
	MultiOutputLayer
	// StateInputs is how many initial states the layer takes: 2 for an
	// LSTM (h, c), 1 for a GRU or SimpleRNN (h).
	StateInputs() int
}

// OutputCount is how many tensors l outputs when called on inputs of the
// given sample shapes: 1 but for a MultiOutputLayer that says otherwise.
func OutputCount(l Layer, inputShapes [][]int) int {
	if m, ok := l.(MultiOutputLayer); ok {
		if s, err := m.OutputShapes(inputShapes); err == nil && len(s) > 0 {
			return len(s)
		}
	}
	return 1
}
