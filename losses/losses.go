package losses

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/shapes"
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
	// LabelSmoothing, in [0, 1], trains against the labels
	// y·(1-LabelSmoothing) + LabelSmoothing/classes, Keras' label_smoothing.
	LabelSmoothing float64
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
	// LabelSmoothing, in [0, 1], trains against the labels
	// y·(1-LabelSmoothing) + LabelSmoothing/2, Keras' label_smoothing.
	LabelSmoothing float64
}

// MeanSquaredError is the mean of squared differences over the last axis,
// keras.losses.MeanSquaredError.
type MeanSquaredError struct{}

// MeanAbsoluteError is the mean of absolute differences over the last
// axis, keras.losses.MeanAbsoluteError.
type MeanAbsoluteError struct{}

// MeanAbsolutePercentageError is the mean over the last axis of
// 100·|y-p| / max(|y|, 1e-7), keras.losses.MeanAbsolutePercentageError.
type MeanAbsolutePercentageError struct{}

// MeanSquaredLogarithmicError is the mean over the last axis of
// (log(max(p, 1e-7)+1) - log(max(y, 1e-7)+1))²,
// keras.losses.MeanSquaredLogarithmicError.
type MeanSquaredLogarithmicError struct{}

// Huber is the mean over the last axis of ½e² where |e| ≤ Delta and
// Delta·|e| - ½Delta² elsewhere, e = p-y: keras.losses.Huber. Its zero
// value is Keras' default.
type Huber struct {
	// Delta is where the loss turns from quadratic to linear, > 0; 0
	// means Keras' default 1.
	Delta float64
}

// LogCosh is the mean over the last axis of log(cosh(p-y)),
// keras.losses.LogCosh.
type LogCosh struct{}

// KLDivergence is the Kullback-Leibler divergence Σ y·log(y/p) over the
// last axis, y and p clipped to [1e-7, 1]: keras.losses.KLDivergence.
type KLDivergence struct{}

// Poisson is the mean over the last axis of p - y·log(p+1e-7),
// keras.losses.Poisson.
type Poisson struct{}

// Hinge is the mean over the last axis of max(1 - y·p, 0) for labels -1
// and 1, keras.losses.Hinge. As in Keras, when every label of a batch is
// 0 or 1 they are read as -1 and 1.
type Hinge struct{}

// SquaredHinge is the mean over the last axis of max(1 - y·p, 0)², its
// labels read as Hinge reads them: keras.losses.SquaredHinge.
type SquaredHinge struct{}

// CategoricalHinge is max(neg - pos + 1, 0) with pos = Σ y·p and neg the
// largest (1-y)·p of a sample, for one-hot labels:
// keras.losses.CategoricalHinge.
type CategoricalHinge struct{}

// CosineSimilarity is the negative cosine similarity of the labels and
// the output along the last axis, keras.losses.CosineSimilarity: -1 when
// they point the same way. Each is divided by √max(Σx², 1e-12), as
// tf.math.l2_normalize divides.
type CosineSimilarity struct{}

func (CategoricalCrossentropy) Name() string       { return "categorical_crossentropy" }
func (SparseCategoricalCrossentropy) Name() string { return "sparse_categorical_crossentropy" }
func (BinaryCrossentropy) Name() string            { return "binary_crossentropy" }
func (MeanSquaredError) Name() string              { return "mean_squared_error" }
func (MeanAbsoluteError) Name() string             { return "mean_absolute_error" }
func (MeanAbsolutePercentageError) Name() string   { return "mean_absolute_percentage_error" }
func (MeanSquaredLogarithmicError) Name() string   { return "mean_squared_logarithmic_error" }
func (Huber) Name() string                         { return "huber_loss" }
func (LogCosh) Name() string                       { return "log_cosh" }
func (KLDivergence) Name() string                  { return "kl_divergence" }
func (Poisson) Name() string                       { return "poisson" }
func (Hinge) Name() string                         { return "hinge" }
func (SquaredHinge) Name() string                  { return "squared_hinge" }
func (CategoricalHinge) Name() string              { return "categorical_hinge" }
func (CosineSimilarity) Name() string              { return "cosine_similarity" }

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
	return ops.LossWith(kind, ops.LossParams{LabelSmoothing: l.LabelSmoothing}, p, target)
}

