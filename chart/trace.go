package chart

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// traceMarks are the marks of up to four series in a text trace; where
// two series meet in one cell, the cell shows '#'.
var traceMarks = []byte{'*', 'o', '+', 'x'}

// Trace writes a panel as a plain-text chart of the given plot area (in
// characters), for a terminal or a log: the y range labelled on the left,
// one mark per point, the x range below, and a legend. Points are placed
// by value; x values are assumed increasing. ASCII only, so any terminal
// and any log shows it.
//
//	Training trace: loss per epoch
//	 2.303 |*
//	       | *o
//	       |   *  o
//	 0.5121|      *  o
//	       +----------
//	        1        10  epoch
//	        * loss   o val_loss
func Trace(w io.Writer, p Panel, width, height int) error {
	if err := p.check(); err != nil {
		return err
	}
	if len(p.Series) > len(traceMarks) {
		return fmt.Errorf("chart %q: a text trace shows at most %d series, got %d", p.Title, len(traceMarks), len(p.Series))
	}
	if width < 2 || height < 2 {
		return fmt.Errorf("chart: a text trace needs at least 2x2 characters, got %dx%d", width, height)
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for i := range s.X {
			xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			ymin, ymax = math.Min(ymin, s.Y[i]), math.Max(ymax, s.Y[i])
		}
	}
	if math.IsInf(xmin, 0) {
		return fmt.Errorf("chart %q has no points", p.Title)
	}
	grid := make([][]byte, height)
	for r := range grid {
		grid[r] = []byte(strings.Repeat(" ", width))
	}
	scale := func(v, lo, hi float64, n int) int {
		if hi == lo {
			return n / 2
		}
		return int(math.Round((v - lo) / (hi - lo) * float64(n-1)))
	}
	for k, s := range p.Series {
		for i := range s.X {
			col := scale(s.X[i], xmin, xmax, width)
			row := height - 1 - scale(s.Y[i], ymin, ymax, height)
			switch cell := &grid[row][col]; *cell {
			case ' ', traceMarks[k]:
				*cell = traceMarks[k]
			default:
				*cell = '#'
			}
		}
	}
	top, bottom := formatTick(ymax), formatTick(ymin)
	labelWidth := max(len(top), len(bottom))
	var b strings.Builder
	if p.Title != "" {
		b.WriteString(p.Title + "\n")
	}
	for r, line := range grid {
		label := ""
		switch {
		case ymax == ymin && r == height-1-scale(ymin, ymin, ymax, height):
			label = top // one value: label the row it is on
		case ymax == ymin:
		case r == 0:
			label = top
		case r == height-1:
			label = bottom
		}
		fmt.Fprintf(&b, " %*s |%s\n", labelWidth, label, strings.TrimRight(string(line), " "))
	}
	pad := strings.Repeat(" ", labelWidth+2)
	b.WriteString(pad + "+" + strings.Repeat("-", width) + "\n")
	left, right := formatTick(xmin), formatTick(xmax)
	if xmin == xmax {
		right = ""
	}
	gap := max(width-len(left)-len(right), 1)
	fmt.Fprintf(&b, "%s %s%s%s  %s\n", pad, left, strings.Repeat(" ", gap), right, p.XLabel)
	legend := make([]string, len(p.Series))
	for k, s := range p.Series {
		legend[k] = fmt.Sprintf("%c %s", traceMarks[k], s.Name)
	}
	b.WriteString(pad + " " + strings.Join(legend, "   ") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// formatTick writes an axis value briefly: whole numbers as such, others
// with four significant digits.
func formatTick(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
