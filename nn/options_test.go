package nn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// OnDevice takes a device.Spec or its string form, parsed once, when the
// option is made; a bad string fails Compile with the parser's error.
func TestOnDeviceTakesASpecOrItsString(t *testing.T) {
	cpu := device.NewSpec(device.CPU, 0)
	tests := []struct {
		name    string
		opt     nn.CompileOption
		wantErr string
	}{
		{"spec", nn.OnDevice(cpu), ""},
		{"TensorFlow's short string", nn.OnDevice("/CPU:0"), ""},
		{"canonical string", nn.OnDevice("/job:localhost/replica:0/task:0/device:CPU:0"), ""},
		{"lower case", nn.OnDevice("/cpu:0"), ""},
		{"a bad string", nn.OnDevice("/TPU:0"), "TPU"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := nn.NewSequential(layers.Input(2), layers.Dense(1))
			sgd, err := optim.NewSGD(optim.SGDConfig{})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Compile(sgd, losses.MeanSquaredError{}, nil, tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Compile = %v, want an error naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got, err := m.Device(); err != nil || got != cpu {
				t.Errorf("Device() = %v, %v; want %v", got, err, cpu)
			}
		})
	}
}

// Evaluate returns Logs, the type callbacks get, and a History gives each
// epoch's figures as Logs too, the last one equal to what OnEpochEnd saw.
func TestOneTypeForLogs(t *testing.T) {
	m := nn.NewSequential(layers.Input(2), layers.Dense(2, layers.Softmax))
	m.SetSeed(3)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.SparseCategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ds, err := data.SliceData(data.Rows([][]float32{{0, 1}, {1, 0}, {1, 1}, {0, 0}}), data.Classes([]int{0, 1, 1, 0}, 2))
	if err != nil {
		t.Fatal(err)
	}
	seen := &epochLogs{}
	h, err := m.Fit(context.Background(), ds, nn.Epochs(3), nn.Verbose(0), nn.ValidationData(ds), nn.Callbacks(seen))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		got := h.Epoch(i)
		if len(got) != len(seen.logs[i]) || got["loss"] != h.Get("loss")[i] || got["val_loss"] != seen.logs[i]["val_loss"] {
			t.Errorf("Epoch(%d) = %v, OnEpochEnd saw %v", i, got, seen.logs[i])
		}
	}
	if last := h.Epoch(-1); last["loss"] != h.Get("loss")[2] {
		t.Errorf("Epoch(-1) = %v, want the last epoch", last)
	}
	if h.Epoch(3) != nil || h.Epoch(-4) != nil {
		t.Error("Epoch out of range is not nil")
	}
	var logs nn.Logs
	logs, err = m.Evaluate(context.Background(), ds, nn.Verbose(0))
	if err != nil || logs["loss"] <= 0 {
		t.Errorf("Evaluate = %v, %v", logs, err)
	}
	var nilHistory *nn.History
	if nilHistory.Epoch(0) != nil || nilHistory.Get("loss") != nil {
		t.Error("a nil History has figures")
	}
}

type epochLogs struct {
	nn.CallbackBase
	logs []nn.Logs
}

func (e *epochLogs) OnEpochEnd(_ int, logs nn.Logs) error {
	c := nn.Logs{}
	for k, v := range logs {
		c[k] = v
	}
	e.logs = append(e.logs, c)
	return nil
}
