package metrics

import (
	"math"
	"testing"
)

func TestAccuracyResolvesLikeKeras(t *testing.T) {
	tests := []struct {
		name      string
		labels    []float32
		labelCols int
		preds     []float32
		predCols  int
		want      float64
	}{
		{"categorical: argmax equality", []float32{0, 1, 0, 1, 0, 0}, 3, []float32{0.1, 0.7, 0.2, 0.2, 0.5, 0.3}, 3, 0.5},
		{"sparse: class index vs argmax", []float32{1, 2}, 1, []float32{0.1, 0.7, 0.2, 0.2, 0.5, 0.3}, 3, 0.5},
		{"binary: one output, threshold 0.5", []float32{1, 0, 1, 0}, 1, []float32{0.9, 0.4, 0.3, 0.6}, 1, 0.5},
		{"ties go to the first index", []float32{1, 0}, 2, []float32{0.5, 0.5}, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAccuracy()
			if err := a.Update(tc.labels, tc.labelCols, tc.preds, tc.predCols); err != nil {
				t.Fatal(err)
			}
			if got := a.Result(); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("accuracy = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAccuracyAveragesOverSamplesNotBatches(t *testing.T) {
	a := CategoricalAccuracy()
	// A batch of 3 with 3 right, then a batch of 1 with 0 right: 3/4, not (1+0)/2.
	if err := a.Update([]float32{1, 0, 1, 0, 1, 0}, 2, []float32{1, 0, 1, 0, 1, 0}, 2); err != nil {
		t.Fatal(err)
	}
	if err := a.Update([]float32{1, 0}, 2, []float32{0, 1}, 2); err != nil {
		t.Fatal(err)
	}
	if got := a.Result(); got != 0.75 {
		t.Errorf("accuracy = %v, want 0.75", got)
	}
	a.Reset()
	if a.Result() != 0 {
		t.Error("Reset kept old batches")
	}
	if err := a.Update([]float32{1}, 1, []float32{1, 0}, 3); err == nil {
		t.Error("Update accepted rows that do not line up")
	}
}

func TestMeanIsWeighted(t *testing.T) {
	var m Mean
	m.Add(2, 32)
	m.Add(4, 16)
	if got, want := m.Result(), (2.0*32+4*16)/48; got != want {
		t.Errorf("Mean = %v, want %v", got, want)
	}
}

func TestGetByName(t *testing.T) {
	for name, want := range map[string]string{"accuracy": "accuracy", "acc": "acc", "categorical_accuracy": "categorical_accuracy", "binary_accuracy": "binary_accuracy"} {
		m, err := Get(name)
		if err != nil || m.Name() != want {
			t.Errorf("Get(%q) = %v, %v", name, m, err)
		}
	}
}
