package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Layer is one step of a Sequential model.
type Layer interface {
	// Name is the layer's name in the model ("dense", "dense_1", ...).
	Name() string
	// SetName names the layer. Models name unnamed layers as Keras does.
	SetName(name string)
	// Type is the Keras class name shown by Summary ("Dense", "Flatten").
	Type() string
	// Build creates the layer's weights for samples of the given shape (no
	// batch axis) and returns the shape of the samples it outputs.
	Build(inputShape []int, rng *rand.Rand) (outputShape []int, err error)
	// Params are the layer's weights, created by Build.
	Params() []*Param
	// Call adds the layer to a graph. params holds one node per Param, in
	// the order Params returns them, each bound to that Param's value.
	Call(in Flow, params []*gorgonia.Node) (Flow, error)
}

// Param is one weight tensor of a layer.
type Param struct {
	// Name is the weight's name within its layer: "kernel" or "bias".
	Name string
	// Value holds the weights, float32, on the host.
	Value *tensor.Dense
}

// Size is the number of scalars in the weight tensor.
func (p *Param) Size() int { return p.Value.Shape().TotalSize() }

// Flow is a value moving through a model graph.
type Flow struct {
	// Node is the value: (batch, ...) in the graph.
	Node *gorgonia.Node
	// NeedsGrad says whether gradients must flow back into Node: false for
	// the model's input data and anything computed from it alone.
	NeedsGrad bool
	// Logits is the pre-activation value when Node is the output of a
	// sigmoid or softmax activation, nil otherwise. Cross-entropy losses
	// use it, as TensorFlow does, to compute the loss stably.
	Logits *gorgonia.Node
}

// named holds a layer's name.
type named struct{ name string }

func (n *named) Name() string        { return n.name }
func (n *named) SetName(name string) { n.name = name }

// Activation is an activation function, given to Dense or used as a layer of
// its own with NewActivation.
type Activation struct{ act ops.Activation }

// The activations, by their Keras names.
var (
	Linear  = Activation{ops.Linear}
	ReLU    = Activation{ops.ReLU}
	Sigmoid = Activation{ops.Sigmoid}
	Tanh    = Activation{ops.Tanh}
	Softmax = Activation{ops.Softmax}
)

// ActivationByName finds an activation by its Keras name: "linear", "relu",
// "sigmoid", "tanh" or "softmax".
func ActivationByName(name string) (Activation, error) {
	a, err := ops.ParseActivation(name)
	if err != nil {
		return Activation{}, err
	}
	return Activation{a}, nil
}

// String returns the Keras name of the activation.
func (a Activation) String() string { return a.act.String() }

// apply adds the activation to the graph, keeping the logits when the
// activation is one a cross-entropy loss can undo.
func (a Activation) apply(in Flow) (Flow, error) {
	if a.act == ops.Linear {
		return in, nil
	}
	out, err := ops.Activate(a.act, in.Node)
	if err != nil {
		return Flow{}, fmt.Errorf("%v activation: %w", a, err)
	}
	f := Flow{Node: out, NeedsGrad: in.NeedsGrad}
	if a.act == ops.Sigmoid || a.act == ops.Softmax {
		f.Logits = in.Node
	}
	return f, nil
}
