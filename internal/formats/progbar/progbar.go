// Package progbar draws Keras 2's progress bar (keras.utils.Progbar) for
// one epoch or one evaluation: on a terminal, Keras' live line
// ( 36/300 [==>...........................] - ETA: 4s - loss: 0.0171), and
// Keras' final line, byte for byte, everywhere.
package progbar

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gokeras/gokeras/internal/sys/term"

	"github.com/schollz/progressbar/v3"
)

// Entry is one named figure on a progress line; lines show entries in the
// order given.
type Entry struct {
	Name  string
	Value float64
}

// Progbar draws the progress of one epoch (or one evaluation) of target
// steps.
//
// verbose 1 on a terminal: Keras' live line, redrawn in place with
// progressbar/v3 as steps end and replaced at the end by Keras' final line.
// verbose 1 elsewhere (CI, pipes, log files): only the final line, with no
// carriage returns or backspaces. verbose 2: Keras' one-line epoch summary.
// verbose 0: nothing.
type Progbar struct {
	w          io.Writer
	verbose    int
	target     int
	now        func() time.Time
	start      time.Time
	afterFirst time.Time // when step 1 ended: per-step times leave out the first step, as Keras does
	// bar redraws the live line on a terminal, nil elsewhere; cols tells
	// the terminal's width when known; drawn is when the line was last
	// drawn, zero before.
	bar   *progressbar.ProgressBar
	cols  func() (int, bool)
	drawn time.Time
	// throughput appends samples per second to the line (Fit's
	// ShowThroughput); samples counts those trained, firstSamples those of
	// step 1, left out of the rate as its time is.
	throughput            bool
	samples, firstSamples int
	lastStep              time.Time // when the last step ended
	current               int       // the last step Update was told of
}

// interval is Keras' least time between two drawings of the live line.
const interval = 50 * time.Millisecond

// New starts a Progbar of target steps writing to w (0: not known, as for
// a stream read to its end; Finish then takes the steps done for it), timed by now
// (time.Now outside tests); the time it is called is the start.
func New(w io.Writer, verbose, target int, now func() time.Time) *Progbar {
	return newProgbar(w, verbose, target, now, term.IsTerminal(w), func() (int, bool) { return term.Width(w) })
}

// newProgbar is New with the terminal given: tty tells whether w is one,
// cols its width in columns when known.
func newProgbar(w io.Writer, verbose, target int, now func() time.Time, tty bool, cols func() (int, bool)) *Progbar {
	p := &Progbar{w: w, verbose: verbose, target: target, now: now, start: now()}
	if verbose == 1 && tty {
		p.cols = cols
		// progressbar/v3's own bar cannot be Keras': it always puts a
		// percentage first, sizes the bar from the whole percentage (2 of
		// 30 steps draws ">" where Keras draws "=>") and narrows it to fit
		// the terminal. Its spinner mode, with an empty spinner, prints
		// no figure of its own: it writes our description, clearing the
		// previous line first, and the description is Keras' line.
		p.bar = progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSpinnerCustom([]string{""}),
			progressbar.OptionSetSpinnerChangeInterval(0), // no redrawing goroutine
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionSetPredictTime(false),
		)
	}
	return p
}

// ShowThroughput appends the samples trained per second to the lines,
// e.g. " - 3846 samples/s", leaving out the first step as the per-step time
// does; the samples come from CountSamples.
func (p *Progbar) ShowThroughput() { p.throughput = true }

// Clear takes the live bar away without writing a line, for an epoch
// stopped before any of its steps ended.
func (p *Progbar) Clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

// Update records that step current (1-based) has ended with the given
// running figures, and redraws the live line if there is one, at most
// every 50 ms as Keras does; the last step is left to Finish.
func (p *Progbar) Update(current int, logs []Entry) {
	now := p.now()
	p.lastStep, p.current = now, current
	if current == 1 {
		p.afterFirst = now
	}
	if p.bar == nil || (p.target > 0 && current >= p.target) || (!p.drawn.IsZero() && now.Sub(p.drawn) < interval) {
		return
	}
	p.drawn = now
	var fields []string
	if p.target > 0 {
		eta := p.stepDuration(current, now) * time.Duration(p.target-current)
		fields = []string{countString(current, p.target) + " " + barString(current, p.target) + " - ETA: " + formatETA(eta)}
	} else {
		// Keras' line when the steps are not known: "     12/Unknown - 3s 10ms/step".
		fields = []string{fmt.Sprintf("%7d/Unknown - %.0fs", current, now.Sub(p.start).Seconds()) + formatPerUnit(p.stepDuration(current, now), "step")}
	}
	for _, l := range logs {
		fields = append(fields, formatLogs([]Entry{l}))
	}
	if r := p.rate(); r != "" {
		fields = append(fields, r)
	}
	// progressbar writes " " + description + "  ": the leading "\r" puts
	// the line back at the first column.
	p.bar.Describe("\r" + fitLine(fields, p.cols))
}

// frameExtra is the columns progressbar's spinner mode counts beyond the
// description, a space before it and two after, and blanks when it clears
// the line for the next drawing.
const frameExtra = 3

// fitLine joins the live line's fields. On a terminal narrower than the
// whole line it leaves out trailing figures, whole, rather than let the
// line wrap (a wrapped line cannot be redrawn in place): the count, bar
// and ETA always show, the bar never narrows, and the epoch's final line
// is always whole. The last column stays free so the cursor never wraps.
func fitLine(fields []string, cols func() (int, bool)) string {
	line := fields[0]
	width, ok := cols()
	for _, f := range fields[1:] {
		if ok && utf8.RuneCountInString(line+f)+frameExtra > width-1 {
			break
		}
		line += f
	}
	return line
}

