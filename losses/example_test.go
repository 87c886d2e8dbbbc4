package losses_test

import (
	"fmt"

	"github.com/gokeras/gokeras/losses"
)

// A loss is a struct whose zero value is Keras' default; Get makes one
// from the string compile(loss=...) takes.
func Example() {
	fmt.Println(losses.BinaryCrossentropy{FromLogits: true}.Name())
	fmt.Println(losses.Huber{Delta: 0.5}.Name())
	for _, name := range []string{"mse", "CategoricalCrossentropy", "kld", "huber", "focal"} {
		l, err := losses.Get(name)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %#v\n", name, l)
	}
	// Output:
	// binary_crossentropy
	// huber_loss
	// mse: losses.MeanSquaredError{}
	// CategoricalCrossentropy: losses.CategoricalCrossentropy{FromLogits:false, LabelSmoothing:0}
	// kld: losses.KLDivergence{}
	// huber: losses.Huber{Delta:0}
	// unknown loss "focal": known losses are binary_crossentropy, categorical_crossentropy, categorical_hinge, cosine_similarity, hinge, huber, huber_loss, kl_divergence, kld, kullback_leibler_divergence, log_cosh, logcosh, mae, mape, mean_absolute_error, mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error, mse, msle, poisson, sparse_categorical_crossentropy, squared_hinge (or their Keras class names, such as CategoricalCrossentropy)
}
