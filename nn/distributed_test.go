package nn_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// alone is a strategy of one replica, in this process: its collectives
// leave the buffers as they are. It counts the sums.
type alone struct{ sums int }

func (a *alone) Rank() int                    { return 0 }
func (a *alone) Size() int                    { return 1 }
func (a *alone) AllReduceSum([]float32) error { a.sums++; return nil }
func (a *alone) Bcast([]float32, int) error   { return nil }
func (a *alone) BcastBytes([]byte, int) error { return nil }

// hostMetric computes on the host only.
type hostMetric struct{ metrics.Mean }

func (hostMetric) Name() string                                { return "host" }
func (hostMetric) Update([]float32, int, []float32, int) error { return nil }

// A strategy of one replica trains what no strategy trains, through the
// plan's unfused path with its Reduce step (the mpirun tests of package
// distribute run two); it refuses metrics computed on the host.
func TestStrategyOfOneReplica(t *testing.T) {
	n := 256
	x := make([]float32, n*8)
	y := make([]float32, n*3)
	for i := range n {
		for j := range 8 {
			x[i*8+j] = float32(math.Sin(float64(i*8 + j)))
		}
		y[i*3+i%3] = 1
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, 8), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	fit := func(s nn.Strategy) []float64 {
		m := nn.NewSequential(layers.Input(8), layers.Dense(16, layers.ReLU), layers.Dense(3, layers.Softmax))
		m.SetSeed(2)
		opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		opts := []nn.CompileOption{nn.OnDevice("/CPU:0")}
		if s != nil {
			opts = append(opts, nn.WithStrategy(s))
		}
		if err := m.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, opts...); err != nil {
			t.Fatal(err)
		}
		h, err := m.Fit(context.Background(), ds, nn.Epochs(3), nn.BatchSize(32), nn.Seed(4), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		return append(h.Get("loss"), h.Get("accuracy")...)
	}
	s := &alone{}
	want, got := fit(nil), fit(s)
	for i := range want {
		if math.Abs(want[i]-got[i]) > 1e-6*math.Abs(want[i]) {
			t.Errorf("figure %d: %v with a strategy of one, %v without", i, got[i], want[i])
		}
	}
	// Per step: each of the 4 weights' gradients, and the loss with the
	// metrics; and the agreement before the fit.
	if want := (4+1)*3*8 + 1; s.sums != want {
		t.Errorf("%d sums, want %d", s.sums, want)
	}

	m := nn.NewSequential(layers.Input(8), layers.Dense(3, layers.Softmax))
	sgd, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.CategoricalCrossentropy{}, []metrics.Metric{&hostMetric{}}, nn.OnDevice("/CPU:0"), nn.WithStrategy(s)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fit(context.Background(), ds, nn.Verbose(0)); err == nil || !strings.Contains(err.Error(), "sums only the metrics the device computes") {
		t.Errorf("a host metric with a strategy: %v", err)
	}
}
