package nn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
)

func TestFuncDataRefusesBadArguments(t *testing.T) {
	g := func(int, []float32, []float32) error { return nil }
	tests := []struct {
		name          string
		n             int
		sample, label []int
		gather        func(int, []float32, []float32) error
		want          string
	}{
		{"no function", 3, []int{2}, nil, nil, "data.FuncData: no gather function given"},
		{"no samples", 0, []int{2}, nil, g, "data.FuncData: 0 samples: a dataset needs at least one"},
		{"negative count", -1, []int{2}, nil, g, "data.FuncData: -1 samples: a dataset needs at least one"},
		{"no sample shape", 3, nil, nil, g, "data.FuncData: no sample shape given: say what one sample is, e.g. []int{28, 28} for 28×28 images"},
		{"zero dimension", 3, []int{28, 0}, nil, g, "data.FuncData: sample shape (28, 0) has a dimension 0: every dimension must be positive"},
		{"negative label dimension", 3, []int{2}, []int{-10}, g, "data.FuncData: label shape (-10,) has a dimension -10: every dimension must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := data.FuncData(tc.n, tc.sample, tc.label, tc.gather)
			if err == nil || err.Error() != tc.want || d != nil {
				t.Errorf("FuncData = %v, %v; want the error %q", d, err, tc.want)
			}
		})
	}
}

func TestFuncDataGathersEachSampleOnce(t *testing.T) {
	var calls []int
	// Sample i is (i, 10·i, -i) and its label the class i mod 3; sample 5
	// cannot be read.
	ds, err := data.FuncData(7, []int{3}, nil, func(i int, x, y []float32) error {
		calls = append(calls, i)
		if x[0] != 0 || y[0] != 0 {
			return errors.New("x and y are not zeroed")
		}
		if i == 5 {
			return errors.New("bad record")
		}
		x[0], x[1], x[2] = float32(i), float32(10*i), float32(-i)
		y[0] = float32(i % 3)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 7 || !slices.Equal(ds.SampleShape(), []int{3}) || !slices.Equal(ds.LabelShape(), []int{}) {
		t.Fatalf("Len %d, SampleShape %v, LabelShape %v", ds.Len(), ds.SampleShape(), ds.LabelShape())
	}
	x, y := make([]float32, 6), make([]float32, 2)
	tests := []struct {
		name       string
		run        func() error
		wantCalls  []int
		wantX      []float32
		wantY      []float32
		wantErr    string
		checkLabel bool
	}{
		{"inputs, then their labels", func() error {
			if err := ds.GatherInputs([]int{4, 1}, x); err != nil {
				return err
			}
			return ds.GatherLabels([]int{4, 1}, y)
		}, []int{4, 1}, []float32{4, 40, -4, 1, 10, -1}, []float32{1, 1}, "", true},
		{"labels alone", func() error { return ds.GatherLabels([]int{2, 6}, y) },
			[]int{2, 6}, nil, []float32{2, 0}, "", true},
		{"labels of other samples than the inputs", func() error {
			if err := ds.GatherInputs([]int{0, 3}, x); err != nil {
				return err
			}
			return ds.GatherLabels([]int{3, 0}, y)
		}, []int{0, 3, 3, 0}, []float32{0, 0, 0, 3, 30, -3}, []float32{0, 0}, "", true},
		{"an error names the sample", func() error { return ds.GatherInputs([]int{2, 5}, x) },
			[]int{2, 5}, nil, nil, "sample 5: bad record", false},
		{"an index out of range", func() error { return ds.GatherInputs([]int{7}, x[:3]) },
			nil, nil, nil, "gather: sample index 7 out of range [0, 7)", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			err := tc.run()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("gather called for %v, want %v", calls, tc.wantCalls)
			}
			if tc.wantX != nil && !slices.Equal(x, tc.wantX) {
				t.Errorf("x = %v, want %v", x, tc.wantX)
			}
			if tc.checkLabel && !slices.Equal(y, tc.wantY) {
				t.Errorf("y = %v, want %v", y, tc.wantY)
			}
		})
	}
}

// A FuncData, prefetched or not, trains as the slices it reads from.
func TestFuncDataTrainsAsSliceData(t *testing.T) {
	rows := make([][]float32, 50)
	classes := make([]int, len(rows))
	for i := range rows {
		classes[i] = i % 2
		rows[i] = []float32{float32(classes[i]) - 0.5, float32(i%9) / 9}
	}
	sliced, err := data.SliceData(data.Rows(rows), data.Classes(classes, 2))
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := data.FuncData(len(rows), []int{2}, nil, func(i int, x, y []float32) error {
		copy(x, rows[i])
		y[0] = float32(classes[i])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fit := func(ds data.Dataset) string {
		m := nn.NewSequential(layers.Dense(4, layers.Tanh), layers.Dense(1, layers.Sigmoid))
		m.SetSeed(2)
		if err := m.Compile(newSGD(t, 0.5), losses.BinaryCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		h, err := m.Fit(context.Background(), ds, nn.Epochs(2), nn.BatchSize(8), nn.Seed(1), nn.Verbose(0), nn.ValidationSplit(0.2))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(h.Values)
	}
	want := fit(sliced)
	if !strings.Contains(want, "val_accuracy") {
		t.Fatalf("no figures in %q", want)
	}
	for name, ds := range map[string]data.Dataset{"FuncData": funcs, "Prefetch(FuncData)": data.Prefetch(funcs)} {
		if got := fit(ds); got != want {
			t.Errorf("%s trains to\n%s\nSliceData to\n%s", name, got, want)
		}
	}
}
