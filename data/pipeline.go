package data

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// This file holds tf.data's transformations for datasets of random access:
// Map, Cache, Take, Skip and Repeat. Fit shuffles and batches any Dataset
// itself (Keras' shuffle and batch), and Prefetch gathers ahead.

// MapFunc computes sample i of a Map: it reads the source's sample (x, its
// inputs, and y, its labels) and writes the new one into outX and outY,
// which are zeroed first. None of the slices may be kept after it returns.
type MapFunc func(i int, x, y, outX, outY []float32) error

// Map makes the Dataset whose sample i is fn applied to sample i of ds, as
// tf.data's map: decoding, resizing or any other preprocessing done as
// each batch is gathered. sampleShape and labelShape are the new samples'
// and labels' shapes; nil keeps ds's (and its parts), each apart. A batch's samples
// are mapped by up to workers goroutines at once (0: GOMAXPROCS), each
// once, in no set order: fn must be safe to call concurrently and must
// compute a sample from i, x and y alone, so that the result is the same
// for any number of workers. An error from fn stops the batch and names
// the sample.
//
// Fit gathers a batch's inputs then its labels: Map maps each sample once,
// keeping the batch's labels until they are asked for, as FuncData does.
func Map(ds Dataset, sampleShape, labelShape []int, workers int, fn MapFunc) (Dataset, error) {
	switch {
	case ds == nil:
		return nil, errors.New("data.Map: no dataset given")
	case fn == nil:
		return nil, errors.New("data.Map: no function given")
	case workers < 0:
		return nil, fmt.Errorf("data.Map: %d workers: give 0 (one per core) or more", workers)
	}
	m := &mapped{src: ds, workers: workers, fn: fn, sample: ds.SampleShape(), label: ds.LabelShape()}
	m.keepInputParts, m.keepLabelParts = sampleShape == nil, labelShape == nil
	if sampleShape != nil {
		if len(sampleShape) == 0 || slices.ContainsFunc(sampleShape, func(d int) bool { return d <= 0 }) {
			return nil, fmt.Errorf("data.Map: sample shape %v: give positive dimensions", sampleShape)
		}
		m.sample = slices.Clone(sampleShape)
	}
	if labelShape != nil {
		if slices.ContainsFunc(labelShape, func(d int) bool { return d <= 0 }) {
			return nil, fmt.Errorf("data.Map: label shape %v: give positive dimensions", labelShape)
		}
		m.label = slices.Clone(labelShape)
	}
	if m.workers == 0 {
		m.workers = runtime.GOMAXPROCS(0)
	}
	return m, nil
}

// mapped is the Dataset Map returns.
type mapped struct {
	src           Dataset
	workers       int
	fn            MapFunc
	sample, label []int
	// keepInputParts and keepLabelParts: the source's shapes, and so its
	// parts, are kept.
	keepInputParts, keepLabelParts bool

	// held are the labels mapped with the last batch's inputs; srcX and
	// srcY the source's batch read for it.
	held      heldLabels
	srcX      []float32
	srcY      []float32
	discarded []float32
}

func (m *mapped) Len() int           { return m.src.Len() }
func (m *mapped) SampleShape() []int { return slices.Clone(m.sample) }
func (m *mapped) LabelShape() []int  { return slices.Clone(m.label) }

// InputParts and LabelParts are the source's when Map kept its shapes.
func (m *mapped) InputParts() [][]int {
	if !m.keepInputParts {
		return nil
	}
	return inputParts(m.src)
}

func (m *mapped) LabelParts() [][]int {
	if !m.keepLabelParts {
		return nil
	}
	return labelParts(m.src)
}

// run maps the samples at indices into x and y.
func (m *mapped) run(indices []int, x, y []float32) error {
	n := len(indices)
	sx, sy := shapes.Size(m.src.SampleShape()), shapes.Size(m.src.LabelShape())
	m.srcX = grow(m.srcX, n*sx)
	m.srcY = grow(m.srcY, n*sy)
	if err := m.src.GatherInputs(indices, m.srcX); err != nil {
		return err
	}
	if err := m.src.GatherLabels(indices, m.srcY); err != nil {
		return err
	}
	ox, oy := shapes.Size(m.sample), shapes.Size(m.label)
	clear(x)
	clear(y)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(m.workers, n) {
		wg.Go(func() {
			for j := range next {
				if err := m.call(indices[j], m.srcX[j*sx:(j+1)*sx], m.srcY[j*sy:(j+1)*sy], x[j*ox:(j+1)*ox], y[j*oy:(j+1)*oy]); err != nil {
					errs[j] = fmt.Errorf("data.Map: sample %d: %w", indices[j], err)
				}
			}
		})
	}
	for j := range n {
		next <- j
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// call calls fn, a panic in it turned into an error: a worker's panic
// would end the program.
func (m *mapped) call(i int, x, y, outX, outY []float32) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the function panicked: %v", r)
		}
	}()
	return m.fn(i, x, y, outX, outY)
}

