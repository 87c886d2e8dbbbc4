//go:build !steptimes

package plan

import "time"

// The step-timing hooks (steptimes.go) do nothing without the tag
// steptimes.

func stepClock() time.Time { return time.Time{} }

func stepTimed(*Step, time.Time) {}

func runTimed() {}
