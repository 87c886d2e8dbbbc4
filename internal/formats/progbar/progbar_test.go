package progbar

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock returns the given instants one per call.
func fakeClock(ts ...time.Duration) func() time.Time {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	return func() time.Time {
		t := base.Add(ts[min(i, len(ts)-1)])
		i++
		return t
	}
}

func TestFinalLineMatchesKeras(t *testing.T) {
	tests := []struct {
		name    string
		current int
		target  int
		elapsed time.Duration
		perStep time.Duration
		logs    []Entry
		want    string
	}{
		{"a full CIFAR-10 epoch", 1563, 1563, 13 * time.Second, 6 * time.Millisecond,
			[]Entry{{"loss", 1.8124}, {"accuracy", 0.3540}},
			"1563/1563 [==============================] - 13s 6ms/step - loss: 1.8124 - accuracy: 0.3540"},
		{"seconds per step", 10, 10, 25 * time.Second, 2500 * time.Millisecond,
			[]Entry{{"loss", 0.5}},
			"10/10 [==============================] - 25s 2s/step - loss: 0.5000"},
		{"microseconds per step", 3, 3, 1 * time.Millisecond, 350 * time.Microsecond,
			[]Entry{{"loss", 2.30258}},
			"3/3 [==============================] - 0s 350us/step - loss: 2.3026"},
		{"tiny values in scientific form", 1, 1, time.Second, time.Second,
			[]Entry{{"loss", 0.00025851}, {"accuracy", 0}},
			"1/1 [==============================] - 1s 1s/step - loss: 2.5851e-04 - accuracy: 0.0000e+00"},
		{"validation figures", 2, 2, 3 * time.Second, 1500 * time.Millisecond,
			[]Entry{{"loss", 1.25}, {"accuracy", 0.5}, {"val_loss", 1.5}, {"val_accuracy", 0.45}},
			"2/2 [==============================] - 3s 2s/step - loss: 1.2500 - accuracy: 0.5000 - val_loss: 1.5000 - val_accuracy: 0.4500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := finalLine(tc.current, tc.target, tc.elapsed, tc.perStep, tc.logs); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestBarString(t *testing.T) {
	tests := []struct {
		current, target int
		want            string
	}{
		{0, 1563, "[..............................]"},
		{1, 1563, "[..............................]"},
		{100, 1563, "[>.............................]"},
		{782, 1563, "[==============>...............]"},
		{1562, 1563, "[============================>.]"},
		{1563, 1563, "[==============================]"},
		{2, 30, "[=>............................]"}, // progressbar/v3 would draw ">": it rounds to a whole percent first
		{36, 300, "[==>...........................]"},
	}
	for _, tc := range tests {
		if got := barString(tc.current, tc.target); got != tc.want {
			t.Errorf("barString(%d, %d) = %s, want %s", tc.current, tc.target, got, tc.want)
		}
	}
}

// TestFormatETA: Keras formats the ETA with Python's %d, which truncates;
// minutes from above 60 s, hours from above 3600 s.
func TestFormatETA(t *testing.T) {
	tests := []struct {
		eta  time.Duration
		want string
	}{
		{0, "0s"},
		{4700 * time.Millisecond, "4s"},
		{45 * time.Second, "45s"},
		{60 * time.Second, "60s"},
		{60500 * time.Millisecond, "1:00"},
		{125900 * time.Millisecond, "2:05"},
		{3600 * time.Second, "60:00"},
		{3600500 * time.Millisecond, "1:00:00"},
		{3725 * time.Second, "1:02:05"},
	}
	for _, tc := range tests {
		if got := formatETA(tc.eta); got != tc.want {
			t.Errorf("formatETA(%v) = %q, want %q", tc.eta, got, tc.want)
		}
	}
}

func TestCountString(t *testing.T) {
	tests := []struct {
		current, target int
		want            string
	}{
		{7, 1563, "   7/1563"},
		{36, 300, " 36/300"},
		{300, 300, "300/300"},
		{1, 1, "1/1"},
	}
	for _, tc := range tests {
		if got := countString(tc.current, tc.target); got != tc.want {
			t.Errorf("countString(%d, %d) = %q, want %q", tc.current, tc.target, got, tc.want)
		}
	}
}

// TestProgressOutsideATerminal checks that progress written to a file or
// pipe is one clean line per epoch: no carriage returns, no backspaces.
func TestProgressOutsideATerminal(t *testing.T) {
	for _, tc := range []struct {
		verbose int
		want    string
	}{
		{1, "3/3 [==============================] - 4s 2s/step - loss: 0.7000 - accuracy: 0.5000\n"},
		{2, "3/3 - 4s - loss: 0.7000 - accuracy: 0.5000 - 4s/epoch - 1s/step\n"},
		{0, ""},
	} {
		var out bytes.Buffer
		// start, then steps ending at 1s, 2.5s and 4s; per step excludes the first: 3s/2
		p := New(&out, tc.verbose, 3, fakeClock(0, time.Second, 2500*time.Millisecond, 4*time.Second, 4*time.Second))
		logs := []Entry{{"loss", 0.7}, {"accuracy", 0.5}}
		for step := 1; step <= 3; step++ {
			p.Update(step, logs)
		}
		if err := p.Finish(3, logs); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != tc.want {
			t.Errorf("verbose %d:\n got  %q\n want %q", tc.verbose, got, tc.want)
		}
		if strings.ContainsAny(out.String(), "\r\b") {
			t.Errorf("verbose %d wrote terminal control characters: %q", tc.verbose, out.String())
		}
	}
}

// TestVerbose2LineOfAnInterruptedEpoch: the time per step is over the
// steps that ran (61 of 625 in 4 s: 66 ms), not spread over the whole epoch.
func TestVerbose2LineOfAnInterruptedEpoch(t *testing.T) {
	tests := []struct {
		current, target int
		elapsed         time.Duration
		want            string
	}{
		{625, 625, 13 * time.Second, "625/625 - 13s - loss: 0.1000 - 13s/epoch - 21ms/step"},
		{61, 625, 4 * time.Second, " 61/625 - 4s - loss: 0.1000 - 4s/epoch - 66ms/step"},
		{0, 625, 0, "  0/625 - 0s - loss: 0.1000 - 0s/epoch - 0s/step"},
	}
	for _, tc := range tests {
		if got := verbose2Line(tc.current, tc.target, tc.elapsed, []Entry{{"loss", 0.1}}); got != tc.want {
			t.Errorf("%d/%d in %v:\n got  %q\n want %q", tc.current, tc.target, tc.elapsed, got, tc.want)
		}
	}
}
