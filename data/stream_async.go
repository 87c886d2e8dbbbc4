package data

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// This file holds the stream transformations that reorder elements or
// read ahead on goroutines: Shuffle, Prefetch and Map.

// Shuffle shuffles the elements of each pass with a buffer, as tf.data's
// shuffle(buffer, seed): it fills a buffer with the first buffer elements
// and hands out one drawn at random from it, putting the next element
// read in its place. A buffer as large as the stream shuffles it fully;
// a smaller one keeps memory bounded. Each pass is shuffled differently
// (reshuffle_each_iteration, tf.data's default), the passes' orders fixed
// by seed: the k-th pass of two streams of one seed is the same.
func (s *Stream) Shuffle(buffer int, seed uint64) *Stream {
	var check error
	if buffer < 1 {
		check = fmt.Errorf("buffer of %d elements: give 1 or more", buffer)
	}
	d := s.derive("Shuffle", check)
	if d.err != nil {
		return d
	}
	var passes atomic.Uint64
	d.open = func(ctx context.Context) (Iterator, error) {
		src, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		pass := passes.Add(1) - 1
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^pass))
		return &shuffleIter{src: src, size: buffer, rng: rng}, nil
	}
	return d
}

// shuffleIter is a pass of Shuffle.
type shuffleIter struct {
	src   Iterator
	size  int
	rng   *rand.Rand
	buf   []Batch
	ended bool // src has ended
	err   error
}

func (s *shuffleIter) Next() (Batch, error) {
	for !s.ended && len(s.buf) < s.size {
		b, err := s.src.Next()
		if err != nil {
			s.ended = true
			if err != io.EOF {
				s.err = err
			}
			break
		}
		s.buf = append(s.buf, b)
	}
	if s.err != nil {
		s.buf = nil
		return Batch{}, s.err
	}
	if len(s.buf) == 0 {
		return Batch{}, io.EOF
	}
	j := s.rng.IntN(len(s.buf))
	b := s.buf[j]
	last := len(s.buf) - 1
	s.buf[j] = s.buf[last]
	s.buf[last] = Batch{}
	s.buf = s.buf[:last]
	return b, nil
}

func (s *shuffleIter) Close() error { s.buf, s.ended = nil, true; return s.src.Close() }

// Prefetch reads up to n elements ahead on a goroutine, as tf.data's
// prefetch(n): while the model trains on one batch, the next ones are read
// (generated, decoded, batched) beside it. The elements and their order
// are the stream's. An error reading ahead, or a panic in the functions
// read, is returned by Next in the element's place; closing the Iterator,
// or cancelling the context it was opened with, stops the goroutine, after
// the element it may be reading.
func (s *Stream) Prefetch(n int) *Stream {
	var check error
	if n < 1 {
		check = fmt.Errorf("%d elements: give 1 or more", n)
	}
	d := s.derive("Prefetch", check)
	if d.err != nil {
		return d
	}
	d.open = func(ctx context.Context) (Iterator, error) {
		src, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(ctx)
		p := &prefetchIter{ctx: ctx, cancel: cancel, src: src, out: make(chan result, n), done: make(chan struct{})}
		go p.run()
		return p, nil
	}
	return d
}

// result is an element read ahead, or the error that ended the pass.
type result struct {
	b   Batch
	err error
}

// prefetchIter is a pass of Prefetch.
type prefetchIter struct {
	ctx    context.Context
	cancel context.CancelFunc
	src    Iterator
	out    chan result
	done   chan struct{} // closed when run has returned
	final  error         // the error that ended the pass, once met
	closed bool
}

