package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// This file holds streams: data read in order, perhaps without end, as
// tf.data's datasets and Python generators are read by Keras' fit.

// Cardinalities a Stream may have besides a count of elements, as
// tf.data's cardinality() names them.
const (
	// Infinite is the cardinality of a stream that never ends: one that
	// repeats forever, or whose source has no end.
	Infinite = -1
	// Unknown is the cardinality of a stream whose end is found only by
	// reading it: a generator that says when it is done.
	Unknown = -2
)

// Batch is an element of a Stream: N samples and their labels, each laid
// out one after another as a Dataset gathers them. A stream of single
// samples has elements of N = 1; Stream.Batch makes elements of n.
// Whoever receives a Batch from an Iterator owns its slices.
type Batch struct {
	N int
	X []float32 // N·size(SampleShape) values
	Y []float32 // N·size(LabelShape) values
}

// Iterator reads one pass over a Stream, in order.
type Iterator interface {
	// Next returns the next element, or io.EOF when the pass has ended.
	// Another error ends the pass too.
	Next() (Batch, error)
	// Close ends the pass, stopping any goroutine that reads ahead, and
	// releases what the pass holds. It may be called at any time, once.
	Close() error
}

// Stream is data read in order, one pass after another, as tf.data's
// datasets and Python generators are read by Keras' fit: it may be
// endless, and it need not know its length. A model's Fit, Evaluate and
// Predict take it as they take a Dataset, training on each of its
// elements as one batch.
//
// The methods Batch, Shuffle, Map, Cache, Take, Skip, Repeat and Prefetch each
// return a new Stream reading this one, as tf.data's transformations do:
//
//	s := data.FromDataset(train).Shuffle(1000, 7).Batch(32, false).Prefetch(2)
//
// A mistake in an argument is kept and returned by Err and Open (so by
// Fit) with the name of the method, so that calls can be chained. A Stream
// can be read by several passes one after another; each Open starts one.
type Stream struct {
	sample, label       []int
	inParts, labelParts [][]int
	// card is the number of elements of a pass, Infinite or Unknown;
	// rows is the number of samples of every element (1 for a stream of
	// samples), 0 when they differ or are not known.
	card, rows int
	open       func(ctx context.Context) (Iterator, error)
	err        error
}

// NewStream makes a Stream of a source of the caller's own: open starts
// a pass over it (reading a file from its start, say) and returns its
// Iterator, whose elements hold samples of sampleShape and labels of
// labelShape. cardinality is the number of elements of a pass when it is
// known, Infinite or Unknown.
func NewStream(sampleShape, labelShape []int, cardinality int, open func(ctx context.Context) (Iterator, error)) *Stream {
	s := &Stream{sample: slices.Clone(sampleShape), label: slices.Clone(labelShape), card: cardinality, open: open}
	switch {
	case open == nil:
		s.err = errors.New("data.NewStream: no open function given")
	case cardinality < Unknown:
		s.err = fmt.Errorf("data.NewStream: cardinality %d: give a count of elements, data.Infinite or data.Unknown", cardinality)
	default:
		s.err = checkShapes("data.NewStream", sampleShape, labelShape)
	}
	return s
}

// checkShapes checks a stream's sample and label shapes.
func checkShapes(what string, sampleShape, labelShape []int) error {
	if len(sampleShape) == 0 || slices.ContainsFunc(sampleShape, func(d int) bool { return d <= 0 }) {
		return fmt.Errorf("%s: sample shape %v: give positive dimensions", what, sampleShape)
	}
	if slices.ContainsFunc(labelShape, func(d int) bool { return d <= 0 }) {
		return fmt.Errorf("%s: label shape %v: give positive dimensions", what, labelShape)
	}
	return nil
}

