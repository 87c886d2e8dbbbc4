package callbacks_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/nn"
)

func TestLearningRateSchedulerInFit(t *testing.T) {
	m := tinyModel(t, 0.1)
	var seen []float64
	sched := callbacks.NewLearningRateScheduler(func(epoch int, lr float64) float64 {
		seen = append(seen, lr)
		if epoch == 0 {
			return lr
		}
		return lr * 0.5
	})
	hist, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(3), nn.Verbose(0), nn.Callbacks(sched))
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
	bad := callbacks.NewLearningRateScheduler(func(int, float64) float64 { return math.NaN() })
	if _, err := tinyModel(t, 0.1).Fit(context.Background(), blobs(t, 64, 1), nn.Verbose(0), nn.Callbacks(bad)); err == nil {
		t.Error("a NaN learning rate was accepted")
	}
}
