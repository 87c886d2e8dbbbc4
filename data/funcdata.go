package data

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// FuncData makes a Dataset of n samples that gather makes on demand, for
// data that does not fit in memory or is computed: records read from disk,
// decoded images, augmented copies. Nothing is read ahead or kept beyond
// one batch; wrap the result in Prefetch to overlap reading with training.
//
// gather(i, x, y) writes sample i (0 ≤ i < n) into x, which holds
// shapes.Size(sampleShape) values in row-major order, and its label into y, which
// holds shapes.Size(labelShape) values; both are zeroed before each call, and
// neither may be kept after it. A nil or empty labelShape is one number per
// sample, shape (), as class indices or regression targets are. An error
// from gather stops the batch and comes back naming the sample.
//
// A batch calls gather once per sample, in the batch's order. Fit and
// Evaluate gather a batch's inputs and then its labels: FuncData makes each
// sample once and keeps that batch's labels until they are asked for.
// Predict reads only the inputs (y is then scratch). The calls for one
// Dataset never overlap, so gather needs no lock of its own; it is called
// from the prefetching goroutine under Prefetch.
//
// FuncParts does the same for a model of several inputs or outputs.
func FuncData(n int, sampleShape, labelShape []int, gather func(i int, x, y []float32) error) (Dataset, error) {
	var parts func(i int, x, y [][]float32) error
	if gather != nil {
		parts = func(i int, x, y [][]float32) error { return gather(i, x[0], y[0]) }
	}
	f, err := newFuncData("data.FuncData", n,
		[]funcPart{{"sample", sampleShape}}, []funcPart{{"label", labelShape}}, parts)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// FuncParts is FuncData for a model of several inputs or several outputs,
// as Keras' fit([x1, x2], [y1, y2]) is: each sample is one tensor per
// model input, of the shapes in inputs, and one label per model output, of
// the shapes in labels, both in the order the model lists its inputs and
// outputs.
//
// gather(i, x, y) writes input k of sample i into x[k], which holds
// shapes.Size(inputs[k]) values in row-major order, and label k into y[k],
// which holds shapes.Size(labels[k]) values. An empty label shape is one
// number per sample (a class index, a regression target), as in FuncData;
// every input needs a shape. Everything else is as for FuncData: x and y
// are zeroed before each call and may not be kept after it, each sample is
// made once per batch, and an error stops the batch naming the sample.
//
// The Dataset gathers each sample as one row, its inputs one after another
// and then, in GatherLabels, its labels one after another; it implements
// InputParter and LabelParter to say where each part starts. With one
// input and one label it is FuncData's Dataset.
func FuncParts(n int, inputs, labels [][]int, gather func(i int, x, y [][]float32) error) (Dataset, error) {
	const from = "data.FuncParts"
	if len(inputs) == 0 {
		return nil, errors.New(from + ": no input shapes given: give one per model input, e.g. [][]int{{28, 28}, {4}}")
	}
	if len(labels) == 0 {
		return nil, errors.New(from + ": no label shapes given: give one per model output, e.g. [][]int{{}, {10}} for a class index and a row of 10 numbers")
	}
	named := func(what string, shapes [][]int) []funcPart {
		parts := make([]funcPart, len(shapes))
		for k, s := range shapes {
			parts[k] = funcPart{fmt.Sprintf("%s %d", what, k), s}
		}
		return parts
	}
	f, err := newFuncData(from, n, named("input", inputs), named("label", labels), gather)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// funcPart is one input or label of a funcData, with the name its errors
// give it.
type funcPart struct {
	name  string
	shape []int
}

// newFuncData checks what FuncData or FuncParts (from) was given and makes
// the Dataset.
func newFuncData(from string, n int, inputs, labels []funcPart, gather func(i int, x, y [][]float32) error) (*funcData, error) {
	switch {
	case gather == nil:
		return nil, fmt.Errorf("%s: no gather function given", from)
	case n <= 0:
		return nil, fmt.Errorf("%s: %d samples: a dataset needs at least one", from, n)
	}
	for _, p := range inputs {
		if len(p.shape) > 0 {
			continue
		}
		if len(inputs) == 1 && p.name == "sample" {
			return nil, fmt.Errorf("%s: no sample shape given: say what one sample is, e.g. []int{28, 28} for 28×28 images", from)
		}
		return nil, fmt.Errorf("%s: no shape given for %s: say what it is for one sample, e.g. []int{28, 28} for 28×28 images or []int{1} for one number", from, p.name)
	}
	for _, p := range slices.Concat(inputs, labels) {
		for _, d := range p.shape {
			if d <= 0 {
				return nil, fmt.Errorf("%s: %s shape %s has a dimension %d: every dimension must be positive", from, p.name, tuple(p.shape), d)
			}
		}
	}
	f := &funcData{n: n, gather: gather}
	f.x.init(inputs)
	f.y.init(labels)
	return f, nil
}

// funcData is the Dataset FuncData and FuncParts return.
type funcData struct {
	n      int
	x, y   partLayout
	gather func(i int, x, y [][]float32) error

	mu      sync.Mutex
	held    heldLabels // the labels made with the last batch's inputs
	scratch []float32  // inputs made, and dropped, by GatherLabels
	xs, ys  [][]float32
}

// heldLabels are the labels of a batch made with its inputs, kept for the
// GatherLabels that follows (Fit gathers a batch's inputs, then its
// labels), so that a Dataset that makes both at once (FuncData, Map)
// makes each sample once.
type heldLabels struct {
	idx    []int     // the batch held; none while its labels are made
	labels []float32 // its labels
}

// start forgets the batch held and returns n zeroed values for the labels
// of the next one, which keep then records.
func (h *heldLabels) start(n int) []float32 {
	h.idx = h.idx[:0]
	h.labels = slices.Grow(h.labels[:0], n)[:n]
	clear(h.labels)
	return h.labels
}

// keep records that the labels start returned are those of indices.
func (h *heldLabels) keep(indices []int) { h.idx = append(h.idx[:0], indices...) }

// take copies the labels held into dst when they are those of indices,
// and forgets them either way: it reports whether it copied.
func (h *heldLabels) take(indices []int, dst []float32) bool {
	ok := len(indices) > 0 && slices.Equal(indices, h.idx)
	if ok {
		copy(dst, h.labels)
	}
	h.idx = h.idx[:0]
	return ok
}

// partLayout is where each part of a sample's row lies.
type partLayout struct {
	shapes [][]int // each part's shape
	sizes  []int   // each part's count of values
	size   int     // their sum: the row's count of values
}

func (l *partLayout) init(parts []funcPart) {
	for _, p := range parts {
		size := shapes.Size(p.shape)
		l.shapes = append(l.shapes, append([]int{}, p.shape...))
		l.sizes = append(l.sizes, size)
		l.size += size
	}
}

// shape is the shape of the row: the part's own shape when there is one
// part, else (size,).
func (l *partLayout) shape() []int {
	if len(l.shapes) == 1 {
		return append([]int{}, l.shapes[0]...)
	}
	return []int{l.size}
}

// parts is what InputParts and LabelParts return: nil for one part.
func (l *partLayout) parts() [][]int {
	if len(l.shapes) < 2 {
		return nil
	}
	return cloneShapes(l.shapes)
}

// split cuts row into the parts' views, reusing views.
func (l *partLayout) split(row []float32, views [][]float32) [][]float32 {
	views = views[:0]
	off := 0
	for _, size := range l.sizes {
		views = append(views, row[off:off+size:off+size])
		off += size
	}
	return views
}

func (f *funcData) Len() int            { return f.n }
func (f *funcData) SampleShape() []int  { return f.x.shape() }
func (f *funcData) LabelShape() []int   { return f.y.shape() }
func (f *funcData) InputParts() [][]int { return f.x.parts() }
func (f *funcData) LabelParts() [][]int { return f.y.parts() }

// GatherInputs makes the samples at indices into dst and keeps their labels
// for the GatherLabels that follows.
func (f *funcData) GatherInputs(indices []int, dst []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	xSize, ySize := f.x.size, f.y.size
	if err := checkGather(indices, dst, f.n, xSize); err != nil {
		return err
	}
	labels := f.held.start(len(indices) * ySize)
	clear(dst)
	for k, i := range indices {
		f.xs = f.x.split(dst[k*xSize:(k+1)*xSize], f.xs)
		f.ys = f.y.split(labels[k*ySize:(k+1)*ySize], f.ys)
		if err := f.gather(i, f.xs, f.ys); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	f.held.keep(indices)
	return nil
}

// GatherLabels copies the labels GatherInputs made for the same indices, or
// makes them.
func (f *funcData) GatherLabels(indices []int, dst []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	xSize, ySize := f.x.size, f.y.size
	if err := checkGather(indices, dst, f.n, ySize); err != nil {
		return err
	}
	if f.held.take(indices, dst) {
		return nil
	}
	f.scratch = slices.Grow(f.scratch[:0], xSize)[:xSize]
	clear(dst)
	for k, i := range indices {
		clear(f.scratch)
		f.xs = f.x.split(f.scratch, f.xs)
		f.ys = f.y.split(dst[k*ySize:(k+1)*ySize], f.ys)
		if err := f.gather(i, f.xs, f.ys); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}
