package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
)

// AugmentOption configures a random augmentation layer (RandomFlip,
// RandomTranslation, RandomZoom, RandomRotation, RandomBrightness,
// RandomContrast, RandomCrop): Seed, FillMode, Interpolation, FillValue, or any
// Option, such as Named.
type AugmentOption interface{ applyAugment(*augmentation) }

func (s dropoutSeed) applyAugment(a *augmentation) { a.seed, a.seeded = uint64(s), true }

func (o nameOption) applyAugment(a *augmentation) { o.applyLayer(&a.named) }

// FillMode says what RandomTranslation and RandomZoom read outside the
// image, Keras' fill_mode: "reflect" (the default: d c b a | a b c d |
// d c b a), "wrap" (a b c d | a b c d | a b c d), "constant" (k k k k |
// a b c d | k k k k, k the FillValue) or "nearest" (a a a a | a b c d |
// d d d d).
func FillMode(mode string) AugmentOption { return fillModeOption(mode) }

type fillModeOption string

func (o fillModeOption) applyAugment(a *augmentation) {
	a.fillMode = string(o)
	a.transformArgs = true
}

// Interpolation says how the random layers and Resizing read between
// pixels, Keras' interpolation: "bilinear" (the default) or "nearest".
func Interpolation(method string) InterpolationOption { return interpolationOption(method) }

type interpolationOption string

func (o interpolationOption) applyAugment(a *augmentation) {
	a.interpolation = string(o)
	a.transformArgs = true
}

// FillValue is the value RandomTranslation and RandomZoom read outside
// the image with
// FillMode("constant"), Keras' fill_value (0 by default).
func FillValue(v float64) AugmentOption { return fillValueOption(v) }

type fillValueOption float64

func (o fillValueOption) applyAugment(a *augmentation) {
	a.fillValue = float64(o)
	a.transformArgs = true
}

// augmentation is what the random augmentation layers share: a name, a
// seed or the key drawn from the model's, and how they sample images.
type augmentation struct {
	named
	seed          uint64
	seeded        bool
	key           uint64
	fillMode      string
	interpolation string
	fillValue     float64
	transformArgs bool // a fill mode, interpolation or fill value was given
	valueRange    [2]float64
	valueRangeSet bool // RandomBrightness's value range was given
}

func newAugmentation(opts []AugmentOption) augmentation {
	a := augmentation{fillMode: "reflect", interpolation: "bilinear"}
	for _, o := range opts {
		if o != nil {
			o.applyAugment(&a)
		}
	}
	return a
}

// check checks the name, fill mode, interpolation and fill value, the
// layer's what ("random translation layer"), and that only a layer that
// takes one (RandomBrightness) was given a value range.
func (a *augmentation) check(what string, takesRange bool) error {
	if a.nameErr != nil {
		return fmt.Errorf("%s: %w", what, a.nameErr)
	}
	if _, err := ops.ParseFillMode(a.fillMode); err != nil {
		return fmt.Errorf("%s %q: %w", what, a.name, err)
	}
	if _, err := ops.ParseInterpolation(a.interpolation); err != nil {
		return fmt.Errorf("%s %q: %w", what, a.name, err)
	}
	if math.IsNaN(a.fillValue) || math.IsInf(a.fillValue, 0) {
		return fmt.Errorf("%s %q: the fill value %v is not a finite number", what, a.name, a.fillValue)
	}
	if a.valueRangeSet && !takesRange {
		return fmt.Errorf("%s %q: only RandomBrightness takes a value range: leave it out", what, a.name)
	}
	return nil
}

// plan is the random layers' shape rule: images (height, width,
// channels) in and out; no weights.
func (a *augmentation) plan(what string, inputShape []int) ([]int, []WeightShape, error) {
	if len(inputShape) != 3 {
		return nil, nil, fmt.Errorf("%s %q: the input must be images (height, width, channels), got samples of shape %s: reshape them, or put the layer where images flow",
			what, a.name, shapes.String(inputShape))
	}
	return slices.Clone(inputShape), nil, nil
}

// build fixes the layer's key: its Seed, or one drawn from the model's.
func (a *augmentation) build(rng *rand.Rand) {
	a.key = a.seed
	if !a.seeded {
		a.key = rng.Uint64()
	}
}

// checkAndBuild is every random layer's Build: its arguments (check),
// then its input shape (plan), then its key.
func (a *augmentation) checkAndBuild(check func() error, plan func([]int) ([]int, []WeightShape, error), inputShape []int, rng *rand.Rand) ([]int, error) {
	if err := check(); err != nil {
		return nil, err
	}
	out, _, err := plan(inputShape)
	if err != nil {
		return nil, err
	}
	a.build(rng)
	return out, nil
}

// UsesStep reports true: a random layer draws from the training step.
func (a *augmentation) UsesStep() bool { return true }

