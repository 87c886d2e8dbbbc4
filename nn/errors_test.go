package nn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

func dataOf(t *testing.T, n int, sample []int, labelCols int) data.Dataset {
	t.Helper()
	size := 1
	for _, d := range sample {
		size *= d
	}
	x := tensor.New(tensor.WithShape(append([]int{n}, sample...)...), tensor.WithBacking(make([]float32, n*size)))
	y := tensor.New(tensor.WithShape(n, labelCols), tensor.WithBacking(make([]float32, n*labelCols)))
	d, err := data.TensorData(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFitRejectsBadInputWithClearErrors(t *testing.T) {
	compiled := func(loss losses.Loss, ls ...layers.Layer) *nn.Sequential {
		m := nn.NewSequential(ls...)
		if err := m.Compile(newSGD(t, 0.01), loss, []metrics.Metric{&metrics.Accuracy{}}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name  string
		model *nn.Sequential
		data  data.Dataset
		opts  []nn.Option
		want  []string
	}{
		{"data shape differs from the model's", compiled(losses.CategoricalCrossentropy{}, layers.Input(32, 32, 3), layers.Flatten(), layers.Dense(10)),
			dataOf(t, 4, []int{28, 28}, 10), nil, []string{"(None, 32, 32, 3)", "(None, 28, 28)"}},
		{"class indices for categorical cross-entropy", compiled(losses.CategoricalCrossentropy{}, layers.Dense(10, layers.Softmax)),
			dataOf(t, 4, []int{3}, 1), nil, []string{"sparse_categorical_crossentropy", "one-hot"}},
		{"one-hot labels for sparse cross-entropy", compiled(losses.SparseCategoricalCrossentropy{}, layers.Dense(10, layers.Softmax)),
			dataOf(t, 4, []int{3}, 10), nil, []string{"categorical_crossentropy"}},
		{"labels of the wrong width", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 4, []int{3}, 2), nil, []string{"(None, 2)", "(None, 3)"}},
		{"empty data", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 0, []int{3}, 3), nil, []string{"no samples"}},
		{"zero epochs", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 4, []int{3}, 3), []nn.Option{nn.Epochs(0)}, []string{"epochs must be positive"}},
		{"negative batch size", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 4, []int{3}, 3), []nn.Option{nn.BatchSize(-1)}, []string{"batch size must be positive"}},
		{"verbose 3", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 4, []int{3}, 3), []nn.Option{nn.Verbose(3)}, []string{"verbose must be 0, 1 or 2"}},
		{"too many steps per epoch", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 4, []int{3}, 3), []nn.Option{nn.StepsPerEpoch(5)}, []string{"5 steps per epoch", "there are 4"}},
		{"validation split of everything", compiled(losses.MeanSquaredError{}, layers.Dense(3)),
			dataOf(t, 4, []int{3}, 3), []nn.Option{nn.ValidationSplit(1)}, []string{"between 0 and 1"}},
		{"not compiled", nn.NewSequential(layers.Dense(3)),
			dataOf(t, 4, []int{3}, 3), nil, []string{"not compiled", "Compile"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.model.Fit(context.Background(), tc.data, append(tc.opts, nn.Verbose(0))...)
			if len(tc.opts) > 0 {
				_, err = tc.model.Fit(context.Background(), tc.data, tc.opts...)
			}
			if err == nil {
				t.Fatal("Fit succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestUnknownNamesListTheKnownOnes(t *testing.T) {
	tests := []struct {
		name string
		get  func() error
		want string
	}{
		{"loss", func() error { _, err := losses.Get("hinge_loss"); return err }, "categorical_crossentropy"},
		{"optimizer", func() error { _, err := optim.Get("lion"); return err }, "sgd, adam, adamw, rmsprop"},
		{"activation", func() error { _, err := layers.GetActivation("mish"); return err }, "relu"},
		{"metric", func() error { _, err := metrics.Get("mape"); return err }, "accuracy"},
		{"initializer", func() error { _, err := layers.GetInitializer("he_orthogonal"); return err }, "glorot_uniform"},
	}
	for _, tc := range tests {
		err := tc.get()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error listing %q", tc.name, err, tc.want)
		}
	}
	for _, name := range []string{"categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy", "mse"} {
		if _, err := losses.Get(name); err != nil {
			t.Errorf("losses.Get(%q): %v", name, err)
		}
	}
	for _, name := range []string{"SGD", "sgd", "adam", "Adam"} {
		if _, err := optim.Get(name); err != nil {
			t.Errorf("optim.Get(%q): %v", name, err)
		}
	}
}

func TestCompileRejectsMissingPieces(t *testing.T) {
	m := nn.NewSequential(layers.Dense(1))
	if err := m.Compile(nil, losses.MeanSquaredError{}, nil); err == nil || !strings.Contains(err.Error(), "optimizer") {
		t.Errorf("Compile without optimizer: %v", err)
	}
	if err := m.Compile(newSGD(t, 0.01), nil, nil); err == nil || !strings.Contains(err.Error(), "loss") {
		t.Errorf("Compile without loss: %v", err)
	}
	if err := m.Compile(newSGD(t, 0.01), losses.MeanSquaredError{}, nil, nn.OnDevice("/TPU:0")); err == nil || !strings.Contains(err.Error(), "TPU") {
		t.Errorf("Compile on a TPU: %v", err)
	}
	if err := m.Compile(newSGD(t, 0.01), losses.MeanSquaredError{}, nil, nn.OnDevice("/GPU:0")); err == nil || !strings.Contains(err.Error(), "-tags cuda") {
		t.Errorf("Compile on a GPU in a build without CUDA: %v", err)
	}
}
