// Command transformerspeed times training steps of a transformer encoder
// on the CPU, issue 30's benchmark: 2 encoder blocks of d_model 128, 4
// heads (key_dim 32), a feed-forward of 512 (ReLU), post-norm as
// PyTorch's nn.TransformerEncoderLayer (x = LayerNorm(x + attention(x));
// x = LayerNorm(x + feedforward(x))), no dropout, over sequences of 128
// steps at batch 32; then the mean over the steps, Dense(1), mean squared
// error, SGD. The feed-forward is Conv1D with a kernel of 1 (a Dense per
// step). It prints the time to compile the model and the median step.
// bench/torch_transformer.py is its PyTorch twin.
//
//	go run ./bench/transformerspeed [--layers 2] [--batches 20]
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
	blocks := flag.Int("layers", 2, "encoder blocks")
	dModel := flag.Int("d-model", 128, "features per step")
	heads := flag.Int("heads", 4, "attention heads")
	ff := flag.Int("dim-feedforward", 512, "feed-forward width")
	steps := flag.Int("seq", 128, "steps per sequence")
	batch := flag.Int("batch-size", 32, "batch size")
	batches := flag.Int("batches", 20, "training steps timed")
	flag.Parse()

	in := nn.Input(*steps, *dModel)
	x := in
	for range *blocks {
		att := nn.Apply(layers.MultiHeadAttention(*heads, *dModel / *heads), x, x)
		x = nn.Apply(layers.LayerNormalization(layers.Epsilon(1e-5)), nn.Apply(layers.Add(), x, att))
		f := nn.Apply(layers.Conv1D(*ff, 1, layers.ReLU), x)
		f = nn.Apply(layers.Conv1D(*dModel, 1), f)
		x = nn.Apply(layers.LayerNormalization(layers.Epsilon(1e-5)), nn.Apply(layers.Add(), x, f))
	}
	out := nn.Apply(layers.Dense(1), nn.Apply(layers.GlobalAveragePooling1D(), x))
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		return err
	}
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
	xs, y := make([]float32, n**steps**dModel), make([]float32, n)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64())
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, *steps, *dModel), tensor.WithBacking(xs)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(y)))
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
	fmt.Printf("%d encoder blocks (d_model %d, %d heads, feed-forward %d) over %d steps, batch %d: compile %v, first step (binding the graph) %v, median of %d steps %v\n",
		*blocks, *dModel, *heads, *ff, *steps, *batch, fitStart.Sub(start).Round(time.Millisecond), rec.ends[0].Sub(fitStart).Round(time.Millisecond),
		len(d), d[len(d)/2].Round(100*time.Microsecond))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "transformerspeed:", err)
		os.Exit(1)
	}
}