// stepDuration is Keras' per-step time: it leaves out the first step,
// which pays for setting up the graph.
func (p *Progbar) stepDuration(current int, now time.Time) time.Duration {
	if current <= 0 {
		return 0
	}
	if current > 1 && !p.afterFirst.IsZero() {
		return now.Sub(p.afterFirst) / time.Duration(current-1)
	}
	return now.Sub(p.start) / time.Duration(current)
}

// Done is the last step Update was told of, 0 before any.
func (p *Progbar) Done() int { return p.current }

// Finish ends the epoch at step current and writes the final line; a
// target not known is taken to be current, as Keras does.
func (p *Progbar) Finish(current int, logs []Entry) error {
	now := p.now()
	if p.target <= 0 {
		p.target = current
	}
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	var line string
	switch p.verbose {
	case 0:
		return nil
	case 2:
		line = verbose2Line(current, p.target, now.Sub(p.start), logs)
	default:
		line = finalLine(current, p.target, now.Sub(p.start), p.stepDuration(current, now), logs)
	}
	_, err := io.WriteString(p.w, line+p.rate()+"\n")
	return err
}

// CountSamples records the samples of the step that just ended; call it
// before that step's Update.
func (p *Progbar) CountSamples(n int) {
	if p.samples == 0 {
		p.firstSamples = n
	}
	p.samples += n
}

// rate is " - N samples/s" when throughput is on: the samples after step 1
// over the time since step 1 ended, or over all the time if only one step ran.
func (p *Progbar) rate() string {
	if !p.throughput || p.samples == 0 {
		return ""
	}
	samples, d := p.samples-p.firstSamples, p.lastStep.Sub(p.afterFirst)
	if samples == 0 || p.afterFirst.IsZero() || d <= 0 {
		samples, d = p.samples, p.lastStep.Sub(p.start)
	}
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" - %.0f samples/s", float64(samples)/d.Seconds())
}

// finalLine is Keras' end-of-epoch line:
// 1563/1563 [==============================] - 13s 6ms/step - loss: 1.8124 - accuracy: 0.3540
func finalLine(current, target int, elapsed, perStep time.Duration, logs []Entry) string {
	return fmt.Sprintf("%s %s - %.0fs%s%s", countString(current, target), barString(current, target),
		elapsed.Seconds(), formatPerUnit(perStep, "step"), formatLogs(logs))
}

// verbose2Line is Keras' verbose=2 epoch line:
// 1563/1563 - 13s - loss: 1.8124 - accuracy: 0.3540 - 13s/epoch - 8ms/step
// The time per step is over the steps that ran: an interrupted epoch's
// line does not spread its time over the steps it never took.
func verbose2Line(current, target int, elapsed time.Duration, logs []Entry) string {
	perStep := time.Duration(0)
	if current > 0 {
		perStep = elapsed / time.Duration(current)
	}
	return fmt.Sprintf("%s - %.0fs%s -%s -%s", countString(current, target), elapsed.Seconds(), formatLogs(logs),
		formatPerUnit(elapsed, "epoch"), formatPerUnit(perStep, "step"))
}

// countString right-aligns the step count to the width of the target.
func countString(current, target int) string {
	width := len(fmt.Sprint(target))
	return fmt.Sprintf("%*d/%d", width, current, target)
}

// barString draws Keras' 30-wide bar: '=' done, '>' the head while running, '.' to go.
func barString(current, target int) string {
	const width = 30
	filled := 0
	if target > 0 {
		filled = int(float64(width) * float64(current) / float64(target))
	}
	filled = min(max(filled, 0), width)
	var b strings.Builder
	b.WriteByte('[')
	if filled > 0 {
		b.WriteString(strings.Repeat("=", filled-1))
		if current < target {
			b.WriteByte('>')
		} else {
			b.WriteByte('=')
		}
	}
	b.WriteString(strings.Repeat(".", width-filled))
	b.WriteByte(']')
	return b.String()
}

// formatPerUnit is Keras' unit rule: seconds from 1 s up, milliseconds
// from 1 ms, microseconds below.
func formatPerUnit(d time.Duration, unit string) string {
	s := d.Seconds()
	switch {
	case s >= 1 || s == 0:
		return fmt.Sprintf(" %.0fs/%s", s, unit)
	case s >= 1e-3:
		return fmt.Sprintf(" %.0fms/%s", s*1e3, unit)
	}
	return fmt.Sprintf(" %.0fus/%s", s*1e6, unit)
}

// formatETA is Keras' ETA: 1:02:03 above an hour, 2:03 above a minute,
// else 45s; Python's %d truncates the seconds, and so does this.
func formatETA(d time.Duration) string {
	secs := d.Seconds()
	s := int64(secs)
	switch {
	case secs > 3600:
		return fmt.Sprintf("%d:%02d:%02d", s/3600, (s%3600)/60, s%60)
	case secs > 60:
		return fmt.Sprintf("%d:%02d", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

// formatLogs writes " - name: value" for each figure: four decimals, or
// Keras' scientific form for magnitudes of 1e-3 and below.
func formatLogs(logs []Entry) string {
	var b strings.Builder
	for _, l := range logs {
		if math.Abs(l.Value) > 1e-3 {
			fmt.Fprintf(&b, " - %s: %.4f", l.Name, l.Value)
		} else {
			fmt.Fprintf(&b, " - %s: %.4e", l.Name, l.Value)
		}
	}
	return b.String()
}
