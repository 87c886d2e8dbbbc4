package callbacks_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
)

// TestConstructorsKeepKerasDefaults checks each constructor against the
// defaults of keras.callbacks.
func TestConstructorsKeepKerasDefaults(t *testing.T) {
	es := callbacks.NewEarlyStopping()
	mc := callbacks.NewModelCheckpoint("ck.safetensors")
	csv := callbacks.NewCSVLogger("log.csv")
	rl := callbacks.NewReduceLROnPlateau()
	ls := callbacks.NewLearningRateScheduler(func(_ int, lr float64) float64 { return lr })
	tests := []struct {
		name      string
		got, want any
	}{
		{"EarlyStopping", fmt.Sprint(es.Monitor, es.MinDelta, es.Patience, es.Verbose, es.Mode, math.IsNaN(es.Baseline), es.RestoreBestWeights, es.StartFromEpoch),
			fmt.Sprint("val_loss", 0, 0, 0, "auto", true, false, 0)},
		{"ModelCheckpoint", fmt.Sprint(mc.Filepath, mc.Monitor, mc.Verbose, mc.SaveBestOnly, mc.SaveWeightsOnly, mc.Mode, math.IsNaN(mc.InitialValueThreshold)),
			fmt.Sprint("ck.safetensors", "val_loss", 0, false, false, "auto", true)},
		{"CSVLogger", fmt.Sprint(csv.Filename, string(csv.Separator), csv.Append), fmt.Sprint("log.csv", ",", false)},
		{"ReduceLROnPlateau", fmt.Sprint(rl.Monitor, rl.Factor, rl.Patience, rl.Verbose, rl.Mode, rl.MinDelta, rl.Cooldown, rl.MinLR),
			fmt.Sprint("val_loss", 0.1, 10, 0, "auto", 1e-4, 0, 0)},
		{"LearningRateScheduler", fmt.Sprint(ls.Schedule != nil, ls.Verbose), fmt.Sprint(true, 0)},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
