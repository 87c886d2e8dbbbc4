package nn_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// A functional model saves and loads the same way: its file holds its
// graph in Keras' functional config, a shared layer's calls included.
func ExampleLoadModel_functional() {
	dir, err := os.MkdirTemp("", "model")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	in := nn.Input(4)
	shared := layers.Dense(4, layers.Tanh, layers.Named("shared"))
	x := nn.Apply(shared, nn.Apply(shared, in)) // the same weights twice
	out := nn.Apply(layers.Dense(3, layers.Softmax), x)
	model, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		fmt.Println(err)
		return
	}
	model.SetSeed(1)
	if err := model.Build(4); err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Save(path); err != nil {
		fmt.Println(err)
		return
	}

	loaded, err := nn.LoadModel(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	var summary strings.Builder
	if err := loaded.Summary(&summary); err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(summary.String()), "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	want, err := model.GetWeights()
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := loaded.GetWeights()
	if err != nil {
		fmt.Println(err)
		return
	}
	same := len(got) == len(want)
	for i := range min(len(got), len(want)) {
		same = same && slices.Equal(got[i].Data().([]float32), want[i].Data().([]float32))
	}
	fmt.Println("same weights:", same)
	// Output:
	// Model: "model"
	// __________________________________________________________________________________________________
	//  Layer (type)                   Output Shape         Param #     Connected to
	// ==================================================================================================
	//  input_1 (InputLayer)           [(None, 4)]          0           []
	//
	//  shared (Dense)                 (None, 4)            20          ['input_1[0][0]',
	//                                                                   'shared[0][0]']
	//
	//  dense (Dense)                  (None, 3)            15          ['shared[1][0]']
	//
	// ==================================================================================================
	// Total params: 35
	// Trainable params: 35
	// Non-trainable params: 0
	// __________________________________________________________________________________________________
	// same weights: true
}
