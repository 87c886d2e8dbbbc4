package data

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gokeras/gokeras/internal/formats/shapes"
)

// Prefetch wraps data so that Fit gathers each training batch on another
// goroutine while the step before it runs, as tf.data's prefetch(1) does:
// the time a batch takes to gather (converting uint8 pixels, reading a
// FuncData) overlaps the step instead of adding to it. Fit's results do
// not change: it trains on the same batches in the same order, and returns
// the same errors. A prefetched batch costs one extra copy into Fit's
// buffers, so only data that is slow to gather gains.
//
// Fit tells the wrapper each epoch's batches before the epoch's first step,
// and stops its goroutine before it returns, however it returns
// (cancellation, an error, a panic in the data, a callback stopping
// training); it waits for a gather under way to finish. Evaluate, Predict
// and the validation after each epoch gather through the wrapper as they
// would without it.
//
// The wrapped data's GatherInputs and GatherLabels are called from the
// prefetching goroutine, one batch ahead of Fit and never concurrently;
// when Fit stops early, the batch gathered ahead goes unused. A panic in
// them reaches Fit's caller when Fit asks for that batch. Len,
// SampleShape, LabelShape, InputParts and LabelParts (the last two the
// wrapped data's parts, nil when it has none) may be called while a batch
// is being gathered. The wrapper holds two batches of its own while Fit
// runs. It serves one Fit at a time: two at once through one wrapper still
// get the right batches, but mostly gathered without prefetching.
func Prefetch(data Dataset) Dataset {
	if data == nil {
		return nil
	}
	return &prefetched{Dataset: data}
}

// BatchPlanner is a Dataset that wants to know which batches Fit is about
// to gather, so that it can gather them ahead: Prefetch's wrapper and a
// Subset of it are BatchPlanners. Fit calls PlanBatches before each
// epoch's first step and StopBatches before it returns.
type BatchPlanner interface {
	Dataset
	// PlanBatches says that Fit will gather, in this order, the batches
	// order[s·size : min((s+1)·size, len(order))] for s = first, ...,
	// steps-1, and then perhaps others. It replaces a plan still running.
	PlanBatches(order []int, size, first, steps int)
	// StopBatches ends the plan, if any: Fit is returning. When it
	// returns, nothing gathers for the plan any more.
	StopBatches()
}

// InputParts and LabelParts are the parts of the wrapped data.
func (p *prefetched) InputParts() [][]int { return inputParts(p.Dataset) }
func (p *prefetched) LabelParts() [][]int { return labelParts(p.Dataset) }

// PlanBatches forwards the plan of a Subset (a ValidationSplit's training part) to the
// data it is part of, in that data's indices.
func (s *subset) PlanBatches(order []int, size, first, steps int) {
	inner, ok := s.Dataset.(BatchPlanner)
	if !ok {
		return
	}
	mapped := make([]int, len(order))
	for i, o := range order {
		if o < 0 || o >= len(s.indices) {
			return // not a plan of this subset: gather without one
		}
		mapped[i] = s.indices[o]
	}
	inner.PlanBatches(mapped, size, first, steps)
}

func (s *subset) StopBatches() {
	if inner, ok := s.Dataset.(BatchPlanner); ok {
		inner.StopBatches()
	}
}

// prefetched is the Dataset Prefetch returns.
type prefetched struct {
	Dataset
	mu   sync.Mutex
	run  *prefetchRun      // the plan running, nil when none
	bufs [2]*prefetchBatch // the buffers, reused from plan to plan
	live atomic.Int32      // prefetching goroutines not yet ended
}

// prefetchRun is one plan: the batches and the goroutine gathering them.
type prefetchRun struct {
	batches [][]int             // the planned batches, in order
	next    int                 // how many of them Fit has taken
	xSize   int                 // values per sample
	held    *prefetchBatch      // taken by GatherInputs; its labels are next
	ready   chan *prefetchBatch // gathered batches, in order
	free    chan *prefetchBatch // buffers to gather into
	stop    chan struct{}       // closed to end the goroutine
	done    chan struct{}       // closed when the goroutine has ended
}

// prefetchBatch is one batch gathered ahead, with what gathering it gave.
type prefetchBatch struct {
	idx        []int
	x, y       []float32
	errX, errY error
	panicked   bool
	panicValue any
}

