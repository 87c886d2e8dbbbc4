package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/nn"
)

// epochTimer measures each epoch of this run: its wall time, validation
// included as in Keras' ms/step, and its steps.
type epochTimer struct {
	nn.CallbackBase
	start  time.Time
	steps  int
	epochs map[int]epochTime // by 0-based epoch
}

type epochTime struct {
	elapsed time.Duration
	steps   int
}

func (e *epochTimer) OnEpochBegin(int, nn.Logs) error {
	e.start, e.steps = time.Now(), 0
	return nil
}

func (e *epochTimer) OnTrainBatchEnd(int, nn.Logs) error { e.steps++; return nil }

// AsyncBatchHooks: counting steps needs no step's results at once.
func (e *epochTimer) AsyncBatchHooks() bool { return true }

func (e *epochTimer) OnEpochEnd(epoch int, _ nn.Logs) error {
	if e.epochs == nil {
		e.epochs = map[int]epochTime{}
	}
	e.epochs[epoch] = epochTime{time.Since(e.start), e.steps}
	return nil
}

// summary is what --json writes: the run, for tools to read.
type summary struct {
	Device        string            `json:"device"`
	DeviceName    string            `json:"device_name"`
	Seed          uint64            `json:"seed"`
	SeedFromClock bool              `json:"seed_from_clock"`
	Args          []string          `json:"args"`
	Flags         map[string]string `json:"flags"`
	Dataset       string            `json:"dataset"`
	TrainSamples  int               `json:"train_samples"`
	TestSamples   int               `json:"test_samples"`
	// Epochs are all the run's epochs, those before a --resume included,
	// each with its figures (loss, accuracy, val_loss, ...) by name.
	Epochs []summaryEpoch `json:"epochs"`
	// StoppedEarly is the 1-based epoch --early-stopping ended training
	// after, 0 when it did not.
	StoppedEarly int                `json:"stopped_early"`
	Test         map[string]float64 `json:"test"`
	// MsPerStep is the mean time of this run's training steps, validation
	// included (Keras' ms/step); null when no step ran.
	MsPerStep   maybeFloat `json:"ms_per_step"`
	TotalTimeS  float64    `json:"total_time_s"`
	FinishedUTC string     `json:"finished_utc"`
}

type summaryEpoch struct {
	Epoch   int                   `json:"epoch"` // 1-based, as Keras prints it
	Figures map[string]maybeFloat `json:"figures"`
	// Steps and MsPerStep are this run's: null for the epochs of a run
	// this one resumed.
	Steps     *int       `json:"steps"`
	MsPerStep maybeFloat `json:"ms_per_step"`
}

func newSummary(cfg config, args []string, spec device.Spec, data *cifar10.Dataset, h *runHistory,
	timer *epochTimer, stopper *callbacks.EarlyStopping, test map[string]float64, elapsed time.Duration) summary {
	s := summary{
		Device: spec.Short(), DeviceName: spec.String(),
		Seed: cfg.seed, SeedFromClock: cfg.seedFromClock,
		Args: append([]string{}, args...), Flags: cfg.flags,
		Dataset: "cifar10", TrainSamples: data.Train.Len(), TestSamples: data.Test.Len(),
		Epochs: []summaryEpoch{}, Test: test, MsPerStep: maybeFloat(math.NaN()),
		TotalTimeS: elapsed.Seconds(), FinishedUTC: time.Now().UTC().Format(time.RFC3339),
	}
	if cfg.synthetic {
		s.Dataset = "synthetic"
	}
	var total time.Duration
	var steps int
	for i, epoch := range h.Epochs {
		e := summaryEpoch{Epoch: epoch + 1, Figures: map[string]maybeFloat{}, MsPerStep: maybeFloat(math.NaN())}
		for k, v := range h.Values {
			e.Figures[k] = v[i]
		}
		if t, ok := timer.epochs[epoch]; ok && t.steps > 0 {
			e.Steps = &t.steps
			e.MsPerStep = maybeFloat(ms(t.elapsed) / float64(t.steps))
			total += t.elapsed
			steps += t.steps
		}
		s.Epochs = append(s.Epochs, e)
	}
	if steps > 0 {
		s.MsPerStep = maybeFloat(ms(total) / float64(steps))
	}
	if stopper != nil && stopper.StoppedEpoch() > 0 {
		s.StoppedEarly = stopper.StoppedEpoch() + 1
	}
	return s
}

// writeSummary writes s as indented JSON to path, atomically, or to stdout
// when path is "-".
func writeSummary(path string, s summary, stdout io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
	} else {
		err = atomicfile.WriteBytes(path, b)
	}
	if err != nil {
		return fmt.Errorf("--json %s: %w", path, err)
	}
	return nil
}

// cliWording turns the libraries' messages into the command line's: it
// names flags, not the Go options behind them, and drops the package
// prefix that follows a flag's own ("--device: device: ...").
var (
	cliWording = strings.NewReplacer(
		"point Options.Path (--data)", "point --data",
		"set Options.URL or ", "set ",
		" or Options.URL", "",
		" (Options.ConnectTimeout)", "",
		"; Options.StallTimeout)", ")",
		"set Options.CacheDir or ", "set ",
		" or Options.MD5", "",
		"use generated data instead (cifar10.Synthetic; train --synthetic)", "run train with --synthetic (generated data, no download)",
		"load it with LoadWeights (or train --resume needs a file written by --checkpoint)", "train --resume needs a file written by --checkpoint",
		"--resume: read checkpoint: ", "--resume: ",
		"--resume: load checkpoint: ", "--resume: ",
		"--checkpoint: save checkpoint: ", "--checkpoint: ",
		"--save: save weights: ", "--save: ",
		"EarlyStopping: ", "--early-stopping: ",
		"CSVLogger: ", "--csv-log: ",
	)
	stutter = regexp.MustCompile(`((?:--[a-z-]+(?: [^:\s]+)?|loading CIFAR-10): )(?:device|cifar10|nn|optim|safetensors|atomicfile|callbacks): `)
)

// cliError is err worded for the command line; it still wraps err, so
// errors.Is and errors.As see what it wraps.
func cliError(err error) error {
	if err == nil {
		return nil
	}
	msg := stutter.ReplaceAllString(cliWording.Replace(err.Error()), "$1")
	if msg == err.Error() {
		return err
	}
	return &wordedError{msg, err}
}

type wordedError struct {
	msg string
	err error
}

func (e *wordedError) Error() string { return e.msg }
func (e *wordedError) Unwrap() error { return e.err }
