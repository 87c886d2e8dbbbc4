package nn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// probe is a data.Dataset that records the batches gathered from it and fails,
// or panics, on a chosen sample.
type probe struct {
	data.Dataset
	failInputs, failLabels, panicAt int // sample indices; -1: never

	mu             sync.Mutex
	inputs, labels [][]int // the indices of each call, in call order
	inFlight       atomic.Int32
}

func newProbe(d data.Dataset) *probe {
	return &probe{Dataset: d, failInputs: -1, failLabels: -1, panicAt: -1}
}

func (p *probe) note(list *[][]int, idx []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*list = append(*list, slices.Clone(idx))
}

func (p *probe) GatherInputs(idx []int, dst []float32) error {
	p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	p.note(&p.inputs, idx)
	switch {
	case slices.Contains(idx, p.panicAt):
		panic(fmt.Sprintf("no sample %d", p.panicAt))
	case slices.Contains(idx, p.failInputs):
		return fmt.Errorf("disk error at sample %d", p.failInputs)
	}
	return p.Dataset.GatherInputs(idx, dst)
}

func (p *probe) GatherLabels(idx []int, dst []float32) error {
	p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	p.note(&p.labels, idx)
	if slices.Contains(idx, p.failLabels) {
		return fmt.Errorf("no label for sample %d", p.failLabels)
	}
	return p.Dataset.GatherLabels(idx, dst)
}

