package main

import (
	"strings"

	"github.com/gokeras/gokeras/applications"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// models are the models --model names, by name, each made with the
// layers first (--augment's) between its input and its own layers.
var models = map[string]func(first []layers.Layer) (*nn.Model, error){
	// The MLP: Flatten → Dense(3000, relu) → Dense(1000, relu) →
	// Dense(10, sigmoid).
	"mlp": func(first []layers.Layer) (*nn.Model, error) {
		return sequential(first,
			layers.Flatten(),
			layers.Dense(3000, layers.ReLU),
			layers.Dense(1000, layers.ReLU),
			layers.Dense(10, layers.Sigmoid),
		), nil
	},
	// Keras' classic cifar10_cnn example: two blocks of two 3×3
	// convolutions, max pooling and dropout, then Dense(512) and a softmax.
	"cnn": func(first []layers.Layer) (*nn.Model, error) {
		return sequential(first,
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
	"resnet20": func(first []layers.Layer) (*nn.Model, error) {
		return applications.ResNetV1(20, []int{32, 32, 3}, 10, first...)
	},
}

// sequential is the Sequential model of 32×32×3 images through first,
// then rest.
func sequential(first []layers.Layer, rest ...layers.Layer) *nn.Model {
	ls := append([]layers.Layer{layers.Input(32, 32, 3)}, first...)
	return nn.NewSequential(append(ls, rest...)...)
}

// augmentation is --augment's: the random flips and shifts of Keras'
// cifar10_cnn and cifar10_resnet examples (ImageDataGenerator with
// horizontal_flip, width_shift_range and height_shift_range 0.1 and
// fill_mode "nearest"), as layers on the model's device.
func augmentation() []layers.Layer {
	return []layers.Layer{layers.RandomFlip("horizontal"), layers.RandomTranslation(0.1, 0.1, layers.FillMode("nearest"))}
}

// modelNames lists the --model values, for messages.
const modelNames = "mlp, cnn or resnet20"

// newModel makes the model --model names, its weights drawn from seed,
// with --augment's layers first when augment is set.
func newModel(name string, seed uint64, augment bool) (*nn.Model, error) {
	make, ok := models[strings.ToLower(name)]
	if !ok {
		return nil, usagef("--model %q: want %s", name, modelNames)
	}
	var first []layers.Layer
	if augment {
		first = augmentation()
	}
	m, err := make(first)
	if err != nil {
		return nil, err
	}
	m.SetSeed(seed)
	return m, nil
}
