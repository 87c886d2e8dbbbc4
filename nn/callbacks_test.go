package nn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
	if err := m.Compile(newSGD(t, lr), losses.CategoricalCrossentropy{}, []metrics.Metric{metrics.NewAccuracy()}, nn.OnDevice("/CPU:0")); err != nil {
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

// earlyStoppingRun feeds an EarlyStopping one monitored value per epoch and
// returns the epoch it stopped at (-1 if it did not).
func earlyStoppingRun(t *testing.T, es *nn.EarlyStopping, values []float64) int {
	t.Helper()
	m := tinyModel(t, 0.1)
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	es.SetModel(m)
	var out bytes.Buffer
	es.SetParams(nn.Params{Output: &out})
	if err := es.OnTrainBegin(nn.Logs{}); err != nil {
		t.Fatal(err)
	}
	for epoch, v := range values {
		if err := es.OnEpochEnd(epoch, nn.Logs{es.Monitor: v}); err != nil {
			t.Fatal(err)
		}
		if es.StoppedEpoch() > 0 {
			return epoch
		}
	}
	return -1
}

func TestEarlyStoppingRule(t *testing.T) {
	tests := []struct {
		name   string
		set    func(*nn.EarlyStopping)
		values []float64
		want   int
	}{
		// Patience 0: the first epoch without improvement stops (never epoch 0).
		{"defaults", func(*nn.EarlyStopping) {}, []float64{1, 0.9, 0.8, 0.85, 0.7}, 3},
		{"improving never stops", func(*nn.EarlyStopping) {}, []float64{1, 0.9, 0.8, 0.7}, -1},
		{"epoch 0 never stops", func(*nn.EarlyStopping) {}, []float64{1, 1}, 1},
		// Patience 2: two epochs in a row without improvement.
		{"patience", func(e *nn.EarlyStopping) { e.Patience = 2 }, []float64{1, 1.1, 0.9, 1.0, 0.95, 0.8}, 4},
		// 0.95 improves 1 by less than min_delta 0.1: not an improvement.
		{"min delta", func(e *nn.EarlyStopping) { e.MinDelta = 0.1; e.Patience = 1 }, []float64{1, 0.95, 0.8}, 1},
		{"negative min delta counts as positive", func(e *nn.EarlyStopping) { e.MinDelta = -0.1; e.Patience = 1 }, []float64{1, 0.95, 0.8}, 1},
		// Accuracy is maximised in auto mode.
		{"auto max", func(e *nn.EarlyStopping) { e.Monitor = "val_accuracy"; e.Patience = 1 }, []float64{0.5, 0.6, 0.55, 0.7}, 2},
		{"mode max on a loss name", func(e *nn.EarlyStopping) { e.Mode = "max" }, []float64{1, 0.5}, 1},
		// Improvements that do not beat the baseline 0.5 do not reset the wait.
		{"baseline", func(e *nn.EarlyStopping) { e.Baseline = 0.5; e.Patience = 2 }, []float64{1, 0.9, 1.2, 0.4}, 2},
		{"start from epoch", func(e *nn.EarlyStopping) { e.StartFromEpoch = 2 }, []float64{1, 2, 3, 4}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es := nn.NewEarlyStopping()
			tc.set(es)
			if got := earlyStoppingRun(t, es, tc.values); got != tc.want {
				t.Errorf("stopped at epoch %d, want %d", got, tc.want)
			}
		})
	}
}

func TestEarlyStoppingRestoresBestWeights(t *testing.T) {
	m := tinyModel(t, 0.1)
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	es := nn.NewEarlyStopping()
	es.Patience, es.RestoreBestWeights, es.Verbose = 1, true, 1
	var out bytes.Buffer
	es.SetModel(m)
	es.SetParams(nn.Params{Output: &out})
	if err := es.OnTrainBegin(nn.Logs{}); err != nil {
		t.Fatal(err)
	}
	ws, _ := m.GetWeights()
	// Epoch e's weights are all e; val_loss is best (0.5) at epoch 1.
	for e, loss := range []float64{1, 0.5, 0.7, 0.9} {
		for _, w := range ws {
			for i := range w.Data().([]float32) {
				w.Data().([]float32)[i] = float32(e)
			}
		}
		if err := m.SetWeights(ws); err != nil {
			t.Fatal(err)
		}
		if err := es.OnEpochEnd(e, nn.Logs{"val_loss": loss}); err != nil {
			t.Fatal(err)
		}
		if es.StoppedEpoch() > 0 {
			break // Fit would stop here
		}
	}
	if es.StoppedEpoch() != 2 || es.BestEpoch() != 1 {
		t.Errorf("stopped at %d with best %d, want 2 and 1", es.StoppedEpoch(), es.BestEpoch())
	}
	if err := es.OnTrainEnd(nn.Logs{}); err != nil {
		t.Fatal(err)
	}
	got, _ := m.GetWeights()
	if v := got[0].Data().([]float32)[0]; v != 1 {
		t.Errorf("weights after stopping are epoch %v's, want epoch 1's", v)
	}
	want := "Restoring model weights from the end of the best epoch: 2.\nEpoch 3: early stopping\n"
	if out.String() != want {
		t.Errorf("messages %q, want %q", out.String(), want)
	}
}

