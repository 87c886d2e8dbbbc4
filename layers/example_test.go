package layers_test

import (
	"fmt"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// Every layer takes Named, Keras' name= argument; unnamed layers get
// Keras' automatic names. The names prefix the weights' names, so two
// layers of a model cannot share one.
func ExampleNamed() {
	model := nn.NewSequential(
		layers.Input(28, 28).With(layers.Named("digits")),
		layers.Flatten(),
		layers.Dense(64, layers.ReLU, layers.Named("hidden")),
		layers.Dense(10, layers.Softmax),
	)
	model.SetSeed(1)
	if err := model.Build(28, 28); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range model.Layers() {
		fmt.Printf("%s (%s):", l.Name(), l.Type())
		for _, p := range l.Params() {
			fmt.Printf(" %s/%s", l.Name(), p.Name)
		}
		fmt.Println()
	}

	twice := nn.NewSequential(layers.Dense(8, layers.Named("hidden")), layers.Dense(2, layers.Named("hidden")))
	fmt.Println(twice.Build(4))
	// Output:
	// flatten (Flatten):
	// hidden (Dense): hidden/kernel hidden/bias
	// dense (Dense): dense/kernel dense/bias
	// model "sequential": layers 1 (Dense) and 2 (Dense) are both named "hidden": layer names must be unique in a model, as they name its weights ("hidden/kernel"): give one of them another name with layers.Named
}

// GetActivation takes the strings Keras' layers take for activation=.
func ExampleGetActivation() {
	act, err := layers.GetActivation("relu")
	fmt.Println(act, err)
	act, err = layers.GetActivation("silu")
	fmt.Println(act, err)
	_, err = layers.GetActivation("mish")
	fmt.Println(err)
	// Output:
	// relu <nil>
	// swish <nil>
	// unknown activation "mish": known activations are linear, relu, sigmoid, tanh, softmax, gelu, gelu_approximate, swish, elu, selu, softplus, softsign, hard_sigmoid, exponential, leaky_relu
}

// A small convolutional network: Keras' layer names, output shapes and
// weight shapes (kernels are (height, width, in, filters), as in Keras).
func ExampleConv2D() {
	model := nn.NewSequential(
		layers.Input(28, 28, 1),
		layers.Conv2D(8, 3, layers.Padding("same"), layers.ReLU),
		layers.BatchNormalization(),
		layers.MaxPooling2D(),
		layers.Conv2D(16, 3, layers.Strides(2), layers.ReLU),
		layers.Dropout(0.25),
		layers.GlobalAveragePooling2D(),
		layers.Dense(10, layers.Softmax),
	)
	if err := model.Build(28, 28, 1); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range model.Layers() {
		fmt.Printf("%s:", l.Name())
		for _, p := range l.Params() {
			fmt.Printf(" %s%v", p.Name, p.Value.Shape())
			if p.NonTrainable {
				fmt.Print(" (non-trainable)")
			}
		}
		fmt.Println()
	}
	fmt.Println(model.OutputShape())
	// Output:
	// conv2d: kernel(3, 3, 1, 8) bias(8)
	// batch_normalization: gamma(8) beta(8) moving_mean(8) (non-trainable) moving_variance(8) (non-trainable)
	// max_pooling2d:
	// conv2d_1: kernel(3, 3, 8, 16) bias(16)
	// dropout:
	// global_average_pooling2d:
	// dense: kernel(16, 10) bias(10)
	// [10]
}

// Embedding maps integer indices, held as numbers, to learned vectors.
func ExampleEmbedding() {
	model := nn.NewSequential(
		layers.Input(12), // sequences of 12 word indices
		layers.Embedding(1000, 16),
		layers.Conv1D(32, 3, layers.ReLU),
		layers.GlobalMaxPooling1D(),
		layers.Dense(1, layers.Sigmoid),
	)
	if err := model.Build(12); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(model.CountParams())
	// Output:
	// 17601
}
