package nn_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/leaktest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
)

// streamModel is a small classifier of blobs' 8 features, compiled on the
// CPU with its weights fixed by seed, warmed up so that the goroutines of
// the machine it runs on are running.
func streamModel(t testing.TB) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Dense(12, layers.ReLU), layers.Dense(10, layers.Softmax))
	m.SetSeed(3)
	if err := m.Compile(newSGD(t, 0.05), losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	if err := m.Build(8); err != nil {
		t.Fatal(err)
	}
	return m
}

// blobStream is an endless stream of blobs' samples in turn (sample i is
// blobs' sample i mod n); calls counts the samples generated. fail, when
// not nil, is called first for each sample.
func blobStream(t testing.TB, n int, calls *atomic.Int64, fail func(i int) error) *data.Stream {
	t.Helper()
	ds := blobs(t, n, 8, 5, true)
	return data.FromFunc(data.Infinite, []int{8}, []int{10}, func(i int, x, y []float32) error {
		calls.Add(1)
		if fail != nil {
			if err := fail(i); err != nil {
				return err
			}
		}
		if err := ds.GatherInputs([]int{i % n}, x); err != nil {
			return err
		}
		return ds.GatherLabels([]int{i % n}, y)
	})
}

// A stream of a dataset's samples, batched, trains, evaluates and predicts
// exactly as the dataset does unshuffled at that batch size.
func TestFitOnAStreamIsFitOnItsDataset(t *testing.T) {
	ds := blobs(t, 100, 8, 5, true)
	a, b := streamModel(t), streamModel(t)
	val := blobs(t, 40, 8, 6, true)
	weights := map[int]float64{0: 1, 1: 2, 2: 0.5, 3: 1, 4: 1, 5: 3, 6: 1, 7: 1, 8: 0.25, 9: 1}
	ha, err := a.Fit(context.Background(), ds, nn.Epochs(3), nn.BatchSize(16), nn.Shuffle(false), nn.Verbose(0),
		nn.ValidationData(val), nn.ClassWeight(weights))
	if err != nil {
		t.Fatal(err)
	}
	s := data.FromDataset(ds).Batch(16, false).Prefetch(2)
	hb, err := b.Fit(context.Background(), s, nn.Epochs(3), nn.Verbose(0),
		nn.ValidationData(data.FromDataset(val).Batch(16, false)), nn.ClassWeight(weights))
	if err != nil {
		t.Fatal(err)
	}
	if len(ha.Get("val_loss")) != 3 {
		t.Fatalf("history %v", ha.Keys)
	}
	for _, key := range []string{"loss", "accuracy", "val_loss", "val_accuracy"} {
		if !slices.Equal(ha.Get(key), hb.Get(key)) {
			t.Errorf("%s: dataset %v, stream %v", key, ha.Get(key), hb.Get(key))
		}
	}
	wa, err := a.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i := range wa {
		if !slices.Equal(wa[i].Data().([]float32), wb[i].Data().([]float32)) {
			t.Errorf("weights %d differ", i)
		}
	}
	ea, err := a.Evaluate(context.Background(), ds, nn.BatchSize(16), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Evaluate(context.Background(), s, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if ea["loss"] != eb["loss"] || ea["accuracy"] != eb["accuracy"] {
		t.Errorf("evaluate: dataset %v, stream %v", ea, eb)
	}
	pa, err := a.PredictTensor(context.Background(), ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.PredictTensor(context.Background(), s, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pa.Shape(), pb.Shape()) || !slices.Equal(pa.Data().([]float32), pb.Data().([]float32)) {
		t.Errorf("predict: dataset %v, stream %v", pa.Shape(), pb.Shape())
	}
	if part, err := b.Predict(context.Background(), s, nn.Steps(2)); err != nil || part.Len() != 32 {
		t.Errorf("Predict with Steps(2) of batches of 16: %v rows, %v", part, err)
	}
}

// batchCounter counts each epoch's batches.
type batchCounter struct {
	nn.CallbackBase
	steps  []int
	params nn.Params
}

func (c *batchCounter) SetParams(p nn.Params)              { c.params = p }
func (c *batchCounter) OnEpochBegin(int, nn.Logs) error    { c.steps = append(c.steps, 0); return nil }
func (c *batchCounter) OnTrainBatchEnd(int, nn.Logs) error { c.steps[len(c.steps)-1]++; return nil }
func (c *batchCounter) AsyncBatchHooks() bool              { return true }

// A finite stream without StepsPerEpoch ends each epoch when a pass ends,
// as Keras' fit does; the first epoch's progress line cannot know the
// steps before, and takes the count once the pass has ended.
func TestFitOnAFiniteStream(t *testing.T) {
	var calls atomic.Int64
	gen := blobStream(t, 50, &calls, nil).Take(45) // cardinality 45: known
	unknown := data.FromFunc(data.Unknown, []int{8}, []int{10}, func(i int, x, y []float32) error {
		if i == 45 {
			return io.EOF
		}
		x[i%8], y[i%10] = 1, 1
		return nil
	})
	for _, tc := range []struct {
		name  string
		s     *data.Stream
		steps int // Params.Steps
	}{
		{"known length", gen.Batch(10, false), 5},
		{"unknown length", unknown.Batch(10, false), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := streamModel(t)
			c := &batchCounter{}
			var out bytes.Buffer
			h, err := m.Fit(context.Background(), tc.s, nn.Epochs(3), nn.Callbacks(c), nn.Output(&out), nn.Verbose(2))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.steps, []int{5, 5, 5}) || len(h.Get("loss")) != 3 {
				t.Errorf("epochs of %v steps, %d losses; want 3 epochs of 5", c.steps, len(h.Get("loss")))
			}
			if c.params.Steps != tc.steps {
				t.Errorf("Params.Steps %d, want %d", c.params.Steps, tc.steps)
			}
			if got := strings.Count(out.String(), "5/5 - "); got != 3 {
				t.Errorf("want three epoch lines of 5/5:\n%s", out.String())
			}
		})
	}
}

// An endless stream needs StepsPerEpoch, said before any sample is read;
// with it the epochs read on through one pass, as Keras' fit does.
func TestFitOnAnEndlessStream(t *testing.T) {
	var calls atomic.Int64
	s := blobStream(t, 50, &calls, nil).Batch(10, false)
	m := streamModel(t)
	_, err := m.Fit(context.Background(), s, nn.Epochs(2), nn.Verbose(0))
	if err == nil || !strings.Contains(err.Error(), "the stream never ends: give StepsPerEpoch(n)") {
		t.Errorf("error %v, want one naming StepsPerEpoch", err)
	}
	if calls.Load() != 0 {
		t.Errorf("%d samples read before the error", calls.Load())
	}
	c := &batchCounter{}
	h, err := m.Fit(context.Background(), s, nn.Epochs(3), nn.StepsPerEpoch(4), nn.Verbose(0), nn.Callbacks(c),
		nn.ValidationData(blobStream(t, 50, new(atomic.Int64), nil).Batch(25, false)), nn.ValidationSteps(2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.steps, []int{4, 4, 4}) || len(h.Get("val_loss")) != 3 {
		t.Errorf("epochs of %v steps and %d validations", c.steps, len(h.Get("val_loss")))
	}
	if calls.Load() != 120 {
		t.Errorf("three epochs of 4 batches of 10 read %d samples, want 120: one pass across the epochs", calls.Load())
	}
	// The validation on 2 batches of 25 is an Evaluate on them.
	ev, err := m.Evaluate(context.Background(), blobs(t, 50, 8, 5, true), nn.BatchSize(25), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("val_loss")[2]; got != ev["loss"] {
		t.Errorf("val_loss %v, Evaluate's loss %v", got, ev["loss"])
	}
	if _, err := m.Fit(context.Background(), s, nn.StepsPerEpoch(2), nn.Verbose(0),
		nn.ValidationData(blobStream(t, 50, new(atomic.Int64), nil))); err == nil || !strings.Contains(err.Error(), "give ValidationSteps(n)") {
		t.Errorf("an endless validation stream: %v", err)
	}
	if _, err := m.Evaluate(context.Background(), s, nn.Verbose(0)); err == nil || !strings.Contains(err.Error(), "give Steps(n)") {
		t.Errorf("Evaluate of an endless stream: %v", err)
	}
	if _, err := m.Evaluate(context.Background(), s, nn.Steps(3), nn.Verbose(0)); err != nil {
		t.Error(err)
	}
}

// A finite stream that runs out before StepsPerEpoch × Epochs batches
// stops training with Keras' warning, keeping the epochs done.
func TestFitStreamRunsOut(t *testing.T) {
	var calls atomic.Int64
	s := blobStream(t, 50, &calls, nil).Take(70).Batch(10, false) // 7 batches
	var out bytes.Buffer
	c := &batchCounter{}
	h, err := streamModel(t).Fit(context.Background(), s, nn.Epochs(4), nn.StepsPerEpoch(3), nn.Output(&out), nn.Verbose(2), nn.Callbacks(c))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.steps, []int{3, 3, 1}) || len(h.Get("loss")) != 3 {
		t.Errorf("epochs of %v steps, %d in the history; want 3, 3, 1", c.steps, len(h.Get("loss")))
	}
	if !strings.Contains(out.String(), "WARNING: the training stream ran out of data in epoch 3/4") {
		t.Errorf("no warning:\n%s", out.String())
	}
}

func TestFitStreamRefusals(t *testing.T) {
	m := streamModel(t)
	s := blobStream(t, 50, new(atomic.Int64), nil).Take(40).Batch(10, false)
	for _, tc := range []struct {
		name string
		src  data.Source
		opts []nn.Option
		want string
	}{
		{"batch size", s, []nn.Option{nn.BatchSize(8)}, "BatchSize is not for a stream"},
		{"validation split", s, []nn.Option{nn.ValidationSplit(0.2)}, "ValidationSplit needs data of random access"},
		{"sample weights", s, []nn.Option{nn.SampleWeight(make([]float32, 40))}, "SampleWeight numbers the samples"},
		{"bad stream", s.Shuffle(0, 1), nil, "data.Stream.Shuffle: buffer of 0 elements"},
		{"wrong shape", data.FromFunc(3, []int{7}, []int{10}, func(int, []float32, []float32) error { return nil }), nil, "the model takes samples of shape (None, 8) but the data has samples of shape (None, 7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Fit(context.Background(), tc.src, append(tc.opts, nn.Verbose(0))...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// An error in the generator, on a goroutine of Map or Prefetch, stops Fit
// with that error, saying where; no goroutine is left running.
func TestFitStreamErrorStopsFit(t *testing.T) {
	boom := errors.New("the disk is gone")
	m := streamModel(t)
	for _, tc := range []struct {
		name string
		make func(*data.Stream) *data.Stream
		want string
	}{
		{"generator", func(s *data.Stream) *data.Stream { return s.Batch(10, false) }, "data.FromFunc: sample 37: the disk is gone"},
		{"prefetched", func(s *data.Stream) *data.Stream { return s.Batch(10, false).Prefetch(2) }, "data.FromFunc: sample 37: the disk is gone"},
		{"mapped and prefetched", func(s *data.Stream) *data.Stream {
			return s.Map(nil, nil, 3, func(i int, x, y, ox, oy []float32) error {
				copy(ox, x)
				copy(oy, y)
				return nil
			}).Shuffle(5, 1).Batch(10, false).Prefetch(3)
		}, "data.FromFunc: sample 37: the disk is gone"},
		{"map error", func(s *data.Stream) *data.Stream {
			return s.Map(nil, nil, 3, func(i int, x, y, ox, oy []float32) error {
				if i == 41 {
					panic("index out of range")
				}
				return nil
			}).Batch(10, false).Prefetch(3)
		}, "data.Stream.Map: sample 41: the function panicked: index out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			s := tc.make(blobStream(t, 50, new(atomic.Int64), func(i int) error {
				if i == 37 && tc.name != "map error" {
					return boom
				}
				return nil
			}))
			_, err := m.Fit(context.Background(), s, nn.Epochs(2), nn.StepsPerEpoch(10), nn.Verbose(0))
			if err == nil || !strings.Contains(err.Error(), "fit: epoch 1/2, step ") || !strings.Contains(err.Error(), "reading the stream: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming the epoch, the step and %q", err, tc.want)
			}
			if tc.name != "map error" && !errors.Is(err, boom) {
				t.Errorf("error %v does not wrap the generator's", err)
			}
			leaktest.Check(t, before)
		})
	}
}

