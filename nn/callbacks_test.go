package nn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
)

// recorder writes down every hook it sees.
type recorder struct {
	nn.CallbackBase
	events []string
	failAt string // event at which it returns an error
}

func (r *recorder) note(event string, logs nn.Logs) error {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range logs {
			if !yield(k) {
				return
			}
		}
	})
	r.events = append(r.events, event+" "+strings.Join(keys, ","))
	if event == r.failAt {
		return errors.New("callback failure")
	}
	return nil
}

func (r *recorder) OnTrainBegin(l nn.Logs) error { return r.note("train_begin", l) }
func (r *recorder) OnTrainEnd(l nn.Logs) error   { return r.note("train_end", l) }
func (r *recorder) OnEpochBegin(e int, l nn.Logs) error {
	return r.note(fmt.Sprintf("epoch_begin %d", e), l)
}
func (r *recorder) OnEpochEnd(e int, l nn.Logs) error {
	return r.note(fmt.Sprintf("epoch_end %d", e), l)
}
func (r *recorder) OnTrainBatchBegin(b int, l nn.Logs) error {
	return r.note(fmt.Sprintf("batch_begin %d", b), l)
}
func (r *recorder) OnTrainBatchEnd(b int, l nn.Logs) error {
	return r.note(fmt.Sprintf("batch_end %d", b), l)
}

// tinyModel is a 10-class softmax regression on 4 features, with accuracy.
func tinyModel(t *testing.T, lr float64) *nn.Sequential {
	t.Helper()
	m := nn.NewSequential(layers.Input(4), layers.Dense(10, layers.Softmax))
	m.SetSeed(1)
	if err := m.Compile(newSGD(t, lr), losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCallbackHooksInKerasOrder(t *testing.T) {
	m := tinyModel(t, 0.1)
	rec := &recorder{}
	data := blobs(t, 70, 4, 1, true) // 3 steps at batch 32
	if _, err := m.Fit(context.Background(), data, nn.Epochs(2), nn.Verbose(0), nn.Seed(1),
		nn.ValidationData(blobs(t, 20, 4, 2, true)), nn.Callbacks(rec)); err != nil {
		t.Fatal(err)
	}
	var want []string
	want = append(want, "train_begin ")
	for e := range 2 {
		want = append(want, fmt.Sprintf("epoch_begin %d ", e))
		for b := range 3 {
			want = append(want, fmt.Sprintf("batch_begin %d ", b), fmt.Sprintf("batch_end %d accuracy,loss", b))
		}
		want = append(want, fmt.Sprintf("epoch_end %d accuracy,loss,val_accuracy,val_loss", e))
	}
	want = append(want, "train_end accuracy,loss,val_accuracy,val_loss")
	if !slices.Equal(rec.events, want) {
		t.Errorf("hooks:\n%s\nwant:\n%s", strings.Join(rec.events, "\n"), strings.Join(want, "\n"))
	}
	if rec.Model != m || rec.Params.Epochs != 2 || rec.Params.Steps != 3 || rec.Params.Verbose != 0 {
		t.Errorf("model %p (want %p), params %+v", rec.Model, m, rec.Params)
	}
}

func TestStopTrainingEndsAfterTheBatch(t *testing.T) {
	m := tinyModel(t, 0.1)
	rec := &recorder{}
	var out bytes.Buffer
	stopper := &batchStopper{at: 1}
	hist, err := m.Fit(context.Background(), blobs(t, 70, 4, 1, true), nn.Epochs(3), nn.Seed(1), nn.Output(&out),
		nn.Callbacks(stopper, rec))
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Epochs) != 1 {
		t.Errorf("history has epochs %v, want only epoch 0", hist.Epochs)
	}
	if !strings.Contains(out.String(), "2/3 [===================>..........]") {
		t.Errorf("the progress line should end at step 2 of 3:\n%s", out.String())
	}
	last := rec.events[len(rec.events)-2:]
	if !strings.HasPrefix(last[0], "epoch_end 0") || !strings.HasPrefix(last[1], "train_end") {
		t.Errorf("after stopping, want epoch_end 0 and train_end, got %v", last)
	}
	// A new Fit starts afresh.
	hist, err = m.Fit(context.Background(), blobs(t, 70, 4, 1, true), nn.Epochs(2), nn.Verbose(0))
	if err != nil || len(hist.Epochs) != 2 {
		t.Errorf("the next Fit ran epochs %v, %v; want 2 epochs", hist.Epochs, err)
	}
}

type batchStopper struct {
	nn.CallbackBase
	at int
}

func (s *batchStopper) OnTrainBatchEnd(b int, _ nn.Logs) error {
	if b == s.at {
		s.Model.StopTraining()
	}
	return nil
}

func TestCallbackErrorStopsFit(t *testing.T) {
	m := tinyModel(t, 0.1)
	rec := &recorder{failAt: "epoch_begin 1"}
	hist, err := m.Fit(context.Background(), blobs(t, 40, 4, 1, true), nn.Epochs(3), nn.Verbose(0), nn.Callbacks(rec))
	if err == nil || !strings.Contains(err.Error(), "callback failure") || !strings.Contains(err.Error(), "on_epoch_begin") {
		t.Fatalf("error %v, want the callback's, naming the hook", err)
	}
	if len(hist.Epochs) != 1 {
		t.Errorf("history %v, want epoch 0 only", hist.Epochs)
	}
}
