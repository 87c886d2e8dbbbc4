package layers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// DropoutOption configures a Dropout layer: Seed, or any Option, such as
// Named.
type DropoutOption interface{ applyDropout(*DropoutLayer) }

// SeedOption is Seed's option, which Dropout, the random augmentation
// layers and the recurrent layers (their dropout masks) take.
type SeedOption interface {
	DropoutOption
	AugmentOption
	RecurrentOption
}

// Seed fixes which units a Dropout layer (or a recurrent layer's dropout
// and recurrent dropout) drops, or what a random augmentation layer
// (RandomFlip, RandomTranslation, RandomZoom) draws, at each training
// step, Keras' seed argument. Without it the layer's key
// is drawn from the model's seed when the model is built.
func Seed(seed uint64) SeedOption { return dropoutSeed(seed) }

type dropoutSeed uint64

func (s dropoutSeed) applyDropout(d *DropoutLayer) { d.seed, d.seeded = uint64(s), true }

func (s dropoutSeed) applyRecurrent(l *RecurrentLayer) { l.seed, l.seeded = uint64(s), true }

// DropoutLayer sets a random fraction of its inputs to zero while the
// model trains (Fit), and scales the rest by 1/(1-rate) so that their sum
// keeps its expected value; in Evaluate and Predict it passes its input
// through. Which units drop is a function of the layer's seed and the
// training step only (a counter-based generator), so every device drops
// the same units, and a resumed run drops what the interrupted one would
// have.
type DropoutLayer struct {
	named
	rate   float64
	seed   uint64
	seeded bool
	key    uint64
}

// Dropout makes a dropout layer dropping the given fraction of units, like
// keras.layers.Dropout.
func Dropout(rate float64, opts ...DropoutOption) *DropoutLayer {
	d := &DropoutLayer{rate: rate}
	for _, o := range opts {
		if o != nil {
			o.applyDropout(d)
		}
	}
	return d
}

// Type returns "Dropout".
func (d *DropoutLayer) Type() string { return "Dropout" }

// Rate is the fraction of units dropped.
func (d *DropoutLayer) Rate() float64 { return d.rate }

// CheckConfig checks the rate.
func (d *DropoutLayer) CheckConfig() error {
	if d.nameErr != nil {
		return fmt.Errorf("dropout layer: %w", d.nameErr)
	}
	if !(d.rate >= 0 && d.rate < 1) {
		return fmt.Errorf("dropout layer %q: the rate must be in [0, 1), got %v", d.name, d.rate)
	}
	return nil
}

// plan is Dropout's shape rule: the input's shape, no weights.
func (d *DropoutLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return slices.Clone(inputShape), nil, nil
}

// Build checks the rate and fixes the layer's key.
func (d *DropoutLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := d.CheckConfig(); err != nil {
		return nil, err
	}
	out, _, err := d.plan(inputShape)
	if err != nil {
		return nil, err
	}
	d.key = d.seed
	if !d.seeded {
		d.key = rng.Uint64()
	}
	return out, nil
}

// UsesStep reports whether the layer drops anything, and so needs the
// training step.
func (d *DropoutLayer) UsesStep() bool { return d.rate > 0 }

// Params returns nil: dropout has no weights.
func (d *DropoutLayer) Params() []*Param { return nil }

// Call adds the dropout to a training graph, and nothing to others.
func (d *DropoutLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	if !in.Training || d.rate == 0 {
		return in, nil
	}
	if in.Step == nil {
		return Flow{}, fmt.Errorf("dropout layer %q: %w", d.name, errNoStep)
	}
	out, err := ops.Dropout(in.Node, in.Step, ops.DropoutParams{Rate: d.rate, Key: d.key})
	if err != nil {
		return Flow{}, fmt.Errorf("dropout layer %q: %w", d.name, err)
	}
	return Flow{Node: out, NeedsGrad: in.NeedsGrad}, nil
}

var errNoStep = errors.New("a training graph must give layers the training step (Flow.Step)")

// Config returns "Dropout" with name, rate and seed: the Seed given, or
// once the layer is built the key it drew from the model's seed, or nil
// (Keras' None) before.
func (d *DropoutLayer) Config() (Config, error) {
	var seed any
	switch {
	case d.seeded:
		seed = d.seed
	case d.key != 0:
		seed = d.key
	}
	return Config{ClassName: d.Type(), Config: map[string]any{"name": d.name, "rate": d.rate, "seed": seed}}, nil
}

func dropoutFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Rate *float64 `json:"rate"`
		Seed *uint64  `json:"seed"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Rate == nil {
		return nil, missing("rate")
	}
	var opts []DropoutOption
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return Dropout(*a.Rate, opts...), nil
}

// ONNX adds nothing to an ONNX graph: the graph is Predict's, in which
// Dropout passes its input through.
func (d *DropoutLayer) ONNX(_ ONNXGraph, in string) (string, error) { return in, nil }
