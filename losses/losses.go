// Package losses holds the Keras losses gokeras models train on, with
// Keras' names and its exact arithmetic.
//
// Every loss here is the mean over the batch of a per-sample loss, Keras'
// default "sum_over_batch_size" reduction. Cross-entropies compute from
// probabilities by clipping them to [1e-7, 1-1e-7]; but when the model's
// output comes from a sigmoid or softmax activation they compute from the
// pre-activation logits instead, exactly as Keras on TensorFlow does: the
// values agree, and the logit form is stable where probabilities saturate.
// So categorical cross-entropy after a sigmoid output is the softmax
// cross-entropy of the logits, as it was in the Keras runs gokeras mirrors.
package losses

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// Loss is a training objective.
type Loss interface {
	// Name is the Keras name, e.g. "categorical_crossentropy".
	Name() string
	// Node adds the scalar loss to the graph. pred is the model output;
	// logits is its pre-activation when the output came from a sigmoid or
	// softmax, else nil; target holds the labels of the batch.
	Node(pred, logits, target *gorgonia.Node) (*gorgonia.Node, error)
	// CheckLabels says whether labels of the given per-sample shape fit a
	// model output of the given per-sample shape, and if not, why and what to do.
	CheckLabels(labelShape, outputShape []int) error
}

// CategoricalCrossentropy is the loss for one-hot (or probability) labels.
type CategoricalCrossentropy struct {
	// FromLogits says the model outputs logits (no activation).
	FromLogits bool
}

// SparseCategoricalCrossentropy is the loss for integer class labels.
type SparseCategoricalCrossentropy struct{ FromLogits bool }

// BinaryCrossentropy is the loss for 0/1 labels, one or more per sample.
type BinaryCrossentropy struct{ FromLogits bool }

// MeanSquaredError is the mean of squared differences over the last axis.
type MeanSquaredError struct{}

func (CategoricalCrossentropy) Name() string       { return "categorical_crossentropy" }
func (SparseCategoricalCrossentropy) Name() string { return "sparse_categorical_crossentropy" }
func (BinaryCrossentropy) Name() string            { return "binary_crossentropy" }
func (MeanSquaredError) Name() string              { return "mean_squared_error" }

// pick chooses the logit form of a loss when logits are known or the user
// said the output is logits, as Keras does.
func pick(pred, logits *gorgonia.Node, fromLogits bool, onProbs, onLogits ops.LossKind) (*gorgonia.Node, ops.LossKind) {
	if logits != nil {
		return logits, onLogits
	}
	if fromLogits {
		return pred, onLogits
	}
	return pred, onProbs
}

func (l CategoricalCrossentropy) Node(pred, logits, target *gorgonia.Node) (*gorgonia.Node, error) {
	p, kind := pick(pred, logits, l.FromLogits, ops.CategoricalCrossentropy, ops.SoftmaxCrossEntropy)
	return ops.Loss(kind, p, target)
}

func (l SparseCategoricalCrossentropy) Node(pred, logits, target *gorgonia.Node) (*gorgonia.Node, error) {
	p, kind := pick(pred, logits, l.FromLogits, ops.SparseCategoricalCrossentropy, ops.SparseSoftmaxCrossEntropy)
	return ops.Loss(kind, p, target)
}

func (l BinaryCrossentropy) Node(pred, logits, target *gorgonia.Node) (*gorgonia.Node, error) {
	p, kind := pick(pred, logits, l.FromLogits, ops.BinaryCrossentropy, ops.SigmoidCrossEntropy)
	return ops.Loss(kind, p, target)
}

func (MeanSquaredError) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.MeanSquaredError, pred, target)
}

func (l CategoricalCrossentropy) CheckLabels(labelShape, outputShape []int) error {
	if shapes.Equal(labelShape, outputShape) {
		return nil
	}
	if isScalarShape(labelShape) {
		return fmt.Errorf("labels of shape %s are class indices, but categorical_crossentropy needs one-hot labels of shape %s: use sparse_categorical_crossentropy, or one-hot encode the labels",
			shapes.String(labelShape), shapes.String(outputShape))
	}
	return fmt.Errorf("labels of shape %s do not fit categorical_crossentropy with a model output of shape %s: they must have the same shape",
		shapes.String(labelShape), shapes.String(outputShape))
}

func (l SparseCategoricalCrossentropy) CheckLabels(labelShape, outputShape []int) error {
	if isScalarShape(labelShape) && len(outputShape) == 1 {
		return nil
	}
	if shapes.Equal(labelShape, outputShape) && len(outputShape) == 1 && outputShape[0] > 1 {
		return fmt.Errorf("labels of shape %s look one-hot, but sparse_categorical_crossentropy needs one class index per sample: use categorical_crossentropy for one-hot labels",
			shapes.String(labelShape))
	}
	return fmt.Errorf("labels of shape %s do not fit sparse_categorical_crossentropy with a model output of shape %s: it needs one class index per sample, shape (None,) or (None, 1)",
		shapes.String(labelShape), shapes.String(outputShape))
}

func (l BinaryCrossentropy) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l MeanSquaredError) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func sameOrFail(name string, labelShape, outputShape []int) error {
	if shapes.Equal(labelShape, outputShape) || (isScalarShape(labelShape) && isScalarShape(outputShape)) {
		return nil
	}
	return fmt.Errorf("labels of shape %s do not fit %s with a model output of shape %s: they must have the same shape",
		shapes.String(labelShape), name, shapes.String(outputShape))
}

// isScalarShape reports a per-sample shape of one value: () or (1,).
func isScalarShape(s []int) bool { return len(s) == 0 || (len(s) == 1 && s[0] == 1) }

var byName = map[string]func() Loss{
	"categorical_crossentropy":        func() Loss { return CategoricalCrossentropy{} },
	"sparse_categorical_crossentropy": func() Loss { return SparseCategoricalCrossentropy{} },
	"binary_crossentropy":             func() Loss { return BinaryCrossentropy{} },
	"mean_squared_error":              func() Loss { return MeanSquaredError{} },
	"mse":                             func() Loss { return MeanSquaredError{} },
}

// Get finds a loss by its Keras name, as compile(loss="...") does.
func Get(name string) (Loss, error) {
	if f, ok := byName[strings.ToLower(strings.TrimSpace(name))]; ok {
		return f(), nil
	}
	return nil, fmt.Errorf("unknown loss %q: known losses are %s", name, strings.Join(slices.Sorted(maps.Keys(byName)), ", "))
}
