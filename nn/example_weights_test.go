package nn_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"github.com/gokeras/gokeras/safetensors"
)

func ExampleSequential_SaveWeights() {
	dir, err := os.MkdirTemp("", "weights")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	model := nn.NewSequential(layers.Input(784), layers.Dense(64, layers.ReLU), layers.Dense(10, layers.Softmax))
	if err := model.Build(784); err != nil {
		fmt.Println(err)
		return
	}
	if err := model.SaveWeights(path); err != nil {
		fmt.Println(err)
		return
	}
	// Any safetensors reader sees Keras' names and shapes.
	f, err := safetensors.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.Shape)
	}
	// A model of the same architecture loads them.
	other := nn.NewSequential(layers.Input(784), layers.Dense(64, layers.ReLU), layers.Dense(10, layers.Softmax))
	fmt.Println(other.LoadWeights(path))
	// Output:
	// dense/bias [64]
	// dense/kernel [784 64]
	// dense_1/bias [10]
	// dense_1/kernel [64 10]
	// <nil>
}

func ExampleSequential_SaveCheckpoint() {
	dir, err := os.MkdirTemp("", "checkpoint")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ckpt.safetensors")

	newModel := func() *nn.Sequential {
		m := nn.NewSequential(layers.Input(4), layers.Dense(10, layers.Softmax))
		opt, _ := optim.NewAdam(optim.AdamConfig{})
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
			fmt.Println(err)
		}
		return m
	}
	// After epoch 3 of a run seeded with 7:
	if err := newModel().SaveCheckpoint(path, nn.Checkpoint{Epoch: 3, Metadata: map[string]string{"seed": "7"}}); err != nil {
		fmt.Println(err)
		return
	}
	// Later, in another process:
	model := newModel()
	ck, err := model.LoadCheckpoint(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("resume at epoch %d, step %d, seed %s\n", ck.Epoch, ck.Step, ck.Metadata["seed"])
	// model.Fit(ctx, data, nn.Epochs(10), nn.InitialEpoch(ck.Epoch), nn.InitialStep(ck.Step), nn.Seed(7))
	// Output:
	// resume at epoch 3, step 0, seed 7
}
