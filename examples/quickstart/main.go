package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

func main() {
	x := [][]float32{{0, 0}, {0, 1}, {1, 0}, {1, 1}}
	y := []int{0, 1, 1, 0} // XOR, as class indices
	data, err := nn.SliceData(nn.Rows(x), nn.Classes(y, 2))
	if err != nil {
		log.Fatal(err)
	}
	model := nn.NewSequential(layers.Dense(16, layers.Tanh), layers.Dense(2, layers.Softmax))
	model.SetSeed(1) // same seed, same initial weights
	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.05})
	if err != nil {
		log.Fatal(err)
	}
	if err := model.Compile(adam, losses.SparseCategoricalCrossentropy{}, nil); err != nil {
		log.Fatal(err)
	}
	if _, err := model.Fit(context.Background(), data, nn.Epochs(200), nn.Verbose(0), nn.Seed(1)); err != nil {
		log.Fatal(err)
	}
	pred, err := model.PredictValues(context.Background(), data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pred.Argmax()) // the class of each row: [0 1 1 0]
}
