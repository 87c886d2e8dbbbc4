package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gokeras/gokeras/distribute"
	"github.com/gokeras/gokeras/export/onnx"
	"github.com/gokeras/gokeras/export/tfjs"
	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// uxFlags are the flags that save, checkpoint, resume and chart a run.
type uxFlags struct {
	save, checkpoint, resume, plot string
	trace, throughput              bool
	// saveModel and loadModel are --save-model and --load-model.
	saveModel, loadModel string

	// From --resume, set by prepare:
	from    nn.Checkpoint
	history *runHistory // the epochs before the resumed one
}

func (u *uxFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&u.save, "save", "", "write the trained weights to this file at the end: safetensors (names <layer>/kernel, <layer>/bias), or Keras' HDF5 weights for a name ending in .weights.h5 (Keras 3) or .h5 (Keras 2)")
	fs.StringVar(&u.checkpoint, "checkpoint", "", "write a full checkpoint (weights, optimizer state, epoch) to this file after each epoch and on Ctrl-C, SIGTERM or SIGHUP; resume it with --resume")
	fs.StringVar(&u.resume, "resume", "", "continue the run saved in this --checkpoint file, where it stopped (same flags; the seed and the learning rate come from the file, unless --seed or --lr is given)")
	fs.StringVar(&u.saveModel, "save-model", "", "write the whole trained model to this file at the end: a .onnx file is an ONNX export of its inference graph, a folder ending in .tfjs or / a TensorFlow.js layers model (model.json and its shards); a .keras file is Keras 3's archive (config, weights, compile settings and the optimizer's state: what keras.models.load_model, nn.LoadModel and --load-model read); a .h5 file Keras 2's model file (the same without the optimizer's state, in Keras 2's HDF5 layout); any other name is a gokeras model file (safetensors, with the optimizer's state, what nn.LoadModel and --load-model read; .weights.h5 names are refused: that is Keras' name for weights alone, which --save writes)")
	fs.StringVar(&u.loadModel, "load-model", "", "start from the whole model in this file (written by --save-model or nn.Model.Save, with its compile settings and optimizer state) instead of --model: train it on (--epochs), or only evaluate it (--epochs 0)")
	fs.StringVar(&u.plot, "plot", "", "write loss and accuracy per epoch, training and validation, to this PNG file")
	fs.BoolVar(&u.trace, "trace", false, "print a text chart of the loss per epoch at the end")
	fs.BoolVar(&u.throughput, "throughput", false, "add samples per second to each epoch's progress line")
}

// Metadata keys train stores in its checkpoints.
const (
	metaSeed    = "train.seed"
	metaHistory = "train.history"
)

// Metadata keys of the settings that fix the batches.
const (
	metaSynthetic        = "train.synthetic"
	metaSyntheticSamples = "train.synthetic-samples"
)

// settings are the flags that fix the batches: a resumed run must use the
// values the checkpoint was written with to match an uninterrupted run.
// --synthetic-samples counts only with --synthetic.
func settings(cfg config) map[string]string {
	s := map[string]string{
		"train.batch-size":      strconv.Itoa(cfg.batchSize),
		"train.steps-per-epoch": strconv.Itoa(cfg.stepsPerEpoch),
		metaSynthetic:           strconv.FormatBool(cfg.synthetic),
	}
	if cfg.synthetic {
		s[metaSyntheticSamples] = strconv.Itoa(cfg.syntheticTrain)
	}
	return s
}

