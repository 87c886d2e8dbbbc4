package data

import (
	"errors"
	"fmt"

	"github.com/gokeras/gokeras/internal/formats/shapes"
	"gorgonia.org/tensor"
)

// InputParter is implemented by Inputs whose samples are several tensors,
// one per model input, as for a model built with several nn.Input tensors.
// Such Inputs still gather each sample as one row: part 0's values, then
// part 1's, and so on, so that SampleShape is (s,) where s is the sum of
// the parts' sizes. Shuffling, Subset, Prefetch and validation splits
// therefore work on them unchanged; the model cuts each batch into its
// inputs by the shapes InputParts gives.
type InputParter interface {
	// InputParts is each part's shape, without the batch axis, in the
	// order the parts lie in a sample's row. Nil, or a single shape, means
	// the samples are one tensor of shape SampleShape.
	InputParts() [][]int
}

// LabelParter is implemented by Datasets whose labels are several tensors,
// one per model output. As with InputParter, each label is gathered as one
// row, part 0's values first, and LabelShape is (s,) for the sum s of the
// parts' sizes.
type LabelParter interface {
	// LabelParts is each part's shape, without the batch axis, in the
	// order the parts lie in a label's row; () is one number, as a class
	// index is. Nil, or a single shape, means the labels are one tensor of
	// shape LabelShape.
	LabelParts() [][]int
}

// InputParts returns the shape of each part of in's samples: the shapes
// in.InputParts gives when in has several parts, else in.SampleShape as
// the only one. The caller owns the result.
func InputParts(in Inputs) [][]int {
	if in == nil {
		return nil
	}
	if p, ok := in.(InputParter); ok {
		if parts := p.InputParts(); len(parts) >= 2 {
			return cloneShapes(parts)
		}
	}
	return [][]int{append([]int{}, in.SampleShape()...)}
}

// LabelParts returns the shape of each part of ds's labels: the shapes
// ds.LabelParts gives when ds has several parts, else ds.LabelShape as the
// only one. The caller owns the result.
func LabelParts(ds Dataset) [][]int {
	if ds == nil {
		return nil
	}
	if p, ok := ds.(LabelParter); ok {
		if parts := p.LabelParts(); len(parts) >= 2 {
			return cloneShapes(parts)
		}
	}
	return [][]int{append([]int{}, ds.LabelShape()...)}
}

// inputParts and labelParts are what a wrapper's InputParts and
// LabelParts forward: the wrapped data's parts, nil when it has none.
func inputParts(in Inputs) [][]int {
	if p, ok := in.(InputParter); ok {
		return p.InputParts()
	}
	return nil
}

func labelParts(ds Dataset) [][]int {
	if p, ok := ds.(LabelParter); ok {
		return p.LabelParts()
	}
	return nil
}

// cloneShapes copies a list of shapes, keeping () as an empty, non-nil
// shape.
func cloneShapes(parts [][]int) [][]int {
	out := make([][]int, len(parts))
	for k, p := range parts {
		out[k] = append([]int{}, p...)
	}
	return out
}

// InputTuple makes one Samples of the samples of several model inputs,
// like the list of arrays given to Keras' fit([x1, x2], y): sample i of
// the result is sample i of each part, in order. Give it to SliceData or
// SliceInputs; the result implements InputParter.
//
//	x := data.InputTuple(data.Pixels(images, 255, 28, 28), data.Rows(features))
//
// Every part must hold the same number of samples. The parts are kept as
// their constructors keep them (Pixels' bytes stay bytes, Flat's []float32
// is read in place) and a batch's rows are written from them as it is
// gathered. A part that is itself an InputTuple adds its parts one by one.
// A mistake in a part (or a part never made) is kept, as the constructors
// keep theirs, and names the part: "data.InputTuple: part 1: ...". A
// single part is returned as it is.
func InputTuple(parts ...Samples) Samples {
	if len(parts) == 1 {
		return parts[0]
	}
	if len(parts) == 0 {
		return Samples{made: true, err: errors.New("data.InputTuple: no parts given: give the samples of each model input, e.g. InputTuple(Rows(a), Pixels(b, 255, 28, 28))")}
	}
	n, err := checkTuple("data.InputTuple", "samples", "make it with Rows, Flat or Pixels", len(parts),
		func(k int) (bool, int, error) { return parts[k].made, parts[k].n, parts[k].err })
	if err != nil {
		return Samples{made: true, err: err}
	}
	t := Samples{made: true, n: n}
	total := 0
	for _, p := range parts {
		flat := []Samples{p}
		if p.parts != nil {
			flat = p.parts
		}
		for _, q := range flat {
			size := shapes.Size(q.shape)
			t.parts, t.sizes, total = append(t.parts, q), append(t.sizes, size), total+size
		}
	}
	t.shape = []int{total}
	return t
}

