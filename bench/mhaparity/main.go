// Command mhaparity writes what bench/mha_parity.py needs to check
// gokeras' MultiHeadAttention against PyTorch's nn.MultiheadAttention
// given the same weights: for each case of a table (self-attention,
// cross-attention with a key and value of their own sizes, an attention
// mask with the causal mask), the weights in Keras' layout, a batch of
// inputs and a target, and what gokeras computes of them.
//
//	go run ./bench/mhaparity --out run.json [--train-steps 10]
//
// Per case it records:
//
//   - out64, scores64, grads64: the layer's output and attention scores,
//     and the gradients of the mean squared error against the target with
//     respect to each input (a self-attention's one input once, its two
//     uses summed) and each weight, computed in float64 by the layer's
//     own graph on gorgonia's tape machine;
//   - out32: the output of a model of the layer alone (flattened),
//     predicted in float32 on the device given;
//   - losses32, final32: the loss of each of train-steps SGD steps of that
//     model (mean squared error, Fit over one epoch in order) and its
//     weights after them.
//
// PyTorch's module asks the query to have heads·key_dim features, the
// values key_dim features per head and the output the query's size: the
// cases keep to that. The biases are drawn at random, not Keras' zeros,
// so that the check sees them.
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

type attentionCase struct {
	Name   string `json:"name"`
	Heads  int    `json:"heads"`
	KeyDim int    `json:"key_dim"`
	Tq     int    `json:"tq"`
	Tv     int    `json:"tv"`
	Dq     int    `json:"dq"`
	Dk     int    `json:"dk"`
	Dv     int    `json:"dv"`
	Self   bool   `json:"self"`
	Key    bool   `json:"key"`
	Mask   bool   `json:"mask"`
	Causal bool   `json:"causal"`
	Batch  int    `json:"batch"`
}

var cases = []attentionCase{
	{Name: "self", Heads: 4, KeyDim: 8, Tq: 10, Tv: 10, Dq: 32, Dk: 32, Dv: 32, Self: true},
	{Name: "cross_key", Heads: 4, KeyDim: 4, Tq: 6, Tv: 9, Dq: 16, Dk: 12, Dv: 10, Key: true},
	{Name: "self_mask_causal", Heads: 2, KeyDim: 8, Tq: 8, Tv: 8, Dq: 16, Dk: 16, Dv: 16, Self: true, Mask: true, Causal: true},
}

func (c attentionCase) layer() *layers.MultiHeadAttentionLayer {
	var opts []layers.AttentionOption
	if c.Mask {
		opts = append(opts, layers.WithAttentionMask())
	}
	if c.Causal {
		opts = append(opts, layers.UseCausalMask())
	}
	return layers.MultiHeadAttention(c.Heads, c.KeyDim, opts...)
}

// shapes are the sample shapes of the layer's inputs in order.
func (c attentionCase) shapes() [][]int {
	s := [][]int{{c.Tq, c.Dq}, {c.Tv, c.Dv}}
	if c.Key {
		s = append(s, []int{c.Tv, c.Dk})
	}
	if c.Mask {
		s = append(s, []int{c.Tq, c.Tv})
	}
	return s
}

// sources are the model's inputs, each once: a self-attention's query is
// its value (and key).
func (c attentionCase) sources() [][]int {
	s := c.shapes()
	if c.Self {
		return append(s[:1:1], s[2:]...)
	}
	return s
}

// uses maps each of the layer's inputs to its source.
func (c attentionCase) uses() []int {
	if c.Self {
		u := []int{0, 0}
		for i := 2; i < len(c.shapes()); i++ {
			u = append(u, i-1)
		}
		return u
	}
	u := make([]int, len(c.shapes()))
	for i := range u {
		u[i] = i
	}
	return u
}

type settings struct {
	TrainSteps   int
	LearningRate float64
	Device       string
}

