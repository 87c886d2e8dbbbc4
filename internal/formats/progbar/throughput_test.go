package progbar

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestThroughputLeavesOutTheFirstStep(t *testing.T) {
	tests := []struct {
		name    string
		on      bool
		batches []int
		clock   []time.Duration // start, one per step, finish
		want    string
	}{
		// Steps 2 and 3 (32 + 6 samples) took 2 s: 19 samples/s.
		{"three steps", true, []int{32, 32, 6}, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, " - loss: 1.0000 - 19 samples/s\n"},
		// One step: its own time counts, 32 samples in 0.5 s.
		{"one step", true, []int{32}, []time.Duration{0, 500 * time.Millisecond, time.Second}, " - loss: 1.0000 - 64 samples/s\n"},
		{"off by default", false, []int{32, 32}, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, " - loss: 1.0000\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := New(&out, 1, len(tc.batches), fakeClock(tc.clock...))
			if tc.on {
				p.ShowThroughput()
			}
			logs := []Entry{{"loss", 1}}
			for i, n := range tc.batches {
				p.CountSamples(n)
				p.Update(i+1, logs)
			}
			if err := p.Finish(len(tc.batches), logs); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(out.String(), tc.want) {
				t.Errorf("line %q, want it to end with %q", out.String(), tc.want)
			}
		})
	}
}
