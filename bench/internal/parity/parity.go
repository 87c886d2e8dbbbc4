// Package parity holds what the programs that write a PyTorch parity
// check's inputs share (bench/cnnparity, bench/optimparity): each training
// step's loss recovered from Fit's batch logs, raw float32 files, and the
// description of a model's layers and weights that run.json carries.
package parity

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/gokeras/gokeras/nn"
)

// LossMethod says, in run.json, how StepLosses gets each step's loss.
const LossMethod = "recovered from the running means of OnTrainBatchEnd's logs[\"loss\"]: (n_k*mean_k - n_(k-1)*mean_(k-1)) / batch"

// StepLosses is a callback that records each training step's loss.
//
// Fit reports the running mean of the epoch's batch losses to
// OnTrainBatchEnd (as Keras' batch logs do), so each step's own loss is
// recovered from consecutive means: loss_k = (n_k·mean_k - n_(k-1)·mean_(k-1)) / b,
// where n_k is the number of samples seen after step k and b the batch
// size. The means are float64 sums of the float32 batch losses times the
// batch size, so the recovered losses are exact to about 1e-13. It reads
// one epoch of Fit.
type StepLosses struct {
	nn.CallbackBase
	// Batch is the batch size, N the samples in the dataset.
	Batch, N int
	// Means are the running means Fit reported, Losses each step's loss.
	Means, Losses []float64
	// Save, when set, is called with k after each step k = 1..Steps-1
	// (the weights after every step but the last, which the caller has
	// after Fit).
	Save  func(step int) error
	Steps int
}

// OnTrainBatchEnd implements nn.Callback.
func (s *StepLosses) OnTrainBatchEnd(step int, logs nn.Logs) error {
	mean, ok := logs["loss"]
	if !ok {
		return fmt.Errorf("step %d: no \"loss\" in the batch logs", step)
	}
	if step != len(s.Means) {
		return fmt.Errorf("batch %d ended after %d batches", step, len(s.Means))
	}
	seen := func(k int) float64 { return float64(min((k+1)*s.Batch, s.N)) }
	loss := mean
	if step > 0 {
		prev := s.Means[step-1]
		loss = (seen(step)*mean - seen(step-1)*prev) / (seen(step) - seen(step-1))
	}
	s.Means = append(s.Means, mean)
	s.Losses = append(s.Losses, loss)
	if s.Save != nil && step+1 < s.Steps {
		return s.Save(step + 1)
	}
	return nil
}

// WriteFloats writes v to path as raw little-endian float32.
func WriteFloats(path string, v []float32) error {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return os.WriteFile(path, b, 0o644)
}

// WeightInfo describes one weight tensor in run.json.
type WeightInfo struct {
	Name      string `json:"name"` // the safetensors name, "conv2d/kernel"
	Shape     []int  `json:"shape"`
	Trainable bool   `json:"trainable"` // false for moving_mean and moving_variance
}

// LayerInfo describes one layer in run.json.
type LayerInfo struct {
	Name    string       `json:"name"`
	Type    string       `json:"type"`
	Weights []WeightInfo `json:"weights"`
}

// Layers describes the layers of a built model and their weights, named as
// SaveWeights names them.
func Layers(model *nn.Sequential) []LayerInfo {
	var out []LayerInfo
	for _, l := range model.Layers() {
		li := LayerInfo{Name: l.Name(), Type: l.Type(), Weights: []WeightInfo{}}
		for _, p := range l.Params() {
			li.Weights = append(li.Weights, WeightInfo{Name: l.Name() + "/" + p.Name, Shape: p.Value.Shape().Clone(), Trainable: !p.NonTrainable})
		}
		out = append(out, li)
	}
	return out
}

// CallInfo describes one layer call of a model's graph in run.json.
type CallInfo struct {
	Layer       string   `json:"layer"` // the layer's name
	Type        string   `json:"type"`
	Inputs      []string `json:"inputs"` // the layers whose outputs it takes ("input_1" or "input": the model's input)
	OutputShape []int    `json:"output_shape"`
}

// Calls describes the graph of a model's layer calls, each after those
// whose outputs it takes (nn.ModelView's Calls), naming tensors by the
// layer that outputs them.
func Calls(model *nn.Model) ([]CallInfo, error) {
	var out []CallInfo
	err := model.View("parity calls", func(v nn.ModelView) error {
		for _, c := range v.Calls {
			if c.Index != 0 {
				return fmt.Errorf("layer %s is called more than once: a shared layer is not described", c.Layer.Name())
			}
			ci := CallInfo{Layer: c.Layer.Name(), Type: c.Layer.Type(), Inputs: []string{}, OutputShape: c.OutputShape}
			for _, in := range c.Inputs {
				ci.Inputs = append(ci.Inputs, strings.TrimSuffix(in, ":0"))
			}
			out = append(out, ci)
		}
		return nil
	})
	return out, err
}