// settingsWarnings are the warnings for the settings of a resumed run that
// differ from those its checkpoint was written with.
func settingsWarnings(checkpoint string, was, now map[string]string) []string {
	var warnings []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		w, ok := was[k]
		switch {
		case !ok || w == now[k]:
		case k == metaSynthetic:
			data := map[string]string{"true": "--synthetic data", "false": "CIFAR-10"}
			warnings = append(warnings, fmt.Sprintf("%s was trained on %s, this run on %s: the batches differ from the original run's",
				checkpoint, data[w], data[now[k]]))
		case k == metaSyntheticSamples && was[metaSynthetic] != "true":
			// The checkpoint's run was on CIFAR-10: its --synthetic-samples
			// was unused (the dataset warning says what differs).
		default:
			warnings = append(warnings, fmt.Sprintf("%s was written with --%s %s, this run has %s: the batches differ from the original run's",
				checkpoint, strings.TrimPrefix(k, "train."), w, now[k]))
		}
	}
	return warnings
}

// prepare reads the --resume checkpoint's position and seed before the
// data is made (--synthetic data depends on the seed). An explicit --seed
// that differs is used, with a warning.
func (u *uxFlags) prepare(cfg *config, stderr io.Writer) error {
	if u.resume == "" {
		return nil
	}
	// Say what the path is before the loader reads it and guesses.
	if info, err := os.Stat(u.resume); err == nil && !info.Mode().IsRegular() {
		what := "a directory"
		if !info.IsDir() {
			what = "a device, pipe or socket"
		}
		return fmt.Errorf("--resume %s: is %s, not a checkpoint: name the file that --checkpoint wrote", u.resume, what)
	}
	ck, err := nn.ReadCheckpoint(u.resume)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	if ck.Epoch >= cfg.epochs {
		return fmt.Errorf("--resume: %s was saved after epoch %d, and --epochs is %d: nothing is left to train (raise --epochs to train longer)", u.resume, ck.Epoch, cfg.epochs)
	}
	if s, ok := ck.Metadata[metaSeed]; ok {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("--resume: %s has seed %q, not a number: the checkpoint is damaged", u.resume, s)
		}
		switch {
		case !cfg.seedSet:
			cfg.seed = seed
			cfg.seedFromClock = false
		case cfg.seed != seed:
			fmt.Fprintf(stderr, "train: warning: %s was trained with --seed %d; resuming with --seed %d shuffles differently from the original run\n", u.resume, seed, cfg.seed)
		}
	}
	for _, w := range settingsWarnings(u.resume, ck.Metadata, settings(*cfg)) {
		fmt.Fprintln(stderr, "train: warning:", w)
	}
	u.from = ck
	u.history = &runHistory{}
	if h, ok := ck.Metadata[metaHistory]; ok {
		if err := json.Unmarshal([]byte(h), u.history); err != nil {
			return fmt.Errorf("--resume: %s: its history is not valid JSON (%v): the checkpoint is damaged", u.resume, err)
		}
	}
	return nil
}

// checkOutputs checks, before any work, that train can write every file
// the flags name, and that no two of them name the same file: a bad path
// found only after training would lose the work.
func (u *uxFlags) checkOutputs(more ...output) error {
	outputs := append([]output{{"save", u.save}, {"save-model", u.saveModel}, {"checkpoint", u.checkpoint}, {"plot", u.plot}}, more...)
	for i, o := range outputs {
		if o.path == "" {
			continue
		}
		if o.flag == "save-model" && isTFJS(o.path) {
			// A folder: its parent must exist, and it must be none but a folder.
			if info, err := os.Stat(filepath.Dir(filepath.Clean(o.path))); err != nil || !info.IsDir() {
				return fmt.Errorf("--save-model %s: the folder it goes in does not exist: make it first", o.path)
			}
			if info, err := os.Stat(o.path); err == nil && !info.IsDir() {
				return fmt.Errorf("--save-model %s is a file: a TensorFlow.js model is a folder; give a folder name", o.path)
			}
			continue
		}
		if err := atomicfile.Check(o.path); err != nil {
			return fmt.Errorf("--%s %w", o.flag, err)
		}
		for _, p := range outputs[:i] {
			if p.path == "" || !sameFile(p.path, o.path) {
				continue
			}
			if p.path == o.path {
				return fmt.Errorf("--%s and --%s both name %s: one would overwrite the other; give each its own file", p.flag, o.flag, o.path)
			}
			return fmt.Errorf("--%s %s and --%s %s are the same file: one would overwrite the other; give each its own file", p.flag, p.path, o.flag, o.path)
		}
		if o.flag != "checkpoint" && u.resume != "" && sameFile(o.path, u.resume) {
			return fmt.Errorf("--%s %s is the --resume checkpoint: writing it would replace the checkpoint; give --%s another file", o.flag, o.path, o.flag)
		}
		if u.loadModel != "" && o.flag != "save-model" && sameFile(o.path, u.loadModel) {
			return fmt.Errorf("--%s %s is the --load-model file: writing it would replace the model; give --%s another file", o.flag, o.path, o.flag)
		}
	}
	return nil
}

