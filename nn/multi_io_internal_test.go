package nn

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
)

// A model of two outputs, its metrics and outputs' losses all on the
// device, takes the pipelined path and trains as step by step: the same
// logs at every batch and the same weights, bit for bit.
func TestPipelinedFitOfTwoOutputs(t *testing.T) {
	n := 48
	as, bs := make([][]float32, n), make([][]float32, n)
	classes, values := make([]int, n), make([]float32, n)
	for i := range n {
		as[i] = []float32{float32(i%5) - 2, float32(i%3) - 1, 0.5}
		bs[i] = []float32{float32(i%7) / 7, -float32(i%4) / 4}
		classes[i] = i % 3
		values[i] = bs[i][0] - bs[i][1]
	}
	ds, err := data.SliceData(data.InputTuple(data.Rows(as), data.Rows(bs)), data.LabelTuple(data.Classes(classes, 3), data.Targets(values)))
	if err != nil {
		t.Fatal(err)
	}
	run := func() (*hookLog, []string, []float32) {
		a, b := Input(3), Input(2)
		x := Apply(layers.Concatenate(-1), Apply(layers.Dense(6, layers.ReLU), a), b)
		m, err := NewModel([]*Tensor{a, b}, []*Tensor{Apply(layers.Dense(3, layers.Softmax), x), Apply(layers.Dense(1), x)})
		if err != nil {
			t.Fatal(err)
		}
		m.SetSeed(6)
		opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, nil, nil, OnDevice("/CPU:0"), OutputLosses(losses.SparseCategoricalCrossentropy{}, losses.MeanSquaredError{}),
			MetricsFor("dense_1", &metrics.SparseCategoricalAccuracy{}), LossWeights(0.5, 2)); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		h := &hookLog{async: true, stopAt: -1}
		logs := &logRecorder{}
		if _, err := m.Fit(context.Background(), ds, Epochs(2), BatchSize(16), Seed(2), Verbose(0), Callbacks(h, logs)); err != nil {
			t.Fatal(err)
		}
		var w []float32
		ws, err := m.GetWeights()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ws {
			w = append(w, x.Data().([]float32)...)
		}
		return h, logs.lines, w
	}
	step, stepLogs, stepW := run()
	alwaysPipeline(t)
	pipe, pipeLogs, pipeW := run()
	// Three steps an epoch: each step's hooks run once the next one is
	// started, but for the epoch's last.
	if want := []int64{2, 3, 3, 5, 6, 6}; !slices.Equal(pipe.started, want) {
		t.Errorf("pipelined, steps started at each batch's end: %v, want %v (the pipelined path)", pipe.started, want)
	}
	if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(step.started, want) {
		t.Errorf("step by step, steps started at each batch's end: %v, want %v", step.started, want)
	}
	if !slices.Equal(pipe.events, step.events) {
		t.Errorf("hooks pipelined:\n%v\nstep by step:\n%v", pipe.events, step.events)
	}
	if len(stepLogs) != 6 || !strings.Contains(stepLogs[0], "dense_1_sparse_categorical_accuracy") || !slices.Equal(pipeLogs, stepLogs) {
		t.Errorf("logs pipelined:\n%s\nstep by step:\n%s", strings.Join(pipeLogs, "\n"), strings.Join(stepLogs, "\n"))
	}
	if !slices.Equal(pipeW, stepW) {
		t.Error("the weights differ")
	}
}

// logRecorder keeps every log of every batch's end, in key order.
type logRecorder struct {
	CallbackBase
	lines []string
}

func (l *logRecorder) AsyncBatchHooks() bool { return true }

func (l *logRecorder) OnTrainBatchEnd(b int, logs Logs) error {
	keys := slices.Sorted(maps.Keys(logs))
	line := fmt.Sprint(b)
	for _, k := range keys {
		line += fmt.Sprintf(" %s=%v", k, logs[k])
	}
	l.lines = append(l.lines, line)
	return nil
}
