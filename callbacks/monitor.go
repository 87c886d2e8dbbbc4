package callbacks

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/nn"
)

// monitor is what EarlyStopping, ModelCheckpoint and ReduceLROnPlateau
// share, as Keras' MonitorCallback: the figure watched, whether larger is
// better, the least change that counts, and the warning when the figure is
// not in the logs.
type monitor struct {
	name     string
	max      bool
	minDelta float64 // never negative
}

// newMonitor resolves the monitored figure (defaultName if name is empty)
// and its mode: "min", "max", or "auto" (or "") for max when the name
// ends in "acc", "accuracy" or "auc" and min otherwise. Only the size of
// minDelta counts, not its sign.
func newMonitor(name, defaultName, mode string, minDelta float64) (monitor, error) {
	if name == "" {
		name = defaultName
	}
	m := monitor{name: name, minDelta: math.Abs(minDelta)}
	switch mode {
	case "min":
	case "max":
		m.max = true
	case "", "auto":
		m.max = maximized(name)
	default:
		return m, fmt.Errorf("mode %q is not one of auto, min, max: set Mode to one of them", mode)
	}
	return m, nil
}

// maximized is Keras' guess for mode "auto": accuracies and AUCs grow as
// the model gets better, losses and everything else shrink.
func maximized(name string) bool {
	return strings.HasSuffix(name, "acc") || strings.HasSuffix(name, "accuracy") || strings.HasSuffix(name, "auc")
}

// worst is the starting best value: nothing is worse.
func (m monitor) worst() float64 {
	if m.max {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// improves says whether current is better than reference by more than
// minDelta.
func (m monitor) improves(current, reference float64) bool {
	if m.max {
		return current-m.minDelta > reference
	}
	return current+m.minDelta < reference
}

// value returns the monitored figure from logs. When it is missing it
// writes Keras' warning, naming the action (what) and the figures there
// are, and returns false: the callback then skips the epoch, as Keras does.
func (m monitor) value(b *nn.CallbackBase, what string, logs nn.Logs) (float64, bool) {
	v, ok := logs[m.name]
	if !ok {
		printf(b, "WARNING: %s is conditioned on metric `%s` which is not available. Available metrics are: %s\n",
			what, m.name, strings.Join(slices.Sorted(maps.Keys(logs)), ","))
	}
	return v, ok
}

// printf writes a callback's message to Fit's output (nn.Output), if any.
func printf(b *nn.CallbackBase, format string, args ...any) {
	if b.Params.Output != nil {
		fmt.Fprintf(b.Params.Output, format, args...)
	}
}
