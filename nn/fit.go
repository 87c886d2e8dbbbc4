package nn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gokeras/gokeras/internal/shapes"

	"github.com/gokeras/gokeras/metrics"
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
	shuffle                                        bool
	validation                                     Dataset
	validationSplit                                float64
	verbose                                        int
	seed                                           uint64
	seeded                                         bool
	out                                            io.Writer
	now                                            func() time.Time
}

func defaultRunConfig() runConfig {
	return runConfig{epochs: 1, batchSize: 32, shuffle: true, verbose: 1, out: os.Stdout, now: time.Now}
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

// BatchSize sets the samples per step (Keras' default: 32).
func BatchSize(n int) Option {
	return func(c *runConfig) error {
		if n <= 0 {
			return fmt.Errorf("batch size must be positive, got %d", n)
		}
		c.batchSize = n
		return nil
	}
}

// StepsPerEpoch ends each epoch after n batches (Keras' steps_per_epoch),
// for quick runs on part of the data.
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

// Shuffle says whether Fit shuffles the samples before each epoch
// (Keras' default: true).
func Shuffle(on bool) Option { return func(c *runConfig) error { c.shuffle = on; return nil } }

// ValidationData evaluates the model on data after each epoch, reported
// as val_loss and val_ metrics.
func ValidationData(data Dataset) Option {
	return func(c *runConfig) error {
		if data == nil || data.Len() == 0 {
			return errors.New("validation data is empty")
		}
		c.validation = data
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
// 2 one line per epoch.
func Verbose(level int) Option {
	return func(c *runConfig) error {
		if level < 0 || level > 2 {
			return fmt.Errorf("verbose must be 0, 1 or 2, got %d", level)
		}
		c.verbose = level
		return nil
	}
}

// Seed fixes the shuffling: the same seed gives the same batches.
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

// Get returns the per-epoch values of a figure, e.g. Get("val_accuracy").
func (h *History) Get(key string) []float64 { return h.Values[key] }

func (h *History) add(epoch int, logs []logEntry) {
	if h.Values == nil {
		h.Values = map[string][]float64{}
	}
	h.Epochs = append(h.Epochs, epoch)
	for _, l := range logs {
		if _, ok := h.Values[l.name]; !ok {
			h.Keys = append(h.Keys, l.name)
		}
		h.Values[l.name] = append(h.Values[l.name], l.value)
	}
}

// checkData validates a dataset against the model, building the model from
// the data's sample shape if it is not built yet.
func (m *Sequential) checkData(what string, data Inputs) error {
	if data == nil || data.Len() == 0 {
		return fmt.Errorf("%s: no samples given", what)
	}
	sample := data.SampleShape()
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
	if ds, ok := data.(Dataset); ok && m.compiled != nil {
		if err := m.compiled.loss.CheckLabels(ds.LabelShape(), m.outShape); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// Fit trains the model, like Keras' fit: Epochs(1), BatchSize(32),
// shuffled each epoch, the last partial batch trained as well, progress in
// Keras' format. It stops between steps when ctx is cancelled, returning
// the history so far and an error wrapping ctx.Err().
func (m *Sequential) Fit(ctx context.Context, data Dataset, opts ...Option) (*History, error) {
	cfg, err := buildRunConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	if m.compiled == nil {
		return nil, fmt.Errorf("fit: %w", m.notCompiled())
	}
	if err := m.checkData("fit", data); err != nil {
		return nil, err
	}
	validation := cfg.validation
	if cfg.validationSplit > 0 {
		if data, validation, err = splitForValidation(data, cfg.validationSplit); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	}
	if validation != nil {
		if err := m.checkData("fit: validation data", validation); err != nil {
			return nil, err
		}
	}
	n := data.Len()
	steps := (n + cfg.batchSize - 1) / cfg.batchSize
	if cfg.stepsPerEpoch > 0 {
		if cfg.stepsPerEpoch > steps {
			return nil, fmt.Errorf("fit: %d steps per epoch at batch size %d need %d samples, but there are %d",
				cfg.stepsPerEpoch, cfg.batchSize, cfg.stepsPerEpoch*cfg.batchSize, n)
		}
		steps = cfg.stepsPerEpoch
	}
	if cfg.initialEpoch >= cfg.epochs {
		return nil, fmt.Errorf("fit: initial epoch %d is not before the last epoch %d", cfg.initialEpoch, cfg.epochs)
	}
	seed := cfg.seed
	if !cfg.seeded {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x73687566666c65)) // stream "shuffle"
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	labelCols := labelColumns(data.LabelShape())
	hist := &History{}
	for epoch := cfg.initialEpoch; epoch < cfg.epochs; epoch++ {
		if cfg.verbose > 0 {
			if _, err := fmt.Fprintf(cfg.out, "Epoch %d/%d\n", epoch+1, cfg.epochs); err != nil {
				return hist, fmt.Errorf("fit: writing progress: %w", err)
			}
		}
		if cfg.shuffle {
			rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		logs, err := m.runEpoch(ctx, data, validation, order, steps, labelCols, epoch, cfg)
		if err != nil {
			return hist, err
		}
		hist.add(epoch, logs)
	}
	return hist, nil
}

// runEpoch trains one epoch over the first steps batches of order and
// writes its progress; it returns the epoch's figures.
func (m *Sequential) runEpoch(ctx context.Context, data, validation Dataset, order []int, steps, labelCols, epoch int, cfg runConfig) ([]logEntry, error) {
	c := m.compiled
	for _, mt := range c.metrics {
		mt.Reset()
	}
	var lossMean metrics.Mean
	prog := newProgress(cfg.out, cfg.verbose, steps, cfg.now)
	logs := make([]logEntry, 1+len(c.metrics))
	for step := 0; step < steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fit: stopped at epoch %d/%d, step %d/%d: %w", epoch+1, cfg.epochs, step+1, steps, err)
		}
		lo := step * cfg.batchSize
		idx := order[lo:min(lo+cfg.batchSize, len(order))]
		p, err := m.program(len(idx), labelCols, modeTrain)
		if err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		loss, err := m.trainStep(p, data, idx)
		if err != nil {
			return nil, fmt.Errorf("fit: epoch %d/%d, step %d/%d: %w", epoch+1, cfg.epochs, step+1, steps, err)
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return nil, fmt.Errorf("fit: epoch %d/%d, step %d/%d: %w (%v): training diverged; lower the learning rate (now %g) or check the data for NaN or huge values",
				epoch+1, cfg.epochs, step+1, steps, ErrNonFiniteLoss, loss, c.optimizer.LearningRate())
		}
		lossMean.Add(loss, float64(len(idx)))
		logs[0] = logEntry{"loss", lossMean.Result()}
		for i, mt := range c.metrics {
			logs[1+i] = logEntry{mt.Name(), mt.Result()}
		}
		prog.update(step+1, logs)
	}
	if validation != nil {
		valLogs, err := m.evaluate(ctx, validation, cfg.batchSize, nil)
		if err != nil {
			return nil, fmt.Errorf("fit: validation after epoch %d: %w", epoch+1, err)
		}
		for _, l := range valLogs {
			logs = append(logs, logEntry{"val_" + l.name, l.value})
		}
	}
	if err := prog.finish(steps, logs); err != nil {
		return nil, fmt.Errorf("fit: writing progress: %w", err)
	}
	return logs, nil
}

// splitForValidation holds out the last fraction of data, as Keras does.
func splitForValidation(data Dataset, fraction float64) (train, val Dataset, err error) {
	n := data.Len()
	at := int(float64(n) * (1 - fraction))
	if at <= 0 || at >= n {
		return nil, nil, fmt.Errorf("validation split %v of %d samples leaves no samples for training or for validation", fraction, n)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return &subset{Dataset: data, indices: all[:at]}, &subset{Dataset: data, indices: all[at:]}, nil
}
