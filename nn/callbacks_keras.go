package nn

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/internal/atomicfile"
	"gorgonia.org/tensor"
)

// monitorMax says whether larger values of a monitored figure are better:
// mode "max", or mode "auto" (or "") when accuracyLike says so.
func monitorMax(mode, monitor string, accuracyLike func(string) bool) (bool, error) {
	switch mode {
	case "min":
		return false, nil
	case "max":
		return true, nil
	case "", "auto":
		return accuracyLike(monitor), nil
	}
	return false, fmt.Errorf("mode %q is not one of auto, min, max", mode)
}

// missingMonitor is Keras' warning when a monitored figure is not in the logs.
func missingMonitor(b *CallbackBase, what, monitor string, logs Logs) {
	b.printf("WARNING: %s is conditioned on metric `%s` which is not available. Available metrics are: %s\n",
		what, monitor, strings.Join(slices.Sorted(maps.Keys(logs)), ","))
}

// EarlyStopping stops training when a monitored figure has stopped
// improving, like keras.callbacks.EarlyStopping. Make one with
// NewEarlyStopping, which sets Keras' defaults, then change its fields.
//
// At the end of each epoch from StartFromEpoch on: a value better than the
// best so far by more than MinDelta is an improvement, which resets the
// count of epochs without one (unless a Baseline is set and not beaten);
// otherwise the count grows, and once it reaches Patience (and not in the
// first epoch) training stops. Keras 2.13 and later behave so; older Keras 2
// releases could stop on an improving epoch when Patience was 0.
type EarlyStopping struct {
	CallbackBase
	// Monitor is the figure watched (default "val_loss").
	Monitor string
	// MinDelta is the least change that counts as an improvement (default 0).
	MinDelta float64
	// Patience is the number of epochs without improvement before stopping (default 0).
	Patience int
	// Verbose 1 prints Keras' messages when stopping (default 0).
	Verbose int
	// Mode is "min", "max" or "auto" (default): max for figures whose name
	// ends in "acc", "accuracy" or "auc", min otherwise.
	Mode string
	// Baseline, when not NaN (the default, Keras' None), is a value the
	// figure must beat for an epoch to reset the patience.
	Baseline float64
	// RestoreBestWeights puts back the weights of the best epoch when
	// training stops early (default false).
	RestoreBestWeights bool
	// StartFromEpoch is the number of epochs to wait before watching (default 0).
	StartFromEpoch int

	max          bool
	wait         int
	stoppedEpoch int
	best         float64
	bestEpoch    int
	bestWeights  []*tensor.Dense
}

// NewEarlyStopping makes an EarlyStopping with Keras' defaults.
func NewEarlyStopping() *EarlyStopping {
	return &EarlyStopping{Monitor: "val_loss", Mode: "auto", Baseline: math.NaN()}
}

// StoppedEpoch is the epoch (0-based) at which training stopped, 0 if it
// did not stop early — Keras' stopped_epoch.
func (e *EarlyStopping) StoppedEpoch() int { return e.stoppedEpoch }

// BestEpoch is the epoch (0-based) with the best value — Keras' best_epoch.
func (e *EarlyStopping) BestEpoch() int { return e.bestEpoch }

func (e *EarlyStopping) OnTrainBegin(Logs) error {
	if e.Monitor == "" {
		e.Monitor = "val_loss"
	}
	var err error
	e.max, err = monitorMax(e.Mode, e.Monitor, func(m string) bool {
		return strings.HasSuffix(m, "acc") || strings.HasSuffix(m, "accuracy") || strings.HasSuffix(m, "auc")
	})
	if err != nil {
		return fmt.Errorf("EarlyStopping: %w", err)
	}
	if e.Patience < 0 {
		return fmt.Errorf("EarlyStopping: patience must not be negative, got %d", e.Patience)
	}
	e.wait, e.stoppedEpoch, e.bestEpoch, e.bestWeights = 0, 0, 0, nil
	e.best = math.Inf(1)
	if e.max {
		e.best = math.Inf(-1)
	}
	return nil
}

func (e *EarlyStopping) improves(current, reference float64) bool {
	delta := math.Abs(e.MinDelta)
	if e.max {
		return current-delta > reference
	}
	return current+delta < reference
}

