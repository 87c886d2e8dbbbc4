package nn_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/modeltest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// A model of the activations and activation layers of issue 30, trained a
// little (PReLU's alpha moves), saves and loads in each format with the
// same predictions: the activations by name, LeakyReLU's and ELU's alpha,
// PReLU's shared axes and alpha.
func TestActivationLayersSaveAndLoad(t *testing.T) {
	m := nn.NewSequential(layers.Input(4, 3, 2), layers.Conv2D(4, 2, layers.Swish),
		layers.NewPReLU(layers.SharedAxes(1, 2), layers.AlphaInitializer(layers.RandomNormal(0.2, 0.1))),
		layers.Flatten(), layers.Dense(8, layers.GELUApproximate), layers.NewLeakyReLU(0.1), layers.Dense(8, layers.SELU),
		layers.NewELU(0.5), layers.Dense(10, layers.HardSigmoid))
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ds := modeltest.Blobs(t, 64, []int{4, 3, 2}, 10)
	ctx := context.Background()
	if _, err := m.Fit(ctx, ds, nn.Epochs(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 5*24)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	inputs, err := data.SliceInputs(data.Flat(x, 4, 3, 2))
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m.safetensors"} {
		path := filepath.Join(t.TempDir(), name)
		if err := m.Save(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := loaded.Predict(ctx, inputs)
		loaded.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got.Values(), want.Values()) {
			t.Errorf("%s: the loaded model predicts %v, the saved one %v", name, got.Values(), want.Values())
		}
	}
	// The weights alone, in Keras 3's and Keras 2's HDF5 layouts, into a
	// model made again in Go (PReLU's alpha among them).
	for _, name := range []string{"m.weights.h5", "w.h5"} {
		path := filepath.Join(t.TempDir(), name)
		if err := m.SaveWeights(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again := nn.NewSequential(layers.Input(4, 3, 2), layers.Conv2D(4, 2, layers.Swish),
			layers.NewPReLU(layers.SharedAxes(1, 2)),
			layers.Flatten(), layers.Dense(8, layers.GELUApproximate), layers.NewLeakyReLU(0.1), layers.Dense(8, layers.SELU),
			layers.NewELU(0.5), layers.Dense(10, layers.HardSigmoid))
		sgd2, err := optim.NewSGD(optim.SGDConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Compile(sgd2, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		if err := again.LoadWeights(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := again.Predict(ctx, inputs)
		again.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got.Values(), want.Values()) {
			t.Errorf("%s: the model with the loaded weights predicts %v, the saved one %v", name, got.Values(), want.Values())
		}
	}
}