// run reads ahead until the pass ends or is stopped.
func (p *prefetchIter) run() {
	defer close(p.done)
	for {
		var b Batch
		err := callSafely(func() (err error) { b, err = p.src.Next(); return err })
		select {
		case p.out <- result{b, err}:
		case <-p.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

func (p *prefetchIter) Next() (Batch, error) {
	if p.final != nil {
		return Batch{}, p.final
	}
	select {
	case r := <-p.out:
		if r.err != nil {
			p.final = r.err
		}
		return r.b, r.err
	case <-p.ctx.Done():
		p.final = p.ctx.Err()
		return Batch{}, p.final
	}
}

func (p *prefetchIter) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	p.cancel()
	<-p.done
	if p.final == nil {
		p.final = io.EOF
	}
	return p.src.Close()
}

// StreamMapFunc computes sample i of a pass of a Stream's Map (counted
// from 0 over the pass) from the sample x and its label y, writing the new
// ones into outX and outY, which are zeroed first. None of the slices may
// be kept after it returns.
type StreamMapFunc func(i int, x, y, outX, outY []float32) error

// Map applies fn to each sample of the stream, as tf.data's
// map(fn, num_parallel_calls): up to workers elements at once (0: one per
// core) are mapped on goroutines, and handed out in the stream's order,
// so the result does not depend on workers when fn computes a sample from
// i, x and y alone. sampleShape and labelShape are the new shapes; nil
// keeps s's (and its parts). An error from fn, or a panic in it, ends the
// pass with that error, naming the sample. The goroutines stop when the
// Iterator is closed or its context cancelled.
func (s *Stream) Map(sampleShape, labelShape []int, workers int, fn StreamMapFunc) *Stream {
	var check error
	switch {
	case fn == nil:
		check = fmt.Errorf("no function given")
	case workers < 0:
		check = fmt.Errorf("%d workers: give 0 (one per core) or more", workers)
	case sampleShape != nil || labelShape != nil:
		sm, lb := s.sample, s.label
		if sampleShape != nil {
			sm = sampleShape
		}
		if labelShape != nil {
			lb = labelShape
		}
		check = checkShapes("shapes", sm, lb)
	}
	d := s.derive("Map", check)
	if d.err != nil {
		return d
	}
	if sampleShape != nil {
		d.sample, d.inParts = slices.Clone(sampleShape), nil
	}
	if labelShape != nil {
		d.label, d.labelParts = slices.Clone(labelShape), nil
	}
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sizes := [4]int{shapes.Size(s.sample), shapes.Size(s.label), shapes.Size(d.sample), shapes.Size(d.label)}
	d.open = func(ctx context.Context) (Iterator, error) {
		src, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(ctx)
		m := &mapIter{ctx: ctx, cancel: cancel, src: src, queue: make(chan chan result, workers), done: make(chan struct{})}
		jobs := make(chan mapJob)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for j := range jobs {
					j.out <- mapElement(j, fn, sizes)
				}
			})
		}
		go func() {
			defer close(m.done)
			defer wg.Wait()
			defer close(jobs)
			m.dispatch(jobs)
		}()
		return m, nil
	}
	return d
}

// mapJob is an element to map: its first sample's number in the pass,
// and where its result goes.
type mapJob struct {
	b     Batch
	first int
	out   chan result
}

// mapElement maps the samples of j's element with fn; sizes are the
// values per sample and label before and after.
func mapElement(j mapJob, fn StreamMapFunc, sizes [4]int) result {
	xs, ys, ox, oy := sizes[0], sizes[1], sizes[2], sizes[3]
	n := j.b.N
	out := Batch{N: n, X: make([]float32, n*ox), Y: make([]float32, n*oy)}
	for k := range n {
		i := j.first + k
		err := callSafely(func() error {
			return fn(i, j.b.X[k*xs:(k+1)*xs], j.b.Y[k*ys:(k+1)*ys], out.X[k*ox:(k+1)*ox], out.Y[k*oy:(k+1)*oy])
		})
		if err != nil {
			return result{err: fmt.Errorf("data.Stream.Map: sample %d: %w", i, err)}
		}
	}
	return result{b: out}
}

// mapIter is a pass of Map: dispatch reads the source and hands its
// elements to the workers, and queues each element's result channel in
// the stream's order for Next.
type mapIter struct {
	ctx    context.Context
	cancel context.CancelFunc
	src    Iterator
	queue  chan chan result
	done   chan struct{} // closed when dispatch and the workers have returned
	final  error
	closed bool
}

func (m *mapIter) dispatch(jobs chan<- mapJob) {
	first := 0
	for {
		var b Batch
		err := callSafely(func() (err error) { b, err = m.src.Next(); return err })
		out := make(chan result, 1)
		if err != nil {
			out <- result{err: err}
		}
		select {
		case m.queue <- out:
		case <-m.ctx.Done():
			return
		}
		if err != nil {
			return
		}
		select {
		case jobs <- mapJob{b: b, first: first, out: out}:
		case <-m.ctx.Done():
			return
		}
		first += b.N
	}
}

func (m *mapIter) Next() (Batch, error) {
	if m.final != nil {
		return Batch{}, m.final
	}
	var r result
	select {
	case out := <-m.queue:
		select {
		case r = <-out:
		case <-m.ctx.Done():
			r.err = m.ctx.Err()
		}
	case <-m.ctx.Done():
		r.err = m.ctx.Err()
	}
	if r.err != nil {
		m.final = r.err
	}
	return r.b, r.err
}

func (m *mapIter) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	m.cancel()
	<-m.done
	if m.final == nil {
		m.final = io.EOF
	}
	return m.src.Close()
}
