package chart

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// labels lists an axis' labelled ticks, and checks that no two are the
// same and that no unlabelled tick sits on a labelled one.
func labels(t *testing.T, ax plot.Axis) []string {
	t.Helper()
	var out []string
	var at []float64
	ticks := ax.Tick.Marker.Ticks(ax.Min, ax.Max)
	for _, tk := range ticks {
		if tk.IsMinor() {
			continue
		}
		if slices.Contains(out, tk.Label) {
			t.Errorf("label %q twice: %v", tk.Label, ticks)
		}
		out, at = append(out, tk.Label), append(at, tk.Value)
	}
	for _, tk := range ticks {
		if tk.IsMinor() && slices.ContainsFunc(at, func(v float64) bool { return math.Abs(v-tk.Value) < 1e-12 }) {
			t.Errorf("a minor tick on the label at %v", tk.Value)
		}
	}
	return out
}

// history is a train --plot accuracy panel over the given epochs, the
// training accuracy rising from 0.3 to top.
func history(epochs int, top float64) Panel {
	var x, y, val []float64
	for e := 1; e <= epochs; e++ {
		f := 1.0
		if epochs > 1 {
			f = float64(e-1) / float64(epochs-1)
		}
		x, y, val = append(x, float64(e)), append(y, 0.3+(top-0.3)*f), append(val, 0.28+(top-0.38)*f)
	}
	return Panel{Title: "Accuracy", XLabel: "epoch", YLabel: "accuracy", LegendBottom: true, Series: []Series{
		{Name: "training", X: x, Y: y}, {Name: "validation", X: x, Y: val, Dashed: true},
	}}
}

// TestHistoryAxes: the epoch axis is labelled with whole epochs only,
// within the epochs run; the accuracy axis is rounded out to a labelled
// tick at its top and bottom, 1.0 when the accuracy gets there or close.
func TestHistoryAxes(t *testing.T) {
	tests := []struct {
		name          string
		p             Panel
		wantX, wantY  string
		wantYMin, top float64
	}{
		{"one epoch", history(1, 0.4), "1", "0.30 0.32 0.34 0.36 0.38 0.40", 0.3, 0.4},
		{"two epochs", history(2, 0.55), "1 2", "0.25 0.30 0.35 0.40 0.45 0.50 0.55", 0.25, 0.55},
		{"three epochs up to 0.97", history(3, 0.97), "1 2 3", "0.2 0.4 0.6 0.8 1.0", 0.2, 1},
		{"five epochs of a slow start", Panel{Series: []Series{
			{Name: "training", X: []float64{1, 2, 3, 4, 5}, Y: []float64{0.115, 0.171, 0.183, 0.240, 0.270}},
			{Name: "validation", X: []float64{1, 2, 3, 4, 5}, Y: []float64{0.128, 0.105, 0.142, 0.155, 0.152}},
		}}, "1 2 3 4 5", "0.10 0.15 0.20 0.25 0.30", 0.1, 0.3},
		{"twelve epochs up to 1", history(12, 1), "2 4 6 8 10 12", "0.2 0.4 0.6 0.8 1.0", 0.2, 1},
		{"forty epochs", history(40, 0.93), "10 20 30 40", "0.2 0.4 0.6 0.8 1.0", 0.2, 1},
		{"a flat line", Panel{Series: []Series{{Name: "loss", X: []float64{1, 2, 3}, Y: []float64{2.3, 2.3, 2.3}}}},
			"1 2 3", "2.15 2.20 2.25 2.30 2.35 2.40 2.45", 2.15, 2.45},
		{"whole values on y too", Panel{Series: []Series{{Name: "count", X: []float64{0, 1, 2}, Y: []float64{3, 9, 14}}}},
			"0 1 2", "2 4 6 8 10 12 14", 2, 14},
		{"fractional x keeps gonum's ticks", Panel{Series: []Series{{Name: "f", X: []float64{0.5, 1.5, 2.5}, Y: []float64{0, 1, 2}}}},
			"0.5 1.5 2.5", "0 1 2", 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := tc.p.plot()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(labels(t, pl.X), " "); got != tc.wantX {
				t.Errorf("x labels %q, want %q", got, tc.wantX)
			}
			if got := strings.Join(labels(t, pl.Y), " "); got != tc.wantY {
				t.Errorf("y labels %q, want %q", got, tc.wantY)
			}
			if pl.Y.Min != tc.wantYMin || pl.Y.Max != tc.top {
				t.Errorf("y axis [%v, %v], want [%v, %v]", pl.Y.Min, pl.Y.Max, tc.wantYMin, tc.top)
			}
		})
	}
}

func TestChooseTicks(t *testing.T) {
	tests := []struct {
		name            string
		lo, hi          float64
		whole, roundOut bool
		step, minor     float64
		prec            int
	}{
		{"accuracy", 0.28, 0.97, false, true, 0.2, 0.1, 1},
		{"a quarter step", 0.1, 1.4, false, true, 0.25, 0.05, 2},
		{"loss", 0.4, 2.34, false, true, 0.5, 0.1, 1},
		{"epochs 1 to 12", 1, 12, true, false, 2, 1, 0},
		{"epochs 1 to 7", 1, 7, true, false, 1, 0, 0},
		{"epochs 1 to 300", 1, 300, true, false, 50, 10, 0},
		{"no 2.5 on a whole axis", 0, 15, true, false, 5, 1, 0},
		{"25 is whole", 0, 150, true, false, 25, 5, 0},
		{"tiny", 1e-9, 7e-9, false, true, 1e-9, 2e-10, -1},
		{"huge", 0, 6e8, false, true, 1e8, 2e7, -1},
		{"eight labels are too many", 0, 7e8, false, true, 2e8, 1e8, -1},
		{"negative", -0.3, 0.1, false, true, 0.1, 0.02, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chooseTicks(tc.lo, tc.hi, tc.whole, tc.roundOut)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
			if !near(got.step, tc.step) || !near(got.minor, tc.minor) || got.prec != tc.prec {
				t.Errorf("step %v minor %v prec %d, want %v %v %d", got.step, got.minor, got.prec, tc.step, tc.minor, tc.prec)
			}
		})
	}
}

func TestStepTickLabels(t *testing.T) {
	tests := []struct {
		name   string
		t      stepTicks
		lo, hi float64
		want   string
	}{
		{"tenths reach 1.0", stepTicks{step: 0.1, prec: 1}, 0.3, 1, "0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0"},
		{"no minus zero", stepTicks{step: 0.1, prec: 1}, -0.2, 0.1, "-0.2 -0.1 0.0 0.1"},
		{"quarters", stepTicks{step: 0.25, prec: 2}, 0, 1, "0.00 0.25 0.50 0.75 1.00"},
		{"tiny", stepTicks{step: 1e-9, prec: -1}, 1e-9, 3e-9, "1e-09 2e-09 3e-09"},
		{"huge", stepTicks{step: 2e8, prec: -1}, 0, 6e8, "0 200000000 400000000 600000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tk := range tc.t.Ticks(tc.lo, tc.hi) {
				got = append(got, tk.Label)
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("labels %q, want %q", s, tc.want)
			}
		})
	}
}