func (p *prefetched) PlanBatches(order []int, size, first, steps int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
	if size <= 0 || first < 0 {
		return
	}
	lo, hi := min(first*size, len(order)), min(steps*size, len(order))
	if lo >= hi {
		return
	}
	flat := slices.Clone(order[lo:hi])
	var batches [][]int
	for len(flat) > 0 {
		n := min(size, len(flat))
		batches = append(batches, flat[:n:n])
		flat = flat[n:]
	}
	xSize, ySize := shapes.Size(p.SampleShape()), shapes.Size(p.LabelShape())
	r := &prefetchRun{
		batches: batches,
		xSize:   xSize,
		ready:   make(chan *prefetchBatch),
		free:    make(chan *prefetchBatch, len(p.bufs)),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	for i, b := range p.bufs {
		if b == nil || cap(b.x) < size*xSize || cap(b.y) < size*ySize {
			b = &prefetchBatch{x: make([]float32, size*xSize), y: make([]float32, size*ySize)}
			p.bufs[i] = b
		}
		r.free <- b
	}
	p.run = r
	p.live.Add(1)
	go r.gather(p.Dataset, xSize, ySize, &p.live)
}

// gather is the prefetching goroutine: it gathers the planned batches one
// after another, each as soon as a buffer is free, until the plan ends or
// is stopped.
func (r *prefetchRun) gather(data Dataset, xSize, ySize int, live *atomic.Int32) {
	defer close(r.done)
	defer live.Add(-1)
	for _, idx := range r.batches {
		var b *prefetchBatch
		select {
		case b = <-r.free:
		case <-r.stop:
			return
		}
		b.fill(data, idx, xSize, ySize)
		select {
		case r.ready <- b:
		case <-r.stop:
			return
		}
	}
}

// fill gathers the batch at idx into b, keeping the errors and any panic
// for Fit to meet when it asks for the batch.
func (b *prefetchBatch) fill(data Dataset, idx []int, xSize, ySize int) {
	b.idx, b.x, b.y = idx, b.x[:len(idx)*xSize], b.y[:len(idx)*ySize]
	b.errX, b.errY, b.panicked, b.panicValue = nil, nil, false, nil
	defer func() {
		if v := recover(); v != nil {
			b.panicked, b.panicValue = true, v
		}
	}()
	if b.errX = data.GatherInputs(idx, b.x); b.errX != nil {
		return
	}
	b.errY = data.GatherLabels(idx, b.y)
}

func (p *prefetched) StopBatches() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
	p.bufs = [2]*prefetchBatch{} // Fit is done: let the buffers go
}

// stopLocked ends the running plan and waits for its goroutine to end.
func (p *prefetched) stopLocked() {
	r := p.run
	if r == nil {
		return
	}
	close(r.stop)
	<-r.done
	p.run = nil
}

// GatherInputs hands over the batch gathered ahead when indices are the
// plan's next batch; otherwise it ends the plan and gathers as the wrapped
// data does.
func (p *prefetched) GatherInputs(indices []int, dst []float32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.run; r != nil {
		r.release()
		if r.next < len(r.batches) && slices.Equal(indices, r.batches[r.next]) && len(dst) == len(indices)*r.xSize {
			select {
			case b := <-r.ready:
				r.next++
				switch {
				case b.panicked:
					r.free <- b
					p.stopLocked()
					panic(b.panicValue)
				case b.errX != nil:
					r.free <- b
					return b.errX
				}
				copy(dst, b.x)
				r.held = b
				return nil
			case <-r.done:
				// The goroutine ended without the batch: the data called
				// runtime.Goexit. Gather here, where it will do so again.
			}
		}
		p.stopLocked()
	}
	return p.Dataset.GatherInputs(indices, dst)
}

// GatherLabels hands over the labels of the batch GatherInputs just handed
// over when indices are that batch's; otherwise it ends the plan and
// gathers as the wrapped data does.
func (p *prefetched) GatherLabels(indices []int, dst []float32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.run; r != nil {
		if b := r.held; b != nil && slices.Equal(indices, b.idx) && len(dst) == len(b.y) {
			err := b.errY
			if err == nil {
				copy(dst, b.y)
			}
			r.release()
			return err
		}
		p.stopLocked()
	}
	return p.Dataset.GatherLabels(indices, dst)
}

// release gives the buffer GatherInputs handed over back to the goroutine.
func (r *prefetchRun) release() {
	if r.held != nil {
		r.free <- r.held // never blocks: free holds every buffer
		r.held = nil
	}
}
