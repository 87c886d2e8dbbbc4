package metrics

import "fmt"

// batchRows returns the number of samples of a batch whose labels and
// outputs line up row for row, or an error naming the metric.
func batchRows(name string, labels []float32, labelCols int, preds []float32, predCols int) (int, error) {
	if labelCols <= 0 || predCols <= 0 || len(labels)%labelCols != 0 || len(preds)%predCols != 0 || len(labels)/labelCols != len(preds)/predCols {
		return 0, fmt.Errorf("%s: %d labels in rows of %d do not match %d outputs in rows of %d", name, len(labels), labelCols, len(preds), predCols)
	}
	return len(preds) / predCols, nil
}

// sameShape is batchRows for metrics that compare each output with the
// label in its place, which need as many label columns as outputs.
func sameShape(name string, labels []float32, labelCols int, preds []float32, predCols int) (int, error) {
	rows, err := batchRows(name, labels, labelCols, preds, predCols)
	if err == nil && labelCols != predCols {
		err = fmt.Errorf("%s: labels have %d columns and outputs %d: it needs one label per output", name, labelCols, predCols)
	}
	return rows, err
}

// checkProbabilities fails, as Keras' confusion-matrix metrics do, when an
// output is not a probability in [0, 1] (NaN included).
func checkProbabilities(name string, preds []float32) error {
	for i, p := range preds {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("%s: output %d is %v: predictions must be in [0, 1] (a model that outputs logits needs a sigmoid or softmax first)", name, i, p)
		}
	}
	return nil
}

// divideNoNaN is x/y, or 0 when y is 0, as tf.math.divide_no_nan.
func divideNoNaN(x, y float64) float64 {
	if y == 0 {
		return 0
	}
	return x / y
}
