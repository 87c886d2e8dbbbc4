package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// MaskingLayer skips the steps of a sequence whose features all equal a
// value, like keras.layers.Masking: it outputs its input with those
// steps zeroed, and a mask (Flow.Mask) that the layers after it honour
// (the recurrent layers keep their state at a masked step,
// GlobalAveragePooling1D leaves it out of the mean). It has no weights.
type MaskingLayer struct {
	named
	value float64
}

// Masking makes a Masking layer of the given mask value (Keras' default
// is 0).
func Masking(maskValue float64, opts ...Option) *MaskingLayer {
	l := &MaskingLayer{value: maskValue}
	applyOptions(&l.named, opts)
	return l
}

// Type returns "Masking".
func (l *MaskingLayer) Type() string { return "Masking" }

// MaskValue is the value whose steps the layer masks.
func (l *MaskingLayer) MaskValue() float64 { return l.value }

// CheckConfig checks the name and that the mask value is a number.
func (l *MaskingLayer) CheckConfig() error {
	if l.nameErr != nil {
		return fmt.Errorf("masking layer: %w", l.nameErr)
	}
	if math.IsNaN(l.value) {
		return fmt.Errorf("masking layer %q: the mask value is NaN, which no value equals: give a number", l.name)
	}
	return nil
}

// plan keeps the input's shape, sequences (steps, features); no weights.
func (l *MaskingLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if len(inputShape) != 2 {
		return nil, nil, fmt.Errorf("masking layer %q: expects sequences, shape (None, timesteps, features), but gets %s", l.name, shapes.String(inputShape))
	}
	return slices.Clone(inputShape), nil, nil
}

// Build checks the arguments and returns the input shape unchanged.
func (l *MaskingLayer) Build(inputShape []int, _ *rand.Rand) ([]int, error) {
	if err := l.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := l.plan(inputShape)
	return out, err
}

// Params returns nil: Masking has no weights.
func (l *MaskingLayer) Params() []*Param { return nil }

// Call adds the mask (ops.Mask) and the input times it to the graph.
func (l *MaskingLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	what := fmt.Sprintf("masking layer %q", l.name)
	s := in.Node.Shape()
	if len(s) != 3 {
		return Flow{}, fmt.Errorf("%s: input of shape %v: want (batch, timesteps, features)", what, s)
	}
	mask, err := ops.Mask(in.Node, l.value)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	m3, err := ops.Reshape(mask, []int{s[0], s[1], 1}, false)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	out, err := ops.Multiply(in.Node, m3)
	if err != nil {
		return Flow{}, fmt.Errorf("%s: %w", what, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad, Mask: mask}, nil
}

// Config returns "Masking" with name and mask_value.
func (l *MaskingLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "mask_value": l.value}}, nil
}

func maskingFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		MaskValue float64 `json:"mask_value"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	return Masking(a.MaskValue, a.nameOptions()...), nil
}

// ONNX refuses Masking: the mask it hands on has no ONNX form here (a
// Keras mask may skip any step, where ONNX's recurrent operators can only
// cut a sequence's end, by its sequence_lens).
func (l *MaskingLayer) ONNX(ONNXGraph, string) (string, error) {
	return "", fmt.Errorf("masking layer %q: gokeras cannot export masks to ONNX (a mask may skip any step, and ONNX's recurrent operators can only cut a sequence's end): save the model with Save instead, or export a model without Masking", l.name)
}

// MaskZero makes an Embedding layer treat index 0 as padding, Keras'
// mask_zero=True: its output carries a mask (Flow.Mask), 0 where the index
// is 0, that the layers after it honour. Index 0 still has a row of the
// table, as in Keras (input_dim counts it).
func MaskZero(on bool) EmbeddingOption { return maskZero(on) }

type maskZero bool

func (m maskZero) applyEmbedding(l *EmbeddingLayer) { l.maskZero = bool(m) }

// MaskComputer is a layer that sets the mask of its output itself, or
// takes it away (Keras' compute_mask): Embedding with MaskZero, Masking,
// the recurrent layers, GlobalAveragePooling1D. A model gives its
// output the mask its call returns.
type MaskComputer interface {
	ComputesMask() bool
}

// ComputesMask is true: a Masking layer makes its output's mask.
func (l *MaskingLayer) ComputesMask() bool { return true }

// OutputMask is the mask of a layer's output given its inputs' masks and
// what its call returned (out), as Keras 2 propagates masks: a layer that
// computes its own (MaskComputer) has out's; one that supports masks
// without changing the steps (Dense, Dropout, Activation, the
// normalizations, Rescaling, the activation layers, TimeDistributed)
// passes its input's on; a merge layer the product of its inputs' masks (steps kept in
// every input that has one), as Keras' merge layers' compute_mask does;
// any other layer drops it, as Keras 2 (TensorFlow 2.4 and later) does
// for a layer that does not support masking (Flatten, Conv1D,
// GlobalMaxPooling1D, ...).
func OutputMask(l Layer, in []Flow, out Flow) (*gorgonia.Node, error) {
	if mc, ok := l.(MaskComputer); ok && mc.ComputesMask() {
		return out.Mask, nil
	}
	var masks []*gorgonia.Node
	for _, f := range in {
		if f.Mask != nil {
			masks = append(masks, f.Mask)
		}
	}
	if len(masks) == 0 {
		return nil, nil
	}
	switch l.(type) {
	case *MergeLayer:
		m := masks[0]
		for _, x := range masks[1:] {
			var err error
			if m, err = ops.Multiply(m, x); err != nil {
				return nil, fmt.Errorf("layer %q: combining its inputs' masks: %w", l.Name(), err)
			}
		}
		return m, nil
	case *DenseLayer, *DropoutLayer, *ActivationLayer, *RescalingLayer, *IdentityLayer, *ReLULayer, *LeakyReLULayer, *ELULayer,
		*PReLULayer, *BatchNormalizationLayer, *LayerNormalizationLayer, *TimeDistributedLayer:
		if len(out.Node.Shape()) < 3 || out.Node.Shape()[1] != masks[0].Shape()[1] {
			return nil, nil // no steps left to mask
		}
		return masks[0], nil
	}
	return nil, nil
}