func (l SparseCategoricalCrossentropy) Node(pred, logits, target *gorgonia.Node) (*gorgonia.Node, error) {
	p, kind := pick(pred, logits, l.FromLogits, ops.SparseCategoricalCrossentropy, ops.SparseSoftmaxCrossEntropy)
	return ops.Loss(kind, p, target)
}

func (l BinaryCrossentropy) Node(pred, logits, target *gorgonia.Node) (*gorgonia.Node, error) {
	p, kind := pick(pred, logits, l.FromLogits, ops.BinaryCrossentropy, ops.SigmoidCrossEntropy)
	return ops.LossWith(kind, ops.LossParams{LabelSmoothing: l.LabelSmoothing}, p, target)
}

func (MeanSquaredError) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.MeanSquaredError, pred, target)
}

func (MeanAbsoluteError) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.MeanAbsoluteError, pred, target)
}

func (MeanAbsolutePercentageError) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.MeanAbsolutePercentageError, pred, target)
}

func (MeanSquaredLogarithmicError) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.MeanSquaredLogarithmicError, pred, target)
}

func (l Huber) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.LossWith(ops.Huber, ops.LossParams{Delta: l.Delta}, pred, target)
}

func (LogCosh) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.LogCosh, pred, target)
}

func (KLDivergence) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.KLDivergence, pred, target)
}

func (Poisson) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.Poisson, pred, target)
}

func (Hinge) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.Hinge, pred, target)
}

func (SquaredHinge) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.SquaredHinge, pred, target)
}

func (CategoricalHinge) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.CategoricalHinge, pred, target)
}

func (CosineSimilarity) Node(pred, _, target *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Loss(ops.CosineSimilarity, pred, target)
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

func (l MeanAbsoluteError) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l MeanAbsolutePercentageError) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l MeanSquaredLogarithmicError) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l Huber) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l LogCosh) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l KLDivergence) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l Poisson) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l Hinge) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l SquaredHinge) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l CategoricalHinge) CheckLabels(labelShape, outputShape []int) error {
	return sameOrFail(l.Name(), labelShape, outputShape)
}

func (l CosineSimilarity) CheckLabels(labelShape, outputShape []int) error {
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
	{[]string{"mean_absolute_error", "mae"}, "MeanAbsoluteError", func() Loss { return MeanAbsoluteError{} }},
	{[]string{"mean_absolute_percentage_error", "mape"}, "MeanAbsolutePercentageError", func() Loss { return MeanAbsolutePercentageError{} }},
	{[]string{"mean_squared_logarithmic_error", "msle"}, "MeanSquaredLogarithmicError", func() Loss { return MeanSquaredLogarithmicError{} }},
	{[]string{"huber_loss", "huber"}, "Huber", func() Loss { return Huber{} }},
	{[]string{"log_cosh", "logcosh"}, "LogCosh", func() Loss { return LogCosh{} }},
	{[]string{"kl_divergence", "kld", "kullback_leibler_divergence"}, "KLDivergence", func() Loss { return KLDivergence{} }},
	{[]string{"poisson"}, "Poisson", func() Loss { return Poisson{} }},
	{[]string{"hinge"}, "Hinge", func() Loss { return Hinge{} }},
	{[]string{"squared_hinge"}, "SquaredHinge", func() Loss { return SquaredHinge{} }},
	{[]string{"categorical_hinge"}, "CategoricalHinge", func() Loss { return CategoricalHinge{} }},
	{[]string{"cosine_similarity"}, "CosineSimilarity", func() Loss { return CosineSimilarity{} }},
}

// Get finds a loss with Keras' defaults by the name compile(loss="...")
// takes, in any case: "categorical_crossentropy",
// "sparse_categorical_crossentropy", "binary_crossentropy",
// "mean_squared_error" ("mse"), "mean_absolute_error" ("mae"),
// "mean_absolute_percentage_error" ("mape"),
// "mean_squared_logarithmic_error" ("msle"), "huber" ("huber_loss"),
// "log_cosh" ("logcosh"), "kl_divergence" ("kld",
// "kullback_leibler_divergence"), "poisson", "hinge", "squared_hinge",
// "categorical_hinge", "cosine_similarity"; or a Keras class name such as
// "CategoricalCrossentropy" or "KLDivergence".
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