// Params returns nil: the random layers have no weights.
func (a *augmentation) Params() []*Param { return nil }

// ONNX adds nothing to an ONNX graph: the graph is Predict's, in which the
// random layers pass their input through.
func (a *augmentation) ONNX(_ ONNXGraph, in string) (string, error) { return in, nil }

// errAugmentGrad is the error of a random layer whose input needs a
// gradient.
var errAugmentGrad = errors.New("its input depends on weights, and the random augmentation layers pass no gradient back " +
	"(unlike Keras'): put them first in the model, before any layer with weights")

// call adds the transform p to a training graph, and nothing to others.
func (a *augmentation) call(what string, in Flow, p ops.TransformParams) (Flow, error) {
	if !in.Training {
		return in, nil
	}
	if in.NeedsGrad {
		return Flow{}, fmt.Errorf("%s %q: %w", what, a.name, errAugmentGrad)
	}
	if in.Step == nil {
		return Flow{}, fmt.Errorf("%s %q: %w", what, a.name, errNoStep)
	}
	fill, _ := ops.ParseFillMode(a.fillMode)
	interp, _ := ops.ParseInterpolation(a.interpolation)
	p.Fill, p.Interpolation, p.FillValue, p.Key = fill, interp, a.fillValue, a.key
	out, err := ops.ImageTransform(in.Node, in.Step, p)
	if err != nil {
		return Flow{}, fmt.Errorf("%s %q: %w", what, a.name, err)
	}
	return Flow{Node: out}, nil
}

// configSeed is the seed a config records: the Seed given, or once the
// layer is built the key it drew from the model's seed, or nil (Keras'
// None) before.
func (a *augmentation) configSeed() any {
	switch {
	case a.seeded:
		return a.seed
	case a.key != 0:
		return a.key
	}
	return nil
}

// augmentArgs are the arguments the random layers' configs share.
type augmentArgs struct {
	baseArgs
	Seed          *uint64  `json:"seed"`
	FillMode      *string  `json:"fill_mode"`
	Interpolation *string  `json:"interpolation"`
	FillValue     *float64 `json:"fill_value"`
}

func (a augmentArgs) options() []AugmentOption {
	var opts []AugmentOption
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	if a.FillMode != nil {
		opts = append(opts, FillMode(*a.FillMode))
	}
	if a.Interpolation != nil {
		opts = append(opts, Interpolation(*a.Interpolation))
	}
	if a.FillValue != nil {
		opts = append(opts, FillValue(*a.FillValue))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return opts
}

// RandomFlipLayer mirrors each image left to right, top to bottom or
// both, each with probability 1/2 per image, while the model trains, as
// keras.layers.RandomFlip; in Evaluate and Predict it passes its input
// through.
type RandomFlipLayer struct {
	augmentation
	mode string
}

// RandomFlip makes a RandomFlip layer flipping along mode's axes:
// "horizontal" (left to right), "vertical" (top to bottom) or
// "horizontal_and_vertical" (each independently; Keras' default). Each
// image's flips are drawn from the layer's key, the training step and the
// image's index in the step's batch (Philox4x32-10, as Dropout), so every
// device draws the same. It takes Seed and Named.
func RandomFlip(mode string, opts ...AugmentOption) *RandomFlipLayer {
	return &RandomFlipLayer{augmentation: newAugmentation(opts), mode: mode}
}

// Type returns "RandomFlip".
func (l *RandomFlipLayer) Type() string { return "RandomFlip" }

// Mode is the layer's mode.
func (l *RandomFlipLayer) Mode() string { return l.mode }

// CheckConfig checks the mode and the options.
func (l *RandomFlipLayer) CheckConfig() error {
	const what = "random flip layer"
	if err := l.check(what, false); err != nil {
		return err
	}
	if l.transformArgs {
		return fmt.Errorf("%s %q: RandomFlip takes no fill mode, interpolation or fill value (it moves whole pixels): leave them out", what, l.name)
	}
	if _, _, err := l.axes(); err != nil {
		return err
	}
	return nil
}

func (l *RandomFlipLayer) axes() (horizontal, vertical bool, err error) {
	switch l.mode {
	case "horizontal":
		return true, false, nil
	case "vertical":
		return false, true, nil
	case "horizontal_and_vertical":
		return true, true, nil
	}
	return false, false, fmt.Errorf("random flip layer %q: mode %q: give \"horizontal\", \"vertical\" or \"horizontal_and_vertical\"", l.name, l.mode)
}

func (l *RandomFlipLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return l.augmentation.plan("random flip layer", inputShape)
}

// Build checks the layer and fixes its key.
func (l *RandomFlipLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	return l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
}

// Call adds the random flips to a training graph (ops.ImageTransform),
// and nothing to others.
func (l *RandomFlipLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	h, v, err := l.axes()
	if err != nil {
		return Flow{}, err
	}
	return l.call("random flip layer", in, ops.TransformParams{Kind: ops.TransformFlip, Horizontal: h, Vertical: v})
}

// Config returns "RandomFlip" with name, mode and seed.
func (l *RandomFlipLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "mode": l.mode, "seed": l.configSeed()}}, nil
}

func randomFlipFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Mode string  `json:"mode"`
		Seed *uint64 `json:"seed"`
	}
	a.Mode = "horizontal_and_vertical"
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	var opts []AugmentOption
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return RandomFlip(a.Mode, opts...), nil
}

// RandomTranslationLayer shifts each image by a random fraction of its
// height and of its width while the model trains, as
// keras.layers.RandomTranslation; in Evaluate and Predict it passes its
// input through.
type RandomTranslationLayer struct {
	augmentation
	height, width [2]float64
	pairs         bool // the factors were given as (lower, upper)
}

// RandomTranslation makes a RandomTranslation layer shifting each image
// down by a fraction of its height drawn uniformly from
// [-heightFactor, heightFactor], and right by a fraction of its width from
// [-widthFactor, widthFactor], Keras' RandomTranslation(height_factor,
// width_factor) with numbers; RandomTranslationRange takes Keras'
// (lower, upper) pairs. Outside the image it reads as FillMode says
// ("reflect" by default), between pixels as Interpolation says
// ("bilinear"). Each image's shift is drawn from the layer's key, the
// training step and the image's index in the step's batch (Philox4x32-10,
// as Dropout), so every device draws the same.
func RandomTranslation(heightFactor, widthFactor float64, opts ...AugmentOption) *RandomTranslationLayer {
	return &RandomTranslationLayer{augmentation: newAugmentation(opts),
		height: [2]float64{-heightFactor, heightFactor}, width: [2]float64{-widthFactor, widthFactor}}
}

// RandomTranslationRange is RandomTranslation with each factor a (lower,
// upper) pair, Keras' height_factor=(-0.2, 0.3): shifts drawn uniformly
// from [lower, upper), fractions of the size in [-1, 1].
func RandomTranslationRange(height, width [2]float64, opts ...AugmentOption) *RandomTranslationLayer {
	return &RandomTranslationLayer{augmentation: newAugmentation(opts), height: height, width: width, pairs: true}
}

// Type returns "RandomTranslation".
func (l *RandomTranslationLayer) Type() string { return "RandomTranslation" }

// Factors are the ranges the shifts are drawn from, (lower, upper)
// fractions of the height and of the width.
func (l *RandomTranslationLayer) Factors() (height, width [2]float64) { return l.height, l.width }

// CheckConfig checks the factors and the options, with Keras' rules.
func (l *RandomTranslationLayer) CheckConfig() error {
	const what = "random translation layer"
	if err := l.check(what, false); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		r    [2]float64
	}{{"height_factor", l.height}, {"width_factor", l.width}} {
		lo, hi := f.r[0], f.r[1]
		switch {
		case math.IsNaN(lo) || math.IsNaN(hi):
			return fmt.Errorf("%s %q: %s %v is not a number", what, l.name, f.name, f.r)
		case hi < lo:
			return fmt.Errorf("%s %q: %s %v: the upper bound is less than the lower bound (a single factor must not be negative)", what, l.name, f.name, f.r)
		case math.Abs(lo) > 1 || math.Abs(hi) > 1:
			return fmt.Errorf("%s %q: %s %v: the factors must be between -1 and 1 (fractions of the image's size)", what, l.name, f.name, f.r)
		}
	}
	return nil
}

func (l *RandomTranslationLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return l.augmentation.plan("random translation layer", inputShape)
}

// Build checks the layer and fixes its key.
func (l *RandomTranslationLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	return l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
}

// Call adds the random shifts to a training graph (ops.ImageTransform),
// and nothing to others.
func (l *RandomTranslationLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return l.call("random translation layer", in, ops.TransformParams{Kind: ops.TransformTranslation, Height: l.height, Width: l.width})
}

// factorConfig is a factor as Keras writes it: a number for (-f, f), else
// the pair.
func factorConfig(r [2]float64, pair bool) any {
	if !pair && r[0] == -r[1] {
		return r[1]
	}
	return []float64{r[0], r[1]}
}

// Config returns "RandomTranslation" with Keras' arguments: name,
// height_factor and width_factor (numbers, or pairs), fill_mode,
// interpolation, seed and fill_value.
func (l *RandomTranslationLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name,
		"height_factor": factorConfig(l.height, l.pairs), "width_factor": factorConfig(l.width, l.pairs),
		"fill_mode": l.fillMode, "interpolation": l.interpolation, "seed": l.configSeed(), "fill_value": l.fillValue}}, nil
}