func (m *mapped) GatherInputs(indices []int, dst []float32) error {
	if err := checkGather(indices, dst, m.Len(), shapes.Size(m.sample)); err != nil {
		return err
	}
	if err := m.run(indices, dst, m.held.start(len(indices)*shapes.Size(m.label))); err != nil {
		return err
	}
	m.held.keep(indices)
	return nil
}

func (m *mapped) GatherLabels(indices []int, dst []float32) error {
	if err := checkGather(indices, dst, m.Len(), shapes.Size(m.label)); err != nil {
		return err
	}
	if m.held.take(indices, dst) {
		return nil
	}
	m.discarded = grow(m.discarded, len(indices)*shapes.Size(m.sample))
	return m.run(indices, m.discarded, dst)
}

// grow returns buf with n values, reusing its memory when it can.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// Cache makes a Dataset that keeps each sample of ds in memory the first
// time it is gathered, as tf.data's cache() does: later epochs copy it
// instead of gathering it again (decoding an image, running a Map). It
// holds up to Len() samples and labels as float32: mind the memory for
// large images.
func Cache(ds Dataset) Dataset {
	if ds == nil {
		return nil
	}
	n := ds.Len()
	return &cached{Dataset: ds, xs: make([][]float32, n), ys: make([][]float32, n)}
}

// cached is the Dataset Cache returns.
type cached struct {
	Dataset
	xs, ys  [][]float32
	missing []int
	scratch []float32
}

func (c *cached) InputParts() [][]int { return inputParts(c.Dataset) }
func (c *cached) LabelParts() [][]int { return labelParts(c.Dataset) }

func (c *cached) GatherInputs(indices []int, dst []float32) error {
	return c.gather(indices, dst, c.xs, shapes.Size(c.SampleShape()), c.Dataset.GatherInputs)
}

func (c *cached) GatherLabels(indices []int, dst []float32) error {
	return c.gather(indices, dst, c.ys, shapes.Size(c.LabelShape()), c.Dataset.GatherLabels)
}

// gather copies the samples at indices from store, gathering those not
// there yet (once each) with from.
func (c *cached) gather(indices []int, dst []float32, store [][]float32, size int, from func([]int, []float32) error) error {
	if err := checkGather(indices, dst, len(store), size); err != nil {
		return err
	}
	c.missing = c.missing[:0]
	for _, i := range indices {
		if store[i] == nil && !slices.Contains(c.missing, i) {
			c.missing = append(c.missing, i)
		}
	}
	if len(c.missing) > 0 {
		c.scratch = grow(c.scratch, len(c.missing)*size)
		if err := from(c.missing, c.scratch); err != nil {
			return err
		}
		for j, i := range c.missing {
			store[i] = slices.Clone(c.scratch[j*size : (j+1)*size])
		}
	}
	for j, i := range indices {
		copy(dst[j*size:(j+1)*size], store[i])
	}
	return nil
}

// Take is the first n samples of ds (all of them if it has fewer), as
// tf.data's take.
func Take(ds Dataset, n int) (Dataset, error) {
	if ds == nil {
		return nil, errors.New("data.Take: no dataset given")
	}
	if n < 0 {
		return nil, fmt.Errorf("data.Take: %d samples: give a count of 0 or more", n)
	}
	return Subset(ds, count(0, min(n, ds.Len())))
}

// Skip is ds without its first n samples, as tf.data's skip.
func Skip(ds Dataset, n int) (Dataset, error) {
	if ds == nil {
		return nil, errors.New("data.Skip: no dataset given")
	}
	if n < 0 {
		return nil, fmt.Errorf("data.Skip: %d samples: give a count of 0 or more", n)
	}
	return Subset(ds, count(min(n, ds.Len()), ds.Len()))
}

// Repeat is ds times times over, one copy after another, as tf.data's
// repeat(times): an epoch of Fit then sees each sample times times.
// (Fit's StepsPerEpoch and Epochs cover what repeat() without a count is
// used for.)
func Repeat(ds Dataset, times int) (Dataset, error) {
	if ds == nil {
		return nil, errors.New("data.Repeat: no dataset given")
	}
	if times < 1 {
		return nil, fmt.Errorf("data.Repeat: %d times: give 1 or more", times)
	}
	n := ds.Len()
	indices := make([]int, 0, n*times)
	for range times {
		indices = append(indices, count(0, n)...)
	}
	return Subset(ds, indices)
}

// count is lo, lo+1, ..., hi-1.
func count(lo, hi int) []int {
	out := make([]int, 0, max(hi-lo, 0))
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}
