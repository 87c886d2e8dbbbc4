//go:build steptimes

package plan

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// Built with the tag steptimes, machines time each step on the host and,
// after the 22nd run of a machine's steps (a training step or a
// forward pass, any machine), print to standard error each step kind's
// time a run and share over runs 3 to 22: a profile of a step by kind
// after 2 runs of warm-up, for benchmarks (bench/transformer-profile.sh).
// It measures the backends that compute in Exec, the CPU's; a GPU's steps
// only queue there. Without the tag the hooks do nothing.
var stepTimes struct {
	mu     sync.Mutex
	byKind map[string]time.Duration
	runs   int
}

// timedRuns is how many runs the profile covers, after warmRuns.
const warmRuns, timedRuns = 2, 20

func stepClock() time.Time { return time.Now() }

func stepTimed(s *Step, start time.Time) {
	d := time.Since(start)
	k := s.Kind.String()
	if s.Kind == Norm {
		k += fmt.Sprintf("/%v", s.Op.Norm)
	}
	stepTimes.mu.Lock()
	if stepTimes.byKind == nil {
		stepTimes.byKind = map[string]time.Duration{}
	}
	if stepTimes.runs >= warmRuns {
		stepTimes.byKind[k] += d
	}
	stepTimes.mu.Unlock()
}

func runTimed() {
	stepTimes.mu.Lock()
	defer stepTimes.mu.Unlock()
	stepTimes.runs++
	if stepTimes.runs != warmRuns+timedRuns {
		return
	}
	var total time.Duration
	kinds := make([]string, 0, len(stepTimes.byKind))
	for k, d := range stepTimes.byKind {
		total += d
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int { return int(stepTimes.byKind[b] - stepTimes.byKind[a]) })
	fmt.Fprintf(os.Stderr, "steps by kind, runs %d to %d:\n", warmRuns+1, warmRuns+timedRuns)
	for _, k := range kinds {
		d := stepTimes.byKind[k]
		fmt.Fprintf(os.Stderr, "%-32s %8.2f ms a run %6.1f%%\n", k, float64(d.Microseconds())/1000/timedRuns, 100*float64(d)/float64(total))
	}
	fmt.Fprintf(os.Stderr, "%-32s %8.2f ms a run\n", "total", float64(total.Microseconds())/1000/timedRuns)
}