// Cancelling Fit's context mid-epoch stops it with an InterruptedError and
// stops the stream's goroutines, also while Fit waits on a slow stream.
func TestFitStreamCancelled(t *testing.T) {
	m := streamModel(t)
	t.Run("between steps", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := blobStream(t, 50, new(atomic.Int64), nil).Map(nil, nil, 2, func(i int, x, y, ox, oy []float32) error {
			copy(ox, x)
			copy(oy, y)
			return nil
		}).Batch(10, false).Prefetch(4)
		_, err := m.Fit(ctx, s, nn.Epochs(2), nn.StepsPerEpoch(20), nn.Verbose(0), nn.Callbacks(&cancelAt{epoch: 0, batch: 4, cancel: cancel}))
		var ie *nn.InterruptedError
		if !errors.As(err, &ie) || ie.Epoch != 0 || ie.Step != 5 || !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want an interruption after step 5 of epoch 1", err)
		}
		leaktest.Check(t, before)
	})
	t.Run("waiting for data", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := blobStream(t, 50, new(atomic.Int64), func(i int) error {
			if i == 25 {
				// Fit waits on the prefetcher for this batch when the
				// context is cancelled, and gives up waiting.
				time.Sleep(20 * time.Millisecond)
				cancel()
				time.Sleep(50 * time.Millisecond)
			}
			return nil
		}).Batch(10, false).Prefetch(1)
		_, err := m.Fit(ctx, s, nn.Epochs(2), nn.StepsPerEpoch(20), nn.Verbose(0))
		var ie *nn.InterruptedError
		if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want an interruption", err)
		}
		leaktest.Check(t, before)
	})
}
