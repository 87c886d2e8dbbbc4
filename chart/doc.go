// Package chart draws the line charts gokeras programs write — training
// curves (loss and accuracy per epoch, as train --plot draws them) and
// benchmark sweeps (examples/matmul) — as PNG files with gonum's plot
// package, and as plain-text traces for a terminal or a log (train --trace).
//
// It knows nothing of models: callers hand it Panels of named Series of
// (x, y) points. To chart a History:
//
//	p := chart.Panel{Title: "Loss", XLabel: "epoch", Series: []chart.Series{
//		{Name: "training", X: epochs, Y: hist.Get("loss")},
//		{Name: "validation", X: epochs, Y: hist.Get("val_loss"), Dashed: true},
//	}}
//	err := chart.SavePNG("history.png", 500, 400, p)
package chart
