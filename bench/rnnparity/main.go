// Command rnnparity writes what bench/rnn_parity.py needs to check
// gokeras' recurrent layers against PyTorch's nn.RNN, nn.LSTM and nn.GRU
// given the same weights: for each case of a table (a layer and its
// options), the weights in Keras' layout, a batch of sequences and a
// target, and what gokeras computes of them.
//
//	go run ./bench/rnnparity --out run.json [--steps 50] [--train-steps 10]
//
// Per case it records:
//
//   - out64, grads64: the layer's output and the gradients of the mean
//     squared error against the target with respect to the input, the
//     kernel, the recurrent kernel and the bias, computed in float64 by
//     the layer's own graph (Call) on gorgonia's tape machine;
//   - out32: the output of a model of the layer alone (a Flatten after it
//     with return_sequences), predicted in float32 on the device given;
//   - losses32, final32: the loss of each of train-steps SGD steps of that
//     model (mean squared error, Fit over one epoch in order) and its
//     weights after them.
//
// Built with -tags 'cudavm kernelemu', --device /GPU:0 runs the float32
// model on the emulated GPU.
//
// The biases are drawn at random (not Keras' zeros and ones) so that the
// check sees them.
//
// The masked cases pad each sample's sequence with zeros after its length
// (the lengths cycle through 1, 0.62, 0.34 and 0.08 of the steps): the
// float64 graph gives the layer the mask ops.Mask computes, the float32
// model reads the sequences through a Masking(0) layer. The return_state
// cases output the output and the last states, flattened and joined.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/gokeras/gokeras/bench/internal/parity"
	"github.com/gokeras/gokeras/data"
	_ "github.com/gokeras/gokeras/device/cuda" // /GPU:0 in a binary built with -tags cudavm (kernelemu: emulated)
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type layerCase struct {
	name            string
	class           string
	sequences, back bool
	masked, state   bool
	merge           string // Bidirectional's merge mode; "-" for none
}

var cases = []layerCase{
	{"lstm", "LSTM", false, false, false, false, "-"},
	{"lstm_sequences_backwards", "LSTM", true, true, false, false, "-"},
	{"gru", "GRU", false, false, false, false, "-"},
	{"gru_sequences_backwards", "GRU", true, true, false, false, "-"},
	{"simple_rnn_sequences", "SimpleRNN", true, false, false, false, "-"},
	{"lstm_masked", "LSTM", false, false, true, false, "-"},
	{"lstm_masked_sequences_backwards", "LSTM", true, true, true, false, "-"},
	{"gru_masked_sequences", "GRU", true, false, true, false, "-"},
	{"simple_rnn_masked_backwards", "SimpleRNN", false, true, true, false, "-"},
	{"lstm_state", "LSTM", false, false, false, true, "-"},
	{"gru_state_sequences_backwards_masked", "GRU", true, true, true, true, "-"},
	{"lstm_state_sequences_masked", "LSTM", true, false, true, true, "-"},
	{"bidirectional_lstm_concat_sequences", "LSTM", true, false, false, false, "concat"},
	{"bidirectional_gru_sum", "GRU", false, false, false, false, "sum"},
	{"bidirectional_lstm_ave_sequences_masked", "LSTM", true, false, true, false, "ave"},
	{"bidirectional_gru_mul_state", "GRU", false, false, false, true, "mul"},
	{"bidirectional_simple_rnn_none_sequences", "SimpleRNN", true, false, false, false, ""},
}

// lengths are the masked cases' sequence lengths, sample i's the
// (i mod 4)-th.
func lengths(steps int) []int {
	return []int{steps, max(1, steps*62/100), max(1, steps*34/100), max(1, steps*8/100)}
}

// pad zeroes each sample's steps after its length.
func pad(x []float32, samples, steps, features int) {
	ls := lengths(steps)
	for i := range samples {
		clear(x[(i*steps+ls[i%len(ls)])*features : (i+1)*steps*features])
	}
}

// states is how many states the layer returns with return_state.
func (c layerCase) states() int {
	n := 1
	switch {
	case !c.state:
		return 0
	case c.class == "LSTM":
		n = 2
	}
	if c.merge != "-" {
		n *= 2 // the forward layer's, then the backward one's
	}
	return n
}

// outputs is how many outputs of units (per step with sequences) the
// layer's first outputs make: 2 for Bidirectional concat or None.
func (c layerCase) outputs() int {
	if c.merge == "concat" || c.merge == "" {
		return 2
	}
	return 1
}

