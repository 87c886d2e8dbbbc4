package chart_test

import (
	"bytes"
	"fmt"
	"image/png"
	"os"

	"github.com/gokeras/gokeras/chart"
)

// Each series has its mark; '#' is where two meet.
func ExampleTrace() {
	loss := chart.Panel{Title: "Training trace: loss per epoch", XLabel: "epoch", Series: []chart.Series{
		{Name: "loss", X: []float64{1, 2, 3, 4}, Y: []float64{2.3, 1.1, 0.7, 0.5}},
		{Name: "val_loss", X: []float64{1, 2, 3, 4}, Y: []float64{2.2, 1.3, 1.0, 0.9}},
	}}
	if err := chart.Trace(os.Stdout, loss, 13, 5); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Training trace: loss per epoch
	//  2.3 |#
	//      |
	//      |    o
	//      |    *   o   o
	//  0.5 |        *   *
	//      +-------------
	//       1           4  epoch
	//       * loss   o val_loss
}

func ExampleWritePNG() {
	acc := chart.Panel{Title: "Accuracy", XLabel: "epoch", YLabel: "accuracy", Series: []chart.Series{
		{Name: "training", X: []float64{1, 2, 3}, Y: []float64{0.35, 0.42, 0.46}},
	}}
	var img bytes.Buffer
	if err := chart.WritePNG(&img, 500, 400, acc); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := png.DecodeConfig(&img)
	fmt.Println(cfg.Width, cfg.Height, err)
	// Output:
	// 500 400 <nil>
}
