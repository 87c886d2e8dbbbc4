package metrics

import (
	"fmt"

	"github.com/gokeras/gokeras/ops"
	"slices"
	"strings"
)

// Metric accumulates a figure over batches.
type Metric interface {
	// Name is the key the metric is reported under, e.g. "accuracy".
	Name() string
	// Update adds a batch: labels holds rows of labelCols values, preds rows
	// of predCols values, one row per sample.
	Update(labels []float32, labelCols int, preds []float32, predCols int) error
	// Result is the mean over all samples since the last Reset.
	Result() float64
	// Reset forgets all batches.
	Reset()
}

// Mean is a running weighted mean, what Keras' progress bar shows for the loss.
type Mean struct{ total, count float64 }

// Add includes value with the given weight (for a batch loss, its size).
func (m *Mean) Add(value, weight float64) { m.total += value * weight; m.count += weight }

// Result is the weighted mean, 0 before anything was added.
func (m *Mean) Result() float64 {
	if m.count == 0 {
		return 0
	}
	return m.total / m.count
}

// Reset forgets all values.
func (m *Mean) Reset() { *m = Mean{} }

// accuracyKind is how an accuracy compares labels and outputs.
type accuracyKind int

const (
	unresolved accuracyKind = iota
	categorical
	sparseCategorical
	binary
)

// Accuracy is Keras' "accuracy", compile(metrics=["accuracy"]): binary,
// sparse categorical or categorical accuracy, chosen from the shapes of
// each batch as Keras chooses (see the package documentation). Its zero
// value is ready to use: &metrics.Accuracy{}.
//
// Unlike the class keras.metrics.Accuracy, which counts outputs exactly
// equal to their labels, it is the accuracy the string "accuracy" names.
type Accuracy struct {
	name    string // "accuracy" when empty; Get("acc") sets "acc"
	correct Mean
}

// CategoricalAccuracy counts samples whose output's argmax is their one-hot
// label's, keras.metrics.CategoricalAccuracy. Its zero value is ready to
// use: &metrics.CategoricalAccuracy{}.
type CategoricalAccuracy struct{ correct Mean }

// SparseCategoricalAccuracy counts samples whose output's argmax is their
// label, a class index, keras.metrics.SparseCategoricalAccuracy. Its zero
// value is ready to use: &metrics.SparseCategoricalAccuracy{}.
type SparseCategoricalAccuracy struct{ correct Mean }

// BinaryAccuracy counts outputs on the same side of Threshold as their 0/1
// label, keras.metrics.BinaryAccuracy. Its zero value is Keras' default,
// a threshold of 0.5: &metrics.BinaryAccuracy{}.
type BinaryAccuracy struct {
	// Threshold above which an output counts as 1. Zero means Keras'
	// default, 0.5; for a model that outputs logits, whose threshold is 0,
	// use math.SmallestNonzeroFloat32, which compares the same.
	Threshold float32
	correct   Mean
}

// NewAccuracy returns Keras' "accuracy".
//
// Deprecated: use &metrics.Accuracy{}, like every metric of this package.
func NewAccuracy() *Accuracy { return &Accuracy{} }

// Name is "accuracy", or "acc" when Get was given "acc", as Keras reports it.
func (a *Accuracy) Name() string {
	if a.name == "" {
		return "accuracy"
	}
	return a.name
}

// Name is "categorical_accuracy".
func (a *CategoricalAccuracy) Name() string { return "categorical_accuracy" }

// Name is "sparse_categorical_accuracy".
func (a *SparseCategoricalAccuracy) Name() string { return "sparse_categorical_accuracy" }

// Name is "binary_accuracy".
func (a *BinaryAccuracy) Name() string { return "binary_accuracy" }

// Result is the fraction of samples right since the last Reset.
func (a *Accuracy) Result() float64 { return a.correct.Result() }

// Result is the fraction of samples right since the last Reset.
func (a *CategoricalAccuracy) Result() float64 { return a.correct.Result() }

// Result is the fraction of samples right since the last Reset.
func (a *SparseCategoricalAccuracy) Result() float64 { return a.correct.Result() }

// Result is the fraction of outputs right since the last Reset, each
// sample weighing the same.
func (a *BinaryAccuracy) Result() float64 { return a.correct.Result() }

// Reset forgets all batches.
func (a *Accuracy) Reset() { a.correct.Reset() }

// Reset forgets all batches.
func (a *CategoricalAccuracy) Reset() { a.correct.Reset() }

// Reset forgets all batches.
func (a *SparseCategoricalAccuracy) Reset() { a.correct.Reset() }

// Reset forgets all batches.
func (a *BinaryAccuracy) Reset() { a.correct.Reset() }

// Update adds a batch, comparing as Keras' "accuracy" does for its shapes.
func (a *Accuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return count(&a.correct, a.Name(), resolve(labelCols, predCols), 0.5, labels, labelCols, preds, predCols)
}

// Update adds a batch.
func (a *CategoricalAccuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return count(&a.correct, a.Name(), categorical, 0, labels, labelCols, preds, predCols)
}

// Update adds a batch.
func (a *SparseCategoricalAccuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	return count(&a.correct, a.Name(), sparseCategorical, 0, labels, labelCols, preds, predCols)
}

