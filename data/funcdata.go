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
func FuncData(n int, sampleShape, labelShape []int, gather func(i int, x, y []float32) error) (Dataset, error) {
	switch {
	case gather == nil:
		return nil, errors.New("data.FuncData: no gather function given")
	case n <= 0:
		return nil, fmt.Errorf("data.FuncData: %d samples: a dataset needs at least one", n)
	case len(sampleShape) == 0:
		return nil, errors.New("data.FuncData: no sample shape given: say what one sample is, e.g. []int{28, 28} for 28×28 images")
	}
	for _, s := range []struct {
		what  string
		shape []int
	}{{"sample", sampleShape}, {"label", labelShape}} {
		for _, d := range s.shape {
			if d <= 0 {
				return nil, fmt.Errorf("data.FuncData: %s shape %s has a dimension %d: every dimension must be positive", s.what, tuple(s.shape), d)
			}
		}
	}
	return &funcData{
		n: n, sample: slices.Clone(sampleShape), label: append([]int{}, labelShape...),
		xSize: shapes.Size(sampleShape), ySize: shapes.Size(labelShape), gather: gather,
	}, nil
}

// funcData is the Dataset FuncData returns.
type funcData struct {
	n             int
	sample, label []int
	xSize, ySize  int
	gather        func(i int, x, y []float32) error

	mu      sync.Mutex
	idx     []int     // the batch whose labels were made with its inputs
	labels  []float32 // those labels
	scratch []float32 // inputs made, and dropped, by GatherLabels
}

func (f *funcData) Len() int           { return f.n }
func (f *funcData) SampleShape() []int { return slices.Clone(f.sample) }
func (f *funcData) LabelShape() []int  { return append([]int{}, f.label...) }

// GatherInputs makes the samples at indices into dst and keeps their labels
// for the GatherLabels that follows.
func (f *funcData) GatherInputs(indices []int, dst []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := checkGather(indices, dst, f.n, f.xSize); err != nil {
		return err
	}
	f.idx = f.idx[:0]
	f.labels = slices.Grow(f.labels[:0], len(indices)*f.ySize)[:len(indices)*f.ySize]
	clear(dst)
	clear(f.labels)
	for k, i := range indices {
		if err := f.gather(i, dst[k*f.xSize:(k+1)*f.xSize:(k+1)*f.xSize], f.labels[k*f.ySize:(k+1)*f.ySize:(k+1)*f.ySize]); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	f.idx = append(f.idx, indices...)
	return nil
}

// GatherLabels copies the labels GatherInputs made for the same indices, or
// makes them.
func (f *funcData) GatherLabels(indices []int, dst []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := checkGather(indices, dst, f.n, f.ySize); err != nil {
		return err
	}
	if len(indices) > 0 && slices.Equal(indices, f.idx) {
		copy(dst, f.labels)
		f.idx = f.idx[:0]
		return nil
	}
	f.idx = f.idx[:0]
	f.scratch = slices.Grow(f.scratch[:0], f.xSize)[:f.xSize]
	clear(dst)
	for k, i := range indices {
		clear(f.scratch)
		if err := f.gather(i, f.scratch, dst[k*f.ySize:(k+1)*f.ySize:(k+1)*f.ySize]); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}