func (c layerCase) layer(units int) layers.Layer {
	var opts []layers.RecurrentOption
	if c.sequences {
		opts = append(opts, layers.ReturnSequences())
	}
	if c.back {
		opts = append(opts, layers.GoBackwards())
	}
	if c.state {
		opts = append(opts, layers.ReturnState())
	}
	var l *layers.RecurrentLayer
	switch c.class {
	case "LSTM":
		l = layers.LSTM(units, opts...)
	case "GRU":
		l = layers.GRU(units, opts...)
	default:
		l = layers.SimpleRNN(units, opts...)
	}
	if c.merge != "-" {
		return layers.Bidirectional(l, layers.MergeMode(c.merge))
	}
	return l
}

type settings struct {
	Batch, Steps, Features, Units, TrainSteps int
	LearningRate                              float64
	Device                                    string
}

type result struct {
	Name            string  `json:"name"`
	Class           string  `json:"class"`
	ReturnSequences bool    `json:"return_sequences"`
	GoBackwards     bool    `json:"go_backwards"`
	MergeMode       *string `json:"merge_mode"`   // Bidirectional's ("" for None), null for a plain layer
	Lengths         []int   `json:"lengths"`      // masked: each sample's, cycling
	ReturnState     bool    `json:"return_state"` // the output, then h (and c), flattened

	Weights  [][]float32 `json:"weights"`
	Shapes   [][]int     `json:"shapes"`
	X        []float32   `json:"x"`
	Target   []float64   `json:"target"`
	Out64    []float64   `json:"out64"`
	Loss64   float64     `json:"loss64"`
	Grads64  [][]float64 `json:"grads64"` // x, then each weight
	Out32    []float32   `json:"out32"`
	TrainX   []float32   `json:"train_x"`
	TrainY   []float32   `json:"train_y"`
	Losses32 []float64   `json:"losses32"`
	Final32  [][]float32 `json:"final32"`
}

func uniform(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * (2*rng.Float64() - 1))
	}
	return v
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func runCase(c layerCase, s settings, seed uint64) (result, error) {
	rng := rand.New(rand.NewPCG(seed, 7))
	r := result{Name: c.name, Class: c.class, ReturnSequences: c.sequences, GoBackwards: c.back, ReturnState: c.state}
	if c.merge != "-" {
		r.MergeMode = &c.merge
	}
	if c.masked {
		r.Lengths = lengths(s.Steps)
	}
	l := c.layer(s.Units)
	if _, err := l.Build([]int{s.Steps, s.Features}, rng); err != nil {
		return r, err
	}
	for i, p := range l.Params() {
		vals := slices.Clone(p.Value.Data().([]float32))
		if i%3 == 2 { // the bias: random, not zeros and ones
			vals = uniform(rng, len(vals), 0.5)
		}
		r.Weights = append(r.Weights, vals)
		r.Shapes = append(r.Shapes, p.Value.Shape().Clone())
	}
	r.X = uniform(rng, s.Batch*s.Steps*s.Features, 1)
	if c.masked {
		pad(r.X, s.Batch, s.Steps, s.Features)
	}
	outSize := s.Batch * s.Units * c.outputs()
	if c.sequences {
		outSize *= s.Steps
	}
	outSize += c.states() * s.Batch * s.Units
	target := uniform(rng, outSize, 0.5)
	r.Target = widen(target)
	if err := float64Pass(&r, c, l, s); err != nil {
		return r, fmt.Errorf("float64 graph: %w", err)
	}
	if err := float32Model(&r, c, s, rng); err != nil {
		return r, fmt.Errorf("float32 model: %w", err)
	}
	return r, nil
}

// float64Pass runs the layer's graph in float64 on gorgonia's tape
// machine: its output, the loss and the gradients.
func float64Pass(r *result, c layerCase, l layers.Layer, s settings) error {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(s.Batch, s.Steps, s.Features), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(s.Batch, s.Steps, s.Features), tensor.WithBacking(widen(r.X)))))
	wrt := []*gorgonia.Node{x}
	var params []*gorgonia.Node
	for i, w := range r.Weights {
		sh := r.Shapes[i]
		n := gorgonia.NewTensor(g, tensor.Float64, len(sh), gorgonia.WithShape(sh...), gorgonia.WithName(fmt.Sprintf("w%d", i)),
			gorgonia.WithValue(tensor.New(tensor.WithShape(sh...), tensor.WithBacking(widen(w)))))
		params = append(params, n)
		wrt = append(wrt, n)
	}
	in := layers.Flow{Node: x, NeedsGrad: true}
	if c.masked {
		var err error
		if in.Mask, err = ops.Mask(x, 0); err != nil {
			return err
		}
	}
	fs, err := l.(layers.MultiOutputLayer).CallOutputs([]layers.Flow{in}, params)
	if err != nil {
		return err
	}
	var parts []*gorgonia.Node
	for _, f := range fs {
		part, err := ops.Reshape(f.Node, []int{s.Batch, f.Node.Shape().TotalSize() / s.Batch}, true)
		if err != nil {
			return err
		}
		parts = append(parts, part)
	}
	flat := parts[0]
	if len(parts) > 1 {
		if flat, err = ops.Concatenate(1, parts...); err != nil {
			return err
		}
	}
	n := flat.Shape().TotalSize()
	y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(s.Batch, n/s.Batch), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(s.Batch, n/s.Batch), tensor.WithBacking(slices.Clone(r.Target)))))
	cost, err := ops.Loss(ops.MeanSquaredError, flat, y)
	if err != nil {
		return err
	}
	var out gorgonia.Value
	gorgonia.Read(flat, &out)
	if _, err := gorgonia.Grad(cost, wrt...); err != nil {
		return err
	}
	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(wrt...))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return err
	}
	r.Out64 = slices.Clone(out.Data().([]float64))
	r.Loss64 = cost.Value().Data().(float64)
	for _, w := range wrt {
		gv, err := w.Grad()
		if err != nil {
			return err
		}
		r.Grads64 = append(r.Grads64, slices.Clone(gv.Data().([]float64)))
	}
	return nil
}