func (e *EarlyStopping) OnEpochEnd(epoch int, logs Logs) error {
	current, ok := logs[e.Monitor]
	if !ok {
		missingMonitor(&e.CallbackBase, "Early stopping", e.Monitor, logs)
		return nil
	}
	if epoch < e.StartFromEpoch {
		return nil
	}
	if e.RestoreBestWeights && e.bestWeights == nil {
		// Restore the weights after the first epoch if no progress is ever made.
		if err := e.saveWeights(); err != nil {
			return err
		}
	}
	e.wait++
	if e.improves(current, e.best) {
		e.best, e.bestEpoch = current, epoch
		if e.RestoreBestWeights {
			if err := e.saveWeights(); err != nil {
				return err
			}
		}
		// Restart the count only when beating both the baseline and the best.
		if math.IsNaN(e.Baseline) || e.improves(current, e.Baseline) {
			e.wait = 0
		}
		return nil
	}
	if e.wait >= e.Patience && epoch > 0 {
		e.stoppedEpoch = epoch
		e.Model.StopTraining()
		if e.RestoreBestWeights && e.bestWeights != nil {
			if e.Verbose > 0 {
				e.printf("Restoring model weights from the end of the best epoch: %d.\n", e.bestEpoch+1)
			}
			if err := e.Model.SetWeights(e.bestWeights); err != nil {
				return fmt.Errorf("EarlyStopping: restoring the best weights: %w", err)
			}
		}
	}
	return nil
}

func (e *EarlyStopping) saveWeights() error {
	ws, err := e.Model.GetWeights()
	if err != nil {
		return fmt.Errorf("EarlyStopping: keeping the best weights: %w", err)
	}
	e.bestWeights = ws
	return nil
}

func (e *EarlyStopping) OnTrainEnd(Logs) error {
	if e.stoppedEpoch > 0 && e.Verbose > 0 {
		e.printf("Epoch %d: early stopping\n", e.stoppedEpoch+1)
	}
	return nil
}

// ModelCheckpoint saves the model at the end of each epoch, like
// keras.callbacks.ModelCheckpoint. Make one with NewModelCheckpoint, which
// sets Keras' defaults, then change its fields.
//
// Filepath is formatted as Keras formats it, with Python's str.format and
// the epoch (1-based) and the epoch's figures: "ckpt-{epoch:02d}-{val_loss:.2f}.safetensors".
// Files are safetensors (Keras writes HDF5 or its SavedModel), replaced
// atomically. A full save (SaveWeightsOnly false, Keras' default) is a
// checkpoint that Sequential.LoadCheckpoint resumes from: weights,
// optimizer state and the epoch; SaveWeightsOnly writes what
// Sequential.SaveWeights writes. Keras' save_freq in batches is not
// supported: gokeras saves once per epoch.
type ModelCheckpoint struct {
	CallbackBase
	Filepath string
	// Monitor is the figure SaveBestOnly watches (default "val_loss").
	Monitor string
	// Verbose 1 prints Keras' message on each save (default 0).
	Verbose int
	// SaveBestOnly saves only when Monitor improves on the best value so far (default false).
	SaveBestOnly bool
	// SaveWeightsOnly saves the weights alone instead of a full checkpoint (default false).
	SaveWeightsOnly bool
	// Mode is "min", "max" or "auto" (default): max when the monitored name
	// contains "acc" or starts with "fmeasure", min otherwise.
	Mode string
	// InitialValueThreshold, when not NaN (the default), is the best value
	// a first save must beat with SaveBestOnly.
	InitialValueThreshold float64
	// Metadata is stored in full checkpoints (the seed of the run, say).
	Metadata map[string]string

	max  bool
	best float64
}

// NewModelCheckpoint makes a ModelCheckpoint with Keras' defaults.
func NewModelCheckpoint(filepath string) *ModelCheckpoint {
	return &ModelCheckpoint{Filepath: filepath, Monitor: "val_loss", Mode: "auto", InitialValueThreshold: math.NaN()}
}

func (mc *ModelCheckpoint) OnTrainBegin(Logs) error {
	if mc.Filepath == "" {
		return errors.New("ModelCheckpoint: no filepath given")
	}
	if mc.Monitor == "" {
		mc.Monitor = "val_loss"
	}
	var err error
	mc.max, err = monitorMax(mc.Mode, mc.Monitor, func(m string) bool {
		return strings.Contains(m, "acc") || strings.HasPrefix(m, "fmeasure")
	})
	if err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	switch {
	case !math.IsNaN(mc.InitialValueThreshold):
		mc.best = mc.InitialValueThreshold
	case mc.max:
		mc.best = math.Inf(-1)
	default:
		mc.best = math.Inf(1)
	}
	return nil
}