func TestEarlyStoppingInFit(t *testing.T) {
	m := tinyModel(t, 0.1)
	es := nn.NewEarlyStopping()
	es.Monitor = "loss"
	es.MinDelta = 10 // nothing improves the loss by 10: stops after epoch 1
	hist, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Epochs(10), nn.Verbose(0), nn.Callbacks(es))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hist.Epochs, []int{0, 1}) {
		t.Errorf("epochs run %v, want [0 1]", hist.Epochs)
	}
	var out bytes.Buffer
	missing := nn.NewEarlyStopping() // val_loss is not there without validation: a warning, no stop
	if _, err := tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Epochs(2), nn.Verbose(0), nn.Output(&out), nn.Callbacks(missing)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Early stopping is conditioned on metric `val_loss` which is not available. Available metrics are: accuracy,loss") {
		t.Errorf("no warning about the missing figure: %q", out.String())
	}
}

func TestModelCheckpointNamesAndSaves(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 0.1)
	mc := nn.NewModelCheckpoint(filepath.Join(dir, "ck-{epoch:02d}-{val_loss:.3f}.safetensors"))
	mc.Metadata = map[string]string{"seed": "5"}
	hist, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Epochs(2), nn.Verbose(0),
		nn.ValidationData(blobs(t, 20, 4, 2, true)), nn.Callbacks(mc))
	if err != nil {
		t.Fatal(err)
	}
	for e, vl := range hist.Get("val_loss") {
		path := filepath.Join(dir, fmt.Sprintf("ck-%02d-%.3f.safetensors", e+1, vl))
		ck, err := nn.ReadCheckpoint(path)
		if err != nil {
			t.Fatalf("epoch %d: %v", e, err)
		}
		if ck.Epoch != e+1 || ck.Metadata["seed"] != "5" {
			t.Errorf("%s: %+v, want epoch %d and the seed", path, ck, e+1)
		}
	}

	bad := nn.NewModelCheckpoint(filepath.Join(dir, "{val_los}.safetensors"))
	_, err = tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Verbose(0), nn.Callbacks(bad))
	if err == nil || !strings.Contains(err.Error(), "{val_los}") {
		t.Errorf("a filepath naming a missing figure: %v", err)
	}
}

func TestModelCheckpointSaveBestOnly(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 0.1)
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "best.safetensors")
	mc := nn.NewModelCheckpoint(path)
	mc.SaveBestOnly, mc.SaveWeightsOnly, mc.Verbose = true, true, 1
	var out bytes.Buffer
	mc.SetModel(m)
	mc.SetParams(nn.Params{Output: &out})
	if err := mc.OnTrainBegin(nn.Logs{}); err != nil {
		t.Fatal(err)
	}
	saves := 0
	for e, loss := range []float64{0.9, 1.2, 0.4} {
		before, _ := os.Stat(path)
		if err := mc.OnEpochEnd(e, nn.Logs{"val_loss": loss}); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(path)
		if err == nil && (before == nil || !os.SameFile(before, after)) {
			saves++
		}
	}
	if saves != 2 {
		t.Errorf("saved %d times, want 2 (epochs 1 and 3)", saves)
	}
	want := "\nEpoch 1: val_loss improved from inf to 0.90000, saving model to " + path + "\n" +
		"\nEpoch 2: val_loss did not improve from 0.90000\n" +
		"\nEpoch 3: val_loss improved from 0.90000 to 0.40000, saving model to " + path + "\n"
	if out.String() != want {
		t.Errorf("messages:\n%q\nwant:\n%q", out.String(), want)
	}
	if err := tinyModel(t, 0.1).LoadWeights(path); err != nil {
		t.Errorf("SaveWeightsOnly should write a weights file: %v", err)
	}
}

func TestCSVLoggerWritesWhatKerasWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.csv")
	m := tinyModel(t, 0.1)
	logger := nn.NewCSVLogger(path)
	hist, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Epochs(2), nn.Verbose(0),
		nn.ValidationData(blobs(t, 20, 4, 2, true)), nn.Callbacks(logger))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("epoch,accuracy,loss,val_accuracy,val_loss\r\n")
	for e := range 2 {
		fmt.Fprintf(&want, "%d,%s,%s,%s,%s\r\n", e, py(hist.Get("accuracy")[e]), py(hist.Get("loss")[e]),
			py(hist.Get("val_accuracy")[e]), py(hist.Get("val_loss")[e]))
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("CSV:\n%q\nwant:\n%q", got, want.String())
	}
	// Append keeps the rows and writes no second header.
	logger = nn.NewCSVLogger(path)
	logger.Append = true
	if _, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Verbose(0), nn.ValidationData(blobs(t, 20, 4, 2, true)), nn.Callbacks(logger)); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(again), "\r\n"), "\r\n")
	if len(lines) != 4 || !strings.HasPrefix(string(again), string(got)) || !strings.HasPrefix(lines[3], "0,") {
		t.Errorf("appended CSV:\n%q", again)
	}
}

