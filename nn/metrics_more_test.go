package nn_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// threeBlobs makes n samples of 3 overlapping classes in 4 features, with
// one-hot labels, as flat slices.
func threeBlobs(n int, seed uint64) (x, y []float32) {
	rng := rand.New(rand.NewPCG(seed, 2))
	x, y = make([]float32, n*4), make([]float32, n*3)
	for i := range n {
		c := i % 3
		y[i*3+c] = 1
		for j := range 4 {
			centre := float64(0)
			if j == c {
				centre = 1.5
			}
			x[i*4+j] = float32(centre + rng.NormFloat64())
		}
	}
	return x, y
}

// moreMetrics makes the metrics under test, fresh, the same each call.
func moreMetrics(t *testing.T) []metrics.Metric {
	mae, err := metrics.Get("mae")
	if err != nil {
		t.Fatal(err)
	}
	return []metrics.Metric{
		&metrics.Precision{}, &metrics.Recall{ClassID: new(2)}, &metrics.AUC{},
		&metrics.TopKCategoricalAccuracy{K: 2}, mae, &metrics.RootMeanSquaredError{},
		&metrics.F1Score{Average: "macro"},
	}
}

// TestFitAndEvaluateReportTheNewMetrics trains a small softmax model with
// several of Keras' metrics and checks that History has each one's figures
// and its val_ figures for every epoch, and that Evaluate's values, made
// batch by batch, are the metrics computed at once from Predict's outputs.
func TestFitAndEvaluateReportTheNewMetrics(t *testing.T) {
	const nTrain, nVal, epochs = 120, 45, 5
	xTrain, yTrain := threeBlobs(nTrain, 1)
	xVal, yVal := threeBlobs(nVal, 2)
	train, err := data.TensorData(tensor.New(tensor.WithShape(nTrain, 4), tensor.WithBacking(xTrain)), tensor.New(tensor.WithShape(nTrain, 3), tensor.WithBacking(yTrain)))
	if err != nil {
		t.Fatal(err)
	}
	val, err := data.TensorData(tensor.New(tensor.WithShape(nVal, 4), tensor.WithBacking(xVal)), tensor.New(tensor.WithShape(nVal, 3), tensor.WithBacking(yVal)))
	if err != nil {
		t.Fatal(err)
	}

	model := nn.NewSequential(layers.Dense(8, layers.ReLU), layers.Dense(3, layers.Softmax))
	model.SetSeed(3)
	if err := model.Compile(newSGD(t, 0.3), losses.CategoricalCrossentropy{}, moreMetrics(t), nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	// Batches of 16 leave partial last batches (120 = 7·16 + 8, 45 = 2·16 + 13).
	hist, err := model.Fit(context.Background(), train, nn.Epochs(epochs), nn.BatchSize(16), nn.ValidationData(val), nn.Seed(4), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"precision", "recall", "auc", "top_k_categorical_accuracy", "mae", "root_mean_squared_error", "f1_score"}
	for _, name := range names {
		for _, key := range []string{name, "val_" + name} {
			if got := hist.Get(key); len(got) != epochs {
				t.Errorf("History[%q] = %v, want %d figures", key, got, epochs)
			}
		}
	}

	res, err := model.Evaluate(context.Background(), val, nn.BatchSize(16), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := data.TensorInputs(tensor.New(tensor.WithShape(nVal, 4), tensor.WithBacking(xVal)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := model.PredictTensor(context.Background(), inputs, nn.BatchSize(16))
	if err != nil {
		t.Fatal(err)
	}
	preds := out.Data().([]float32)
	for i, m := range moreMetrics(t) {
		if m.Name() != names[i] {
			t.Fatalf("metric %d reports as %q, want %q", i, m.Name(), names[i])
		}
		if err := m.Update(yVal, 3, preds, 3); err != nil {
			t.Fatal(err)
		}
		got, ok := res[m.Name()]
		// The device's batch sums of the metrics.OnDevice ones are float32
		// (as Keras' metric variables): within float32's rounding.
		if want := m.Result(); !ok || math.Abs(got-want) > 1e-7*max(1, math.Abs(want)) {
			t.Errorf("Evaluate()[%q] = %v (present: %v); from Predict's outputs %v", m.Name(), got, ok, want)
		}
		// The last epoch's validation ran on the same weights.
		if v := hist.Get("val_" + m.Name()); len(v) == epochs && math.Abs(v[epochs-1]-got) > 1e-9 {
			t.Errorf("val_%s of the last epoch = %v, Evaluate %v", m.Name(), v[epochs-1], got)
		}
	}
	// Figures strictly between 0 and 1 make the comparisons above count,
	// and a model that learnt something reaches what no constant one does.
	for _, name := range names {
		if !(res[name] > 0 && res[name] < 1) {
			t.Errorf("Evaluate()[%q] = %v, want a figure in (0, 1)", name, res[name])
		}
	}
	if res["auc"] < 0.75 || res["top_k_categorical_accuracy"] < 0.8 {
		t.Errorf("after %d epochs auc = %v and top-2 accuracy = %v, want at least 0.75 and 0.8", epochs, res["auc"], res["top_k_categorical_accuracy"])
	}
}