// output is a file a flag names for train to write.
type output struct{ flag, path string }

// sameFile reports whether paths a and b name the same file: the same
// path, or, through links, the same existing file or the same name in the
// same directory.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	if absA, err := filepath.Abs(a); err == nil {
		if absB, err := filepath.Abs(b); err == nil && absA == absB {
			return true
		}
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(ia, ib)
	}
	if filepath.Base(a) != filepath.Base(b) {
		return false
	}
	da, errA := os.Stat(filepath.Dir(a))
	db, errB := os.Stat(filepath.Dir(b))
	return errA == nil && errB == nil && os.SameFile(da, db)
}

// restore loads the --resume checkpoint into the compiled model, whose
// optimizer is opt, and returns the options that continue the run where it
// stopped. The checkpoint's learning rate is the optimizer's from then on,
// unless --lr is given: a rate asked for on the command line wins, and
// train says it changed. (With --lr-schedule cosine the schedule, built
// from --lr, sets the rate of every step.)
func (u *uxFlags) restore(model *nn.Sequential, opt optim.Optimizer, cfg config, stdout io.Writer) ([]nn.Option, error) {
	if u.resume == "" {
		return nil, nil
	}
	ck, err := model.LoadCheckpoint(u.resume)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	where := fmt.Sprintf("epoch %d", ck.Epoch+1)
	if ck.Step > 0 {
		where += fmt.Sprintf(", after step %d", ck.Step)
	}
	fmt.Fprintf(stdout, "Resuming from %s at %s\n", u.resume, where)
	if was := opt.LearningRate(); cfg.lrSet && cfg.lrSchedule == "constant" && was != cfg.lr {
		opt.SetLearningRate(cfg.lr)
		fmt.Fprintf(stdout, "Learning rate: %v (--lr), where the checkpoint's was %v\n", cfg.lr, was)
	}
	return []nn.Option{nn.InitialEpoch(ck.Epoch), nn.InitialStep(ck.Step)}, nil
}

// runHistory is the per-epoch figures of a run, kept across resumes in the
// checkpoint's metadata so a resumed run plots all its epochs.
type runHistory struct {
	Epochs []int                   `json:"epochs"`
	Values map[string][]maybeFloat `json:"values"`
}

// maybeFloat is a figure that an epoch may lack (val_loss before
// --validation was turned on, say): NaN, stored as JSON null.
type maybeFloat float64

