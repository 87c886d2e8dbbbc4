package nn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/losses"
)

// ErrNonFiniteLoss is wrapped by the error Fit returns when the loss
// becomes NaN or infinite.
var ErrNonFiniteLoss = errors.New("the loss is not a finite number")

// Option adjusts Fit, Evaluate or Predict, like Keras' keyword arguments.
// Each call uses the options that concern it: Evaluate and Predict read
// BatchSize, Verbose and Output.
type Option func(*runConfig) error

type runConfig struct {
	epochs, batchSize, stepsPerEpoch, initialEpoch int
	initialStep                                    int
	shuffle, throughput                            bool
	callbacks                                      []Callback
	validation                                     data.Dataset
	validationSplit                                float64
	verbose                                        int
	seed                                           uint64
	seeded                                         bool
	out                                            io.Writer
	now                                            func() time.Time
	classWeight                                    map[int]float64
	sampleWeight                                   []float32
	// temporal: sampleWeight holds a weight per step of each sample
	// (TemporalSampleWeight).
	temporal bool
	// serialSteps: see PipelineSteps.
	serialSteps bool
	// valStream is ValidationData's stream, read for validationSteps
	// batches (0: to its end) after each epoch.
	valStream       *data.Stream
	validationSteps int
	// steps is Evaluate's and Predict's Steps; batchSizeSet says BatchSize
	// was given, which a stream refuses.
	steps        int
	batchSizeSet bool
}

func defaultRunConfig() runConfig {
	return runConfig{epochs: 1, batchSize: 32, shuffle: true, verbose: 1, out: os.Stdout, now: time.Now}
}

// PipelineSteps sets whether Fit may start a training step on the device
// before the one before it has finished (true, the default), so that a GPU
// never waits for the host: see AsyncBatchHooks for when it does. False
// runs each step to its end before the next starts, on any device: slower,
// for debugging and timing. The results are the same either way.
func PipelineSteps(on bool) Option {
	return func(c *runConfig) error {
		c.serialSteps = !on
		return nil
	}
}