// LabelTuple makes one Labels of the labels of several model outputs,
// like the list of arrays given to Keras' fit(x, [y1, y2]): label i of the
// result is label i of each part, in order. The parts may be of any kind
// (Classes, OneHot, Targets, TargetRows): each writes into a label's row
// the values it writes alone, one-hot labels as their rows, class indices
// and targets as one number. Give it to SliceData; the Dataset implements
// LabelParter.
//
//	y := data.LabelTuple(data.Classes(digits, 10), data.Targets(angles))
//
// Every part must hold the same number of labels. A part that is itself a
// LabelTuple adds its parts one by one. A mistake in a part (or a part
// never made) is kept and names the part: "data.LabelTuple: part 1: ...".
// A single part is returned as it is.
func LabelTuple(parts ...Labels) Labels {
	if len(parts) == 1 {
		return parts[0]
	}
	if len(parts) == 0 {
		return Labels{made: true, err: errors.New("data.LabelTuple: no parts given: give the labels of each model output, e.g. LabelTuple(Classes(a, 10), Targets(b))")}
	}
	n, err := checkTuple("data.LabelTuple", "labels", "make it with Classes, OneHot, Targets or TargetRows", len(parts),
		func(k int) (bool, int, error) { return parts[k].made, parts[k].n, parts[k].err })
	if err != nil {
		return Labels{made: true, err: err}
	}
	t := Labels{made: true, n: n}
	total := 0
	for _, p := range parts {
		flat := []Labels{p}
		if p.parts != nil {
			flat = p.parts
		}
		for _, q := range flat {
			size := shapes.Size(q.shape)
			t.parts, t.sizes, total = append(t.parts, q), append(t.sizes, size), total+size
		}
	}
	t.shape = []int{total}
	return t
}

// checkTuple checks the parts of an InputTuple or LabelTuple (from), given
// by part(k), and returns their count of samples: the first part never
// made or holding a mistake is an error, then a part whose count differs
// from part 0's.
func checkTuple(from, noun, howToMake string, count int, part func(k int) (made bool, n int, err error)) (int, error) {
	for k := range count {
		made, _, err := part(k)
		switch {
		case !made:
			return 0, fmt.Errorf("%s: part %d was never made: %s", from, k, howToMake)
		case err != nil:
			return 0, fmt.Errorf("%s: part %d: %w", from, k, err)
		}
	}
	_, n, _ := part(0)
	for k := 1; k < count; k++ {
		if _, nk, _ := part(k); nk != n {
			return 0, fmt.Errorf("%s: part 0 has %d %s but part %d has %d: every part needs one entry per sample", from, n, noun, k, nk)
		}
	}
	return n, nil
}

// TensorTuple makes a Dataset of several float32 tensors, like the lists
// of arrays given to Keras' fit([x1, x2], [y1, y2]): xs holds one tensor
// per model input and ys one per model output, each of shape (N, ...) with
// the same N. The tensors' data is read in place, as TensorData reads it;
// each batch's rows are written from them as it is gathered. The Dataset
// implements InputParter and LabelParter; with one tensor in xs and one in
// ys it gathers as TensorData's does.
func TensorTuple(xs, ys []*tensor.Dense) (Dataset, error) {
	const from = "data.TensorTuple"
	switch {
	case len(xs) == 0:
		return nil, errors.New(from + ": no input tensors given: give one per model input")
	case len(ys) == 0:
		return nil, errors.New(from + ": no label tensors given: give one per model output")
	}
	x, err := tensorPartsOf(from, "input", xs)
	if err != nil {
		return nil, err
	}
	y, err := tensorPartsOf(from, "label", ys)
	if err != nil {
		return nil, err
	}
	if x.n != y.n {
		return nil, fmt.Errorf("%s: the inputs have %d samples but the labels have %d: give one label per sample", from, x.n, y.n)
	}
	return &tensorTuple{tensorParts: x, labels: y}, nil
}

// tensorPartsOf wraps tensors of one count of samples as the parts of one
// row.
func tensorPartsOf(from, what string, ts []*tensor.Dense) (tensorParts, error) {
	var p tensorParts
	for k, t := range ts {
		in, err := TensorInputs(t)
		if err != nil {
			return p, fmt.Errorf("%s: %s %d: %w", from, what, k, err)
		}
		part := in.(tensorInputs)
		if k > 0 && part.n != p.n {
			return p, fmt.Errorf("%s: %s 0 has %d samples but %s %d has %d: every tensor needs one entry per sample", from, what, p.n, what, k, part.n)
		}
		size := shapes.Size(part.sample)
		p.n, p.parts, p.sizes, p.size = part.n, append(p.parts, part), append(p.sizes, size), p.size+size
	}
	return p, nil
}

// tensorParts is Inputs of several tensors, gathered into one row per
// sample.
type tensorParts struct {
	parts []tensorInputs
	sizes []int // each part's values per sample
	size  int   // their sum
	n     int
}

func (t tensorParts) Len() int { return t.n }

func (t tensorParts) SampleShape() []int {
	if len(t.parts) == 1 {
		return t.parts[0].SampleShape()
	}
	return []int{t.size}
}

func (t tensorParts) InputParts() [][]int {
	if len(t.parts) < 2 {
		return nil
	}
	out := make([][]int, len(t.parts))
	for k, p := range t.parts {
		out[k] = append([]int{}, p.sample...)
	}
	return out
}

func (t tensorParts) GatherInputs(indices []int, dst []float32) error {
	if err := checkGather(indices, dst, t.n, t.size); err != nil {
		return err
	}
	for i, idx := range indices {
		out := dst[i*t.size : (i+1)*t.size]
		for k, p := range t.parts {
			size := t.sizes[k]
			copy(out[:size], p.data[idx*size:(idx+1)*size])
			out = out[size:]
		}
	}
	return nil
}

// tensorTuple is the Dataset TensorTuple returns.
type tensorTuple struct {
	tensorParts
	labels tensorParts
}

func (t *tensorTuple) LabelShape() []int   { return t.labels.SampleShape() }
func (t *tensorTuple) LabelParts() [][]int { return t.labels.InputParts() }
func (t *tensorTuple) GatherLabels(indices []int, dst []float32) error {
	return t.labels.GatherInputs(indices, dst)
}