type result struct {
	attentionCase
	Weights  [][]float32 `json:"weights"`
	Shapes   [][]int     `json:"shapes"`
	Inputs   [][]float32 `json:"inputs"` // the sources, each (batch, ...)
	Target   []float64   `json:"target"`
	Out64    []float64   `json:"out64"`
	Scores64 []float64   `json:"scores64"`
	Loss64   float64     `json:"loss64"`
	Grads64  [][]float64 `json:"grads64"` // the sources but a mask, then each weight
	Out32    []float32   `json:"out32"`
	TrainIn  [][]float32 `json:"train_inputs"`
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

// maskValues are random 0/1 masks, each row keeping its diagonal.
func maskValues(rng *rand.Rand, batch, tq, tv int) []float32 {
	v := make([]float32, batch*tq*tv)
	for i := range v {
		r, j := (i/tv)%tq, i%tv
		if r == j || rng.IntN(3) > 0 {
			v[i] = 1
		}
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

func size(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func (c attentionCase) draw(rng *rand.Rand, batch int) [][]float32 {
	var ins [][]float32
	for i, s := range c.sources() {
		if c.Mask && i == len(c.sources())-1 {
			ins = append(ins, maskValues(rng, batch, c.Tq, c.Tv))
			continue
		}
		ins = append(ins, uniform(rng, batch*size(s), 1))
	}
	return ins
}

func runCase(c attentionCase, s settings, seed uint64) (result, error) {
	rng := rand.New(rand.NewPCG(seed, 7))
	r := result{attentionCase: c}
	l := c.layer()
	if _, err := l.BuildInputs(c.shapes(), rng); err != nil {
		return r, err
	}
	for _, p := range l.Params() {
		vals := slices.Clone(p.Value.Data().([]float32))
		if p.Value.Dims() < 3 { // a bias: random, not zeros
			vals = uniform(rng, len(vals), 0.5)
		}
		r.Weights = append(r.Weights, vals)
		r.Shapes = append(r.Shapes, p.Value.Shape().Clone())
	}
	r.Inputs = c.draw(rng, c.Batch)
	r.Target = widen(uniform(rng, c.Batch*c.Tq*c.Dq, 0.5))
	if err := float64Pass(&r, l); err != nil {
		return r, fmt.Errorf("float64 graph: %w", err)
	}
	if err := float32Model(&r, s, rng); err != nil {
		return r, fmt.Errorf("float32 model: %w", err)
	}
	return r, nil
}

// float64Pass runs the layer's graph in float64 on gorgonia's tape
// machine: its output and scores, the loss and the gradients.
func float64Pass(r *result, l *layers.MultiHeadAttentionLayer) error {
	g := gorgonia.NewGraph()
	c := r.attentionCase
	node := func(name string, sh []int, v []float32) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float64, len(sh), gorgonia.WithShape(sh...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(sh...), tensor.WithBacking(widen(v)))))
	}
	var srcs, wrt []*gorgonia.Node
	for i, sh := range c.sources() {
		n := node(fmt.Sprintf("in%d", i), append([]int{c.Batch}, sh...), r.Inputs[i])
		srcs = append(srcs, n)
		if !(c.Mask && i == len(c.sources())-1) {
			wrt = append(wrt, n)
		}
	}
	var params []*gorgonia.Node
	for i, w := range r.Weights {
		n := node(fmt.Sprintf("w%d", i), r.Shapes[i], w)
		params = append(params, n)
		wrt = append(wrt, n)
	}
	var flows []layers.Flow
	for _, u := range c.uses() {
		flows = append(flows, layers.Flow{Node: srcs[u], NeedsGrad: true})
	}
	f, sc, err := l.CallWithScores(flows, params)
	if err != nil {
		return err
	}
	n := f.Node.Shape().TotalSize()
	flat, err := ops.Reshape(f.Node, []int{c.Batch, n / c.Batch}, true)
	if err != nil {
		return err
	}
	y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(c.Batch, n/c.Batch), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(c.Batch, n/c.Batch), tensor.WithBacking(slices.Clone(r.Target)))))
	cost, err := ops.Loss(ops.MeanSquaredError, flat, y)
	if err != nil {
		return err
	}
	var out, scores gorgonia.Value
	gorgonia.Read(flat, &out)
	gorgonia.Read(sc.Node, &scores)
	if _, err := gorgonia.Grad(cost, wrt...); err != nil {
		return err
	}
	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(wrt...))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return err
	}
	r.Out64 = slices.Clone(out.Data().([]float64))
	r.Scores64 = slices.Clone(scores.Data().([]float64))
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

// samples are a model's input data of several parts.
func samples(c attentionCase, ins [][]float32) data.Samples {
	var parts []data.Samples
	for i, sh := range c.sources() {
		parts = append(parts, data.Flat(ins[i], sh...))
	}
	return data.InputTuple(parts...)
}

// float32Model predicts the batch with a model of the layer on the
// device, then trains it with SGD.
func float32Model(r *result, s settings, rng *rand.Rand) error {
	c := r.attentionCase
	var srcs []*nn.Tensor
	for _, sh := range c.sources() {
		srcs = append(srcs, nn.Input(sh...))
	}
	var ins []*nn.Tensor
	for _, u := range c.uses() {
		ins = append(ins, srcs[u])
	}
	out := nn.Apply(layers.Flatten(), nn.Apply(c.layer(), ins...))
	m, err := nn.NewModel(srcs, []*nn.Tensor{out})
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Build(m.InputShape()...); err != nil {
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
	dummy := make([][]float32, c.Batch)
	for i := range dummy {
		dummy[i] = make([]float32, c.Tq*c.Dq)
	}
	pds, err := data.SliceData(samples(c, r.Inputs), data.TargetRows(dummy))
	if err != nil {
		return err
	}
	pred, err := m.PredictTensor(ctx, pds)
	if err != nil {
		return err
	}
	r.Out32 = slices.Clone(pred.Data().([]float32))
	n := s.TrainSteps * c.Batch
	r.TrainIn = c.draw(rng, n)
	r.TrainY = uniform(rng, n*c.Tq*c.Dq, 0.5)
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = r.TrainY[i*c.Tq*c.Dq : (i+1)*c.Tq*c.Dq]
	}
	ds, err := data.SliceData(samples(c, r.TrainIn), data.TargetRows(rows))
	if err != nil {
		return err
	}
	rec := &parity.StepLosses{Batch: c.Batch, N: n, Steps: s.TrainSteps}
	if _, err := m.Fit(ctx, ds, nn.Epochs(1), nn.BatchSize(c.Batch), nn.Shuffle(false), nn.Verbose(0), nn.Callbacks(rec)); err != nil {
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
	batch := flag.Int("batch-size", 4, "samples per batch")
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
		c.Batch = *batch
		r, err := runCase(c, s, *seed)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
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
		fmt.Fprintln(os.Stderr, "mhaparity:", err)
		os.Exit(1)
	}
}
