package data

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"gorgonia.org/tensor"
)

// Inputs is a set of samples a model reads: what Predict takes.
type Inputs interface {
	// Len is the number of samples.
	Len() int
	// SampleShape is the shape of one sample, without the batch axis.
	SampleShape() []int
	// GatherInputs writes the samples at indices, one after another, into
	// dst, which holds exactly len(indices)·shapes.Size(SampleShape()) values.
	GatherInputs(indices []int, dst []float32) error
}

// Dataset is a set of labelled samples: what Fit and Evaluate take.
// datasets/cifar10, TensorData, SliceData and FuncData provide them; so can
// any type with these methods, which lets data stay compact (uint8 images,
// say) until a batch is gathered.
type Dataset interface {
	Inputs
	// LabelShape is the shape of one label, without the batch axis: (10)
	// for one-hot labels, () or (1) for class indices.
	LabelShape() []int
	// GatherLabels writes the labels at indices into dst.
	GatherLabels(indices []int, dst []float32) error
}

// TensorData makes a Dataset of float32 tensors: x of shape (N, ...) and y
// of shape (N, ...) with the same N, like the arrays given to Keras' fit.
func TensorData(x, y *tensor.Dense) (Dataset, error) {
	xs, err := TensorInputs(x)
	if err != nil {
		return nil, err
	}
	ys, err := TensorInputs(y)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if xs.Len() != ys.Len() {
		return nil, fmt.Errorf("x has %d samples but y has %d: they must have one label per sample", xs.Len(), ys.Len())
	}
	return tensorData{tensorInputs: xs.(tensorInputs), labels: ys.(tensorInputs)}, nil
}

// TensorInputs makes Inputs of a float32 tensor of shape (N, ...).
func TensorInputs(x *tensor.Dense) (Inputs, error) {
	if x == nil {
		return nil, fmt.Errorf("no tensor given")
	}
	if x.Dtype() != tensor.Float32 {
		return nil, fmt.Errorf("tensor has dtype %v: gokeras models take float32 data", x.Dtype())
	}
	shape := x.Shape()
	if len(shape) == 0 {
		return nil, fmt.Errorf("tensor is a scalar: it needs a first axis of samples")
	}
	if shape.TotalSize() == 0 {
		// tensor panics when asked for the data of an empty array.
		return tensorInputs{n: shape[0], sample: append([]int(nil), shape[1:]...)}, nil
	}
	if !x.IsNativelyAccessible() || x.RequiresIterator() {
		x = x.Materialize().(*tensor.Dense)
	}
	data := x.Data().([]float32)
	return tensorInputs{data: data, n: shape[0], sample: append([]int(nil), shape[1:]...)}, nil
}

type tensorInputs struct {
	data   []float32
	n      int
	sample []int
}

func (t tensorInputs) Len() int           { return t.n }
func (t tensorInputs) SampleShape() []int { return append([]int(nil), t.sample...) }

func (t tensorInputs) GatherInputs(indices []int, dst []float32) error {
	size := shapes.Size(t.sample)
	if len(dst) != len(indices)*size {
		return fmt.Errorf("gather: destination holds %d values, want %d", len(dst), len(indices)*size)
	}
	for i, idx := range indices {
		if idx < 0 || idx >= t.n {
			return fmt.Errorf("gather: sample index %d out of range [0, %d)", idx, t.n)
		}
		copy(dst[i*size:(i+1)*size], t.data[idx*size:(idx+1)*size])
	}
	return nil
}

type tensorData struct {
	tensorInputs
	labels tensorInputs
}

func (t tensorData) LabelShape() []int { return t.labels.SampleShape() }
func (t tensorData) GatherLabels(indices []int, dst []float32) error {
	return t.labels.GatherInputs(indices, dst)
}

// Subset is the part of data at the given indices, in their order, as
// PyTorch's Subset: sample i of the subset is sample indices[i] of data.
// Fit's ValidationSplit carves off its samples with it. The indices are
// copied; one outside [0, data.Len()) is an error. Fit's batch plans reach
// a Prefetch wrapper inside it, and the subset's samples and labels have
// the parts (InputParts, LabelParts) that data's have.
func Subset(data Dataset, indices []int) (Dataset, error) {
	if data == nil {
		return nil, fmt.Errorf("subset: no data given")
	}
	n := data.Len()
	for _, i := range indices {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("subset: sample index %d out of range [0, %d)", i, n)
		}
	}
	return &subset{Dataset: data, indices: append([]int(nil), indices...)}, nil
}

// subset is the Dataset Subset returns.
type subset struct {
	Dataset
	indices []int
	scratch []int
}

func (s *subset) Len() int { return len(s.indices) }

// InputParts and LabelParts are the parts of the data the subset is of.
func (s *subset) InputParts() [][]int { return inputParts(s.Dataset) }
func (s *subset) LabelParts() [][]int { return labelParts(s.Dataset) }

func (s *subset) mapIndices(indices []int) ([]int, error) {
	s.scratch = s.scratch[:0]
	for _, i := range indices {
		if i < 0 || i >= len(s.indices) {
			return nil, fmt.Errorf("gather: sample index %d out of range [0, %d)", i, len(s.indices))
		}
		s.scratch = append(s.scratch, s.indices[i])
	}
	return s.scratch, nil
}

func (s *subset) GatherInputs(indices []int, dst []float32) error {
	mapped, err := s.mapIndices(indices)
	if err != nil {
		return err
	}
	return s.Dataset.GatherInputs(mapped, dst)
}

func (s *subset) GatherLabels(indices []int, dst []float32) error {
	mapped, err := s.mapIndices(indices)
	if err != nil {
		return err
	}
	return s.Dataset.GatherLabels(mapped, dst)
}
