package callbacks

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/nn"
)

func TestMonitorMode(t *testing.T) {
	tests := []struct {
		name, mode string
		wantMax    bool
		wantErr    string
	}{
		{"val_loss", "auto", false, ""},
		{"loss", "", false, ""},
		{"val_accuracy", "auto", true, ""},
		{"categorical_accuracy", "auto", true, ""},
		{"acc", "auto", true, ""},
		{"val_auc", "auto", true, ""},
		{"accuracy_gap", "auto", false, ""}, // Keras' rule looks at the end of the name only
		{"val_loss", "max", true, ""},
		{"val_accuracy", "min", false, ""},
		{"val_loss", "minimum", false, `mode "minimum" is not one of auto, min, max`},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.mode, func(t *testing.T) {
			m, err := newMonitor(tc.name, "val_loss", tc.mode, 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.max != tc.wantMax {
				t.Errorf("max = %t, want %t", m.max, tc.wantMax)
			}
			if want := map[bool]float64{true: math.Inf(-1), false: math.Inf(1)}[tc.wantMax]; m.worst() != want {
				t.Errorf("worst = %v, want %v", m.worst(), want)
			}
		})
	}
	if m, _ := newMonitor("", "val_loss", "auto", 0); m.name != "val_loss" {
		t.Errorf("an empty name gives %q, want the default val_loss", m.name)
	}
}

func TestMonitorImproves(t *testing.T) {
	tests := []struct {
		name               string
		mode               string
		minDelta           float64
		current, reference float64
		want               bool
	}{
		{"lower loss", "min", 0, 0.9, 1, true},
		{"equal loss", "min", 0, 1, 1, false},
		{"higher loss", "min", 0, 1.1, 1, false},
		{"lower by less than min delta", "min", 0.1, 0.95, 1, false},
		{"lower by more than min delta", "min", 0.1, 0.8, 1, true},
		{"negative min delta counts as positive", "min", -0.1, 0.95, 1, false},
		{"higher accuracy", "max", 0, 0.6, 0.5, true},
		{"lower accuracy", "max", 0, 0.4, 0.5, false},
		{"higher by less than min delta", "max", 0.2, 0.6, 0.5, false},
		{"anything beats the worst", "min", 0, 1e30, math.Inf(1), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newMonitor("x", "", tc.mode, tc.minDelta)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.improves(tc.current, tc.reference); got != tc.want {
				t.Errorf("improves(%v, %v) = %t, want %t", tc.current, tc.reference, got, tc.want)
			}
		})
	}
}

func TestMonitorWarnsWhenTheFigureIsMissing(t *testing.T) {
	m, err := newMonitor("val_loss", "", "auto", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	b := &nn.CallbackBase{Params: nn.Params{Output: &out}}
	if v, ok := m.value(b, "Early stopping", nn.Logs{"val_loss": 0.5}); !ok || v != 0.5 {
		t.Errorf("value = %v, %t; want 0.5, true", v, ok)
	}
	if out.Len() != 0 {
		t.Errorf("a warning with the figure present: %q", out.String())
	}
	if _, ok := m.value(b, "Early stopping", nn.Logs{"loss": 1, "accuracy": 0.5}); ok {
		t.Error("a missing figure was found")
	}
	want := "WARNING: Early stopping is conditioned on metric `val_loss` which is not available. Available metrics are: accuracy,loss\n"
	if out.String() != want {
		t.Errorf("warning %q, want %q", out.String(), want)
	}
}