// factorArg reads a Keras factor: a number f for (-f, f), or a pair; the
// bool says a pair.
func factorArg(name string, raw json.RawMessage) ([2]float64, bool, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return [2]float64{-f, f}, false, nil
	}
	var r [2]float64
	if err := json.Unmarshal(raw, &r); err != nil || !isPair(raw) {
		return [2]float64{}, false, fmt.Errorf("argument %q is %s: give a number or a list of two, (lower, upper)", name, strings.TrimSpace(string(raw)))
	}
	return r, true, nil
}

func randomTranslationFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		augmentArgs
		HeightFactor json.RawMessage `json:"height_factor"`
		WidthFactor  json.RawMessage `json:"width_factor"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.HeightFactor) == 0 || string(a.HeightFactor) == "null" {
		return nil, missing("height_factor")
	}
	if len(a.WidthFactor) == 0 || string(a.WidthFactor) == "null" {
		return nil, missing("width_factor")
	}
	h, hp, err := factorArg("height_factor", a.HeightFactor)
	if err != nil {
		return nil, err
	}
	w, wp, err := factorArg("width_factor", a.WidthFactor)
	if err != nil {
		return nil, err
	}
	l := RandomTranslationRange(h, w, a.options()...)
	l.pairs = hp || wp
	return l, nil
}

// RandomZoomLayer zooms each image in or out by a random factor while the
// model trains, as keras.layers.RandomZoom; in Evaluate and Predict it
// passes its input through.
type RandomZoomLayer struct {
	augmentation
	height, width [2]float64
	keepAspect    bool // Keras' width_factor None: the width zooms as the height
	pairs         bool // the factors were given as (lower, upper)
}

// RandomZoom makes a RandomZoom layer scaling the region each image is
// read from about its centre by 1+z, z drawn uniformly from
// [-heightFactor, heightFactor], across as down (Keras'
// RandomZoom(height_factor) with width_factor None): a positive z zooms
// out, a negative one in. RandomZoomRange takes Keras' (lower, upper)
// pairs and a width factor of its own. FillMode ("reflect" by default),
// Interpolation ("bilinear"), FillValue and Seed as RandomTranslation's;
// drawn as RandomTranslation's are.
func RandomZoom(heightFactor float64, opts ...AugmentOption) *RandomZoomLayer {
	h := [2]float64{-heightFactor, heightFactor}
	return &RandomZoomLayer{augmentation: newAugmentation(opts), height: h, width: h, keepAspect: true}
}

// RandomZoomRange is RandomZoom with (lower, upper) pairs and a width
// factor drawn apart from the height's, Keras' height_factor=(-0.3,
// -0.1), width_factor=(-0.2, 0.2).
func RandomZoomRange(height, width [2]float64, opts ...AugmentOption) *RandomZoomLayer {
	return &RandomZoomLayer{augmentation: newAugmentation(opts), height: height, width: width, pairs: true}
}

// Type returns "RandomZoom".
func (l *RandomZoomLayer) Type() string { return "RandomZoom" }

// Factors are the ranges the zooms are drawn from, (lower, upper), and
// whether the width zooms as the height (Keras' width_factor None).
func (l *RandomZoomLayer) Factors() (height, width [2]float64, sameAcross bool) {
	return l.height, l.width, l.keepAspect
}

// CheckConfig checks the factors and the options, with Keras' rules.
func (l *RandomZoomLayer) CheckConfig() error {
	const what = "random zoom layer"
	if err := l.check(what, false); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		r    [2]float64
	}{{"height_factor", l.height}, {"width_factor", l.width}} {
		lo, hi := f.r[0], f.r[1]
		switch {
		case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(hi, 0):
			return fmt.Errorf("%s %q: %s %v is not a finite number", what, l.name, f.name, f.r)
		case hi < lo:
			return fmt.Errorf("%s %q: %s %v: the upper bound is less than the lower bound (a single factor must not be negative)", what, l.name, f.name, f.r)
		case lo < -1:
			return fmt.Errorf("%s %q: %s %v: the factors must be at least -1 (a zoom of 1+factor)", what, l.name, f.name, f.r)
		}
	}
	return nil
}

func (l *RandomZoomLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return l.augmentation.plan("random zoom layer", inputShape)
}

// Build checks the layer and fixes its key.
func (l *RandomZoomLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	return l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
}

// Call adds the random zooms to a training graph (ops.ImageTransform),
// and nothing to others.
func (l *RandomZoomLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return l.call("random zoom layer", in, ops.TransformParams{Kind: ops.TransformZoom, Height: l.height, Width: l.width, KeepAspect: l.keepAspect})
}

// Config returns "RandomZoom" with Keras' arguments: name, height_factor
// and width_factor (numbers, pairs, or for the width null: as the
// height), fill_mode, interpolation, seed and fill_value.
func (l *RandomZoomLayer) Config() (Config, error) {
	var width any
	if !l.keepAspect {
		width = factorConfig(l.width, l.pairs)
	}
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name,
		"height_factor": factorConfig(l.height, l.pairs), "width_factor": width,
		"fill_mode": l.fillMode, "interpolation": l.interpolation, "seed": l.configSeed(), "fill_value": l.fillValue}}, nil
}

func randomZoomFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		augmentArgs
		HeightFactor json.RawMessage `json:"height_factor"`
		WidthFactor  json.RawMessage `json:"width_factor"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.HeightFactor) == 0 || string(a.HeightFactor) == "null" {
		return nil, missing("height_factor")
	}
	h, hp, err := factorArg("height_factor", a.HeightFactor)
	if err != nil {
		return nil, err
	}
	if len(a.WidthFactor) == 0 || string(a.WidthFactor) == "null" {
		l := RandomZoomRange(h, h, a.options()...)
		l.keepAspect, l.pairs = true, hp
		return l, nil
	}
	w, wp, err := factorArg("width_factor", a.WidthFactor)
	if err != nil {
		return nil, err
	}
	l := RandomZoomRange(h, w, a.options()...)
	l.pairs = hp || wp
	return l, nil
}

