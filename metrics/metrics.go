// Package metrics holds what gokeras reports while a model trains, with
// Keras' names and semantics.
//
// A metric accumulates over an epoch, one batch at a time, and its Result is
// the mean over every sample seen since the last Reset: epoch figures weight
// each batch by its size, as Keras does.
//
// "accuracy" is resolved the way Keras resolves it, from the shapes of the
// labels and outputs: binary accuracy when the model has one output per
// sample, sparse categorical accuracy when labels are class indices, and
// categorical accuracy (argmax equality) otherwise.
package metrics

import (
	"fmt"
	"maps"
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

// Accuracy counts correct predictions. Its zero value is Keras' "accuracy",
// resolved from the shapes of the first batch.
type Accuracy struct {
	name      string
	kind      accuracyKind
	threshold float32
	correct   Mean
}

// NewAccuracy returns Keras' "accuracy", resolved by shapes at the first batch.
func NewAccuracy() *Accuracy { return &Accuracy{name: "accuracy"} }

// CategoricalAccuracy: argmax of the labels equals argmax of the outputs.
func CategoricalAccuracy() *Accuracy {
	return &Accuracy{name: "categorical_accuracy", kind: categorical}
}

// SparseCategoricalAccuracy: the label (a class index) equals argmax of the outputs.
func SparseCategoricalAccuracy() *Accuracy {
	return &Accuracy{name: "sparse_categorical_accuracy", kind: sparseCategorical}
}

// BinaryAccuracy: each output above threshold (Keras: 0.5) matches its 0/1 label.
func BinaryAccuracy(threshold float32) *Accuracy {
	return &Accuracy{name: "binary_accuracy", kind: binary, threshold: threshold}
}

func (a *Accuracy) Name() string    { return a.name }
func (a *Accuracy) Result() float64 { return a.correct.Result() }
func (a *Accuracy) Reset()          { a.correct.Reset() }

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

func (a *Accuracy) Update(labels []float32, labelCols int, preds []float32, predCols int) error {
	if labelCols <= 0 || predCols <= 0 || len(labels)%labelCols != 0 || len(preds)%predCols != 0 || len(labels)/labelCols != len(preds)/predCols {
		return fmt.Errorf("%s: %d labels in rows of %d do not match %d outputs in rows of %d", a.name, len(labels), labelCols, len(preds), predCols)
	}
	kind := a.kind
	if kind == unresolved {
		kind = resolve(labelCols, predCols)
		a.threshold = 0.5
	}
	rows := len(preds) / predCols
	for r := 0; r < rows; r++ {
		lr, pr := labels[r*labelCols:(r+1)*labelCols], preds[r*predCols:(r+1)*predCols]
		var score float64
		switch kind {
		case categorical:
			if labelCols != predCols {
				return fmt.Errorf("%s: labels have %d columns and outputs %d: categorical accuracy needs one-hot labels", a.name, labelCols, predCols)
			}
			if argmax(lr) == argmax(pr) {
				score = 1
			}
		case sparseCategorical:
			if int(lr[0]) == argmax(pr) && float32(int(lr[0])) == lr[0] {
				score = 1
			}
		case binary:
			if labelCols != predCols {
				return fmt.Errorf("%s: labels have %d columns and outputs %d", a.name, labelCols, predCols)
			}
			var hits int
			for j, p := range pr {
				if (p > a.threshold) == (lr[j] > 0.5) {
					hits++
				}
			}
			score = float64(hits) / float64(predCols)
		}
		a.correct.Add(score, 1)
	}
	return nil
}

// argmax returns the first index of the largest value, as numpy and
// TensorFlow do on ties.
func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

var byName = map[string]func() Metric{
	"accuracy":                    func() Metric { return NewAccuracy() },
	"acc":                         func() Metric { a := NewAccuracy(); a.name = "acc"; return a },
	"categorical_accuracy":        func() Metric { return CategoricalAccuracy() },
	"sparse_categorical_accuracy": func() Metric { return SparseCategoricalAccuracy() },
	"binary_accuracy":             func() Metric { return BinaryAccuracy(0.5) },
}

// Get finds a metric by its Keras name, as compile(metrics=[...]) does.
func Get(name string) (Metric, error) {
	if f, ok := byName[strings.ToLower(strings.TrimSpace(name))]; ok {
		return f(), nil
	}
	return nil, fmt.Errorf("unknown metric %q: known metrics are %s", name, strings.Join(slices.Sorted(maps.Keys(byName)), ", "))
}
