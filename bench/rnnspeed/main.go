// Command rnnspeed times training steps of a recurrent layer on the CPU:
// LSTM(128) (or GRU, SimpleRNN) over 100 timesteps of 64 features, batch
// 32, then Dense(1), mean squared error, SGD, as issue 30's benchmark
// sets it; it prints the time to compile the model and the median step.
//
//	go run ./bench/rnnspeed [--layer LSTM] [--steps 100] [--batches 20]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// stepTimes records when each training step ends.
type stepTimes struct {
	nn.CallbackBase
	ends []time.Time
}

func (s *stepTimes) OnTrainBatchEnd(int, nn.Logs) error {
	s.ends = append(s.ends, time.Now())
	return nil
}

func run() error {
	kind := flag.String("layer", "LSTM", "LSTM, GRU or SimpleRNN")
	steps := flag.Int("steps", 100, "timesteps")
	features := flag.Int("features", 64, "features per timestep")
	units := flag.Int("units", 128, "units")
	batch := flag.Int("batch-size", 32, "batch size")
	batches := flag.Int("batches", 20, "training steps timed")
	flag.Parse()
	var l layers.Layer
	switch *kind {
	case "LSTM":
		l = layers.LSTM(*units)
	case "GRU":
		l = layers.GRU(*units)
	case "SimpleRNN":
		l = layers.SimpleRNN(*units)
	default:
		return fmt.Errorf("unknown layer %q", *kind)
	}
	m := nn.NewSequential(layers.Input(*steps, *features), l, layers.Dense(1))
	defer m.Close()
	m.SetSeed(1)
	sgd, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		return err
	}
	start := time.Now()
	if err := m.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		return err
	}
	n := (*batches + 1) * *batch
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, n**steps**features), make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, *steps, *features), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
	if err != nil {
		return err
	}
	rec := &stepTimes{}
	fitStart := time.Now()
	if _, err := m.Fit(context.Background(), ds, nn.Epochs(1), nn.BatchSize(*batch), nn.Verbose(0), nn.Callbacks(rec)); err != nil {
		return err
	}
	var d []time.Duration
	for i := 1; i < len(rec.ends); i++ {
		d = append(d, rec.ends[i].Sub(rec.ends[i-1]))
	}
	slices.Sort(d)
	fmt.Printf("%s(%d) over %d timesteps of %d features, batch %d: compile %v, first step (binding the graph) %v, median of %d steps %v\n",
		*kind, *units, *steps, *features, *batch, fitStart.Sub(start).Round(time.Millisecond), rec.ends[0].Sub(fitStart).Round(time.Millisecond),
		len(d), d[len(d)/2].Round(100*time.Microsecond))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rnnspeed:", err)
		os.Exit(1)
	}
}
