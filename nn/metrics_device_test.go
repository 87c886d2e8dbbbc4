package nn

import (
	"context"
	"math"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// The accuracies and mean errors run on the model's device as plan steps:
// only their batch sums come back, the outputs are not read unless a
// metric computes on the host, and the figures are what the host metric
// computes from Predict's outputs.
func TestMetricsComputeOnTheDevice(t *testing.T) {
	const n, in, classes = 40, 5, 3
	x := make([][]float32, n)
	y := make([]int, n)
	for i := range x {
		x[i] = make([]float32, in)
		for j := range x[i] {
			x[i][j] = float32((i*7+j*3)%11)/11 - 0.5
		}
		y[i] = (i * 5) % classes
	}
	tests := []struct {
		name     string
		metrics  func() []metrics.Metric
		onDevice []bool
	}{
		{"all on the device", func() []metrics.Metric {
			return []metrics.Metric{&metrics.Accuracy{}, &metrics.TopKCategoricalAccuracy{K: 2}, &metrics.MeanAbsoluteError{},
				&metrics.RootMeanSquaredError{}, &metrics.Precision{}, &metrics.Recall{TopK: 2}, &metrics.AUC{}, &metrics.F1Score{Average: "macro"}}
		}, []bool{true, true, true, true, true, true, true, true}},
		{"other settings on the device", func() []metrics.Metric {
			return []metrics.Metric{&metrics.Precision{ClassID: new(1)}, &metrics.AUC{Curve: "PR", MultiLabel: true}, &metrics.F1Score{Threshold: 0.3}}
		}, []bool{true, true, true}},
		{"a metric of the program's own on the host", func() []metrics.Metric {
			return []metrics.Metric{&metrics.CategoricalAccuracy{}, hostOnly{&metrics.AUC{}}}
		}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewSequential(layers.Input(in), layers.Dense(8, layers.ReLU), layers.Dense(classes, layers.Softmax))
			m.SetSeed(3)
			opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Compile(opt, losses.CategoricalCrossentropy{}, tt.metrics(), OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			ds, err := data.SliceData(data.Rows(x), data.OneHot(y, classes))
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.Evaluate(context.Background(), ds, BatchSize(16), Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			requirePlanMachines(t, m)
			for k, p := range m.compiled.programs {
				if k.mode != modeEvaluate {
					continue
				}
				for i, want := range tt.onDevice {
					if p.onDevice[i] != want {
						t.Fatalf("metric %d on the device: %v, want %v", i, p.onDevice[i], want)
					}
				}
				allDevice := !containsFalse(tt.onDevice)
				if (p.outReads[0] == nil) != allDevice {
					t.Fatalf("outputs read back: %v, with every metric on the device: %v", p.outReads[0] != nil, allDevice)
				}
			}
			preds, err := m.Predict(context.Background(), ds, BatchSize(16))
			if err != nil {
				t.Fatal(err)
			}
			labels := make([]float32, n*classes)
			for i, c := range y {
				labels[i*classes+c] = 1
			}
			for _, mt := range tt.metrics() {
				if err := mt.Update(labels, classes, preds.Values(), classes); err != nil {
					t.Fatal(err)
				}
				if got, want := res[mt.Name()], mt.Result(); math.Abs(got-want) > 1e-6*max(1, math.Abs(want)) {
					t.Errorf("%s: Evaluate %v, from Predict's outputs %v", mt.Name(), got, want)
				}
			}
		})
	}
}

// hostOnly is a metric defined outside package metrics: not OnDevice.
type hostOnly struct{ metrics.Metric }

func containsFalse(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return true
		}
	}
	return false
}