// RandomRotationLayer turns each image about its centre by a random
// angle while the model trains, as keras.layers.RandomRotation; in
// Evaluate and Predict it passes its input through.
type RandomRotationLayer struct {
	augmentation
	factor [2]float64
	pair   bool // the factor was given as (lower, upper)
}

// RandomRotation makes a RandomRotation layer turning each image by an
// angle drawn uniformly from [-factor, factor] turns (fractions of 2π;
// positive counter-clockwise), Keras' RandomRotation(factor);
// RandomRotationRange takes Keras' (lower, upper) pair. FillMode
// ("reflect" by default), Interpolation ("bilinear"), FillValue and Seed
// as RandomTranslation's; drawn as RandomTranslation's are. The sine and
// cosine are computed the same way on every device (ops.SinCos).
func RandomRotation(factor float64, opts ...AugmentOption) *RandomRotationLayer {
	return &RandomRotationLayer{augmentation: newAugmentation(opts), factor: [2]float64{-factor, factor}}
}

// RandomRotationRange is RandomRotation with a (lower, upper) pair of
// turns, Keras' factor=(-0.2, 0.3).
func RandomRotationRange(factor [2]float64, opts ...AugmentOption) *RandomRotationLayer {
	return &RandomRotationLayer{augmentation: newAugmentation(opts), factor: factor, pair: true}
}

// Type returns "RandomRotation".
func (l *RandomRotationLayer) Type() string { return "RandomRotation" }

// Factor is the range the angles are drawn from, (lower, upper) turns.
func (l *RandomRotationLayer) Factor() [2]float64 { return l.factor }

// CheckConfig checks the factor and the options, with Keras' rule (upper
// at least lower), and that the angles stay within two turns.
func (l *RandomRotationLayer) CheckConfig() error {
	const what = "random rotation layer"
	if err := l.check(what, false); err != nil {
		return err
	}
	lo, hi := l.factor[0], l.factor[1]
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return fmt.Errorf("%s %q: factor %v is not a number", what, l.name, l.factor)
	case hi < lo:
		return fmt.Errorf("%s %q: factor %v: the upper bound is less than the lower bound (a single factor must not be negative)", what, l.name, l.factor)
	case math.Abs(lo) > 2 || math.Abs(hi) > 2:
		return fmt.Errorf("%s %q: factor %v: give turns between -2 and 2 (a turn is 1)", what, l.name, l.factor)
	}
	return nil
}

func (l *RandomRotationLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return l.augmentation.plan("random rotation layer", inputShape)
}

// Build checks the layer and fixes its key.
func (l *RandomRotationLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	return l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
}

// Call adds the random rotations to a training graph
// (ops.ImageTransform), and nothing to others.
func (l *RandomRotationLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return l.call("random rotation layer", in, ops.TransformParams{Kind: ops.TransformRotation, Height: l.factor})
}

// Config returns "RandomRotation" with Keras' arguments: name, factor (a
// number, or a pair), fill_mode, interpolation, seed and fill_value.
func (l *RandomRotationLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "factor": factorConfig(l.factor, l.pair),
		"fill_mode": l.fillMode, "interpolation": l.interpolation, "seed": l.configSeed(), "fill_value": l.fillValue}}, nil
}

func randomRotationFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		augmentArgs
		Factor json.RawMessage `json:"factor"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.Factor) == 0 || string(a.Factor) == "null" {
		return nil, missing("factor")
	}
	f, pair, err := factorArg("factor", a.Factor)
	if err != nil {
		return nil, err
	}
	l := RandomRotationRange(f, a.options()...)
	l.pair = pair
	return l, nil
}

// ValueRange is the range of the values RandomBrightness takes and
// clips its output to, Keras' value_range ((0, 255) by default).
func ValueRange(low, high float64) AugmentOption { return valueRangeOption{low, high} }

type valueRangeOption [2]float64

func (o valueRangeOption) applyAugment(a *augmentation) { a.valueRange, a.valueRangeSet = o, true }

// RandomBrightnessLayer adds a random amount to every value of each image
// while the model trains, as keras.layers.RandomBrightness; in Evaluate
// and Predict it passes its input through.
type RandomBrightnessLayer struct {
	augmentation
	factor [2]float64
	pair   bool
}

// RandomBrightness makes a RandomBrightness layer adding to each image
// one delta, a fraction drawn uniformly from [-factor, factor] of the
// ValueRange's width ((0, 255) unless given), and clipping the values to
// the range, Keras' RandomBrightness(factor, value_range, seed);
// RandomBrightnessRange takes Keras' (lower, upper) pair. It takes
// ValueRange, Seed and Named; drawn as the other random layers draw.
func RandomBrightness(factor float64, opts ...AugmentOption) *RandomBrightnessLayer {
	return &RandomBrightnessLayer{augmentation: newBrightness(opts), factor: [2]float64{-factor, factor}}
}

// RandomBrightnessRange is RandomBrightness with a (lower, upper) pair,
// Keras' factor=(-0.2, 0.3).
func RandomBrightnessRange(factor [2]float64, opts ...AugmentOption) *RandomBrightnessLayer {
	return &RandomBrightnessLayer{augmentation: newBrightness(opts), factor: factor, pair: true}
}

func newBrightness(opts []AugmentOption) augmentation {
	a := newAugmentation(opts)
	if !a.valueRangeSet {
		a.valueRange = [2]float64{0, 255}
	}
	return a
}

// Type returns "RandomBrightness".
func (l *RandomBrightnessLayer) Type() string { return "RandomBrightness" }

// Factor is the range the deltas are drawn from, (lower, upper)
// fractions of the value range; Range is the value range.
func (l *RandomBrightnessLayer) Factor() [2]float64 { return l.factor }

// Range is the value range the output is clipped to.
func (l *RandomBrightnessLayer) Range() [2]float64 { return l.valueRange }

// CheckConfig checks the factor and the value range, with Keras' rules.
func (l *RandomBrightnessLayer) CheckConfig() error {
	const what = "random brightness layer"
	if err := l.check(what, true); err != nil {
		return err
	}
	if l.transformArgs {
		return fmt.Errorf("%s %q: RandomBrightness takes no fill mode, interpolation or fill value (it moves no pixel): leave them out", what, l.name)
	}
	lo, hi := l.factor[0], l.factor[1]
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return fmt.Errorf("%s %q: factor %v is not a number", what, l.name, l.factor)
	case hi < lo:
		return fmt.Errorf("%s %q: factor %v: the upper bound is less than the lower bound (a single factor must not be negative)", what, l.name, l.factor)
	case math.Abs(lo) > 1 || math.Abs(hi) > 1:
		return fmt.Errorf("%s %q: factor %v: the factors must be between -1 and 1 (fractions of the value range)", what, l.name, l.factor)
	}
	if r := l.valueRange; !(r[0] < r[1]) || math.IsInf(r[0], 0) || math.IsInf(r[1], 0) {
		return fmt.Errorf("%s %q: value range %v: give finite (low, high) with low < high, such as (0, 255) or (0, 1)", what, l.name, r)
	}
	return nil
}

func (l *RandomBrightnessLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return l.augmentation.plan("random brightness layer", inputShape)
}

// Build checks the layer and fixes its key.
func (l *RandomBrightnessLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	return l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
}

// Call adds the random brightness changes to a training graph
// (ops.ImageTransform), and nothing to others.
func (l *RandomBrightnessLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return l.call("random brightness layer", in, ops.TransformParams{Kind: ops.TransformBrightness, Height: l.factor, ValueRange: l.valueRange})
}

// Config returns "RandomBrightness" with Keras' arguments: name, factor
// (a number, or a pair), value_range and seed.
func (l *RandomBrightnessLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "factor": factorConfig(l.factor, l.pair),
		"value_range": []float64{l.valueRange[0], l.valueRange[1]}, "seed": l.configSeed()}}, nil
}

func randomBrightnessFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Factor     json.RawMessage `json:"factor"`
		ValueRange *[2]float64     `json:"value_range"`
		Seed       *uint64         `json:"seed"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.Factor) == 0 || string(a.Factor) == "null" {
		return nil, missing("factor")
	}
	f, pair, err := factorArg("factor", a.Factor)
	if err != nil {
		return nil, err
	}
	var opts []AugmentOption
	if a.ValueRange != nil {
		opts = append(opts, ValueRange(a.ValueRange[0], a.ValueRange[1]))
	}
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	l := RandomBrightnessRange(f, opts...)
	l.pair = pair
	return l, nil
}