// Update adds a batch.
func (a *BinaryAccuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	threshold := a.Threshold
	if threshold == 0 {
		threshold = 0.5
	}
	return count(&a.correct, a.Name(), binary, threshold, labels, labelCols, preds, predCols)
}

// resolve picks the accuracy for the shapes as Keras does.
func resolve(labelCols, predCols int) accuracyKind {
	switch {
	case predCols == 1:
		return binary
	case labelCols == 1:
		return sparseCategorical
	}
	return categorical
}

// count adds to correct the score of each sample of a batch, compared as
// kind says.
func count(correct *Mean, name string, kind accuracyKind, threshold float32, labels []float32, labelCols int, preds []float32, predCols int) error {
	if labelCols <= 0 || predCols <= 0 || len(labels)%labelCols != 0 || len(preds)%predCols != 0 || len(labels)/labelCols != len(preds)/predCols {
		return fmt.Errorf("%s: %d labels in rows of %d do not match %d outputs in rows of %d", name, len(labels), labelCols, len(preds), predCols)
	}
	switch {
	case kind == categorical && labelCols != predCols:
		return fmt.Errorf("%s: labels have %d columns and outputs %d: categorical accuracy needs one-hot labels", name, labelCols, predCols)
	case kind == sparseCategorical && labelCols != 1:
		return fmt.Errorf("%s: labels have %d columns: sparse categorical accuracy needs one class index per sample", name, labelCols)
	case kind == binary && labelCols != predCols:
		return fmt.Errorf("%s: labels have %d columns and outputs %d", name, labelCols, predCols)
	}
	rows := len(preds) / predCols
	p := accuracyParams(kind, threshold)
	for r := 0; r < rows; r++ {
		score, _ := ops.MetricScore(p, labels[r*labelCols:(r+1)*labelCols], preds[r*predCols:(r+1)*predCols])
		correct.Add(score, 1)
	}
	return nil
}

// accuracyParams is the device metric of an accuracy kind.
func accuracyParams(kind accuracyKind, threshold float32) ops.MetricParams {
	switch kind {
	case categorical:
		return ops.MetricParams{Kind: ops.MetricCategoricalAccuracy}
	case sparseCategorical:
		return ops.MetricParams{Kind: ops.MetricSparseCategoricalAccuracy}
	}
	return ops.MetricParams{Kind: ops.MetricBinaryAccuracy, Threshold: threshold}
}

// known lists every metric Get knows: its Keras name, then its aliases,
// and its Keras class name. make gets the alias Get was given, to report
// the metric under, or "" for the Keras name.
var known = []struct {
	names []string
	class string
	make  func(name string) Metric
}{
	{[]string{"accuracy", "acc"}, "", func(name string) Metric { return &Accuracy{name: name} }},
	{[]string{"categorical_accuracy"}, "CategoricalAccuracy", func(string) Metric { return &CategoricalAccuracy{} }},
	{[]string{"sparse_categorical_accuracy"}, "SparseCategoricalAccuracy", func(string) Metric { return &SparseCategoricalAccuracy{} }},
	{[]string{"binary_accuracy"}, "BinaryAccuracy", func(string) Metric { return &BinaryAccuracy{} }},
	{[]string{"top_k_categorical_accuracy"}, "TopKCategoricalAccuracy", func(string) Metric { return &TopKCategoricalAccuracy{} }},
	{[]string{"sparse_top_k_categorical_accuracy"}, "SparseTopKCategoricalAccuracy", func(string) Metric { return &SparseTopKCategoricalAccuracy{} }},
	{[]string{"precision"}, "Precision", func(string) Metric { return &Precision{} }},
	{[]string{"recall"}, "Recall", func(string) Metric { return &Recall{} }},
	{[]string{"auc"}, "AUC", func(string) Metric { return &AUC{} }},
	{[]string{"f1_score"}, "F1Score", func(string) Metric { return &F1Score{} }},
	{[]string{"mean_absolute_error", "mae"}, "MeanAbsoluteError", func(name string) Metric { return &MeanAbsoluteError{name: name} }},
	{[]string{"mean_squared_error", "mse"}, "MeanSquaredError", func(name string) Metric { return &MeanSquaredError{name: name} }},
	{[]string{"root_mean_squared_error"}, "RootMeanSquaredError", func(string) Metric { return &RootMeanSquaredError{} }},
}

// Get makes a metric with Keras' defaults from the name
// compile(metrics=[...]) takes, in any case: the name Keras reports it
// under ("accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
// "binary_accuracy", "top_k_categorical_accuracy",
// "sparse_top_k_categorical_accuracy", "precision", "recall", "auc",
// "f1_score", "mean_absolute_error", "mean_squared_error",
// "root_mean_squared_error"), one of Keras' aliases ("acc", "mae", "mse",
// each reported under the alias, as Keras reports it), or a Keras class
// name such as "CategoricalAccuracy" or "AUC".
func Get(name string) (Metric, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, k := range known {
		if i := slices.Index(k.names, key); i > 0 {
			return k.make(key), nil // an alias, reported as given
		} else if i == 0 || k.class != "" && strings.ToLower(k.class) == key {
			return k.make(""), nil
		}
		names = append(names, k.names...)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("unknown metric %q: known metrics are %s (or their Keras class names, such as CategoricalAccuracy)", name, strings.Join(names, ", "))
}