func (f maybeFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func (f *maybeFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = maybeFloat(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(f))
}

func (h *runHistory) add(epoch int, logs nn.Logs) {
	if h.Values == nil {
		h.Values = map[string][]maybeFloat{}
	}
	// Pad figures that appear late, so every series has one value per epoch.
	for k := range logs {
		for len(h.Values[k]) < len(h.Epochs) {
			h.Values[k] = append(h.Values[k], maybeFloat(math.NaN()))
		}
	}
	h.Epochs = append(h.Epochs, epoch)
	for k, v := range logs {
		h.Values[k] = append(h.Values[k], maybeFloat(v))
	}
	for k := range h.Values {
		for len(h.Values[k]) < len(h.Epochs) {
			h.Values[k] = append(h.Values[k], maybeFloat(math.NaN()))
		}
	}
}

// checkpointer is train's --checkpoint callback: after every epoch it
// saves a full checkpoint, with the seed, the batch settings and the
// history so far, over the same file.
type checkpointer struct {
	nn.CallbackBase
	path    string
	meta    map[string]string
	history *runHistory
	saved   bool // a checkpoint was written during this run
	epochs  int  // the epochs the last one written holds
}

func (c *checkpointer) OnEpochEnd(epoch int, logs nn.Logs) error {
	c.history.add(epoch, logs)
	if c.path == "" {
		return nil
	}
	return c.save(nn.Checkpoint{Epoch: epoch + 1})
}

func (c *checkpointer) save(ck nn.Checkpoint) error {
	h, err := json.Marshal(c.history)
	if err != nil {
		return fmt.Errorf("--checkpoint: %w", err)
	}
	ck.Metadata = maps.Clone(c.meta)
	ck.Metadata[metaHistory] = string(h)
	if err := c.Model.SaveCheckpoint(c.path, ck); err != nil {
		return fmt.Errorf("--checkpoint: %w", err)
	}
	c.saved, c.epochs = true, ck.Epoch
	return nil
}

// fitOptions returns the callback that records the history (and writes the
// checkpoints) and the options the flags ask for.
func (u *uxFlags) fitOptions(cfg config) (*checkpointer, []nn.Option) {
	hist := u.history
	if hist == nil {
		hist = &runHistory{}
	}
	meta := settings(cfg)
	meta[metaSeed] = strconv.FormatUint(cfg.seed, 10)
	cp := &checkpointer{path: u.checkpoint, meta: meta, history: hist}
	opts := []nn.Option{nn.Callbacks(cp)}
	if u.throughput {
		opts = append(opts, nn.ShowThroughput())
	}
	return cp, opts
}

// interruptedError is what train returns on Ctrl-C, SIGTERM or SIGHUP:
// what happened, where the checkpoint is and how to resume. It wraps Fit's
// error, so errors.Is(err, context.Canceled) holds and train exits with
// status 128 plus the signal's number.
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.err }

// testHookInterruptSave, when set, runs before the checkpoint of an
// interrupted run is saved: the tests slow that save down to send a second
// signal during it.
var testHookInterruptSave func()

// onFitError saves a checkpoint when Fit was interrupted and --checkpoint
// was given, and explains how to resume. sig is the signal that stopped
// Fit, nil when it was cancelled otherwise. Other errors pass through.
//
// Under --distributed (s not nil) every rank stopped after the same step
// (nn's Fit agrees on it), rank 0 saves, and every rank then waits at a
// barrier until rank 0 has saved, so that no rank exits first and makes
// mpirun kill rank 0 in the middle of the save.
func (u *uxFlags) onFitError(err error, sig os.Signal, cp *checkpointer, cfg config, args []string, s *distribute.MultiWorkerStrategy) error {
	var ie *nn.InterruptedError
	if !errors.As(err, &ie) {
		if cp.saved && (s == nil || s.Rank() == 0) {
			resume := resumeCommand(args, u.checkpoint, cfg.seed)
			if s != nil {
				resume = fmt.Sprintf("mpirun -np %d %s", s.Size(), resume)
			}
			return fmt.Errorf("%w\nthe checkpoint after epoch %d is saved in %s; once that is fixed, resume with:\n  %s", err, cp.epochs, u.checkpoint, resume)
		}
		return err
	}
	by := ""
	if sig != nil && sig != os.Interrupt { // Ctrl-C needs no saying
		by = " by " + signalName(sig)
	}
	where := fmt.Sprintf("interrupted%s in epoch %d/%d after step %d/%d", by, ie.Epoch+1, ie.Epochs, ie.Step, ie.Steps)
	if s != nil {
		where = fmt.Sprintf("rank %d of %d: %s", s.Rank(), s.Size(), where)
	}
	if u.checkpoint == "" {
		return &interruptedError{msg: where + "; nothing was saved (run with --checkpoint FILE to be able to resume)", err: err}
	}
	if testHookInterruptSave != nil {
		testHookInterruptSave()
	}
	serr := cp.save(nn.Checkpoint{Epoch: ie.Epoch, Step: ie.Step})
	if s != nil {
		if berr := s.Barrier(); berr != nil && serr == nil {
			serr = fmt.Errorf("waiting for the other ranks after the save: %w", berr)
		}
		if s.Rank() != 0 && serr == nil {
			return &interruptedError{msg: where + "; rank 0 saved the checkpoint to " + u.checkpoint, err: err}
		}
	}
	if serr != nil {
		msg := where + "; saving the checkpoint failed: " + serr.Error()
		if cp.saved {
			msg += " (the checkpoint of the last completed epoch is intact in " + u.checkpoint + ")"
		}
		return &interruptedError{msg: msg, err: errors.Join(err, serr)}
	}
	resume := resumeCommand(args, u.checkpoint, cfg.seed)
	if s != nil {
		resume = fmt.Sprintf("mpirun -np %d %s", s.Size(), resume)
	}
	return &interruptedError{
		msg: fmt.Sprintf("%s; checkpoint saved to %s\nresume with:\n  %s", where, u.checkpoint, resume),
		err: err,
	}
}