// RandomContrastLayer scales the contrast of each image by a random
// factor while the model trains, like keras.layers.RandomContrast:
// each channel about its mean over the image, (x - mean)·factor + mean,
// then clipped to (0, 255). In Evaluate and Predict it passes its input
// through.
type RandomContrastLayer struct {
	augmentation
	factor [2]float64 // Keras' (lower, upper): factors from [1-lower, 1+upper]
	pair   bool
}

// RandomContrast makes a RandomContrast layer scaling each image's
// contrast by a factor drawn uniformly from [1-factor, 1+factor], Keras'
// RandomContrast(factor, seed=None) (factor in [0, 1]); the values are
// clipped to (0, 255) as Keras 2 clips them. It takes Seed and Named;
// drawn as the other random layers draw, one factor per image (Keras 2
// draws one per batch; Keras 3 one per image).
func RandomContrast(factor float64, opts ...AugmentOption) *RandomContrastLayer {
	return &RandomContrastLayer{augmentation: newAugmentation(opts), factor: [2]float64{factor, factor}}
}

// RandomContrastRange is RandomContrast with Keras' pair factor=(lower,
// upper): factors from [1-lower, 1+upper].
func RandomContrastRange(factor [2]float64, opts ...AugmentOption) *RandomContrastLayer {
	return &RandomContrastLayer{augmentation: newAugmentation(opts), factor: factor, pair: true}
}

// Type returns "RandomContrast".
func (l *RandomContrastLayer) Type() string { return "RandomContrast" }

// Factor is Keras' (lower, upper): the factors are drawn from [1-lower,
// 1+upper].
func (l *RandomContrastLayer) Factor() [2]float64 { return l.factor }

// CheckConfig checks the factor with Keras' rules.
func (l *RandomContrastLayer) CheckConfig() error {
	const what = "random contrast layer"
	if err := l.check(what, false); err != nil {
		return err
	}
	if l.transformArgs {
		return fmt.Errorf("%s %q: RandomContrast takes no fill mode, interpolation or fill value (it moves no pixel): leave them out", what, l.name)
	}
	lo, hi := l.factor[0], l.factor[1]
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(hi, 0) || lo < 0 || hi < 0 || lo > 1 {
		return fmt.Errorf("%s %q: factor %v: Keras' factors must not be negative, and the lower one not above 1 (contrast factors from [1-lower, 1+upper])", what, l.name, l.factor)
	}
	return nil
}

func (l *RandomContrastLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	return l.augmentation.plan("random contrast layer", inputShape)
}

// Build checks the layer and fixes its key.
func (l *RandomContrastLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	return l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
}

// Call adds the random contrast changes to a training graph
// (ops.ImageTransform), and nothing to others.
func (l *RandomContrastLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	return l.call("random contrast layer", in, ops.TransformParams{Kind: ops.TransformContrast, Height: l.factor, ValueRange: [2]float64{0, 255}})
}

// Config returns "RandomContrast" with Keras' arguments: name, factor (a
// number, or a pair) and seed.
func (l *RandomContrastLayer) Config() (Config, error) {
	var factor any = l.factor[0]
	if l.pair || l.factor[0] != l.factor[1] {
		factor = []float64{l.factor[0], l.factor[1]}
	}
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "factor": factor, "seed": l.configSeed()}}, nil
}

func randomContrastFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Factor json.RawMessage `json:"factor"`
		Seed   *uint64         `json:"seed"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.Factor) == 0 || string(a.Factor) == "null" {
		return nil, missing("factor")
	}
	var opts []AugmentOption
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	var f float64
	if err := json.Unmarshal(a.Factor, &f); err == nil {
		return RandomContrast(f, opts...), nil
	}
	var pair [2]float64
	if err := json.Unmarshal(a.Factor, &pair); err != nil || !isPair(a.Factor) {
		return nil, fmt.Errorf("argument \"factor\" is %s: want a number or a pair (lower, upper)", a.Factor)
	}
	return RandomContrastRange(pair, opts...), nil
}

// RandomCropLayer crops a random window of each image while the model
// trains, like keras.layers.RandomCrop: (None, h, w, c) becomes (None,
// height, width, c). In Evaluate and Predict, and for images smaller than
// the window, it resizes instead, as Keras 2 does (smart_resize: the
// largest box of the image's centre with the window's aspect ratio,
// bilinear).
type RandomCropLayer struct {
	augmentation
	height, width int
	in            [3]int
}

// RandomCrop makes a RandomCrop layer of windows height×width, Keras'
// RandomCrop(height, width, seed=None); it takes Seed and Named. Each
// image's window is drawn uniformly among the whole-pixel positions (as
// the other random layers draw: one per image, where Keras 2 draws one
// window per batch).
func RandomCrop(height, width int, opts ...AugmentOption) *RandomCropLayer {
	a := newAugmentation(opts)
	// The windows lie on whole pixels: nearest reads them exactly (the
	// options that would change these are refused).
	a.interpolation, a.fillMode = "nearest", "constant"
	return &RandomCropLayer{augmentation: a, height: height, width: width}
}

// Type returns "RandomCrop".
func (l *RandomCropLayer) Type() string { return "RandomCrop" }

// Size returns the window's height and width.
func (l *RandomCropLayer) Size() (height, width int) { return l.height, l.width }

// CheckConfig checks the name, the size and the options.
func (l *RandomCropLayer) CheckConfig() error {
	const what = "random crop layer"
	if err := l.check(what, false); err != nil {
		return err
	}
	if l.transformArgs {
		return fmt.Errorf("%s %q: RandomCrop takes no fill mode, interpolation or fill value: leave them out", what, l.name)
	}
	if l.height < 1 || l.width < 1 {
		return fmt.Errorf("%s %q: size %d×%d: the height and the width must be 1 or more", what, l.name, l.height, l.width)
	}
	return nil
}

func (l *RandomCropLayer) plan(inputShape []int) ([]int, []WeightShape, error) {
	if _, _, err := l.augmentation.plan("random crop layer", inputShape); err != nil {
		return nil, nil, err
	}
	return []int{l.height, l.width, inputShape[2]}, nil, nil
}

// Build checks the layer and fixes its key.
func (l *RandomCropLayer) Build(inputShape []int, rng *rand.Rand) ([]int, error) {
	out, err := l.checkAndBuild(l.CheckConfig, l.plan, inputShape, rng)
	if err == nil {
		l.in = [3]int(inputShape)
	}
	return out, err
}

// resizeParams is what the layer does outside training, and to images
// smaller than its window: Keras' smart_resize.
func (l *RandomCropLayer) resizeParams() ops.ResizeParams {
	p := ops.ResizeParams{OutH: l.height, OutW: l.width, Interpolation: ops.InterpolationBilinear}
	p.Top, p.Left, p.BoxH, p.BoxW = smartResizeBox(l.in[0], l.in[1], l.height, l.width)
	return p
}

// Call adds the random windows to a training graph (ops.ImageTransform
// shifting each image by its window's offsets, then Crop2D), and the
// resizing (ops.Resize) to others and for images smaller than the
// window.
func (l *RandomCropLayer) Call(in Flow, _ []*gorgonia.Node) (Flow, error) {
	const what = "random crop layer"
	dh, dw := l.in[0]-l.height, l.in[1]-l.width
	if !in.Training || dh < 0 || dw < 0 {
		return resize(fmt.Sprintf("%s %q", what, l.name), in, l.in, l.resizeParams())
	}
	if dh == 0 && dw == 0 {
		return in, nil
	}
	shifted, err := l.call(what, in, ops.TransformParams{Kind: ops.TransformCrop, CropH: l.height, CropW: l.width})
	if err != nil {
		return Flow{}, err
	}
	x, err := ops.Crop2D(shifted.Node, 0, dh, 0, dw)
	if err != nil {
		return Flow{}, fmt.Errorf("%s %q: %w", what, l.name, err)
	}
	return Flow{Node: x}, nil
}

// Config returns "RandomCrop" with Keras' arguments: name, height, width
// and seed.
func (l *RandomCropLayer) Config() (Config, error) {
	return Config{ClassName: l.Type(), Config: map[string]any{"name": l.name, "height": l.height, "width": l.width, "seed": l.configSeed()}}, nil
}

func randomCropFromConfig(args map[string]any) (Layer, error) {
	var a struct {
		baseArgs
		Height *int    `json:"height"`
		Width  *int    `json:"width"`
		Seed   *uint64 `json:"seed"`
	}
	if err := configargs.Decode(args, &a); err != nil {
		return nil, err
	}
	if a.Height == nil {
		return nil, missing("height")
	}
	if a.Width == nil {
		return nil, missing("width")
	}
	var opts []AugmentOption
	if a.Seed != nil {
		opts = append(opts, Seed(*a.Seed))
	}
	for _, o := range a.nameOptions() {
		opts = append(opts, o)
	}
	return RandomCrop(*a.Height, *a.Width, opts...), nil
}

// ONNX adds what the layer does in Predict, the resizing, to an ONNX
// graph (onnxResize).
func (l *RandomCropLayer) ONNX(b ONNXGraph, in string) (string, error) {
	return onnxResize(b, in, l.in, l.resizeParams())
}