func (mc *ModelCheckpoint) OnEpochEnd(epoch int, logs Logs) error {
	values := map[string]any{"epoch": epoch + 1}
	for k, v := range logs {
		values[k] = v
	}
	path, err := pyFormat(mc.Filepath, values)
	if err != nil {
		return fmt.Errorf("ModelCheckpoint: failed to format the filepath: %w", err)
	}
	if mc.SaveBestOnly {
		current, ok := logs[mc.Monitor]
		if !ok {
			mc.printf("WARNING: Can save best model only with %s available, skipping.\n", mc.Monitor)
			return nil
		}
		better := current < mc.best
		if mc.max {
			better = current > mc.best
		}
		if !better {
			if mc.Verbose > 0 {
				mc.printf("\nEpoch %d: %s did not improve from %s\n", epoch+1, mc.Monitor, pyFixed5(mc.best))
			}
			return nil
		}
		if mc.Verbose > 0 {
			mc.printf("\nEpoch %d: %s improved from %s to %s, saving model to %s\n", epoch+1, mc.Monitor, pyFixed5(mc.best), pyFixed5(current), path)
		}
		mc.best = current
	} else if mc.Verbose > 0 {
		mc.printf("\nEpoch %d: saving model to %s\n", epoch+1, path)
	}
	if mc.SaveWeightsOnly {
		err = mc.Model.SaveWeights(path)
	} else {
		err = mc.Model.SaveCheckpoint(path, Checkpoint{Epoch: epoch + 1, Metadata: mc.Metadata})
	}
	if err != nil {
		return fmt.Errorf("ModelCheckpoint: %w", err)
	}
	return nil
}

// pyFixed5 is Python's f"{x:.5f}", which writes infinities as "inf".
func pyFixed5(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return pyRepr(x)
	}
	return strconv.FormatFloat(x, 'f', 5, 64)
}

// CSVLogger writes each epoch's figures to a CSV file, like
// keras.callbacks.CSVLogger: a header "epoch" then the figures' names in
// sorted order (epoch,accuracy,loss,val_accuracy,val_loss), one row per
// epoch with epochs counted from 0, values as Python prints them, lines
// ended by "\r\n" (Python's csv module) and "NA" for a figure missing in the
// epoch training stopped at. Make one with NewCSVLogger.
//
// Unlike Keras, which appends to an open file, the file is rewritten
// atomically at the end of each epoch, so it is always a complete CSV.
type CSVLogger struct {
	CallbackBase
	Filename string
	// Separator between fields (default ',').
	Separator rune
	// Append keeps the rows of an existing file and adds to them, without
	// a second header (default false: the file is started anew).
	Append bool

	keys    []string
	content bytes.Buffer
}

// NewCSVLogger makes a CSVLogger with Keras' defaults.
func NewCSVLogger(filename string) *CSVLogger {
	return &CSVLogger{Filename: filename, Separator: ','}
}

func (c *CSVLogger) OnTrainBegin(Logs) error {
	if c.Filename == "" {
		return errors.New("CSVLogger: no filename given")
	}
	if c.Separator == 0 {
		c.Separator = ','
	}
	c.keys = nil
	c.content.Reset()
	if c.Append {
		old, err := os.ReadFile(c.Filename)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("CSVLogger: %w", err)
		}
		c.content.Write(old)
	}
	return nil
}

func (c *CSVLogger) OnEpochEnd(epoch int, logs Logs) error {
	w := csv.NewWriter(&c.content)
	w.Comma, w.UseCRLF = c.Separator, true
	if c.keys == nil {
		c.keys = slices.Sorted(maps.Keys(logs))
		if c.content.Len() == 0 { // Keras writes no header when appending to a non-empty file
			if err := w.Write(append([]string{"epoch"}, c.keys...)); err != nil {
				return fmt.Errorf("CSVLogger: %w", err)
			}
		}
	}
	row := []string{strconv.Itoa(epoch)}
	for _, k := range c.keys {
		if v, ok := logs[k]; ok {
			row = append(row, pyRepr(v))
		} else {
			row = append(row, "NA")
		}
	}
	if err := w.Write(row); err != nil {
		return fmt.Errorf("CSVLogger: %w", err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("CSVLogger: %w", err)
	}
	if err := atomicfile.WriteBytes(c.Filename, c.content.Bytes()); err != nil {
		return fmt.Errorf("CSVLogger: %w", err)
	}
	return nil
}

// kerasLR is the learning rate as Keras reports it: Keras keeps it in a
// float32 variable.
func kerasLR(lr float64) float64 { return float64(float32(lr)) }

// checkLR rejects learning rates an optimizer cannot use. 0 is allowed: a
// schedule may decay to it.
func checkLR(what string, lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("%s: the learning rate must be a finite number >= 0, got %v", what, lr)
	}
	return nil
}

