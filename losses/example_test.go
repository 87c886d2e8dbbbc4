package losses_test

import (
	"fmt"

	"github.com/gokeras/gokeras/losses"
)

// A loss is a struct whose zero value is Keras' default; Get makes one
// from the string compile(loss=...) takes.
func Example() {
	fmt.Println(losses.BinaryCrossentropy{FromLogits: true}.Name())
	for _, name := range []string{"mse", "CategoricalCrossentropy", "hinge"} {
		l, err := losses.Get(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %#v\n", name, l)
	}
	// Output:
	// binary_crossentropy
	// mse: losses.MeanSquaredError{}
	// CategoricalCrossentropy: losses.CategoricalCrossentropy{FromLogits:false}
	// unknown loss "hinge": known losses are binary_crossentropy, categorical_crossentropy, mean_squared_error, mse, sparse_categorical_crossentropy (or their Keras class names, such as CategoricalCrossentropy)
}