// threeClasses is 70 samples of 4 features in three learnable classes,
// one-hot.
func threeClasses(t testing.TB) data.Dataset {
	t.Helper()
	rows := make([][]float32, 70)
	classes := make([]int, len(rows))
	for i := range rows {
		c := i % 3
		rows[i] = []float32{float32(c), float32(i%7) / 7, float32(2 - c), float32(i%5) / 5}
		classes[i] = c
	}
	ds, err := data.SliceData(data.Rows(rows), data.OneHot(classes, 3))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// planSpy records how Fit drives a Prefetch wrapper's plans.
type planSpy struct {
	data.BatchPlanner
	plans   int
	stopped bool // StopBatches was called after the last PlanBatches
}

func (s *planSpy) PlanBatches(order []int, size, first, steps int) {
	s.plans++
	s.stopped = false
	s.BatchPlanner.PlanBatches(order, size, first, steps)
}

func (s *planSpy) StopBatches() {
	s.stopped = true
	s.BatchPlanner.StopBatches()
}

// fitResult is all that a Fit leaves to compare.
type fitResult struct {
	hist           *History
	err            string
	panicked       any
	weights        []float32
	inputs, labels [][]int
}

// callbackFunc calls f at the end of each training batch.
type callbackFunc struct {
	CallbackBase
	f func(m *Sequential, batch int) error
}

func (c *callbackFunc) OnTrainBatchEnd(batch int, _ Logs) error { return c.f(c.Model, batch) }

// fitProbed fits a small model on a probe of threeClasses, through Prefetch
// when prefetch is set, and checks that no prefetching outlives Fit.
func fitProbed(t *testing.T, prefetch bool, setup func(*probe), opts func(cancel context.CancelFunc) []Option) fitResult {
	t.Helper()
	m := NewSequential(layers.Input(4), layers.Dense(8, layers.ReLU), layers.Dense(3, layers.Softmax))
	m.SetSeed(7)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := newProbe(threeClasses(t))
	if setup != nil {
		setup(p)
	}
	var ds data.Dataset = p
	var pf *planSpy
	if prefetch {
		pf = &planSpy{BatchPlanner: data.Prefetch(p).(data.BatchPlanner)}
		ds = pf
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res fitResult
	func() {
		defer func() { res.panicked = recover() }()
		all := append([]Option{BatchSize(16), Seed(3), Verbose(0)}, opts(cancel)...)
		hist, err := m.Fit(ctx, ds, all...)
		res.hist = hist
		if err != nil {
			res.err = err.Error()
		}
	}()
	// Package data's tests show that StopBatches leaves no prefetching
	// goroutine behind; here, Fit must call it after its last plan.
	if pf != nil && pf.plans > 0 && !pf.stopped {
		t.Errorf("Fit returned without stopping the prefetch plan (%d plans)", pf.plans)
	}
	if n := p.inFlight.Load(); n != 0 {
		t.Errorf("%d gathers still under way after Fit returned", n)
	}
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		res.weights = append(res.weights, w.Data().([]float32)...)
	}
	p.mu.Lock()
	res.inputs, res.labels = p.inputs, p.labels
	p.mu.Unlock()
	return res
}

func TestPrefetchKeepsFitsResults(t *testing.T) {
	val := threeClasses(t)
	tests := []struct {
		name string
		opts []Option
	}{
		{"shuffled, last batch partial", []Option{Epochs(2)}},
		{"not shuffled", []Option{Epochs(2), Shuffle(false)}},
		{"validation split", []Option{Epochs(2), ValidationSplit(0.3)}},
		{"validation data", []Option{Epochs(2), ValidationData(val)}},
		{"steps per epoch", []Option{Epochs(3), StepsPerEpoch(2)}},
		{"resumed mid-epoch", []Option{Epochs(3), InitialEpoch(1), InitialStep(2)}},
		{"one batch of everything", []Option{Epochs(2), BatchSize(1000)}},
		{"batches of one", []Option{BatchSize(1), StepsPerEpoch(9)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := func(context.CancelFunc) []Option { return tc.opts }
			plain := fitProbed(t, false, nil, opts)
			pre := fitProbed(t, true, nil, opts)
			if plain.err != "" || pre.err != "" {
				t.Fatalf("errors: %q without Prefetch, %q with", plain.err, pre.err)
			}
			compareFits(t, plain, pre, 0)
			if len(plain.inputs) < 2 {
				t.Fatalf("only %d batches gathered", len(plain.inputs))
			}
		})
	}
}

// compareFits checks that two Fits trained alike: the same figures, the
// same weights, the same batches in the same order (the prefetched one
// having gathered at most extra batches ahead that it did not use).
func compareFits(t *testing.T, plain, pre fitResult, extra int) {
	t.Helper()
	if fmt.Sprint(plain.hist) != fmt.Sprint(pre.hist) {
		t.Errorf("history without Prefetch %v, with %v", plain.hist, pre.hist)
	}
	if !slices.Equal(plain.weights, pre.weights) {
		t.Error("the weights differ")
	}
	for _, l := range []struct {
		what       string
		plain, pre [][]int
	}{{"inputs", plain.inputs, pre.inputs}, {"labels", plain.labels, pre.labels}} {
		n := len(l.plain)
		if len(l.pre) < n || len(l.pre) > n+extra || !slices.EqualFunc(l.plain, l.pre[:n], slices.Equal[[]int]) {
			t.Errorf("%s gathered without Prefetch %v, with %v (up to %d more allowed)", l.what, l.plain, l.pre, extra)
		}
	}
}

func TestPrefetchStopsOnEveryExit(t *testing.T) {
	// Unshuffled, batch 16: sample 40 is in the third batch (32..47).
	stopAt := func(batch int, act func(m *Sequential, cancel context.CancelFunc) error) func(context.CancelFunc) []Option {
		return func(cancel context.CancelFunc) []Option {
			cb := &callbackFunc{f: func(m *Sequential, b int) error {
				if b == batch {
					return act(m, cancel)
				}
				return nil
			}}
			return []Option{Epochs(2), Shuffle(false), Callbacks(cb)}
		}
	}
	plainOpts := func(context.CancelFunc) []Option { return []Option{Epochs(2), Shuffle(false)} }
	tests := []struct {
		name    string
		setup   func(*probe)
		opts    func(context.CancelFunc) []Option
		wantErr string
		panics  bool
	}{
		{"context cancelled", nil, stopAt(1, func(_ *Sequential, cancel context.CancelFunc) error { cancel(); return nil }),
			"fit: interrupted in epoch 1/2 after step 2/5: context canceled", false},
		{"callback error", nil, stopAt(1, func(*Sequential, context.CancelFunc) error { return errors.New("out of paper") }),
			"fit: epoch 1/2: callback *nn.callbackFunc, on_train_batch_end: out of paper", false},
		{"stop training", nil, stopAt(1, func(m *Sequential, _ context.CancelFunc) error { m.StopTraining(); return nil }), "", false},
		{"inputs fail", func(p *probe) { p.failInputs = 40 }, plainOpts,
			"fit: epoch 1/2, step 3/5: reading samples: disk error at sample 40", false},
		{"labels fail", func(p *probe) { p.failLabels = 40 }, plainOpts,
			"fit: epoch 1/2, step 3/5: reading labels: no label for sample 40", false},
		{"data panics", func(p *probe) { p.panicAt = 40 }, plainOpts, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain := fitProbed(t, false, tc.setup, tc.opts)
			pre := fitProbed(t, true, tc.setup, tc.opts)
			if plain.err != tc.wantErr || pre.err != tc.wantErr {
				t.Errorf("errors %q without Prefetch, %q with; want %q", plain.err, pre.err, tc.wantErr)
			}
			if tc.panics != (plain.panicked != nil) || plain.panicked != pre.panicked {
				t.Errorf("panics %v without Prefetch, %v with", plain.panicked, pre.panicked)
			}
			compareFits(t, plain, pre, 1)
		})
	}
}

