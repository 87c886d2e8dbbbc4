package losses

import (
	"fmt"
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

// CategoricalCrossentropy is the loss for one-hot (or probability) labels,
// keras.losses.CategoricalCrossentropy. Its zero value is Keras' default.
type CategoricalCrossentropy struct {
	// FromLogits says the model outputs logits (no activation), Keras'
	// from_logits=True.
	FromLogits bool
}

// SparseCategoricalCrossentropy is the loss for integer class labels,
// keras.losses.SparseCategoricalCrossentropy. Its zero value is Keras'
// default.
type SparseCategoricalCrossentropy struct {
	// FromLogits says the model outputs logits (no activation).
	FromLogits bool
}

// BinaryCrossentropy is the loss for 0/1 labels, one or more per sample,
// keras.losses.BinaryCrossentropy. Its zero value is Keras' default.
type BinaryCrossentropy struct {
	// FromLogits says the model outputs logits (no activation).
	FromLogits bool
}

// MeanSquaredError is the mean of squared differences over the last axis,
// keras.losses.MeanSquaredError.
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

// known lists every loss Get knows: its Keras name, then its aliases, and
// its Keras class name.
var known = []struct {
	names []string
	class string
	make  func() Loss
}{
	{[]string{"categorical_crossentropy"}, "CategoricalCrossentropy", func() Loss { return CategoricalCrossentropy{} }},
	{[]string{"sparse_categorical_crossentropy"}, "SparseCategoricalCrossentropy", func() Loss { return SparseCategoricalCrossentropy{} }},
	{[]string{"binary_crossentropy"}, "BinaryCrossentropy", func() Loss { return BinaryCrossentropy{} }},
	{[]string{"mean_squared_error", "mse"}, "MeanSquaredError", func() Loss { return MeanSquaredError{} }},
}

// Get finds a loss with Keras' defaults by the name compile(loss="...")
// takes: "categorical_crossentropy", "sparse_categorical_crossentropy",
// "binary_crossentropy", "mean_squared_error" or "mse", or a Keras class
// name such as "CategoricalCrossentropy", in any case.
func Get(name string) (Loss, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, k := range known {
		if slices.Contains(k.names, key) || strings.ToLower(k.class) == key {
			return k.make(), nil
		}
		names = append(names, k.names...)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("unknown loss %q: known losses are %s (or their Keras class names, such as CategoricalCrossentropy)", name, strings.Join(names, ", "))
}
