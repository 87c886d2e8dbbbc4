package metrics_test

import (
	"fmt"

	"github.com/gokeras/gokeras/metrics"
)

// A metric is a struct whose zero value is Keras' default, made as a
// pointer since it accumulates; Get makes one from compile's strings.
func Example() {
	acc := &metrics.BinaryAccuracy{} // Keras' threshold, 0.5
	_ = acc.Update([]float32{1, 0, 1, 0}, 1, []float32{0.9, 0.4, 0.3, 0.6}, 1)
	fmt.Println(acc.Name(), acc.Result())

	m, _ := metrics.Get("acc") // reported under the name asked for, as in Keras
	_ = m.Update([]float32{2}, 1, []float32{0.1, 0.2, 0.7}, 3)
	fmt.Println(m.Name(), m.Result())

	auc := &metrics.AUC{NumThresholds: 3} // Keras' docstring example
	_ = auc.Update([]float32{0, 0, 1, 1}, 1, []float32{0, 0.5, 0.3, 0.9}, 1)
	fmt.Println(auc.Name(), auc.Result())

	_, err := metrics.Get("rmse") // not a Keras alias
	fmt.Println(err)
	// Output:
	// binary_accuracy 0.5
	// acc 1
	// auc 0.75
	// unknown metric "rmse": known metrics are acc, accuracy, auc, binary_accuracy, categorical_accuracy, f1_score, mae, mean_absolute_error, mean_squared_error, mse, precision, recall, root_mean_squared_error, sparse_categorical_accuracy, sparse_top_k_categorical_accuracy, top_k_categorical_accuracy (or their Keras class names, such as CategoricalAccuracy)
}
