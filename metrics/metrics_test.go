package metrics

import (
	"math"
	"reflect"
	"slices"
	"strings"
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
			a := &Accuracy{}
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
	a := &CategoricalAccuracy{}
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

// TestEachAccuracy checks each accuracy on the same kind of batch, and
// the errors of batches that do not fit it.
func TestEachAccuracy(t *testing.T) {
	tests := []struct {
		name      string
		metric    Metric
		labels    []float32
		labelCols int
		preds     []float32
		predCols  int
		want      float64 // -1 for an error
	}{
		{"categorical", &CategoricalAccuracy{}, []float32{0, 1, 0, 1, 0, 0}, 3, []float32{0.1, 0.7, 0.2, 0.2, 0.5, 0.3}, 3, 0.5},
		{"categorical of class indices", &CategoricalAccuracy{}, []float32{1, 2}, 1, []float32{0.1, 0.7, 0.2, 0.2, 0.5, 0.3}, 3, -1},
		{"sparse categorical", &SparseCategoricalAccuracy{}, []float32{1, 2}, 1, []float32{0.1, 0.7, 0.2, 0.2, 0.5, 0.3}, 3, 0.5},
		{"sparse categorical of one-hot labels", &SparseCategoricalAccuracy{}, []float32{0, 1, 0, 1, 0, 0}, 3, []float32{0.1, 0.7, 0.2, 0.2, 0.5, 0.3}, 3, -1},
		{"binary, Keras' 0.5", &BinaryAccuracy{}, []float32{1, 0, 1, 0}, 1, []float32{0.9, 0.4, 0.3, 0.6}, 1, 0.5},
		{"binary, threshold 0.35", &BinaryAccuracy{Threshold: 0.35}, []float32{1, 0, 1, 0}, 1, []float32{0.9, 0.4, 0.3, 0.6}, 1, 0.25},
		{"binary, two outputs per sample", &BinaryAccuracy{}, []float32{1, 0, 1, 1}, 2, []float32{0.9, 0.4, 0.3, 0.6}, 2, 0.75},
		{"binary of mismatched columns", &BinaryAccuracy{}, []float32{1, 0}, 1, []float32{0.9, 0.4, 0.3, 0.6}, 2, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.metric.Update(tc.labels, tc.labelCols, tc.preds, tc.predCols)
			switch {
			case tc.want < 0 && err == nil:
				t.Fatalf("Update accepted the batch: %v", tc.metric.Result())
			case tc.want < 0:
				if !strings.Contains(err.Error(), tc.metric.Name()) {
					t.Errorf("error %q does not name the metric", err)
				}
			case err != nil:
				t.Fatal(err)
			case math.Abs(tc.metric.Result()-tc.want) > 1e-12:
				t.Errorf("%s = %v, want %v", tc.metric.Name(), tc.metric.Result(), tc.want)
			}
		})
	}
}

// TestGetRoundTrips looks up every metric by its Keras name, its aliases
// and its class name, in any case, and every metric type by the name it
// reports.
func TestGetRoundTrips(t *testing.T) {
	for _, k := range known {
		names := append([]string{strings.ToUpper(k.names[0]), " " + k.names[0] + " "}, k.names...)
		if k.class != "" {
			names = append(names, k.class)
		}
		for _, name := range names {
			m, err := Get(name)
			want := k.names[0]
			if key := strings.ToLower(strings.TrimSpace(name)); slices.Contains(k.names, key) {
				want = key // Keras reports "acc" as "acc"
			}
			if err != nil || m.Name() != want {
				t.Errorf("Get(%q) = %v, %v; want %s", name, m, err, want)
			}
		}
	}
	every := []Metric{&Accuracy{}, &CategoricalAccuracy{}, &SparseCategoricalAccuracy{}, &BinaryAccuracy{},
		&TopKCategoricalAccuracy{}, &SparseTopKCategoricalAccuracy{}, &Precision{}, &Recall{}, &AUC{}, &F1Score{},
		&MeanAbsoluteError{}, &MeanSquaredError{}, &RootMeanSquaredError{}}
	if len(every) != len(known) {
		t.Errorf("%d metric types checked, %d known to Get", len(every), len(known))
	}
	for _, m := range every {
		got, err := Get(m.Name())
		if err != nil || reflect.TypeOf(got) != reflect.TypeOf(m) || !reflect.DeepEqual(got, m) {
			t.Errorf("Get(%q) = %#v, %v; want %#v, Keras' default", m.Name(), got, err, m)
		}
	}
	if got := (&Accuracy{}).Name(); got != "accuracy" {
		t.Errorf("the zero Accuracy reports as %q, want accuracy", got)
	}
}

