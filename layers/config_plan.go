package layers

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

// WeightShape is the name and shape of a weight a layer makes when it is
// built ("kernel", (inputs, units)).
type WeightShape struct {
	Name  string
	Shape []int
}

// planner is implemented by every layer of this package: plan is the
// layer's shape rule, the one its Build follows. For samples of the given
// shape it returns the shape of the samples the layer outputs and the
// names and shapes of the weights it makes, in the order Params lists
// them, or Build's error for that input. It changes nothing. (The
// layer's arguments are checked before: CheckConfig, or its name.)
type planner interface {
	plan(inputShape []int) (outputShape []int, weights []WeightShape, err error)
}

// PlanBuild returns what Build would make of l for samples of the given
// shape: the shape of the samples it would output, and the names and
// shapes of the weights it would make, in the order Params lists them. It
// builds nothing, allocates nothing and leaves l as it is; where Build
// would fail, it fails. A loader (nn.LoadModel) checks a file's tensors
// against it before it builds the model a config describes, so that a
// config asking for huge layers costs nothing unless the file holds their
// weights. A layer defined outside this package is an error.
func PlanBuild(l Layer, inputShape []int) ([]int, []WeightShape, error) {
	if configargs.IsNil(l) {
		return nil, nil, fmt.Errorf("no layer (nil)")
	}
	if err := checkArgs(l); err != nil {
		return nil, nil, err
	}
	p, ok := l.(planner)
	if !ok {
		return nil, nil, fmt.Errorf("layer %q is a %T, which PlanBuild does not know: only the layers of package layers can be planned", l.Name(), l)
	}
	return p.plan(inputShape)
}

// checkArgs checks what can be checked of a layer before it is built: its
// CheckConfig, or for a layer without one, the name Named gave it.
func checkArgs(l Layer) error {
	if ch, ok := l.(ConfigChecker); ok {
		return ch.CheckConfig()
	}
	if n, ok := l.(interface{ nameError() error }); ok && n.nameError() != nil {
		return fmt.Errorf("%s layer: %w", l.Type(), n.nameError())
	}
	return nil
}

// inputsPlanner is a layer of several inputs that has weights.
type inputsPlanner interface {
	planInputs(inputShapes [][]int) (outputShape []int, weights []WeightShape, err error)
}

// PlanBuildInputs is PlanBuild for a layer of several inputs: the shape
// of the samples it would output for inputs of the given sample shapes,
// and the weights it would make (none for Keras' merge layers; a
// MultiHeadAttention's).
func PlanBuildInputs(l MultiInputLayer, inputShapes [][]int) ([]int, []WeightShape, error) {
	if configargs.IsNil(l) {
		return nil, nil, fmt.Errorf("no layer (nil)")
	}
	if p, ok := l.(inputsPlanner); ok {
		return p.planInputs(inputShapes)
	}
	out, err := l.PlanInputs(inputShapes)
	return out, nil, err
}
