package callbacks_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/nn"
)

// earlyStoppingRun feeds an EarlyStopping one monitored value per epoch and
// returns the epoch it stopped at (-1 if it did not).
func earlyStoppingRun(t *testing.T, es *callbacks.EarlyStopping, values []float64) int {
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
		set    func(*callbacks.EarlyStopping)
		values []float64
		want   int
	}{
		// Patience 0: the first epoch without improvement stops (never epoch 0).
		{"defaults", func(*callbacks.EarlyStopping) {}, []float64{1, 0.9, 0.8, 0.85, 0.7}, 3},
		{"improving never stops", func(*callbacks.EarlyStopping) {}, []float64{1, 0.9, 0.8, 0.7}, -1},
		{"epoch 0 never stops", func(*callbacks.EarlyStopping) {}, []float64{1, 1}, 1},
		// Patience 2: two epochs in a row without improvement.
		{"patience", func(e *callbacks.EarlyStopping) { e.Patience = 2 }, []float64{1, 1.1, 0.9, 1.0, 0.95, 0.8}, 4},
		// 0.95 improves 1 by less than min_delta 0.1: not an improvement.
		{"min delta", func(e *callbacks.EarlyStopping) { e.MinDelta = 0.1; e.Patience = 1 }, []float64{1, 0.95, 0.8}, 1},
		{"negative min delta counts as positive", func(e *callbacks.EarlyStopping) { e.MinDelta = -0.1; e.Patience = 1 }, []float64{1, 0.95, 0.8}, 1},
		// Accuracy is maximised in auto mode.
		{"auto max", func(e *callbacks.EarlyStopping) { e.Monitor = "val_accuracy"; e.Patience = 1 }, []float64{0.5, 0.6, 0.55, 0.7}, 2},
		{"mode max on a loss name", func(e *callbacks.EarlyStopping) { e.Mode = "max" }, []float64{1, 0.5}, 1},
		// Improvements that do not beat the baseline 0.5 do not reset the wait.
		{"baseline", func(e *callbacks.EarlyStopping) { e.Baseline = 0.5; e.Patience = 2 }, []float64{1, 0.9, 1.2, 0.4}, 2},
		{"start from epoch", func(e *callbacks.EarlyStopping) { e.StartFromEpoch = 2 }, []float64{1, 2, 3, 4}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es := callbacks.NewEarlyStopping()
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
	es := callbacks.NewEarlyStopping()
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
	es := callbacks.NewEarlyStopping()
	es.Monitor = "loss"
	es.MinDelta = 10 // nothing improves the loss by 10: stops after epoch 1
	hist, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(10), nn.Verbose(0), nn.Callbacks(es))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hist.Epochs, []int{0, 1}) {
		t.Errorf("epochs run %v, want [0 1]", hist.Epochs)
	}
	var out bytes.Buffer
	missing := callbacks.NewEarlyStopping() // val_loss is not there without validation: a warning, no stop
	if _, err := tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(2), nn.Verbose(0), nn.Output(&out), nn.Callbacks(missing)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Early stopping is conditioned on metric `val_loss` which is not available. Available metrics are: accuracy,loss") {
		t.Errorf("no warning about the missing figure: %q", out.String())
	}
}
