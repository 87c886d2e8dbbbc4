package data

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"gorgonia.org/tensor"
)

// Predictions are a model's outputs as plain Go values: one row of
// shapes.Size(OutputShape()) float32 values per sample, in the order of the
// inputs. A model's Predict returns them. The slices its methods return share
// its memory: change a copy, not them, if the Predictions are read again.
// The methods of a nil *Predictions return zero values.
type Predictions struct {
	values []float32
	shape  []int // (N, outputs...)
	cols   int   // values per sample
}

// TensorPredictions makes Predictions of a float32 tensor of shape
// (N, outputs...), such as the one a model's PredictTensor returns. They
// share the tensor's memory. A tensor of another type or of no sample axis
// is an error.
func TensorPredictions(t *tensor.Dense) (*Predictions, error) {
	if t == nil {
		return nil, fmt.Errorf("no tensor given")
	}
	if t.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("tensor has dtype %v: predictions are float32", t.Dtype())
	}
	if t.Dims() == 0 {
		return nil, fmt.Errorf("tensor is a scalar: predictions need a first axis of samples")
	}
	if t.Shape().TotalSize() > 0 && (!t.IsNativelyAccessible() || t.RequiresIterator()) {
		t = t.Materialize().(*tensor.Dense)
	}
	shape := append([]int(nil), t.Shape()...)
	p := &Predictions{shape: shape, cols: shapes.Size(shape[1:])}
	if t.Shape().TotalSize() > 0 { // tensor panics when asked for the data of an empty array
		p.values = t.Data().([]float32)
	}
	return p, nil
}

// Len is the number of samples predicted.
func (p *Predictions) Len() int {
	if p == nil || len(p.shape) == 0 {
		return 0
	}
	return p.shape[0]
}

// Shape is the shape of the outputs, (N, outputs...), like the shape of the
// array Keras' predict returns. The caller owns the slice.
func (p *Predictions) Shape() []int {
	if p == nil {
		return nil
	}
	return append([]int(nil), p.shape...)
}

// Values are all the outputs, sample after sample.
func (p *Predictions) Values() []float32 {
	if p == nil {
		return nil
	}
	return p.values
}

// Row is the outputs for sample i, flattened when the output has more than
// one axis; nil when i is not in [0, Len()).
func (p *Predictions) Row(i int) []float32 {
	if i < 0 || i >= p.Len() {
		return nil
	}
	return p.values[i*p.cols : (i+1)*p.cols : (i+1)*p.cols]
}

// Rows are the outputs one row per sample, as Row returns them.
func (p *Predictions) Rows() [][]float32 {
	rows := make([][]float32, p.Len())
	for i := range rows {
		rows[i] = p.Row(i)
	}
	return rows
}

// Argmax is the index of the largest output of each sample, Keras'
// np.argmax(predict(x), axis=-1) for outputs of shape (N, classes): the
// predicted class. Outputs of more axes are taken flattened, as Row gives
// them. The first index wins a tie and, as in NumPy, the first NaN wins
// over any number. For a model with a single sigmoid output, every index is
// 0: compare Row(i)[0] with 0.5 instead.
func (p *Predictions) Argmax() []int {
	out := make([]int, p.Len())
	for i := range out {
		row := p.Row(i)
		best := 0
		for j, v := range row {
			if v > row[best] || (v != v && row[best] == row[best]) {
				best = j
			}
		}
		out[i] = best
	}
	return out
}
