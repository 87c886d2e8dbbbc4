package nn_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// A model learns XOR-like data: compile, fit silently, then evaluate.
func ExampleSequential() {
	x := tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float32{0, 0, 0, 1, 1, 0, 1, 1}))
	y := tensor.New(tensor.WithShape(4, 1), tensor.WithBacking([]float32{0, 1, 1, 0}))
	data, err := nn.TensorData(x, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	model := nn.NewSequential(layers.Dense(16, layers.Tanh), layers.Dense(1, layers.Sigmoid))
	model.SetSeed(3)
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.05})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Compile(adam, losses.BinaryCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := model.Fit(context.Background(), data, nn.Epochs(300), nn.BatchSize(4), nn.Verbose(0), nn.Seed(1)); err != nil {
		fmt.Println(err)
		return
	}
	res, err := model.Evaluate(context.Background(), data, nn.Verbose(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("accuracy: %.2f\n", res["accuracy"])
	// Output: accuracy: 1.00
}

// Summary prints Keras' table of layers, shapes and parameter counts.
func ExampleSequential_Summary() {
	model := nn.NewSequential(layers.Input(28, 28), layers.Flatten(), layers.Dense(10, layers.Softmax))
	var table strings.Builder
	if err := model.Summary(&table); err != nil {
		fmt.Println(err)
		return
	}
	// Keras pads every row to 65 columns; trimmed here for the example.
	for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	fmt.Println(model.CountParams())
	// Output:
	// Model: "sequential"
	// _________________________________________________________________
	//  Layer (type)                Output Shape              Param #
	// =================================================================
	//  flatten (Flatten)           (None, 784)               0
	//
	//  dense (Dense)               (None, 10)                7850
	//
	// =================================================================
	// Total params: 7,850
	// Trainable params: 7,850
	// Non-trainable params: 0
	// _________________________________________________________________
	// 7850
}
