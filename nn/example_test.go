package nn_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gokeras/gokeras/data"
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
	ds, err := data.TensorData(x, y)
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
	if _, err := model.Fit(context.Background(), ds, nn.Epochs(300), nn.BatchSize(4), nn.Verbose(0), nn.Seed(1)); err != nil {
		fmt.Println(err)
		return
	}
	res, err := model.Evaluate(context.Background(), ds, nn.Verbose(0))
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

// Plain Go values make a dataset: rows of float64 and class indices here,
// checked as they are taken in.
func ExampleSliceData() {
	x := [][]float64{{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}}
	ds, err := data.SliceData(data.Rows(x), data.OneHot([]int{2, 0, 1}, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.Len(), ds.SampleShape(), ds.LabelShape())

	// Bytes stay bytes until a batch is gathered, then become x/255.
	pixels := []uint8{0, 51, 255, 102, 204, 0}
	images, err := data.SliceInputs(data.Pixels(pixels, 255, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	batch := make([]float32, 3)
	if err := images.GatherInputs([]int{1}, batch); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(batch)

	_, err = data.SliceData(data.Rows([][]float32{{1, 2}, {3}}), data.Classes([]int{0, 1}, 2))
	fmt.Println(err)
	_, err = data.SliceData(data.Rows(x), data.Classes([]int{0, 1, 3}, 3))
	fmt.Println(err)
	// Output:
	// 3 [2] [3]
	// [0.4 0.8 0]
	// data.Rows: row 1 has length 1 but row 0 has length 2: every row must have the same length
	// data.Classes: sample 2 has class 3, outside the 3 classes 0 to 2
}

// FuncData makes each sample when a batch needs it: here sample i is the
// pair (i, i²) and its label is whether i is odd.
func ExampleFuncData() {
	ds, err := data.FuncData(1000, []int{2}, nil, func(i int, x, y []float32) error {
		x[0], x[1] = float32(i), float32(i*i)
		y[0] = float32(i % 2)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	x, y := make([]float32, 4), make([]float32, 2)
	if err := ds.GatherInputs([]int{3, 10}, x); err != nil {
		fmt.Println(err)
		return
	}
	if err := ds.GatherLabels([]int{3, 10}, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x, y)
	// Output: [3 9 10 100] [1 0]
}
