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
	// NonTrainable marks a weight the optimizer does not train, such as
	// BatchNormalization's moving statistics: it is saved, loaded and
	// checkpointed with the others, and Summary counts it apart.
	NonTrainable bool
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
	// Training says the graph is the one Fit trains with: layers that
	// behave differently in training (Dropout) read it. The model sets it,
	// and Step, before each layer's Call.
	Training bool
	// Step holds the training step and the batch's first row in the
	// step's global batch (ops.StepValues), in a training graph: Dropout
	// draws its units from it.
	Step *gorgonia.Node
	// Losses are scalar nodes a layer's Call adds to the model's loss, set
	// on its output Flow (regularization penalties, Keras' layer.losses):
	// the model collects them after each Call and adds them to the loss it
	// trains on and reports.
	Losses []*gorgonia.Node
	// Mask is the sequence mask (batch, steps) that comes with Node, 1 at
	// the steps to read and 0 at those to skip (Keras' _keras_mask), or
	// nil: Embedding with MaskZero and Masking make one, the recurrent
	// layers and GlobalAveragePooling1D honour it (see OutputMask).
	Mask *gorgonia.Node
}

// ConfigChecker is implemented by layers whose arguments can be wrong
// whatever their input: a model checks them when it is compiled, before it
// knows the input's shape, as Keras checks them when a layer is made.
type ConfigChecker interface {
	CheckConfig() error
}

// StepUser is implemented by layers whose training graph reads the
// training step (Flow.Step), such as Dropout: the model adds the step to a
// training graph only when a layer uses it.
type StepUser interface {
	UsesStep() bool
}

// named holds a layer's name, and the error of a name Named refused.
type named struct {
	name    string
	nameErr error
}

func (n *named) Name() string        { return n.name }
func (n *named) SetName(name string) { n.name = name }

// nameError is the error of a name given with Named that no layer can
// have, nil for a good name or none.
func (n *named) nameError() error { return n.nameErr }

// Activation is an activation function, given to Dense or used as a layer of
// its own with NewActivation.
type Activation struct{ act ops.Activation }

// The activations, by their Keras names (see package ops for each one's
// formula and where Keras 2 and 3 differ).
var (
	Linear  = Activation{ops.Linear}
	ReLU    = Activation{ops.ReLU}
	Sigmoid = Activation{ops.Sigmoid}
	Tanh    = Activation{ops.Tanh}
	Softmax = Activation{ops.Softmax}
	// GELU is Keras' gelu with approximate=False.
	GELU = Activation{ops.GELU}
	// GELUApproximate is Keras' gelu with approximate=True (the tanh
	// form), named "gelu_approximate": Keras has no name for it.
	GELUApproximate = Activation{ops.GELUApproximate}
	// Swish is x·sigmoid(x): Keras 2's "swish", Keras 3's "silu".
	Swish = Activation{ops.Swish}
	// ELU is "elu" with alpha 1; the ELU layer (NewELU) takes another.
	ELU = Activation{ops.ELU}
	// SELU is "selu", with Keras' constants.
	SELU     = Activation{ops.SELU}
	Softplus = Activation{ops.Softplus}
	Softsign = Activation{ops.Softsign}
	// HardSigmoid is Keras 2's "hard_sigmoid", clip(0.2·x + 0.5, 0, 1)
	// (Keras 3's is clip(x/6 + 0.5, 0, 1)).
	HardSigmoid = Activation{ops.HardSigmoid}
	Exponential = Activation{ops.Exponential}
	// LeakyReLU is "leaky_relu" with alpha 0.2 (tf.nn.leaky_relu's and
	// Keras 3's default); the LeakyReLU layer (NewLeakyReLU) defaults to
	// Keras 2's 0.3.
	LeakyReLU = Activation{ops.LeakyReLU}
)

// GetActivation finds an activation by its Keras name, as
// keras.activations.get does: "linear", "relu", "sigmoid", "tanh",
// "softmax", "gelu", "gelu_approximate", "swish" (or Keras 3's "silu"),
// "elu", "selu", "softplus", "softsign", "hard_sigmoid", "exponential" or
// "leaky_relu", in any case. The empty string is Linear, as Keras' None
// is.
func GetActivation(name string) (Activation, error) {
	act, err := ops.ParseActivation(name)
	if err != nil {
		return Activation{}, err
	}
	return Activation{act}, nil
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