// resumeCommand is the command line that resumes a run: its arguments
// without --resume and --seed, then the seed and --resume file.
func resumeCommand(args []string, checkpoint string, seed uint64) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && (name == "resume" || name == "seed") {
			if !hasValue {
				i++ // the value is the next argument
			}
			continue
		}
		kept = append(kept, args[i])
	}
	kept = append(kept, "--seed", strconv.FormatUint(seed, 10), "--resume", checkpoint)
	quoted := make([]string, len(kept))
	for i, a := range kept {
		quoted[i] = shellQuote(a)
	}
	return "train " + strings.Join(quoted, " ")
}

// shellQuote quotes an argument for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// afterFit writes what the flags ask for once training has ended: the
// weights (--save), the chart (--plot) and the text trace (--trace). It
// says what it wrote on out, and writes the trace on stdout.
func (u *uxFlags) afterFit(model *nn.Sequential, cp *checkpointer, out, stdout io.Writer) error {
	if err := u.writeModel(model, out); err != nil {
		return err
	}
	if u.save != "" {
		if err := model.SaveWeights(u.save); err != nil {
			return fmt.Errorf("--save: %w", err)
		}
		fmt.Fprintf(out, "Weights saved to %s\n", u.save)
	}
	if u.plot != "" {
		if err := plotHistory(u.plot, cp.history); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		fmt.Fprintf(out, "Training history plotted to %s\n", u.plot)
	}
	if u.trace {
		if err := traceHistory(stdout, cp.history); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
	}
	return nil
}

// checkSpace checks, before the first step, that the file systems of
// --save and --checkpoint have room for the files they will hold: the
// weights, and for a checkpoint the optimizer's slots too, as float32. A
// replaced file needs the room twice for a moment (the new file is written
// beside the old one), so the whole size must be free. Too little room
// found only at the end would lose the run.
func (u *uxFlags) checkSpace(model *nn.Sequential, opt optim.Optimizer) error {
	weights := 4 * int64(model.CountParams())
	for _, f := range []struct {
		flag, path, what string
		need             int64
	}{
		{"save", u.save, "the weights", weights},
		{"save-model", u.saveModel, "the model and the optimizer's state", weights * int64(1+len(optim.SlotNames(opt)))},
		{"checkpoint", u.checkpoint, "the weights and the optimizer's state", weights * int64(1+len(optim.SlotNames(opt)))},
	} {
		if f.path == "" {
			continue
		}
		need := f.need + 1<<20 // the header, with room to spare
		if free, ok := freeBytes(filepath.Dir(f.path)); ok && free < need {
			return fmt.Errorf("--%s %s: its file system has %s free, and %s take %s: free some space or choose another path",
				f.flag, f.path, megabytes(free), f.what, megabytes(need))
		}
	}
	return nil
}