// FromFunc makes a Stream of samples that fn computes in order, as
// tf.data's from_generator: each pass calls fn with i = 0, 1, 2, ... to
// write sample i into x and y (zeroed, of sampleShape's and labelShape's
// sizes; neither may be kept). n is the number of samples of a pass;
// Infinite for fn to be called without end; Unknown for fn to say where a
// pass ends by returning io.EOF. Another error from fn ends the pass with
// that error, naming the sample. Within a pass fn is called from one
// goroutine at a time, perhaps not the caller's (Prefetch).
func FromFunc(n int, sampleShape, labelShape []int, fn func(i int, x, y []float32) error) *Stream {
	s := &Stream{sample: slices.Clone(sampleShape), label: slices.Clone(labelShape), card: n, rows: 1}
	switch {
	case fn == nil:
		s.err = errors.New("data.FromFunc: no function given")
	case n < Unknown:
		s.err = fmt.Errorf("data.FromFunc: %d samples: give a count, data.Infinite or data.Unknown", n)
	default:
		s.err = checkShapes("data.FromFunc", sampleShape, labelShape)
	}
	xs, ys := shapes.Size(sampleShape), shapes.Size(labelShape)
	s.open = func(context.Context) (Iterator, error) {
		return &funcIter{n: n, fn: fn, xs: xs, ys: ys}, nil
	}
	return s
}

// funcIter is a pass of FromFunc.
type funcIter struct {
	n, i, xs, ys int
	fn           func(i int, x, y []float32) error
	done         bool
}

func (f *funcIter) Next() (Batch, error) {
	if f.done || (f.n >= 0 && f.i >= f.n) {
		return Batch{}, io.EOF
	}
	b := Batch{N: 1, X: make([]float32, f.xs), Y: make([]float32, f.ys)}
	err := callSafely(func() error { return f.fn(f.i, b.X, b.Y) })
	switch {
	case err == io.EOF:
		f.done = true
		return Batch{}, io.EOF
	case err != nil:
		f.done = true
		return Batch{}, fmt.Errorf("data.FromFunc: sample %d: %w", f.i, err)
	}
	f.i++
	return b, nil
}

func (f *funcIter) Close() error { f.done = true; return nil }

// callSafely calls fn, a panic in it turned into an error: a panic on a
// goroutine reading ahead would end the program.
func callSafely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the function panicked: %v", r)
		}
	}()
	return fn()
}

// FromDataset makes a Stream of ds's samples in order, one element per
// sample (Batch then gathers a batch's samples at once, so that a Map's
// workers share them). Its parts (InputParts, LabelParts) are ds's.
func FromDataset(ds Dataset) *Stream {
	if ds == nil {
		return &Stream{err: errors.New("data.FromDataset: no dataset given")}
	}
	s := &Stream{sample: ds.SampleShape(), label: ds.LabelShape(), card: ds.Len(), rows: 1,
		inParts: inputParts(ds), labelParts: labelParts(ds)}
	s.open = func(context.Context) (Iterator, error) {
		return &datasetIter{ds: ds, xs: shapes.Size(s.sample), ys: shapes.Size(s.label)}, nil
	}
	return s
}

// datasetIter is a pass of FromDataset.
type datasetIter struct {
	ds     Dataset
	i      int
	xs, ys int
	idx    []int
}

func (d *datasetIter) Next() (Batch, error) { return d.nextN(1) }

// nextN gathers the next n samples or those left, as one element.
func (d *datasetIter) nextN(n int) (Batch, error) {
	n = min(n, d.ds.Len()-d.i)
	if n <= 0 {
		return Batch{}, io.EOF
	}
	d.idx = d.idx[:0]
	for j := range n {
		d.idx = append(d.idx, d.i+j)
	}
	b := Batch{N: n, X: make([]float32, n*d.xs), Y: make([]float32, n*d.ys)}
	if err := d.ds.GatherInputs(d.idx, b.X); err != nil {
		return Batch{}, fmt.Errorf("data.FromDataset: samples %d to %d: %w", d.i, d.i+n-1, err)
	}
	if err := d.ds.GatherLabels(d.idx, b.Y); err != nil {
		return Batch{}, fmt.Errorf("data.FromDataset: labels %d to %d: %w", d.i, d.i+n-1, err)
	}
	d.i += n
	return b, nil
}

func (d *datasetIter) Close() error { d.i = d.ds.Len(); return nil }

// SampleShape is the shape of one sample, without the batch axis.
func (s *Stream) SampleShape() []int { return slices.Clone(s.sample) }

// LabelShape is the shape of one label, without the batch axis.
func (s *Stream) LabelShape() []int { return slices.Clone(s.label) }

