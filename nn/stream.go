package nn

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/progbar"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/metrics"
	"gorgonia.org/tensor"
)

// This file holds Fit, Evaluate and Predict on a *data.Stream: data read
// in order, each element one batch, as Keras' fit reads a tf.data dataset
// or a generator.

// Steps ends Evaluate and Predict on a stream after n batches (Keras'
// steps): needed for a stream without end, and a way to read part of any
// other. It has no effect on a data.Dataset.
func Steps(n int) Option {
	return func(c *runConfig) error {
		if n <= 0 {
			return fmt.Errorf("steps must be positive, got %d", n)
		}
		c.steps = n
		return nil
	}
}

// ValidationSteps ends the validation after each epoch after n batches of
// a validation stream (Keras' validation_steps): needed for a stream
// without end; without it the validation reads the stream to its end. It
// has no effect on a data.Dataset.
func ValidationSteps(n int) Option {
	return func(c *runConfig) error {
		if n <= 0 {
			return fmt.Errorf("validation steps must be positive, got %d", n)
		}
		c.validationSteps = n
		return nil
	}
}

var (
	// errStreamEnd is the feed's pass having ended.
	errStreamEnd = errors.New("the stream's pass has ended")
	// errRanOut is a stream running out of batches before an epoch's
	// StepsPerEpoch: training stops, as Keras' does.
	errRanOut = errors.New("the stream ran out of data")
)

// streamFeed reads a stream for the steps: it is a data.Dataset holding
// the batch last read, its samples numbered from 0, so that the steps
// gather from it as from any Dataset.
type streamFeed struct {
	s      *data.Stream
	ctx    context.Context
	it     data.Iterator // the pass under way, nil before one
	cur    data.Batch
	xs, ys int
	idx    []int
	// reopen starts a pass each epoch; else one pass serves every epoch
	// (StepsPerEpoch on a stream of another length, as in Keras).
	reopen bool
}

func newStreamFeed(ctx context.Context, s *data.Stream) *streamFeed {
	return &streamFeed{s: s, ctx: ctx, xs: shapes.Size(s.SampleShape()), ys: shapes.Size(s.LabelShape()), reopen: true}
}

// next reads the next batch and returns its samples' numbers,
// errStreamEnd at the end of the pass.
func (f *streamFeed) next() ([]int, error) {
	if f.it == nil {
		it, err := f.s.Open(f.ctx)
		if err != nil {
			return nil, fmt.Errorf("opening the stream: %w", err)
		}
		f.it = it
	}
	b, err := f.it.Next()
	if err == io.EOF {
		return nil, errStreamEnd
	}
	if err != nil {
		return nil, fmt.Errorf("reading the stream: %w", err)
	}
	if b.N <= 0 || len(b.X) != b.N*f.xs || len(b.Y) != b.N*f.ys {
		return nil, fmt.Errorf("reading the stream: an element of %d samples has %d sample values and %d label values, want %d and %d: its Iterator must give whole samples of the stream's shapes",
			b.N, len(b.X), len(b.Y), b.N*f.xs, b.N*f.ys)
	}
	f.cur = b
	f.idx = f.idx[:0]
	for i := range b.N {
		f.idx = append(f.idx, i)
	}
	return f.idx, nil
}

// startEpoch ends the pass under way when each epoch reads its own.
func (f *streamFeed) startEpoch() {
	if f.reopen {
		_ = f.close()
	}
}

func (f *streamFeed) close() error {
	if f.it == nil {
		return nil
	}
	err := f.it.Close()
	f.it = nil
	return err
}

func (f *streamFeed) Len() int            { return f.cur.N }
func (f *streamFeed) SampleShape() []int  { return f.s.SampleShape() }
func (f *streamFeed) LabelShape() []int   { return f.s.LabelShape() }
func (f *streamFeed) InputParts() [][]int { return f.s.InputParts() }
func (f *streamFeed) LabelParts() [][]int { return f.s.LabelParts() }

func (f *streamFeed) GatherInputs(idx []int, dst []float32) error {
	return gatherRows(f.cur.X, f.xs, idx, dst)
}

func (f *streamFeed) GatherLabels(idx []int, dst []float32) error {
	return gatherRows(f.cur.Y, f.ys, idx, dst)
}

// gatherRows copies the rows idx of size values each from src into dst.
func gatherRows(src []float32, size int, idx []int, dst []float32) error {
	if len(dst) != len(idx)*size {
		return fmt.Errorf("gather: destination holds %d values, want %d", len(dst), len(idx)*size)
	}
	for j, i := range idx {
		if i < 0 || (i+1)*size > len(src) {
			return fmt.Errorf("gather: sample %d is not in the batch read", i)
		}
		copy(dst[j*size:(j+1)*size], src[i*size:(i+1)*size])
	}
	return nil
}

// batch is the samples of the epoch's step-th batch: the shuffled order's
// slice, or the stream's next batch.
func (r *fitRun) batch(step int) ([]int, error) {
	if r.feed != nil {
		return r.feed.next()
	}
	lo := step * r.cfg.batchSize // below n: step < steps
	return r.order[lo : lo+min(r.cfg.batchSize, len(r.order)-lo)], nil
}

