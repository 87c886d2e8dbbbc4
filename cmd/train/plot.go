package main

import (
	"fmt"
	"io"
	"math"

	"github.com/gokeras/gokeras/chart"
)

// series is one figure of the history as chart points, epochs counted from
// 1 as Keras prints them; epochs without the figure are left out.
func series(h *runHistory, key, name string, dashed bool) (chart.Series, bool) {
	values, ok := h.Values[key]
	if !ok {
		return chart.Series{}, false
	}
	s := chart.Series{Name: name, Dashed: dashed}
	for i, v := range values {
		if y := float64(v); i < len(h.Epochs) && !math.IsNaN(y) && !math.IsInf(y, 0) {
			s.X = append(s.X, float64(h.Epochs[i]+1))
			s.Y = append(s.Y, y)
		}
	}
	return s, len(s.X) > 0
}

// panel charts a figure and its validation twin.
func panel(h *runHistory, key, title string) (chart.Panel, bool) {
	// Losses fall and accuracies rise: keep the legend in the corner the
	// curves leave empty.
	p := chart.Panel{Title: title, XLabel: "epoch", YLabel: key, LegendBottom: key != "loss"}
	if s, ok := series(h, key, "training", false); ok {
		p.Series = append(p.Series, s)
	}
	if s, ok := series(h, "val_"+key, "validation", true); ok {
		p.Series = append(p.Series, s)
	}
	return p, len(p.Series) > 0
}

// plotHistory writes loss and accuracy per epoch, training and validation,
// side by side into a PNG.
func plotHistory(path string, h *runHistory) error {
	var panels []chart.Panel
	for _, f := range []struct{ key, title string }{{"loss", "Loss"}, {"accuracy", "Accuracy"}} {
		if p, ok := panel(h, f.key, f.title); ok {
			panels = append(panels, p)
		}
	}
	if len(panels) == 0 {
		return fmt.Errorf("no epoch finished: nothing to plot")
	}
	return chart.SavePNG(path, 500*len(panels), 400, panels...)
}

// traceHistory prints the loss per epoch, training and validation, as text.
func traceHistory(w io.Writer, h *runHistory) error {
	p, ok := panel(h, "loss", "")
	if !ok {
		return fmt.Errorf("no epoch finished: nothing to trace")
	}
	n := len(h.Epochs)
	p.Title = fmt.Sprintf("Training trace: loss per epoch (%d epochs)", n)
	p.Series[0].Name = "loss"
	if len(p.Series) > 1 {
		p.Series[1].Name = "val_loss"
	}
	width := min(max(6*(n-1)+1, 10), 60)
	return chart.Trace(w, p, width, 10)
}