// float32Model predicts the batch with a model of the layer on the
// device, then trains it with SGD.
func float32Model(r *result, c layerCase, s settings, rng *rand.Rand) error {
	in := nn.Input(s.Steps, s.Features)
	x := in
	if c.masked {
		x = nn.Apply(layers.Masking(0), x)
	}
	outs := nn.ApplyAll(c.layer(s.Units), x)
	for i := range outs {
		if len(outs[i].Shape()) == 2 { // sequences
			outs[i] = nn.Apply(layers.Flatten(), outs[i])
		}
	}
	y := outs[0]
	if len(outs) > 1 {
		y = nn.Apply(layers.Concatenate(-1), outs...)
	}
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{y})
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Build(s.Steps, s.Features); err != nil {
		return err
	}
	var ws []*tensor.Dense
	for i, w := range r.Weights {
		ws = append(ws, tensor.New(tensor.WithShape(r.Shapes[i]...), tensor.WithBacking(slices.Clone(w))))
	}
	if err := m.SetWeights(ws); err != nil {
		return err
	}
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: s.LearningRate})
	if err != nil {
		return err
	}
	if err := m.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice(s.Device)); err != nil {
		return err
	}
	ctx := context.Background()
	batch, err := data.TensorInputs(tensor.New(tensor.WithShape(s.Batch, s.Steps, s.Features), tensor.WithBacking(slices.Clone(r.X))))
	if err != nil {
		return err
	}
	out, err := m.PredictTensor(ctx, batch)
	if err != nil {
		return err
	}
	r.Out32 = slices.Clone(out.Data().([]float32))
	n := s.TrainSteps * s.Batch
	outCols := len(r.Target) / s.Batch
	r.TrainX = uniform(rng, n*s.Steps*s.Features, 1)
	if c.masked {
		pad(r.TrainX, n, s.Steps, s.Features)
	}
	r.TrainY = uniform(rng, n*outCols, 0.5)
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, s.Steps, s.Features), tensor.WithBacking(slices.Clone(r.TrainX))),
		tensor.New(tensor.WithShape(n, outCols), tensor.WithBacking(slices.Clone(r.TrainY))))
	if err != nil {
		return err
	}
	rec := &parity.StepLosses{Batch: s.Batch, N: n, Steps: s.TrainSteps}
	if _, err := m.Fit(ctx, ds, nn.Epochs(1), nn.BatchSize(s.Batch), nn.Shuffle(false), nn.Verbose(0), nn.Callbacks(rec)); err != nil {
		return err
	}
	r.Losses32 = rec.Losses
	final, err := m.GetWeights()
	if err != nil {
		return err
	}
	for _, w := range final {
		r.Final32 = append(r.Final32, slices.Clone(w.Data().([]float32)))
	}
	return nil
}

func run() error {
	out := flag.String("out", "", "JSON file to write")
	var s settings
	flag.IntVar(&s.Batch, "batch-size", 4, "sequences per batch")
	flag.IntVar(&s.Steps, "steps", 50, "timesteps per sequence")
	flag.IntVar(&s.Features, "features", 8, "features per timestep")
	flag.IntVar(&s.Units, "units", 16, "units of each layer")
	flag.IntVar(&s.TrainSteps, "train-steps", 10, "SGD steps of the float32 model")
	flag.Float64Var(&s.LearningRate, "lr", 0.1, "SGD's learning rate")
	flag.StringVar(&s.Device, "device", "/CPU:0", "device of the float32 model")
	seed := flag.Uint64("seed", 1, "seed of the weights and data")
	flag.Parse()
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	var results []result
	for _, c := range cases {
		r, err := runCase(c, s, *seed)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		results = append(results, r)
	}
	js, err := json.Marshal(map[string]any{"settings": s, "cases": results})
	if err != nil {
		return err
	}
	return os.WriteFile(*out, js, 0o644)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rnnparity:", err)
		os.Exit(1)
	}
}
