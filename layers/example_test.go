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
	_, err = layers.GetActivation("swish")
	fmt.Println(err)
	// Output:
	// relu <nil>
	// unknown activation "swish": known activations are linear, relu, sigmoid, tanh, softmax
}
