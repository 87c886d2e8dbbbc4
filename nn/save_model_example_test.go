package nn_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

func ExampleLoadModel() {
	dir, err := os.MkdirTemp("", "model")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	model := nn.NewSequential(
		layers.Input(4),
		layers.Dense(8, layers.ReLU, layers.Named("hidden")),
		layers.Dropout(0.2, layers.Seed(1)),
		layers.Dense(3, layers.Softmax),
	)
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{LabelSmoothing: 0.1}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		fmt.Println(err)
		return
	}
	// Architecture, compile settings, weights and optimizer state in one file.
	if err := model.Save(path); err != nil {
		fmt.Println(err)
		return
	}

	// Later, in a program without the code above:
	loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range loaded.Layers() {
		fmt.Println(l.Name(), l.Type())
	}
	fmt.Println(loaded.Optimizer().Name(), loaded.Optimizer().LearningRate())

	x, err := data.TensorInputs(tensor.New(tensor.WithShape(2, 4), tensor.WithBacking([]float32{1, 2, 3, 4, 0, -1, 0.5, 2})))
	if err != nil {
		fmt.Println(err)
		return
	}
	want, err := model.PredictTensor(context.Background(), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := loaded.PredictTensor(context.Background(), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("same predictions:", slices.Equal(got.Data().([]float32), want.Data().([]float32)))
	// Output:
	// hidden Dense
	// dropout Dropout
	// dense Dense
	// Adam 0.01
	// same predictions: true
}