// ReduceLROnPlateau multiplies the learning rate by Factor when a
// monitored figure has stopped improving for Patience epochs, like
// keras.callbacks.ReduceLROnPlateau. Make one with NewReduceLROnPlateau,
// which sets Keras' defaults, then change its fields. It adds "lr" to
// each epoch's logs.
type ReduceLROnPlateau struct {
	CallbackBase
	// Monitor is the figure watched (default "val_loss").
	Monitor string
	// Factor multiplies the learning rate, and must be below 1 (default 0.1).
	Factor float64
	// Patience is the number of epochs without improvement before reducing (default 10).
	Patience int
	// Verbose 1 prints Keras' message on each reduction (default 0).
	Verbose int
	// Mode is "min", "max" or "auto" (default): max when the monitored
	// name contains "acc", min otherwise.
	Mode string
	// MinDelta is the least change that counts as an improvement (default 1e-4).
	MinDelta float64
	// Cooldown is the number of epochs to wait after a reduction before
	// counting again (default 0).
	Cooldown int
	// MinLR is the lowest learning rate (default 0).
	MinLR float64

	max                 bool
	best                float64
	wait, cooldownCount int
}

// NewReduceLROnPlateau makes a ReduceLROnPlateau with Keras' defaults.
func NewReduceLROnPlateau() *ReduceLROnPlateau {
	return &ReduceLROnPlateau{Monitor: "val_loss", Factor: 0.1, Patience: 10, Mode: "auto", MinDelta: 1e-4}
}

func (r *ReduceLROnPlateau) OnTrainBegin(Logs) error {
	if r.Monitor == "" {
		r.Monitor = "val_loss"
	}
	if !(r.Factor < 1) || r.Factor <= 0 {
		return fmt.Errorf("ReduceLROnPlateau: the factor must be in (0, 1), got %v", r.Factor)
	}
	var err error
	r.max, err = monitorMax(r.Mode, r.Monitor, func(m string) bool { return strings.Contains(m, "acc") })
	if err != nil {
		return fmt.Errorf("ReduceLROnPlateau: %w", err)
	}
	r.best = math.Inf(1)
	if r.max {
		r.best = math.Inf(-1)
	}
	r.wait, r.cooldownCount = 0, 0
	return nil
}

func (r *ReduceLROnPlateau) improves(current float64) bool {
	if r.max {
		return current > r.best+r.MinDelta
	}
	return current < r.best-r.MinDelta
}

func (r *ReduceLROnPlateau) OnEpochEnd(epoch int, logs Logs) error {
	opt := r.Model.Optimizer()
	logs["lr"] = kerasLR(opt.LearningRate())
	current, ok := logs[r.Monitor]
	if !ok {
		missingMonitor(&r.CallbackBase, "Learning rate reduction", r.Monitor, logs)
		return nil
	}
	if r.cooldownCount > 0 {
		r.cooldownCount--
		r.wait = 0
	}
	switch {
	case r.improves(current):
		r.best, r.wait = current, 0
	case r.cooldownCount == 0:
		r.wait++
		if r.wait >= r.Patience {
			old := kerasLR(opt.LearningRate())
			if old > kerasLR(r.MinLR) {
				lr := max(old*r.Factor, r.MinLR)
				opt.SetLearningRate(lr)
				if r.Verbose > 0 {
					r.printf("\nEpoch %d: ReduceLROnPlateau reducing learning rate to %s.\n", epoch+1, pyRepr(lr))
				}
				r.cooldownCount, r.wait = r.Cooldown, 0
			}
		}
	}
	return nil
}

// LearningRateScheduler sets the learning rate at the start of each epoch
// to Schedule(epoch, current rate), like keras.callbacks.LearningRateScheduler.
// It adds "lr" to each epoch's logs.
type LearningRateScheduler struct {
	CallbackBase
	Schedule func(epoch int, lr float64) float64
	// Verbose 1 prints Keras' message each epoch (default 0).
	Verbose int
}

// NewLearningRateScheduler makes a LearningRateScheduler.
func NewLearningRateScheduler(schedule func(epoch int, lr float64) float64) *LearningRateScheduler {
	return &LearningRateScheduler{Schedule: schedule}
}

func (s *LearningRateScheduler) OnTrainBegin(Logs) error {
	if s.Schedule == nil {
		return errors.New("LearningRateScheduler: no schedule function given")
	}
	return nil
}

func (s *LearningRateScheduler) OnEpochBegin(epoch int, _ Logs) error {
	opt := s.Model.Optimizer()
	lr := s.Schedule(epoch, kerasLR(opt.LearningRate()))
	if err := checkLR(fmt.Sprintf("LearningRateScheduler: the schedule for epoch %d", epoch), lr); err != nil {
		return err
	}
	opt.SetLearningRate(lr)
	if s.Verbose > 0 {
		s.printf("\nEpoch %d: LearningRateScheduler setting learning rate to %s.\n", epoch+1, pyRepr(lr))
	}
	return nil
}

func (s *LearningRateScheduler) OnEpochEnd(_ int, logs Logs) error {
	logs["lr"] = kerasLR(s.Model.Optimizer().LearningRate())
	return nil
}