// megabytes writes a size in MB, as people read disk space.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// writeModel writes --save-model: an ONNX export for a .onnx name, a
// TensorFlow.js folder, else the whole model (nn.Model.Save: Keras 3's
// archive for a .keras name, Keras 2's HDF5 model file for a .h5 one, a
// gokeras model file with the optimizer's state for any other).
func (u *uxFlags) writeModel(model *nn.Sequential, out io.Writer) error {
	if u.saveModel == "" {
		return nil
	}
	if isTFJS(u.saveModel) {
		if err := tfjs.Export(model, u.saveModel); err != nil {
			return fmt.Errorf("--save-model: %w", err)
		}
		fmt.Fprintf(out, "Model exported to %s (TensorFlow.js: model.json and its shards)\n", u.saveModel)
		return nil
	}
	if strings.EqualFold(filepath.Ext(u.saveModel), ".onnx") {
		if err := onnx.ExportFile(model, u.saveModel); err != nil {
			return fmt.Errorf("--save-model: %w", err)
		}
		fmt.Fprintf(out, "Model exported to %s (ONNX)\n", u.saveModel)
		return nil
	}
	if err := model.Save(u.saveModel); err != nil {
		return fmt.Errorf("--save-model: %w", err)
	}
	if strings.EqualFold(filepath.Ext(u.saveModel), ".keras") {
		fmt.Fprintf(out, "Model saved to %s (Keras 3 .keras archive)\n", u.saveModel)
		return nil
	}
	if isKeras2Model(u.saveModel) {
		fmt.Fprintf(out, "Model saved to %s (Keras 2 HDF5 model file)\n", u.saveModel)
		return nil
	}
	fmt.Fprintf(out, "Model saved to %s\n", u.saveModel)
	return nil
}

// isKeras2Model says whether --save-model names Keras 2's HDF5 model
// file: a .h5 or .hdf5 name, but not Keras 3's .weights.h5.
func isKeras2Model(path string) bool {
	p := strings.ToLower(path)
	return (strings.HasSuffix(p, ".h5") || strings.HasSuffix(p, ".hdf5")) && !strings.HasSuffix(p, ".weights.h5")
}

// isTFJS says whether --save-model names a TensorFlow.js folder: a name
// ending in .tfjs or in a slash.
func isTFJS(path string) bool {
	return strings.HasSuffix(path, "/") || strings.EqualFold(filepath.Ext(strings.TrimSuffix(path, "/")), ".tfjs")
}

// checkModelExport checks, before training, that --save-model's format
// can hold the model: an export that would fail at the end (a layer the
// format lacks) fails now instead.
func (u *uxFlags) checkModelExport(model *nn.Sequential) error {
	switch {
	case u.saveModel == "":
		return nil
	case isTFJS(u.saveModel):
		if err := tfjs.Check(model); err != nil {
			return fmt.Errorf("--save-model %s: %w", u.saveModel, err)
		}
	case strings.EqualFold(filepath.Ext(u.saveModel), ".onnx"):
		if err := onnx.Export(model, io.Discard); err != nil {
			return fmt.Errorf("--save-model %s: %w", u.saveModel, err)
		}
	case strings.EqualFold(filepath.Ext(u.saveModel), ".keras"):
		if err := model.SaveKeras(io.Discard); err != nil {
			return fmt.Errorf("--save-model %s: %w", u.saveModel, err)
		}
	case isKeras2Model(u.saveModel):
		if err := model.SaveKerasH5(io.Discard); err != nil {
			return fmt.Errorf("--save-model %s: %w", u.saveModel, err)
		}
	default:
		if err := nn.CheckModelPath(u.saveModel); err != nil {
			return fmt.Errorf("--save-model: %w (--save FILE.weights.h5 writes the weights for Keras)", err)
		}
	}
	return nil
}
