package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

func main() {
	x := [][]float32{{0, 0}, {0, 1}, {1, 0}, {1, 1}}
	ds, err := data.SliceData(data.Rows(x), data.Classes([]int{0, 1, 1, 0}, 2)) // XOR, as class indices
	if err != nil {
		log.Fatal(err)
	}
	model := nn.NewSequential(layers.Dense(16, layers.Tanh), layers.Dense(2, layers.Softmax))
	model.SetSeed(1) // one seed: the same weights and shuffles every run
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.05})
	if err != nil {
		log.Fatal(err)
	}
	if err := model.Compile(adam, losses.SparseCategoricalCrossentropy{}, nil); err != nil {
		log.Fatal(err)
	}
	if _, err := model.Fit(context.Background(), ds, nn.Epochs(200), nn.Verbose(0)); err != nil {
		log.Fatal(err)
	}
	pred, err := model.Predict(context.Background(), ds)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pred.Argmax()) // the class of each row: [0 1 1 0]
}
