package layers

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/configargs"
	"github.com/gokeras/gokeras/internal/shapes"
)

// WeightShape is the name and shape of a weight a layer makes when it is
// built ("kernel", (inputs, units)).
type WeightShape struct {
	Name  string
	Shape []int
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
	if ch, ok := l.(ConfigChecker); ok {
		if err := ch.CheckConfig(); err != nil {
			return nil, nil, err
		}
	}
	in := inputShape
	same := func() []int { return append([]int(nil), in...) }
	switch l := l.(type) {
	case *DenseLayer:
		if len(in) != 1 {
			return nil, nil, fmt.Errorf("dense layer %q: expects flat samples, shape (None, features), but gets %s: put a Flatten layer before it",
				l.name, shapes.String(in))
		}
		return []int{l.units}, l.weights.plan([]int{in[0], l.units}), nil
	case *ConvLayer:
		h, w, ch, ok := l.images(in)
		if !ok {
			return nil, nil, fmt.Errorf("%s layer %q: expects %s, but gets %s", l.Type(), l.name, l.inputKind(), shapes.String(in))
		}
		win, err := l.spec().On(1, h, w, ch)
		if err != nil {
			return nil, nil, fmt.Errorf("%s layer %q on input %s: %w", l.Type(), l.name, shapes.String(in), err)
		}
		kshape := []int{l.size[0], l.size[1], ch, l.filters}
		if l.rank == 1 {
			kshape = kshape[1:]
		}
		return l.sampleShape(win.OH, win.OW, l.filters), l.weights.plan(kshape), nil
	case *PoolLayer:
		h, w, c, ok := l.images(in)
		if !ok {
			return nil, nil, fmt.Errorf("%s layer %q: expects %s, but gets %s", l.Type(), l.name, l.inputKind(), shapes.String(in))
		}
		spec := l.spec()
		if l.global {
			spec.Kernel, spec.Strides, spec.Same = [2]int{h, w}, [2]int{1, 1}, false
		}
		win, err := spec.On(1, h, w, c)
		if err != nil {
			return nil, nil, fmt.Errorf("%s layer %q on input %s: %w", l.Type(), l.name, shapes.String(in), err)
		}
		if l.global {
			return []int{c}, nil, nil
		}
		return l.sampleShape(win.OH, win.OW, c), nil, nil
	case *BatchNormalizationLayer:
		ws, err := l.plan(l.Type(), in)
		if err != nil {
			return nil, nil, err
		}
		c := []int{in[len(in)-1]}
		return same(), append(ws, WeightShape{"moving_mean", c}, WeightShape{"moving_variance", c}), nil
	case *LayerNormalizationLayer:
		ws, err := l.plan(l.Type(), in)
		if err != nil {
			return nil, nil, err
		}
		return same(), ws, nil
	case *EmbeddingLayer:
		if len(in) == 0 {
			return nil, nil, fmt.Errorf("embedding layer %q: expects samples of indices, shape (None, length), but gets %s", l.name, shapes.String(in))
		}
		return append(same(), l.outputDim), []WeightShape{{"embeddings", []int{l.inputDim, l.outputDim}}}, nil
	case *ReshapeLayer:
		// Reshape's Build sets only the resolved shape: building a copy
		// allocates nothing and leaves l alone.
		r := *l
		out, err := r.Build(in, nil)
		return out, nil, err
	case *FlattenLayer, *ActivationLayer, *InputLayer, *DropoutLayer:
		if n, ok := l.(interface{ nameError() error }); ok && n.nameError() != nil {
			return nil, nil, fmt.Errorf("%s layer: %w", l.Type(), n.nameError())
		}
		if _, ok := l.(*FlattenLayer); ok {
			n := 1
			for _, d := range in {
				if d <= 0 {
					return nil, nil, fmt.Errorf("flatten layer %q: input shape %s has a non-positive dimension", l.Name(), shapes.String(in))
				}
				n *= d
			}
			return []int{n}, nil, nil
		}
		return same(), nil, nil
	}
	return nil, nil, fmt.Errorf("layer %q is a %T, which PlanBuild does not know: only the layers of package layers can be planned", l.Name(), l)
}

// plan lists a kernel of the given shape and, with useBias, a bias of its
// last dimension, as build makes them.
func (w weights) plan(kernelShape []int) []WeightShape {
	ws := []WeightShape{{"kernel", kernelShape}}
	if w.useBias {
		ws = append(ws, WeightShape{"bias", []int{kernelShape[len(kernelShape)-1]}})
	}
	return ws
}

// plan lists gamma and beta, those the layer has, as build makes them.
func (n *normLayer) plan(typ string, in []int) ([]WeightShape, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%s layer %q: the input %s has no axis to normalize", typ, n.name, shapes.String(in))
	}
	c := []int{in[len(in)-1]}
	var ws []WeightShape
	if n.scale {
		ws = append(ws, WeightShape{"gamma", c})
	}
	if n.center {
		ws = append(ws, WeightShape{"beta", c})
	}
	return ws, nil
}