// py is Python's repr of a float, as written by hand for the few values
// these tests need: Go's shortest formatting plus ".0" for whole numbers.
func py(x float64) string {
	s := fmt.Sprint(x)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func TestReduceLROnPlateau(t *testing.T) {
	m := tinyModel(t, 0.1)
	r := nn.NewReduceLROnPlateau()
	r.Patience, r.Factor, r.Cooldown, r.MinLR, r.Verbose = 2, 0.5, 1, 0.02, 1
	var out bytes.Buffer
	r.SetModel(m)
	r.SetParams(nn.Params{Output: &out})
	if err := r.OnTrainBegin(nn.Logs{}); err != nil {
		t.Fatal(err)
	}
	// Keras' rule by hand (rates as float32, as Keras keeps them):
	// e0 1: best.  e1 0.99995: less than min_delta better, wait 1.
	// e2 1.1: wait 2: 0.1 -> 0.05, cooldown 1.
	// e3: the cooldown ends this very epoch (Keras decrements it first), wait 1.
	// e4: wait 2: 0.05 -> 0.025.  e5: cooldown ends, wait 1.
	// e6: wait 2: 0.025 -> max(0.0125, min_lr 0.02) = 0.02.
	// e8: wait 2 again, but the rate is already min_lr: no change.
	losses := []float64{1, 0.99995, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8}
	var lrs []float64
	for e, loss := range losses {
		logs := nn.Logs{"val_loss": loss}
		if err := r.OnEpochEnd(e, logs); err != nil {
			t.Fatal(err)
		}
		if logs["lr"] != float64(float32(lrs0(lrs, 0.1))) {
			t.Errorf("epoch %d: logs lr %v, want the rate before this epoch's change as float32", e, logs["lr"])
		}
		lrs = append(lrs, m.Optimizer().LearningRate())
	}
	lr1 := float64(float32(0.1)) * 0.5
	lr2 := float64(float32(lr1)) * 0.5
	want := []float64{0.1, 0.1, lr1, lr1, lr2, lr2, 0.02, 0.02, 0.02, 0.02}
	if !slices.Equal(lrs, want) {
		t.Errorf("learning rates %v, want %v", lrs, want)
	}
	if !strings.Contains(out.String(), "\nEpoch 3: ReduceLROnPlateau reducing learning rate to 0.05000000074505806.\n") {
		t.Errorf("messages %q", out.String())
	}
	bad := nn.NewReduceLROnPlateau()
	bad.Factor = 1
	if err := bad.OnTrainBegin(nn.Logs{}); err == nil {
		t.Error("factor 1 accepted")
	}
}

// lrs0 is the last rate recorded, or the first one.
func lrs0(lrs []float64, first float64) float64 {
	if len(lrs) == 0 {
		return first
	}
	return lrs[len(lrs)-1]
}

func TestLearningRateSchedulerInFit(t *testing.T) {
	m := tinyModel(t, 0.1)
	var seen []float64
	sched := nn.NewLearningRateScheduler(func(epoch int, lr float64) float64 {
		seen = append(seen, lr)
		if epoch == 0 {
			return lr
		}
		return lr * 0.5
	})
	hist, err := m.Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Epochs(3), nn.Verbose(0), nn.Callbacks(sched))
	if err != nil {
		t.Fatal(err)
	}
	f := func(x float64) float64 { return float64(float32(x)) }
	if want := []float64{f(0.1), f(0.1), f(f(0.1) * 0.5)}; !slices.Equal(seen, want) {
		t.Errorf("schedule saw rates %v, want %v", seen, want)
	}
	if want := []float64{f(0.1), f(f(0.1) * 0.5), f(f(f(0.1)*0.5) * 0.5)}; !slices.Equal(hist.Get("lr"), want) {
		t.Errorf("history lr %v, want %v", hist.Get("lr"), want)
	}
	if got := hist.Keys; !slices.Equal(got, []string{"loss", "accuracy", "lr"}) {
		t.Errorf("history keys %v", got)
	}
	bad := nn.NewLearningRateScheduler(func(int, float64) float64 { return math.NaN() })
	if _, err := tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 64, 4, 1, true), nn.Verbose(0), nn.Callbacks(bad)); err == nil {
		t.Error("a NaN learning rate was accepted")
	}
}