// InputParts and LabelParts are the parts of the samples and labels (see
// InputParter), those of the Dataset a stream was made of, nil for none.
func (s *Stream) InputParts() [][]int { return cloneShapes(s.inParts) }
func (s *Stream) LabelParts() [][]int { return cloneShapes(s.labelParts) }

// Cardinality is the number of elements of a pass, Infinite or Unknown,
// as tf.data's cardinality().
func (s *Stream) Cardinality() int {
	if s == nil || s.err != nil {
		return Unknown
	}
	return s.card
}

// Err is the first mistake made building the stream, nil if none.
func (s *Stream) Err() error {
	if s == nil {
		return errors.New("data: no stream given (a nil *Stream)")
	}
	return s.err
}

// Open starts a pass over the stream. ctx ends the goroutines of a
// Prefetch or Map within it; Close the Iterator when done with it.
func (s *Stream) Open(ctx context.Context) (Iterator, error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return s.open(ctx)
}

// derive is a stream reading s, its shapes and parts kept, or s's mistake.
func (s *Stream) derive(what string, check error) *Stream {
	if err := s.Err(); err != nil {
		return &Stream{err: err}
	}
	d := *s
	if check != nil {
		d.err = fmt.Errorf("data.Stream.%s: %w", what, check)
	}
	return &d
}

// Batch groups the samples of the stream into elements of n, as tf.data's
// batch(n, drop_remainder): the last element of a pass holds those left
// over, fewer than n, unless dropRemainder drops it. The samples are
// those of s's elements whatever their number each, so Batch on a stream
// of batches makes batches of another size.
func (s *Stream) Batch(n int, dropRemainder bool) *Stream {
	var check error
	if n < 1 {
		check = fmt.Errorf("batch size %d: give 1 or more", n)
	}
	d := s.derive("Batch", check)
	if d.err != nil {
		return d
	}
	switch {
	case s.card >= 0 && s.rows == 1 && dropRemainder:
		d.card = s.card / n
	case s.card >= 0 && s.rows == 1:
		d.card = (s.card + n - 1) / n
	case s.card == Infinite:
	default:
		d.card = Unknown
	}
	d.rows = 0
	if dropRemainder || s.card == Infinite {
		d.rows = n
	}
	xs, ys := shapes.Size(s.sample), shapes.Size(s.label)
	d.open = func(ctx context.Context) (Iterator, error) {
		src, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		return &batchIter{src: src, n: n, drop: dropRemainder, xs: xs, ys: ys}, nil
	}
	return d
}

// batchIter is a pass of Batch.
type batchIter struct {
	src    Iterator
	n      int
	drop   bool
	xs, ys int
	rest   Batch // samples read and not yet handed out
	done   bool
}

// nextNer is an Iterator that reads up to n samples at once (FromDataset).
type nextNer interface {
	nextN(n int) (Batch, error)
}

func (b *batchIter) Next() (Batch, error) {
	out := Batch{X: make([]float32, 0, b.n*b.xs), Y: make([]float32, 0, b.n*b.ys)}
	for out.N < b.n {
		if b.rest.N == 0 {
			if b.done {
				break
			}
			var e Batch
			var err error
			if nn, ok := b.src.(nextNer); ok {
				e, err = nn.nextN(b.n - out.N)
			} else {
				e, err = b.src.Next()
			}
			if err == io.EOF {
				b.done = true
				break
			}
			if err != nil {
				b.done = true
				return Batch{}, err
			}
			if out.N == 0 && e.N == b.n {
				return e, nil // a whole batch as it is
			}
			b.rest = e
		}
		k := min(b.n-out.N, b.rest.N)
		out.X = append(out.X, b.rest.X[:k*b.xs]...)
		out.Y = append(out.Y, b.rest.Y[:k*b.ys]...)
		out.N += k
		b.rest = Batch{N: b.rest.N - k, X: b.rest.X[k*b.xs:], Y: b.rest.Y[k*b.ys:]}
	}
	if out.N == 0 || (b.drop && out.N < b.n) {
		return Batch{}, io.EOF
	}
	return out, nil
}

func (b *batchIter) Close() error { b.done, b.rest = true, Batch{}; return b.src.Close() }