func TestGetUnknownListsKnownNames(t *testing.T) {
	_, err := Get("mape") // Keras' mean_absolute_percentage_error, not here
	if err == nil {
		t.Fatal(`Get("mape") found a metric`)
	}
	for _, want := range []string{`"mape"`, "acc, accuracy, auc, binary_accuracy, categorical_accuracy, f1_score, mae, mean_absolute_error, mean_squared_error, mse, precision, recall, root_mean_squared_error, sparse_categorical_accuracy, sparse_top_k_categorical_accuracy, top_k_categorical_accuracy", "class names"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestGetKerasNames looks up each name compile(metrics=[...]) takes, its
// Keras aliases and class names, and checks the type made and the name it
// is reported under.
func TestGetKerasNames(t *testing.T) {
	tests := []struct {
		name       string
		want       Metric // nil: Keras has no such name
		reportedAs string
	}{
		{"precision", &Precision{}, "precision"},
		{"Precision", &Precision{}, "precision"},
		{"recall", &Recall{}, "recall"},
		{"Recall", &Recall{}, "recall"},
		{"auc", &AUC{}, "auc"},
		{"AUC", &AUC{}, "auc"},
		{"top_k_categorical_accuracy", &TopKCategoricalAccuracy{}, "top_k_categorical_accuracy"},
		{"TopKCategoricalAccuracy", &TopKCategoricalAccuracy{}, "top_k_categorical_accuracy"},
		{"sparse_top_k_categorical_accuracy", &SparseTopKCategoricalAccuracy{}, "sparse_top_k_categorical_accuracy"},
		{"SparseTopKCategoricalAccuracy", &SparseTopKCategoricalAccuracy{}, "sparse_top_k_categorical_accuracy"},
		{"mean_absolute_error", &MeanAbsoluteError{}, "mean_absolute_error"},
		{"MeanAbsoluteError", &MeanAbsoluteError{}, "mean_absolute_error"},
		{"mae", &MeanAbsoluteError{}, "mae"},
		{"MAE", &MeanAbsoluteError{}, "mae"},
		{"mean_squared_error", &MeanSquaredError{}, "mean_squared_error"},
		{"MeanSquaredError", &MeanSquaredError{}, "mean_squared_error"},
		{"mse", &MeanSquaredError{}, "mse"},
		{"root_mean_squared_error", &RootMeanSquaredError{}, "root_mean_squared_error"},
		{"RootMeanSquaredError", &RootMeanSquaredError{}, "root_mean_squared_error"},
		{"f1_score", &F1Score{}, "f1_score"},
		{"F1Score", &F1Score{}, "f1_score"},
		{"rmse", nil, ""}, // not a Keras alias
		{"f1", nil, ""},
		{"mape", nil, ""}, // a Keras metric gokeras does not have
	}
	for _, tc := range tests {
		m, err := Get(tc.name)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("Get(%q) = %T, want an error", tc.name, m)
		case tc.want == nil:
		case err != nil:
			t.Errorf("Get(%q): %v", tc.name, err)
		case reflect.TypeOf(m) != reflect.TypeOf(tc.want) || m.Name() != tc.reportedAs:
			t.Errorf("Get(%q) = %T reported as %q, want %T reported as %q", tc.name, m, m.Name(), tc.want, tc.reportedAs)
		}
	}
}