func buildRunConfig(opts []Option) (runConfig, error) {
	c := defaultRunConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ClassWeight weighs each training sample's loss by its class's weight,
// Keras' class_weight: the keys must be the classes 0 to n-1, the
// columns of one-hot labels or the values of sparse ones. The loss Fit
// trains on and reports is then Σ weightᵢ·lossᵢ / batch, as Keras reduces
// it; metrics and validation are not weighted.
func ClassWeight(weights map[int]float64) Option {
	return func(c *runConfig) error {
		for k := range len(weights) {
			w, ok := weights[k]
			if !ok {
				return fmt.Errorf("ClassWeight: the keys must be the classes 0 to %d, but %d is missing", len(weights)-1, k)
			}
			if !(w >= 0) || math.IsInf(w, 0) {
				return fmt.Errorf("ClassWeight: class %d has weight %v; weights must be finite numbers >= 0", k, w)
			}
		}
		c.classWeight = weights
		return nil
	}
}

// SampleWeight weighs each training sample's loss, Keras' sample_weight:
// one weight per sample of the data given to Fit, in its order (with
// ValidationSplit, the weights of the samples held out are unused). With
// ClassWeight too, a sample's weight is the product.
func SampleWeight(weights []float32) Option {
	return func(c *runConfig) error {
		for i, w := range weights {
			if !(w >= 0) || math.IsInf(float64(w), 0) {
				return fmt.Errorf("SampleWeight: sample %d has weight %v; weights must be finite numbers >= 0", i, w)
			}
		}
		c.sampleWeight, c.temporal = weights, false
		return nil
	}
}

// TemporalSampleWeight weighs each step of each training sample's loss, for
// a model whose output has several steps, (None, steps, n): weights holds
// steps weights per sample of the data given to Fit, in its order (sample
// i's step t at i·steps + t), as Keras 2 takes a sample_weight of shape
// (samples, steps) (its sample_weight_mode="temporal"). The loss is then
// Σ w·loss / (batch·steps), as Keras reduces it. It replaces SampleWeight.
func TemporalSampleWeight(weights []float32) Option {
	return func(c *runConfig) error {
		if err := SampleWeight(weights)(c); err != nil {
			return fmt.Errorf("Temporal%w", err)
		}
		c.temporal = true
		return nil
	}
}

// checkClassWeight refuses ClassWeight for an output of several steps, as
// Keras refuses class_weight for targets of 3 or more dimensions.
func (m *Sequential) checkClassWeight(cfg runConfig) error {
	if cfg.classWeight != nil && len(m.outShapes) == 1 && len(m.outShapes[0]) > 1 {
		return fmt.Errorf("fit: ClassWeight is not supported for model %q's output of shape %s, of several steps, as Keras does not support class_weight for 3+ dimensional targets: weigh the samples with SampleWeight", m.name, shapes.String(m.outShapes[0]))
	}
	return nil
}

// weigher returns the function that fills a batch's sample weights from
// cfg's SampleWeight and ClassWeight, nil when neither is given.
// The function fills dst with steps weights per sample of the batch: the
// steps of the model's outputs for TemporalSampleWeight, else 1.
func (cfg runConfig) weigher(n, labelCols, steps int) (func(idx []int, labels, dst []float32) error, error) {
	if cfg.sampleWeight == nil && cfg.classWeight == nil {
		return nil, nil
	}
	if cfg.temporal {
		if len(cfg.sampleWeight) < n*steps {
			return nil, fmt.Errorf("TemporalSampleWeight has %d weights for %d samples of %d steps: give one per step of each sample", len(cfg.sampleWeight), n, steps)
		}
		return func(idx []int, _, dst []float32) error {
			for j, i := range idx {
				copy(dst[j*steps:(j+1)*steps], cfg.sampleWeight[i*steps:(i+1)*steps])
			}
			return nil
		}, nil
	}
	if cfg.sampleWeight != nil && len(cfg.sampleWeight) < n {
		return nil, fmt.Errorf("SampleWeight has %d weights for %d samples: give one per sample", len(cfg.sampleWeight), n)
	}
	classes := labelCols
	if classes == 1 && cfg.classWeight != nil {
		classes = len(cfg.classWeight) // sparse labels: any of the keys
	}
	if cfg.classWeight != nil && len(cfg.classWeight) != classes {
		return nil, fmt.Errorf("ClassWeight has %d classes but the labels have %d: give a weight for each class", len(cfg.classWeight), classes)
	}
	return func(idx []int, labels, dst []float32) error {
		for j, i := range idx {
			w := float32(1)
			if cfg.sampleWeight != nil {
				w = cfg.sampleWeight[i]
			}
			if cfg.classWeight != nil {
				class := 0
				if labelCols == 1 {
					v := labels[j]
					if v != float32(int(v)) || v < 0 || int(v) >= classes {
						return fmt.Errorf("ClassWeight: sample %d has label %v, not a class in [0, %d)", i, v, classes)
					}
					class = int(v)
				} else {
					row := labels[j*labelCols : (j+1)*labelCols]
					for c, v := range row {
						if v > row[class] {
							class = c
						}
					}
				}
				w *= float32(cfg.classWeight[class])
			}
			dst[j] = w
		}
		return nil
	}, nil
}

// outputSteps is the steps of the model's outputs, 1 for outputs of shape
// (None, n), and an error naming them when they differ.
func (m *Sequential) outputSteps() (int, error) {
	steps := make([]int, len(m.outShapes))
	for i, s := range m.outShapes {
		steps[i] = 1
		if len(s) > 1 {
			steps[i] = shapes.Size(s[:len(s)-1])
		}
	}
	for i, n := range steps {
		if n != steps[0] {
			return 0, fmt.Errorf("model %q's outputs %q and %q have %d and %d steps: TemporalSampleWeight needs outputs of as many steps (SampleWeight weighs any)", m.name, m.OutputNames()[0], m.OutputNames()[i], steps[0], n)
		}
	}
	return steps[0], nil
}

// Epochs sets how many epochs Fit trains (Keras' default: 1).
func Epochs(n int) Option {
	return func(c *runConfig) error {
		if n <= 0 {
			return fmt.Errorf("epochs must be positive, got %d", n)
		}
		c.epochs = n
		return nil
	}
}

// BatchSize sets the samples per step (Keras' default: 32). A batch size
// larger than the data is taken as the data's size, as Keras does: Fit,
// Evaluate, Predict and the validation never allocate by this number.
func BatchSize(n int) Option {
	return func(c *runConfig) error {
		if n <= 0 {
			return fmt.Errorf("batch size must be positive, got %d", n)
		}
		c.batchSize, c.batchSizeSet = n, true
		return nil
	}
}

// StepsPerEpoch ends each epoch after n batches (Keras' steps_per_epoch),
// for quick runs on part of the data, and says how long an epoch of a
// stream without end is.
func StepsPerEpoch(n int) Option {
	return func(c *runConfig) error {
		if n <= 0 {
			return fmt.Errorf("steps per epoch must be positive, got %d", n)
		}
		c.stepsPerEpoch = n
		return nil
	}
}

// InitialEpoch starts counting at epoch n (0-based), to resume a run.
func InitialEpoch(n int) Option {
	return func(c *runConfig) error {
		if n < 0 {
			return fmt.Errorf("initial epoch must not be negative, got %d", n)
		}
		c.initialEpoch = n
		return nil
	}
}

// InitialStep skips the first n steps of the initial epoch, to resume a
// run that was interrupted mid-epoch (see InterruptedError and
// Sequential.SaveCheckpoint). That epoch's running loss and metrics cover
// only the steps run after resuming; the weights end as if the run had
// never stopped.
func InitialStep(n int) Option {
	return func(c *runConfig) error {
		if n < 0 {
			return fmt.Errorf("initial step must not be negative, got %d", n)
		}
		c.initialStep = n
		return nil
	}
}

// ShowThroughput appends the training throughput to each epoch's progress
// line, e.g. " - 3846 samples/s": the samples trained per second of
// training, leaving out the first step (which pays for setting up the
// graph, as Keras' per-step time does) and the validation. Off by default,
// so the line is exactly Keras'.
func ShowThroughput() Option { return func(c *runConfig) error { c.throughput = true; return nil } }

// Shuffle says whether Fit shuffles the samples before each epoch
// (Keras' default: true).
func Shuffle(on bool) Option { return func(c *runConfig) error { c.shuffle = on; return nil } }

// ValidationData evaluates the model on data after each epoch, reported
// as val_loss and val_ metrics: a data.Dataset, or a *data.Stream, read
// from its start each epoch, for ValidationSteps batches or to its end.
func ValidationData(ds data.Source) Option {
	return func(c *runConfig) error {
		switch v := ds.(type) {
		case *data.Stream:
			if err := v.Err(); err != nil {
				return fmt.Errorf("validation data: %w", err)
			}
			c.valStream, c.validation = v, nil
		case data.Dataset:
			if v.Len() == 0 {
				return errors.New("validation data is empty")
			}
			c.validation, c.valStream = v, nil
		case nil:
			return errors.New("validation data is empty")
		default:
			return fmt.Errorf("validation data is a %T: give a data.Dataset or a *data.Stream", ds)
		}
		return nil
	}
}

// ValidationSplit holds out the last fraction of the training samples
// (taken before shuffling, as Keras does) and validates on them each epoch.
func ValidationSplit(fraction float64) Option {
	return func(c *runConfig) error {
		if !(fraction > 0 && fraction < 1) {
			return fmt.Errorf("validation split must be between 0 and 1, got %v", fraction)
		}
		c.validationSplit = fraction
		return nil
	}
}

// Verbose sets the output: 0 silent, 1 a progress bar (Keras' default),
// 2 one line per epoch. Fit draws it with a callback it puts before those
// given, as Keras' fit adds its ProgbarLogger.
func Verbose(level int) Option {
	return func(c *runConfig) error {
		if level < 0 || level > 2 {
			return fmt.Errorf("verbose must be 0, 1 or 2, got %d", level)
		}
		c.verbose = level
		return nil
	}
}

// Seed fixes this Fit's shuffling: the same seed gives the same batches.
// Without it, Fit draws its seed from the model's (Sequential.SetSeed), or,
// on a model without one, from the clock.
func Seed(seed uint64) Option {
	return func(c *runConfig) error { c.seed, c.seeded = seed, true; return nil }
}

// Output sets where progress goes (default: standard output).
func Output(w io.Writer) Option {
	return func(c *runConfig) error {
		if w == nil {
			w = io.Discard
		}
		c.out = w
		return nil
	}
}

// History records the figures of each epoch, like Keras' History callback.
type History struct {
	// Epochs lists the epochs run, 0-based as in Keras' history.epoch.
	Epochs []int
	// Keys lists the figures in display order: loss, metrics, then val_ ones.
	Keys []string
	// Values maps each key to one value per epoch.
	Values map[string][]float64
}

// Get returns the per-epoch values of a figure, e.g. Get("val_accuracy"):
// Keras' history.history["val_accuracy"]. A nil History has none.
func (h *History) Get(key string) []float64 {
	if h == nil {
		return nil
	}
	return h.Values[key]
}

// Epoch returns the figures of the i-th epoch recorded (0 is the first
// this History holds, -1 the last) as Logs, the type callbacks and
// Evaluate use, or nil when there is no such epoch. A figure with fewer
// values than epochs (one a callback began to add late, as in Keras'
// history) is taken to hold the last epochs' values.
func (h *History) Epoch(i int) Logs {
	if h == nil {
		return nil
	}
	if i < 0 {
		i += len(h.Epochs)
	}
	if i < 0 || i >= len(h.Epochs) {
		return nil
	}
	logs := Logs{}
	for _, k := range h.Keys {
		v := h.Values[k]
		if j := i - (len(h.Epochs) - len(v)); j >= 0 && j < len(v) {
			logs[k] = v[j]
		}
	}
	return logs
}

func (h *History) add(epoch int, logs []logEntry) {
	if h.Values == nil {
		h.Values = map[string][]float64{}
	}
	h.Epochs = append(h.Epochs, epoch)
	for _, l := range logs {
		if _, ok := h.Values[l.Name]; !ok {
			h.Keys = append(h.Keys, l.Name)
		}
		h.Values[l.Name] = append(h.Values[l.Name], l.Value)
	}
}

// checkData validates a dataset against the model, building the model from
// the data's sample shape if it is not built yet.
func (m *Sequential) checkData(what string, in data.Inputs) error {
	if in == nil || in.Len() == 0 {
		return fmt.Errorf("%s: no samples given", what)
	}
	if n := in.Len(); n < 0 {
		return fmt.Errorf("%s: the data's Len() is %d: a data.Dataset or data.Inputs must count its samples from 0", what, n)
	}
	return m.checkShapes(what, in)
}

// checkShapes is checkData's check of the shapes and parts of the samples
// and labels.
func (m *Sequential) checkShapes(what string, in data.Inputs) error {
	sample := in.SampleShape()
	if err := m.checkParts(what, in); err != nil {
		return err
	}
	if !m.built {
		if m.inputShape != nil && !shapes.Equal(m.inputShape, sample) {
			return fmt.Errorf("%s: the model takes samples of shape %s but the data has samples of shape %s",
				what, shapes.String(m.inputShape), shapes.String(sample))
		}
		if err := m.Build(sample...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if !shapes.Equal(m.inputShape, sample) {
		return fmt.Errorf("%s: the model takes samples of shape %s but the data has samples of shape %s",
			what, shapes.String(m.inputShape), shapes.String(sample))
	}
	if ds, ok := in.(data.Dataset); ok && m.compiled != nil {
		parts := data.LabelParts(ds)
		if len(m.outShapes) == 1 && len(parts) > 1 {
			return fmt.Errorf("%s: the data's labels have %d parts (%s) but model %q has one output: give it labels of one shape, or make a model of %d outputs",
				what, len(parts), partsText(parts), m.name, len(parts))
		}
		if len(m.outShapes) > 1 && len(parts) != len(m.outShapes) {
			return fmt.Errorf("%s: model %q has %d outputs (%s) but the data's labels have %d part(s): give one label per output, in order, with data.LabelTuple or data.FuncParts",
				what, m.name, len(m.outShapes), strings.Join(m.OutputNames(), ", "), len(parts))
		}
		if len(m.outShapes) == 1 {
			parts = [][]int{ds.LabelShape()}
		}
		for i, h := range m.compiled.heads {
			if err := checkLabels(h.loss, parts[i], m.outShapes[i]); err != nil {
				return fmt.Errorf("%s: %s%w", what, headWhat(m.compiled.heads, i), err)
			}
		}
	}
	return nil
}

// checkLabels checks that labels of shape label (of a sample) fit loss
// with an output of shape out. An output of several steps, (steps..., n),
// takes labels of the same steps, (steps..., n), or class indices
// (steps...) or (steps..., 1) for a sparse loss, which the loss reads step
// by step, as Keras computes a loss over the last axis; or the same values
// in one row, (steps·n,) or (steps,).
func checkLabels(loss losses.Loss, label, out []int) error {
	if len(out) < 2 {
		return loss.CheckLabels(label, out)
	}
	steps, n := out[:len(out)-1], out[len(out)-1:]
	size := shapes.Size(steps)
	var step []int // the labels of a step
	switch {
	case len(label) >= len(steps) && slices.Equal(label[:len(steps)], steps):
		step = label[len(steps):]
	case len(label) == 1 && label[0] == size*n[0]:
		step = n
	case len(label) == 1 && label[0] == size:
		step = nil
	default:
		return fmt.Errorf("labels of shape %s do not fit a model output of shape %s: an output of several steps takes labels of the same steps, shape %s, or %s of class indices for a sparse loss",
			shapes.String(label), shapes.String(out), shapes.String(out), shapes.String(steps))
	}
	if err := loss.CheckLabels(step, n); err != nil {
		return fmt.Errorf("labels of shape %s for a model output of shape %s, read step by step: %w", shapes.String(label), shapes.String(out), err)
	}
	return nil
}

// checkParts checks that the data has a part for each of the model's
// inputs, of the input's shape.
func (m *Sequential) checkParts(what string, in data.Inputs) error {
	parts := data.InputParts(in)
	if m.inputParts == nil {
		if len(parts) > 1 {
			return fmt.Errorf("%s: the data's samples have %d parts (%s) but model %q has one input: give it samples of one shape, or make a model of %d inputs",
				what, len(parts), partsText(parts), m.name, len(parts))
		}
		return nil
	}
	if len(parts) != len(m.inputParts) || !slices.EqualFunc(parts, m.inputParts, shapes.Equal) {
		return fmt.Errorf("%s: model %q has %d inputs, of shapes %s, but the data's samples have %d part(s), of shapes %s: give one part per input, in order, with data.InputTuple or data.FuncParts",
			what, m.name, len(m.inputParts), partsText(m.inputParts), len(parts), partsText(parts))
	}
	return nil
}

func partsText(parts [][]int) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = shapes.String(p)
	}
	return strings.Join(s, ", ")
}

// Fit trains the model, like Keras' fit: Epochs(1), BatchSize(32),
// shuffled each epoch, the last partial batch trained as well, progress in
// Keras' format, Callbacks called at Keras' hooks.
//
// src is a data.Dataset, which Fit shuffles and batches, or a *data.Stream,
// read in order with each element a batch, as Keras' fit reads a tf.data
// dataset or a generator: batching and shuffling are then the stream's
// own (BatchSize is refused, Shuffle has no effect), and an epoch ends
// when a pass of the stream ends, or after StepsPerEpoch batches, which a
// stream without end needs (Fit says so before training). With
// StepsPerEpoch other than the stream's length the epochs read on through
// one pass, and a stream that runs out stops training with Keras' warning.
// A stream's error (a generator's, a Map's) stops Fit with that error,
// saying the epoch and step; its goroutines are stopped before Fit returns.
//
// Each epoch's shuffle depends only on the Seed and the epoch's number, so a
// run resumed from a checkpoint (InitialEpoch, InitialStep) sees the same
// batches as one that was never stopped.
//
// Fit stops at the next step boundary when ctx is cancelled: it finishes
// the progress line and returns the history so far with an
// *InterruptedError, which wraps ctx.Err() and says where training stood.
// The validation after an epoch's last step is not interrupted: it runs to
// the end so the epoch completes, and Fit stops before the next one. A nil
// ctx is taken as context.Background(): nothing cancels the run. With a
// strategy, a replica whose ctx is cancelled says so with its next step's
// results, and every replica stops after that step, alike: the
// InterruptedError's Epoch and Step are the same on every rank, and rank
// 0's SaveCheckpoint at that point resumes the whole job.
//
// While Fit runs, another Fit, Evaluate or Predict of the same model
// returns an error that matches ErrBusy.
func (m *Sequential) Fit(ctx context.Context, src data.Source, opts ...Option) (*History, error) {
	if m == nil {
		return nil, fmt.Errorf("fit: %w", ErrNilModel)
	}
	if err := m.begin("fit", fitting); err != nil {
		return nil, err
	}
	defer m.end()
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := buildRunConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	if m.compiled == nil {
		return nil, fmt.Errorf("fit: %w", m.notCompiled())
	}
	ds, _ := src.(data.Dataset)
	switch s := src.(type) {
	case *data.Stream:
		return m.fitStream(ctx, cfg, s)
	case data.Dataset, nil:
	default:
		return nil, fmt.Errorf("fit: the data is a %T: give a data.Dataset or a *data.Stream", src)
	}
	if err := m.checkValidationStream(&cfg); err != nil {
		return nil, err
	}
	if err := m.checkData("fit", ds); err != nil {
		return nil, err
	}
	wSteps := 1 // the weights per sample
	if cfg.temporal {
		if wSteps, err = m.outputSteps(); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	}
	switch {
	case cfg.temporal && wSteps == 1:
		return nil, fmt.Errorf("fit: TemporalSampleWeight weighs the steps of an output of several steps, (None, steps, n), but model %q's output has shape %s: weigh its samples with SampleWeight", m.name, shapes.String(m.outShapes[0]))
	case cfg.temporal && len(cfg.sampleWeight) != ds.Len()*wSteps:
		return nil, fmt.Errorf("fit: TemporalSampleWeight has %d weights for %d samples of %d steps: give one per step of each sample (%d)", len(cfg.sampleWeight), ds.Len(), wSteps, ds.Len()*wSteps)
	case !cfg.temporal && cfg.sampleWeight != nil && len(cfg.sampleWeight) != ds.Len():
		return nil, fmt.Errorf("fit: SampleWeight has %d weights for %d samples: give one per sample", len(cfg.sampleWeight), ds.Len())
	}
	validation := cfg.validation
	if cfg.validationSplit > 0 {
		if ds, validation, err = splitForValidation(ds, cfg.validationSplit); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	}
	if validation != nil {
		if err := m.checkData("fit: validation data", validation); err != nil {
			return nil, err
		}
	}
	n := ds.Len()
	// A batch larger than the data is all of it, as in Keras; the
	// validation clamps to its own size.
	cfg.batchSize = min(cfg.batchSize, n)
	steps := stepsFor(n, cfg.batchSize)
	if cfg.stepsPerEpoch > 0 {
		if cfg.stepsPerEpoch > steps {
			return nil, fmt.Errorf("fit: %d steps per epoch at batch size %d need at least %s samples, but there are %d: ask for at most %d steps per epoch",
				cfg.stepsPerEpoch, cfg.batchSize, samplesFor(cfg.stepsPerEpoch, cfg.batchSize), n, steps)
		}
		steps = cfg.stepsPerEpoch
	}
	if cfg.initialEpoch >= cfg.epochs {
		return nil, fmt.Errorf("fit: initial epoch %d is not before the last epoch %d", cfg.initialEpoch, cfg.epochs)
	}
	if cfg.initialStep >= steps {
		return nil, fmt.Errorf("fit: initial step %d is not before the epoch's last step %d", cfg.initialStep, steps)
	}
	if !cfg.seeded && m.seeded {
		cfg.seed, cfg.seeded = m.nextFitSeed(), true
	}
	if !cfg.seeded {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	if m.compiled.strategy != nil {
		// Before the progress bar: ranks other than 0 draw none.
		if err := m.distributedFit(&cfg, n, steps, validation, ds); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	}
	cbs := callbackList(cfg.callbacks)
	if cfg.verbose > 0 {
		// Keras' fit adds its ProgbarLogger when verbose is not 0; first, so
		// that the progress line comes before the callbacks' messages.
		cbs = append(callbackList{newProgbarLogger(cfg, n)}, cbs...)
	}
	if cfg.classWeight != nil && len(m.outShapes) > 1 {
		return nil, fmt.Errorf("fit: ClassWeight is only supported for models of one output, as in Keras; model %q has %d: weigh its samples with SampleWeight", m.name, len(m.outShapes))
	}
	if err := m.checkClassWeight(cfg); err != nil {
		return nil, err
	}
	weigh, err := cfg.weigher(n, shapes.Size(ds.LabelShape()), wSteps)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	r := &fitRun{m: m, cfg: cfg, data: ds, validation: validation, valStream: cfg.valStream, steps: steps,
		labels: m.labelLayoutOf(ds), order: make([]int, n), callbacks: cbs, weigh: weigh, weighSteps: wSteps}
	return r.run(ctx)
}

// fitRun is one call of Fit.
type fitRun struct {
	m                *Sequential
	cfg              runConfig
	data, validation data.Dataset
	// valStream is the validation data when it is a stream; feed reads
	// the training data when it is one (see stream.go).
	valStream *data.Stream
	feed      *streamFeed
	// endedRows is the samples of the step whose batch hooks run.
	endedRows int
	steps     int
	labels    labelLayout
	order     []int
	callbacks callbackList
	hist      History
	// weigh fills each batch's sample weights, weighSteps per sample;
	// nil: unweighted.
	weigh      func(idx []int, labels, dst []float32) error
	weighSteps int
}

func (r *fitRun) run(ctx context.Context) (*History, error) {
	m, cfg := r.m, r.cfg
	m.stopTraining.Store(false)
	planner, _ := r.data.(data.BatchPlanner) // Prefetch: told each epoch's batches
	if planner != nil {
		defer planner.StopBatches()
	}
	if r.feed != nil {
		defer r.feed.close()
	}
	params := Params{Epochs: cfg.epochs, InitialEpoch: cfg.initialEpoch, Steps: r.steps, Verbose: cfg.verbose, Output: cfg.out}
	for _, cb := range r.callbacks {
		cb.SetModel(m)
		cb.SetParams(params)
	}
	if err := r.hooks("on_train_begin", func(cb Callback) error { return cb.OnTrainBegin(Logs{}) }); err != nil {
		return &r.hist, fmt.Errorf("fit: %w", err)
	}
	last := Logs{}
	for epoch := cfg.initialEpoch; epoch < cfg.epochs; epoch++ {
		first := 0
		if epoch == cfg.initialEpoch {
			first = cfg.initialStep
		}
		if err := r.stopNow(ctx); err != nil {
			return &r.hist, &InterruptedError{Epoch: epoch, Step: first, Epochs: cfg.epochs, Steps: r.steps, Err: err}
		}
		if err := r.hooks("on_epoch_begin", func(cb Callback) error { return cb.OnEpochBegin(epoch, Logs{}) }); err != nil {
			return &r.hist, fmt.Errorf("fit: epoch %d/%d: %w", epoch+1, cfg.epochs, err)
		}
		shuffleOrder(r.order, cfg.shuffle, cfg.seed, epoch)
		if s := m.compiled.strategy; planner != nil && s != nil {
			// This replica's shards, when they are all of one size but
			// the last; else nothing is gathered ahead.
			if cfg.batchSize%s.Size() == 0 {
				planner.PlanBatches(r.shardOrder(s), cfg.batchSize/s.Size(), first, r.steps)
			}
		} else if planner != nil {
			planner.PlanBatches(r.order, cfg.batchSize, first, r.steps)
		}
		if r.feed != nil {
			r.feed.startEpoch()
		}
		entries, err := r.runEpoch(ctx, epoch, first)
		ranOut := errors.Is(err, errRanOut)
		if err != nil && !ranOut {
			return &r.hist, err
		}
		if ranOut {
			r.warnRanOut(epoch)
			if entries == nil {
				break
			}
		}
		logs := logsOf(entries)
		if err := r.hooks("on_epoch_end", func(cb Callback) error { return cb.OnEpochEnd(epoch, logs) }); err != nil {
			return &r.hist, fmt.Errorf("fit: epoch %d/%d: %w", epoch+1, cfg.epochs, err)
		}
		r.hist.add(epoch, entriesOf(entries, logs))
		last = logs
		if ranOut || m.stopTraining.Load() {
			break
		}
	}
	if err := r.hooks("on_train_end", func(cb Callback) error { return cb.OnTrainEnd(last) }); err != nil {
		return &r.hist, fmt.Errorf("fit: %w", err)
	}
	return &r.hist, nil
}

// shuffleStream is the random stream of the shuffles ("shuffle").
const shuffleStream = 0x73687566666c65

// shuffleOrder sets order to the sample order of an epoch: 0, 1, ... n-1,
// shuffled when asked with a generator that depends on (seed, epoch) only,
// so any epoch's order can be recomputed without replaying the ones before.
func shuffleOrder(order []int, shuffle bool, seed uint64, epoch int) {
	for i := range order {
		order[i] = i
	}
	if !shuffle {
		return
	}
	rng := rand.New(rand.NewPCG(seed, splitmix64(shuffleStream^uint64(epoch))))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
}

// splitmix64 scrambles x (Vigna's SplitMix64 finaliser), so that
// neighbouring epochs seed unrelated generators.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stopNow is the error that stops Fit before its next step, nil to go
// on (compiled.stopNow).
// hooks runs a hook on every callback, the model's weights and machines
// released meanwhile (Sequential.claim): a callback may save, load, get
// or set the weights between two steps, as Keras' callbacks do.
func (r *fitRun) hooks(hook string, call func(Callback) error) error {
	r.m.inHooks.Store(true)
	r.m.use.Unlock()
	defer func() {
		r.m.use.Lock()
		r.m.inHooks.Store(false)
	}()
	return r.callbacks.each(hook, call)
}

func (r *fitRun) stopNow(ctx context.Context) error { return r.m.compiled.stopNow(ctx) }

// InterruptedError is what Fit returns when its context is cancelled: where
// training stood. Epoch (0-based) and Step (steps done in it) are the
// InitialEpoch and InitialStep to resume at from a checkpoint of the model
// as it is now.
type InterruptedError struct {
	Epoch, Step   int
	Epochs, Steps int
	Err           error // ctx.Err()
}

func (e *InterruptedError) Error() string {
	if e.Steps == 0 { // a stream's first epoch: its steps are not known
		return fmt.Sprintf("fit: interrupted in epoch %d/%d after step %d: %v", e.Epoch+1, e.Epochs, e.Step, e.Err)
	}
	return fmt.Sprintf("fit: interrupted in epoch %d/%d after step %d/%d: %v", e.Epoch+1, e.Epochs, e.Step, e.Steps, e.Err)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// runEpoch trains steps first.. of one epoch with a stepper, calling the
// batch hooks; it returns the epoch's figures, validation included.
func (r *fitRun) runEpoch(ctx context.Context, epoch, first int) ([]logEntry, error) {
	m, cfg := r.m, r.cfg
	st := r.newStepper(epoch, first)
	ended := false // a stream's pass ended
	for step := first; r.steps == 0 || step < r.steps; step++ {
		if err := r.stopNow(ctx); err != nil {
			if ferr := st.finish(); ferr != nil {
				return nil, ferr
			}
			r.callbacks.interrupted() // the progress line shows where training stopped
			return nil, &InterruptedError{Epoch: epoch, Step: st.done, Epochs: cfg.epochs, Steps: r.steps, Err: err}
		}
		if err := st.step(step); err != nil {
			if errors.Is(err, errStreamEnd) {
				ended = true
				break
			}
			if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
				// The stream's Next gave up waiting: the same as above.
				if ferr := st.finish(); ferr != nil {
					return nil, ferr
				}
				r.callbacks.interrupted()
				return nil, &InterruptedError{Epoch: epoch, Step: st.done, Epochs: cfg.epochs, Steps: r.steps, Err: cerr}
			}
			return nil, err
		}
		if m.stopTraining.Load() {
			break
		}
	}
	// Also when training stops: a step may be under way.
	if err := st.finish(); err != nil {
		return nil, err
	}
	var ranOut error
	if ended {
		switch {
		case st.done == 0 && r.steps == 0:
			return nil, fmt.Errorf("fit: epoch %d/%d: the stream gave no batches: give it samples, or check its Take and Batch(n, dropRemainder)", epoch+1, cfg.epochs)
		case r.steps == 0:
			r.steps = st.done // the epoch's length, known from now on as in Keras
		case st.done == first:
			return nil, errRanOut
		default:
			ranOut = errRanOut
		}
	}
	entries := st.entries
	if r.valStream != nil {
		valLogs, err := m.evaluateStream(context.WithoutCancel(ctx), r.valStream, cfg.validationSteps, nil, false)
		if err != nil {
			return nil, fmt.Errorf("fit: validation after epoch %d: %w", epoch+1, err)
		}
		for _, l := range valLogs {
			entries = append(entries, logEntry{Name: "val_" + l.Name, Value: l.Value})
		}
	}
	if r.validation != nil {
		// Not interrupted: the epoch completes, and Fit stops before the next.
		valLogs, err := m.evaluate(context.WithoutCancel(ctx), r.validation, cfg.batchSize, nil, false)
		if err != nil {
			return nil, fmt.Errorf("fit: validation after epoch %d: %w", epoch+1, err)
		}
		for _, l := range valLogs {
			entries = append(entries, logEntry{Name: "val_" + l.Name, Value: l.Value})
		}
	}
	return entries, ranOut
}

// stepsFor is the number of batches of at most batchSize (> 0) that n
// samples make, without overflow for any n and batchSize.
func stepsFor(n, batchSize int) int {
	steps := n / batchSize
	if n%batchSize != 0 {
		steps++
	}
	return steps
}

// samplesFor is the fewest samples that make the given number of batches
// of batchSize, (steps-1)·batchSize + 1, written out in full even where it
// exceeds the largest int.
func samplesFor(steps, batchSize int) string {
	need := new(big.Int).Mul(big.NewInt(int64(steps-1)), big.NewInt(int64(batchSize)))
	return need.Add(need, big.NewInt(1)).String()
}

// splitForValidation holds out the last fraction of data, as Keras does.
func splitForValidation(ds data.Dataset, fraction float64) (train, val data.Dataset, err error) {
	n := ds.Len()
	at := int(float64(n) * (1 - fraction))
	if at <= 0 || at >= n {
		return nil, nil, fmt.Errorf("validation split %v of %d samples leaves no samples for training or for validation", fraction, n)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if train, err = data.Subset(ds, all[:at]); err != nil {
		return nil, nil, err
	}
	if val, err = data.Subset(ds, all[at:]); err != nil {
		return nil, nil, err
	}
	return train, val, nil
}