// Evaluate through the wrapper scores as without it.
func TestPrefetchedEvaluateScoresAsTheData(t *testing.T) {
	ds := threeClasses(t)
	m := NewSequential(layers.Input(4), layers.Dense(3, layers.Softmax))
	m.SetSeed(1)
	if err := m.Compile(newTestSGD(t), losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	a, err := m.Evaluate(context.Background(), ds, Verbose(0), BatchSize(16))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Evaluate(context.Background(), data.Prefetch(ds), Verbose(0), BatchSize(16))
	if err != nil {
		t.Fatal(err)
	}
	if a["loss"] != b["loss"] {
		t.Errorf("Evaluate: loss %v, through Prefetch %v", a["loss"], b["loss"])
	}
}

// BenchmarkFitPrefetch times Fit of the CIFAR-10 MLP (the flagship) with
// and without Prefetch, at batch 32 and 256, on two kinds of data: the
// uint8 CIFAR-shaped split, whose batches are converted to float32 as they
// are gathered, and the same images kept PNG-encoded and decoded per sample
// by a FuncData, as data read from files would be. The figures to compare
// are ms/step and gather-ms/step, the time Fit waits for its batches.
func BenchmarkFitPrefetch(b *testing.B) {
	const steps = 8
	for _, batch := range []int{32, 256} {
		split := cifar10.Synthetic(steps*batch, 0, 1).Train
		sources := []struct {
			name string
			data func(b *testing.B) data.Dataset
		}{
			{"uint8", func(*testing.B) data.Dataset { return split.OneHot() }},
			{"png", func(b *testing.B) data.Dataset { return pngData(b, &split) }},
		}
		for _, src := range sources {
			for _, prefetch := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/batch=%d/prefetch=%v", src.name, batch, prefetch), func(b *testing.B) {
					m := flagship(b, false)
					defer m.Close()
					ds := src.data(b)
					if prefetch {
						ds = data.Prefetch(ds)
					}
					timed := &timedGathers{Dataset: ds}
					ds = timed
					fit := func() {
						if _, err := m.Fit(context.Background(), ds, BatchSize(batch), Seed(1), Verbose(0)); err != nil {
							b.Fatal(err)
						}
					}
					fit() // warm up: graphs, buffers, page faults
					for b.Loop() {
						fit()
					}
					b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*steps), "ms/step")
					b.ReportMetric(timed.spent.Seconds()*1e3/float64((b.N+1)*steps), "gather-ms/step")
				})
			}
		}
	}
}

// timedGathers adds up the time Fit spends in the data's Gather methods:
// what Prefetch hides, when the data is prefetched.
type timedGathers struct {
	data.Dataset
	spent time.Duration
}

func (t *timedGathers) GatherInputs(idx []int, dst []float32) error {
	defer t.add(time.Now())
	return t.Dataset.GatherInputs(idx, dst)
}

func (t *timedGathers) GatherLabels(idx []int, dst []float32) error {
	defer t.add(time.Now())
	return t.Dataset.GatherLabels(idx, dst)
}

func (t *timedGathers) add(start time.Time) { t.spent += time.Since(start) }

// PlanBatches and StopBatches pass Fit's plan on to a Prefetch.
func (t *timedGathers) PlanBatches(order []int, size, first, steps int) {
	if p, ok := t.Dataset.(data.BatchPlanner); ok {
		p.PlanBatches(order, size, first, steps)
	}
}

func (t *timedGathers) StopBatches() {
	if p, ok := t.Dataset.(data.BatchPlanner); ok {
		p.StopBatches()
	}
}

// pngData is split with each image PNG-encoded, decoded (and scaled to
// [0, 1]) each time a batch needs it, with one-hot labels.
func pngData(b *testing.B, split *cifar10.Split) data.Dataset {
	b.Helper()
	files := make([][]byte, split.Len())
	for i := range files {
		img := image.NewRGBA(image.Rect(0, 0, cifar10.Width, cifar10.Height))
		for p := range cifar10.Width * cifar10.Height {
			copy(img.Pix[4*p:4*p+3], split.Images[i*cifar10.ImageSize+3*p:])
			img.Pix[4*p+3] = 255
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
		files[i] = buf.Bytes()
	}
	ds, err := data.FuncData(len(files), []int{cifar10.Height, cifar10.Width, cifar10.Channels}, []int{cifar10.NumClasses},
		func(i int, x, y []float32) error {
			img, err := png.Decode(bytes.NewReader(files[i]))
			if err != nil {
				return err
			}
			rgba, ok := img.(*image.RGBA)
			if !ok {
				return fmt.Errorf("decoded a %T", img)
			}
			for p := range cifar10.Width * cifar10.Height {
				for c := range cifar10.Channels {
					x[3*p+c] = float32(rgba.Pix[4*p+c]) / 255
				}
			}
			y[split.Labels[i]] = 1
			return nil
		})
	if err != nil {
		b.Fatal(err)
	}
	return ds
}

// BenchmarkGatherCIFAR10 times what Prefetch takes off each step: gathering
// one batch of the data BenchmarkFitPrefetch trains on.
func BenchmarkGatherCIFAR10(b *testing.B) {
	split := cifar10.Synthetic(2048, 0, 1).Train
	for _, src := range []struct {
		name string
		data data.Dataset
	}{{"uint8", split.OneHot()}, {"png", pngData(b, &split)}} {
		for _, batch := range []int{32, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", src.name, batch), func(b *testing.B) {
				x, y := make([]float32, batch*cifar10.ImageSize), make([]float32, batch*10)
				idx := make([]int, batch)
				i := 0
				for b.Loop() {
					for j := range idx {
						idx[j] = (i*batch + j*7) % src.data.Len()
					}
					if err := src.data.GatherInputs(idx, x); err != nil {
						b.Fatal(err)
					}
					if err := src.data.GatherLabels(idx, y); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/batch")
			})
		}
	}
}
