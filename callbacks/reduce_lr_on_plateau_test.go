package callbacks_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/nn"
)

func TestReduceLROnPlateau(t *testing.T) {
	m := tinyModel(t, 0.1)
	r := callbacks.NewReduceLROnPlateau()
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
	bad := callbacks.NewReduceLROnPlateau()
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