// warnRanOut says, as Keras' warning does, that training stops because
// the stream ran out of batches before the epoch's end.
func (r *fitRun) warnRanOut(epoch int) {
	fmt.Fprintf(r.cfg.out, "WARNING: the training stream ran out of data in epoch %d/%d; training stops. Make it give at least StepsPerEpoch × Epochs batches (here %d), with Repeat(-1) for instance.\n",
		epoch+1, r.cfg.epochs, r.steps*r.cfg.epochs)
}

// streamRules checks what a stream cannot be given with, for call.
func (m *Sequential) streamRules(call string, cfg runConfig, s *data.Stream) error {
	if err := s.Err(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	switch {
	case cfg.batchSizeSet:
		return fmt.Errorf("%s: BatchSize is not for a stream, whose elements are its batches, as in Keras: batch it with its Batch method instead", call)
	case m.compiled.strategy != nil:
		return fmt.Errorf("%s: a stream with a strategy is not supported yet: give each replica a data.Dataset", call)
	}
	return nil
}

// checkStream checks a stream's shapes against the model, building it if
// it is not built.
func (m *Sequential) checkStream(what string, s *data.Stream) error {
	if err := s.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return m.checkShapes(what, newStreamFeed(context.Background(), s))
}

// checkValidationStream checks Fit's validation stream, if any.
func (m *Sequential) checkValidationStream(cfg *runConfig) error {
	if cfg.valStream == nil {
		return nil
	}
	if m.compiled.strategy != nil {
		return errors.New("fit: a validation stream with a strategy is not supported yet: give a data.Dataset")
	}
	if cfg.valStream.Cardinality() == data.Infinite && cfg.validationSteps == 0 {
		return errors.New("fit: the validation stream never ends: give ValidationSteps(n) to say how many of its batches to validate on")
	}
	return m.checkStream("fit: validation data", cfg.valStream)
}

// fitStream is Fit on a stream.
func (m *Sequential) fitStream(ctx context.Context, cfg runConfig, s *data.Stream) (*History, error) {
	if err := m.streamRules("fit", cfg, s); err != nil {
		return nil, err
	}
	card := s.Cardinality()
	switch {
	case cfg.validationSplit > 0:
		return nil, errors.New("fit: ValidationSplit needs data of random access, as Keras' validation_split does: give a validation stream with ValidationData")
	case cfg.sampleWeight != nil:
		return nil, errors.New("fit: SampleWeight numbers the samples of a data.Dataset: a stream has none; weigh classes with ClassWeight")
	case card == data.Infinite && cfg.stepsPerEpoch == 0:
		return nil, errors.New("fit: the stream never ends: give StepsPerEpoch(n) to say how many of its batches make an epoch")
	case cfg.initialEpoch >= cfg.epochs:
		return nil, fmt.Errorf("fit: initial epoch %d is not before the last epoch %d", cfg.initialEpoch, cfg.epochs)
	case cfg.initialStep > 0:
		return nil, errors.New("fit: InitialStep is not supported with a stream: resume at an epoch's start (InitialEpoch)")
	}
	if err := m.checkStream("fit", s); err != nil {
		return nil, err
	}
	if err := m.checkValidationStream(&cfg); err != nil {
		return nil, err
	}
	if cfg.validation != nil {
		if err := m.checkData("fit: validation data", cfg.validation); err != nil {
			return nil, err
		}
	}
	if cfg.classWeight != nil && len(m.outShapes) > 1 {
		return nil, fmt.Errorf("fit: ClassWeight is only supported for models of one output, as in Keras; model %q has %d", m.name, len(m.outShapes))
	}
	if err := m.checkClassWeight(cfg); err != nil {
		return nil, err
	}
	feed := newStreamFeed(ctx, s)
	// As Keras: one pass serves every epoch when StepsPerEpoch is not the
	// stream's length; else each epoch reads a pass of its own.
	steps := cfg.stepsPerEpoch
	feed.reopen = steps == 0 || steps == card
	if card >= 0 && steps == 0 {
		steps = card
	}
	if !cfg.seeded && m.seeded {
		cfg.seed, cfg.seeded = m.nextFitSeed(), true
	}
	weigh, err := cfg.weigher(0, shapes.Size(s.LabelShape()), 1) // ClassWeight: of outputs (None, n) only
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	r := &fitRun{m: m, cfg: cfg, data: feed, feed: feed, validation: cfg.validation, valStream: cfg.valStream,
		steps: steps, labels: m.labelLayoutOf(feed), weigh: weigh, weighSteps: 1}
	cbs := callbackList(cfg.callbacks)
	if cfg.verbose > 0 {
		bar := newProgbarLogger(cfg, 0)
		bar.rows = func(int) int { return r.endedRows }
		cbs = append(callbackList{bar}, cbs...)
	}
	r.callbacks = cbs
	return r.run(ctx)
}

// evaluateStream runs the evaluation loop on a stream, for steps batches
// (0: to its end); bar may be nil (validation inside Fit). When stoppable
// it stops when ctx is cancelled.
func (m *Sequential) evaluateStream(ctx context.Context, s *data.Stream, steps int, bar *progbar.Progbar, stoppable bool) ([]logEntry, error) {
	c := m.compiled
	for _, mt := range c.metrics {
		mt.Reset()
	}
	feed := newStreamFeed(ctx, s)
	defer feed.close()
	var lossMean metrics.Mean
	labels := m.labelLayoutOf(feed)
	logs := make([]logEntry, 1+len(c.metrics))
	seen := 0
	for step := 1; steps == 0 || step <= steps; step++ {
		if stoppable {
			if err := c.stopNow(ctx); err != nil {
				return nil, fmt.Errorf("evaluate: stopped at batch %d: %w", step, err)
			}
		}
		idx, err := feed.next()
		if err == errStreamEnd {
			if step == 1 {
				return nil, errors.New("evaluate: the stream gave no batches")
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("evaluate: batch %d: %w", step, err)
		}
		loss, err := m.evalStep(feed, idx, labels, len(idx))
		if err != nil {
			return nil, fmt.Errorf("evaluate: batch %d (samples %d to %d): %w", step, seen, seen+len(idx)-1, err)
		}
		seen += len(idx)
		c.addToLogs(logs, &lossMean, loss, len(idx))
		if bar != nil {
			bar.Update(step, logs)
		}
	}
	return logs, nil
}

// evaluateStreamCall is Evaluate on a stream: it returns the logs and the
// batches read.
func (m *Sequential) evaluateStreamCall(ctx context.Context, cfg runConfig, s *data.Stream) (Logs, error) {
	if err := m.streamRules("evaluate", cfg, s); err != nil {
		return nil, err
	}
	if s.Cardinality() == data.Infinite && cfg.steps == 0 {
		return nil, errors.New("evaluate: the stream never ends: give Steps(n) to say how many of its batches to evaluate")
	}
	if err := m.checkStream("evaluate", s); err != nil {
		return nil, err
	}
	target := cfg.steps
	if c := s.Cardinality(); c >= 0 && (target == 0 || c < target) {
		target = c
	}
	bar := progbar.New(cfg.out, cfg.verbose, target, cfg.now)
	logs, err := m.evaluateStream(ctx, s, cfg.steps, bar, true)
	if err != nil {
		return nil, err
	}
	if err := bar.Finish(bar.Done(), logs); err != nil {
		return nil, fmt.Errorf("evaluate: writing progress: %w", err)
	}
	result := make(map[string]float64, len(logs))
	for _, l := range logs {
		result[l.Name] = l.Value
	}
	return result, nil
}

// predictStream is predictAll on a stream: the outputs of its batches, for
// Steps batches or to its end; the labels are not read.
func (m *Sequential) predictStream(ctx context.Context, cfg runConfig, s *data.Stream) ([]*tensor.Dense, error) {
	if err := m.streamRules("predict", cfg, s); err != nil {
		return nil, err
	}
	if s.Cardinality() == data.Infinite && cfg.steps == 0 {
		return nil, errors.New("predict: the stream never ends: give Steps(n) to say how many of its batches to predict")
	}
	feed := newStreamFeed(ctx, s)
	defer feed.close()
	if err := m.checkParts("predict", feed); err != nil {
		return nil, err
	}
	if !m.built {
		if err := m.Build(s.SampleShape()...); err != nil {
			return nil, fmt.Errorf("predict: %w", err)
		}
	}
	if !shapes.Equal(m.inputShape, s.SampleShape()) {
		return nil, fmt.Errorf("predict: the model takes samples of shape %s but the stream has samples of shape %s",
			shapes.String(m.inputShape), shapes.String(s.SampleShape()))
	}
	outs := make([][]float32, len(m.outShapes))
	dsts := make([][]float32, len(m.outShapes))
	n := 0
	for step := 1; cfg.steps == 0 || step <= cfg.steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("predict: stopped at batch %d: %w", step, err)
		}
		idx, err := feed.next()
		if err == errStreamEnd {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("predict: batch %d: %w", step, err)
		}
		for h, shape := range m.outShapes {
			size := len(idx) * shapes.Size(shape)
			outs[h] = append(outs[h], make([]float32, size)...)
			dsts[h] = outs[h][len(outs[h])-size:]
		}
		if err := m.predictStep(feed, idx, dsts); err != nil {
			return nil, fmt.Errorf("predict: batch %d (samples %d to %d): %w", step, n, n+len(idx)-1, err)
		}
		n += len(idx)
	}
	if n == 0 {
		return nil, errors.New("predict: the stream gave no batches")
	}
	results := make([]*tensor.Dense, len(outs))
	for h, shape := range m.outShapes {
		results[h] = tensor.New(tensor.WithShape(append([]int{n}, shape...)...), tensor.WithBacking(outs[h]))
	}
	return results, nil
}
