package main

import (
	"strings"

	"github.com/gokeras/gokeras/applications"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// models are the models --model names, by name.
var models = map[string]func() (*nn.Model, error){
	// The MLP: Flatten → Dense(3000, relu) → Dense(1000, relu) →
	// Dense(10, sigmoid).
	"mlp": func() (*nn.Model, error) {
		return nn.NewSequential(
			layers.Input(32, 32, 3),
			layers.Flatten(),
			layers.Dense(3000, layers.ReLU),
			layers.Dense(1000, layers.ReLU),
			layers.Dense(10, layers.Sigmoid),
		), nil
	},
	// Keras' classic cifar10_cnn example: two blocks of two 3×3
	// convolutions, max pooling and dropout, then Dense(512) and a softmax.
	"cnn": func() (*nn.Model, error) {
		return nn.NewSequential(
			layers.Input(32, 32, 3),
			layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU),
			layers.Conv2D(32, 3, layers.ReLU),
			layers.MaxPooling2D(),
			layers.Dropout(0.25),
			layers.Conv2D(64, 3, layers.Padding("same"), layers.ReLU),
			layers.Conv2D(64, 3, layers.ReLU),
			layers.MaxPooling2D(),
			layers.Dropout(0.25),
			layers.Flatten(),
			layers.Dense(512, layers.ReLU),
			layers.Dropout(0.5),
			layers.Dense(10, layers.Softmax),
		), nil
	},
	// Keras' cifar10_resnet example, ResNet-20 v1: a functional model of
	// residual blocks (package applications).
	"resnet20": func() (*nn.Model, error) { return applications.ResNetV1(20, []int{32, 32, 3}, 10) },
}

// modelNames lists the --model values, for messages.
const modelNames = "mlp, cnn or resnet20"

// newModel makes the model --model names, its weights drawn from seed.
func newModel(name string, seed uint64) (*nn.Model, error) {
	make, ok := models[strings.ToLower(name)]
	if !ok {
		return nil, usagef("--model %q: want %s", name, modelNames)
	}
	m, err := make()
	if err != nil {
		return nil, err
	}
	m.SetSeed(seed)
	return m, nil
}
