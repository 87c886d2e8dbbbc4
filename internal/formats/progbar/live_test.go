package progbar

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gokeras/gokeras/internal/sys/term/termtest"
)

// manualClock is a clock the test sets.
type manualClock struct{ t time.Duration }

func (c *manualClock) now() time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(c.t)
}

// columns is a terminal width for newProgbar: cols columns, or unknown
// when cols is 0.
func columns(cols int) func() (int, bool) {
	return func() (int, bool) { return cols, cols > 0 }
}

// screen replays out on a terminal cols columns wide (unbounded when cols
// is 0), as a terminal would: "\r" goes back to the first column, "\b" one
// column left, "\n" down a row, and a character past the last column wraps
// to the next row. It returns the rows, trailing blanks trimmed, and the
// row the cursor is on.
func screen(out string, cols int) (rows []string, cursor int) {
	grid := [][]rune{nil}
	col := 0
	for _, ch := range out {
		switch ch {
		case '\r':
			col = 0
		case '\b':
			col = max(col-1, 0)
		case '\n':
			cursor, col = cursor+1, 0
		default:
			if cols > 0 && col >= cols {
				cursor, col = cursor+1, 0
			}
			for len(grid) <= cursor {
				grid = append(grid, nil)
			}
			for len(grid[cursor]) <= col {
				grid[cursor] = append(grid[cursor], ' ')
			}
			grid[cursor][col] = ch
			col++
		}
	}
	for _, r := range grid {
		rows = append(rows, strings.TrimRight(string(r), " "))
	}
	for len(rows) <= cursor {
		rows = append(rows, "")
	}
	return rows, cursor
}

// kerasLine is the example: step 36 of 300 at 16 ms a step.
const kerasLine = " 36/300 [==>...........................] - ETA: 4s - loss: 0.0171 - accuracy: 1.0000"

// TestLiveLineIsKeras draws step 36 of 300 (steps of 16 ms after the first,
// 32 samples each) and reads the terminal: Keras' live line, count first,
// a bar 30 wide and no percentage; on a terminal too narrow for all of it,
// trailing figures are left out whole, never the bar.
func TestLiveLineIsKeras(t *testing.T) {
	tests := []struct {
		name       string
		cols       int // 0: width unknown
		throughput bool
		want       string
		wraps      bool // the terminal is too narrow even for the count, bar and ETA
	}{
		{"a wide terminal", 120, false, kerasLine, false},
		{"width unknown", 0, false, kerasLine, false},
		{"88 columns: just room", 88, false, kerasLine, false},
		{"87 columns: no room for accuracy", 87, false, " 36/300 [==>...........................] - ETA: 4s - loss: 0.0171", false},
		{"throughput on a wide terminal", 120, true, kerasLine + " - 2000 samples/s", false},
		{"throughput on 80 columns", 80, true, " 36/300 [==>...........................] - ETA: 4s - loss: 0.0171", false},
		{"60 columns", 60, false, " 36/300 [==>...........................] - ETA: 4s", false},
		{"narrower than the bar: it wraps, whole", 45, false, " 36/300 [==>...........................] - ETA: 4s", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			clock := &manualClock{}
			p := newProgbar(&out, 1, 300, clock.now, true, columns(tc.cols))
			if tc.throughput {
				p.ShowThroughput()
			}
			logs := []Entry{{"loss", 0.0171}, {"accuracy", 1}}
			for step := 1; step <= 36; step++ {
				p.CountSamples(32)
				if step == 1 || step == 36 {
					clock.t = 20*time.Millisecond + time.Duration(step-1)*16*time.Millisecond
					p.Update(step, logs)
				}
			}
			if strings.Contains(out.String(), "%") {
				t.Errorf("a percentage was drawn: %q", out.String())
			}
			if tc.wraps {
				// The screen is a jumble; the last drawing holds the line.
				frames := strings.Split(out.String(), "\r")
				if got := strings.TrimRight(frames[len(frames)-1], " "); got != tc.want {
					t.Errorf("the last drawing is\n%q\nwant\n%q", got, tc.want)
				}
				return
			}
			rows, cursor := screen(out.String(), tc.cols)
			if cursor != 0 || rows[0] != tc.want {
				t.Errorf("the terminal shows\n%q\nwant the one row\n%q", rows, tc.want)
			}
		})
	}
}