// Take is the first n elements of each pass of the stream, as tf.data's
// take(n).
func (s *Stream) Take(n int) *Stream {
	var check error
	if n < 0 {
		check = fmt.Errorf("%d elements: give a count of 0 or more", n)
	}
	d := s.derive("Take", check)
	if d.err != nil {
		return d
	}
	if s.card >= 0 {
		d.card = min(n, s.card)
	} else if s.card == Infinite {
		d.card = n
	}
	d.open = func(ctx context.Context) (Iterator, error) {
		src, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		return &takeIter{src: src, left: n}, nil
	}
	return d
}

// takeIter is a pass of Take.
type takeIter struct {
	src  Iterator
	left int
}

func (t *takeIter) Next() (Batch, error) {
	if t.left <= 0 {
		return Batch{}, io.EOF
	}
	b, err := t.src.Next()
	if err != nil {
		t.left = 0
		return Batch{}, err
	}
	t.left--
	return b, nil
}

func (t *takeIter) Close() error { t.left = 0; return t.src.Close() }

// Skip is each pass of the stream without its first n elements, as
// tf.data's skip(n).
func (s *Stream) Skip(n int) *Stream {
	var check error
	if n < 0 {
		check = fmt.Errorf("%d elements: give a count of 0 or more", n)
	}
	d := s.derive("Skip", check)
	if d.err != nil {
		return d
	}
	if s.card >= 0 {
		d.card = max(s.card-n, 0)
	}
	d.open = func(ctx context.Context) (Iterator, error) {
		src, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		return &skipIter{src: src, skip: n}, nil
	}
	return d
}

// skipIter is a pass of Skip.
type skipIter struct {
	src  Iterator
	skip int
}

func (k *skipIter) Next() (Batch, error) {
	for ; k.skip > 0; k.skip-- {
		if _, err := k.src.Next(); err != nil {
			k.skip = 0
			return Batch{}, err
		}
	}
	return k.src.Next()
}

func (k *skipIter) Close() error { return k.src.Close() }

// Repeat reads the stream times times over in each pass, as tf.data's
// repeat(count); times -1 repeats it without end (a stream Fit then needs
// StepsPerEpoch for). A stream with no elements stays empty.
func (s *Stream) Repeat(times int) *Stream {
	var check error
	if times < -1 {
		check = fmt.Errorf("%d times: give 0 or more, or -1 for no end", times)
	}
	d := s.derive("Repeat", check)
	if d.err != nil {
		return d
	}
	switch {
	case times == 0 || s.card == 0:
		d.card = 0
	case times == -1 || s.card == Infinite:
		d.card = Infinite
	case s.card >= 0:
		d.card = s.card * times
	}
	d.open = func(ctx context.Context) (Iterator, error) {
		return &repeatIter{ctx: ctx, s: s, left: times}, nil
	}
	return d
}

// repeatIter is a pass of Repeat.
type repeatIter struct {
	ctx  context.Context
	s    *Stream
	src  Iterator // the pass over s under way, nil between passes
	left int      // passes still to start, -1 without end
	read bool     // the pass under way has yielded an element
	done bool
}

func (r *repeatIter) Next() (Batch, error) {
	for !r.done {
		if r.src == nil {
			if r.left == 0 {
				break
			}
			if r.left > 0 {
				r.left--
			}
			src, err := r.s.open(r.ctx)
			if err != nil {
				r.done = true
				return Batch{}, err
			}
			r.src, r.read = src, false
		}
		b, err := r.src.Next()
		if err == nil {
			r.read = true
			return b, nil
		}
		cerr := r.src.Close()
		r.src = nil
		if err != io.EOF {
			r.done = true
			return Batch{}, err
		}
		if cerr != nil {
			r.done = true
			return Batch{}, cerr
		}
		if !r.read {
			break // an empty pass: repeating it yields nothing
		}
	}
	r.done = true
	return Batch{}, io.EOF
}

func (r *repeatIter) Close() error {
	r.done = true
	if r.src != nil {
		err := r.src.Close()
		r.src = nil
		return err
	}
	return nil
}

// Source is what a model's Fit and Evaluate take: a Dataset, whose
// samples are read by index (Fit shuffles and batches them), or a
// *Stream, read in order, each element a batch.
type Source interface {
	SampleShape() []int
	LabelShape() []int
}

// InputSource is what a model's Predict takes: Inputs, a Dataset or a
// *Stream (whose labels it does not read).
type InputSource interface {
	SampleShape() []int
}