// TestLiveLineRedrawsInPlace trains a whole epoch on terminals of several
// widths with figures whose width changes (1.0000 to 0.0009, then
// 9.0000e-04): every drawing leaves exactly Keras' line for its step on
// the one row, the bar always 30 wide, and the final line replaces it.
func TestLiveLineRedrawsInPlace(t *testing.T) {
	for _, cols := range []int{54, 80, 100, 200} {
		t.Run(fmt.Sprintf("%d columns", cols), func(t *testing.T) {
			var out bytes.Buffer
			clock := &manualClock{}
			const target = 120
			p := newProgbar(&out, 1, target, clock.now, true, columns(cols))
			p.ShowThroughput()
			drawn := 0
			var logs []Entry
			for step := 1; step <= target; step++ {
				clock.t = time.Duration(step) * 20 * time.Millisecond
				loss := 1 - float64(step)/float64(target+1)
				logs = []Entry{{"loss", loss}, {"val_loss", loss / 1000}}
				before := out.Len()
				p.CountSamples(32)
				p.Update(step, logs)
				if out.Len() == before {
					continue
				}
				drawn++
				rows, cursor := screen(out.String(), cols)
				if cursor != 0 {
					t.Fatalf("step %d: the line wrapped: %q", step, rows)
				}
				prefix := countString(step, target) + " " + barString(step, target) + " - ETA: "
				if !strings.HasPrefix(rows[0], prefix) {
					t.Fatalf("step %d: the terminal shows %q, want it to start %q", step, rows[0], prefix)
				}
			}
			// At 20 ms a step and one drawing per 50 ms: steps 1, 4, 7, ..., 118.
			if drawn != 40 {
				t.Errorf("%d drawings, want 40", drawn)
			}
			if err := p.Finish(target, logs); err != nil {
				t.Fatal(err)
			}
			// The final line may wrap: it stays.
			rows, cursor := screen(out.String(), cols)
			final := finalLine(target, target, clock.t, p.stepDuration(target, clock.now()), logs) + p.rate()
			if got := strings.Join(rows[:cursor], ""); got != final || rows[cursor] != "" || len(rows) != cursor+1 {
				t.Errorf("the terminal ends with rows %q, want %q and the cursor below", rows, final)
			}
		})
	}
}

// TestLiveLineIsThrottled: as Keras, the line is drawn for the first step,
// then when 50 ms have passed since the last drawing, and never for the
// last step, which Finish writes.
func TestLiveLineIsThrottled(t *testing.T) {
	tests := []struct {
		name  string
		ends  []time.Duration // when each step ends
		drawn []int
	}{
		{"slow steps: every one but the last", []time.Duration{100, 200, 300, 400}, []int{1, 2, 3}},
		{"fast steps: one per 50 ms", []time.Duration{10, 20, 40, 59, 60, 90, 109, 110, 200}, []int{1, 5, 8}},
		{"one step: none", []time.Duration{10}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			clock := &manualClock{}
			p := newProgbar(&out, 1, len(tc.ends), clock.now, true, columns(100))
			var drawn []int
			for i, end := range tc.ends {
				clock.t = end * time.Millisecond
				before := out.Len()
				p.Update(i+1, []Entry{{"loss", 1}})
				if out.Len() > before {
					drawn = append(drawn, i+1)
				}
			}
			if fmt.Sprint(drawn) != fmt.Sprint(tc.drawn) {
				t.Errorf("steps drawn %v, want %v", drawn, tc.drawn)
			}
		})
	}
}

// TestLiveLineOnAPseudoTerminal goes through New: an 80-column terminal
// gets the live line, then the final line alone on its row.
func TestLiveLineOnAPseudoTerminal(t *testing.T) {
	term := termtest.Open(t, 80, 24)
	clock := &manualClock{}
	p := New(term.TTY, 1, 300, clock.now)
	logs := []Entry{{"loss", 0.0171}, {"accuracy", 1}}
	for _, step := range []int{1, 36} {
		clock.t = 20*time.Millisecond + time.Duration(step-1)*16*time.Millisecond
		p.Update(step, logs)
	}
	live := term.Output()
	rows, cursor := screen(live, 80)
	if want := " 36/300 [==>...........................] - ETA: 4s - loss: 0.0171"; cursor != 0 || rows[0] != want {
		t.Errorf("the terminal shows %q, want the one row %q", rows, want)
	}
	if strings.Contains(live, "%") {
		t.Errorf("a percentage was drawn: %q", live)
	}
}

// TestClearLeavesNothing: an epoch stopped after a drawing, with no line
// to write, leaves an empty row.
func TestClearLeavesNothing(t *testing.T) {
	var out bytes.Buffer
	clock := &manualClock{}
	p := newProgbar(&out, 1, 10, clock.now, true, columns(100))
	clock.t = time.Second
	p.Update(1, []Entry{{"loss", 1}})
	if out.Len() == 0 {
		t.Fatal("step 1 was not drawn")
	}
	p.Clear()
	if rows, cursor := screen(out.String(), 100); cursor != 0 || rows[0] != "" {
		t.Errorf("after Clear the terminal shows %q", rows)
	}
}

// TestUnknownTarget: with the steps not known (a stream read to its end)
// the live line is Keras' "     12/Unknown - 3s 250ms/step", and the final
// line takes the steps done as the target, as Keras' ProgbarLogger does.
func TestUnknownTarget(t *testing.T) {
	var out bytes.Buffer
	clock := &manualClock{}
	p := newProgbar(&out, 1, 0, clock.now, true, columns(100))
	for step := 1; step <= 12; step++ {
		clock.t = time.Duration(step) * 250 * time.Millisecond
		p.Update(step, []Entry{{"loss", 0.5}})
	}
	rows, cursor := screen(out.String(), 100)
	if want := "     12/Unknown - 3s 250ms/step - loss: 0.5000"; strings.TrimSpace(rows[cursor]) != strings.TrimSpace(want) {
		t.Errorf("live line %q, want %q", rows[cursor], want)
	}
	if err := p.Finish(12, []Entry{{"loss", 0.5}}); err != nil {
		t.Fatal(err)
	}
	rows, cursor = screen(out.String(), 100)
	if want := "12/12 [==============================] - 3s 250ms/step - loss: 0.5000"; rows[cursor-1] != want {
		t.Errorf("final line %q, want %q", rows[cursor-1], want)
	}
}
