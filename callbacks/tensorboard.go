package callbacks

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gokeras/gokeras/nn"
)

// TensorBoard writes the figures of training, and histograms of the
// weights, to TensorFlow event files that TensorBoard shows, like
// keras.callbacks.TensorBoard. Make one with NewTensorBoard, then view the
// run with `tensorboard --logdir LOGDIR`.
//
// As Keras does, it writes two runs: LogDir/train and LogDir/validation,
// each a new file named events.out.tfevents.<unix seconds>.<host>.<pid>.<n>.v2
// per Fit. At the end of each epoch the train run gets "epoch_" + the name of
// every figure of the epoch's logs that is not a validation one
// ("epoch_loss", "epoch_accuracy", "epoch_lr" when a scheduler adds "lr")
// and "epoch_learning_rate", the optimizer's rate; the validation run gets
// the "val_" figures under the same names, "val_" dropped
// ("epoch_loss"). Their step is the epoch, from 0. With UpdateFreq N, every
// N-th batch adds "batch_" + each running mean of the logs ("batch_loss")
// to the train run, with the batch's number counted over the whole run from
// 1 as its step. With HistogramFreq N, every N-th epoch (0, N, 2N, ...)
// adds a histogram of each weight to the train run, tagged as tf.keras 2
// tags them: "<layer>/<weight>_0/histogram" ("dense/kernel_0/histogram").
//
// The files are flushed at the end of each epoch and closed when training
// ends. If Fit fails, the hook that closes them is not called: call Close.
//
// Where it differs from Keras: scalars are written as simple_value
// summaries and histograms as HistogramProto (30 equal buckets from the
// smallest weight to the largest), the forms TensorBoard reads from
// TensorFlow 1, rather than TensorFlow 2's tensor summaries; batch steps
// count from epoch 0 (Keras counts from the start of each fit), so a run
// resumed from a checkpoint continues its steps; there is no graph,
// images, profiler or embeddings (write_graph, write_images,
// write_steps_per_second, profile_batch and embeddings_freq).
type TensorBoard struct {
	nn.CallbackBase
	// LogDir is where the runs' directories are made (default "logs").
	LogDir string
	// HistogramFreq is how often, in epochs, the weights' histograms are
	// written: 0 (the default) never, N at epochs 0, N, 2N, ...
	HistogramFreq int
	// UpdateFreq is how often, in batches, the batch figures are written:
	// 0 (the default, Keras' "epoch") never, only each epoch's figures; 1
	// (Keras' "batch") every batch; N every N-th batch.
	UpdateFreq int

	train, val *eventWriter
	epoch      int
	// batches counts the batches trained in this Fit: the step of the
	// batch figures when an epoch's steps are not known (a stream).
	batches int64
}

// NewTensorBoard makes a TensorBoard with Keras' defaults that writes
// under logDir ("logs" if empty).
func NewTensorBoard(logDir string) *TensorBoard {
	if logDir == "" {
		logDir = "logs"
	}
	return &TensorBoard{LogDir: logDir}
}

// histogramBuckets is the number of buckets a weight's histogram has, as
// TensorFlow 2's tf.summary.histogram makes by default.
const histogramBuckets = 30

// Check reports whether the event files can be written under LogDir,
// without writing them or making any directory: the directories that
// exist on the way must be directories, and the deepest one must take new
// files. Its error starts with the path, then says the cause and the fix.
// OnTrainBegin checks the same; call Check to fail before other work.
func (tb *TensorBoard) Check() error {
	dir := tb.LogDir
	if dir == "" {
		return errors.New("no log directory given: set LogDir, e.g. \"logs\"")
	}
	for _, run := range []string{"validation", "train"} {
		p := filepath.Join(dir, run)
		for {
			info, err := os.Stat(p)
			if err == nil {
				if !info.IsDir() {
					return fmt.Errorf("%s: %s is not a directory: remove it or choose another log directory", dir, p)
				}
				break
			}
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return fmt.Errorf("%s: %w: choose a log directory you can write to", dir, err)
			}
			parent := filepath.Dir(p)
			if parent == p {
				return fmt.Errorf("%s: no directory on the way exists", dir)
			}
			p = parent
		}
		if run == "validation" {
			continue // both runs share their parent: trying one is enough
		}
		f, err := os.CreateTemp(p, ".tensorboard-check-*")
		if err != nil {
			return fmt.Errorf("%s: cannot create files in %s (%v): choose a log directory you can write to", dir, p, cause(err))
		}
		name := f.Name()
		f.Close()
		if err := os.Remove(name); err != nil {
			return fmt.Errorf("%s: removing the test file %s: %w", dir, name, err)
		}
	}
	return nil
}

// cause is the system error beneath a path error, for messages that name
// the path themselves.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// AsyncBatchHooks implements nn.AsyncBatchHooks: the batch figures it
// writes are each batch's own, whenever it gets them.
func (*TensorBoard) AsyncBatchHooks() bool { return true }

// OnTrainBegin checks the settings and LogDir, and opens the train run's
// event file.
func (tb *TensorBoard) OnTrainBegin(nn.Logs) error {
	if err := tb.Close(); err != nil { // files a failed Fit left open
		return fmt.Errorf("TensorBoard: %w", err)
	}
	switch {
	case tb.HistogramFreq < 0:
		return fmt.Errorf("TensorBoard: HistogramFreq must not be negative, got %d (0 writes no histograms)", tb.HistogramFreq)
	case tb.UpdateFreq < 0:
		return fmt.Errorf("TensorBoard: UpdateFreq must not be negative, got %d (0 writes once per epoch)", tb.UpdateFreq)
	case tb.LogDir == "":
		return errors.New("TensorBoard: no log directory given: set LogDir, e.g. \"logs\"")
	}
	if err := tb.Check(); err != nil {
		return fmt.Errorf("TensorBoard: LogDir %w", err)
	}
	w, err := newEventWriter(filepath.Join(tb.LogDir, "train"))
	if err != nil {
		return fmt.Errorf("TensorBoard: LogDir %s: %w: choose a log directory you can write to", tb.LogDir, err)
	}
	tb.train = w
	tb.epoch, tb.batches = tb.Params.InitialEpoch, 0
	return nil
}

// OnEpochBegin notes the epoch, which numbers the batches.
func (tb *TensorBoard) OnEpochBegin(epoch int, _ nn.Logs) error {
	tb.epoch = epoch
	return nil
}

// OnTrainBatchEnd writes the batch's running means every UpdateFreq
// batches.
func (tb *TensorBoard) OnTrainBatchEnd(batch int, logs nn.Logs) error {
	tb.batches++
	if tb.UpdateFreq <= 0 || tb.train == nil {
		return nil
	}
	step := int64(tb.epoch)*int64(tb.Params.Steps) + int64(batch) + 1
	if tb.Params.Steps == 0 { // a stream's epochs: counted as they come
		step = tb.batches
	}
	if step%int64(tb.UpdateFreq) != 0 {
		return nil
	}
	return tb.scalars(tb.train, "batch_", step, logs)
}

// OnEpochEnd writes the epoch's figures, the learning rate and, every
// HistogramFreq epochs, the weights' histograms, then flushes the files.
func (tb *TensorBoard) OnEpochEnd(epoch int, logs nn.Logs) error {
	if tb.train == nil {
		return errors.New("TensorBoard: OnEpochEnd before OnTrainBegin: pass the callback to Fit with nn.Callbacks")
	}
	trainLogs, valLogs := nn.Logs{}, nn.Logs{}
	for k, v := range logs {
		if name, ok := strings.CutPrefix(k, "val_"); ok {
			valLogs[name] = v
		} else {
			trainLogs[k] = v
		}
	}
	if opt := tb.Model.Optimizer(); opt != nil {
		trainLogs["learning_rate"] = kerasLR(opt.LearningRate())
	}
	if err := tb.scalars(tb.train, "epoch_", int64(epoch), trainLogs); err != nil {
		return err
	}
	if len(valLogs) > 0 {
		if tb.val == nil {
			w, err := newEventWriter(filepath.Join(tb.LogDir, "validation"))
			if err != nil {
				return fmt.Errorf("TensorBoard: LogDir %s: %w: choose a log directory you can write to", tb.LogDir, err)
			}
			tb.val = w
		}
		if err := tb.scalars(tb.val, "epoch_", int64(epoch), valLogs); err != nil {
			return err
		}
	}
	if tb.HistogramFreq > 0 && epoch%tb.HistogramFreq == 0 {
		if err := tb.histograms(int64(epoch)); err != nil {
			return err
		}
	}
	for _, w := range []*eventWriter{tb.train, tb.val} {
		if w != nil {
			if err := w.flush(); err != nil {
				return fmt.Errorf("TensorBoard: %w", err)
			}
		}
	}
	return nil
}

// OnTrainEnd flushes and closes the files.
func (tb *TensorBoard) OnTrainEnd(nn.Logs) error {
	if err := tb.Close(); err != nil {
		return fmt.Errorf("TensorBoard: %w", err)
	}
	return nil
}

// Close flushes and closes the event files, if open. Training's end does
// it; call it after a Fit that failed. Closing again does nothing.
func (tb *TensorBoard) Close() error {
	var errs []error
	for _, w := range []**eventWriter{&tb.train, &tb.val} {
		if *w != nil {
			errs = append(errs, (*w).close())
			*w = nil
		}
	}
	return errors.Join(errs...)
}

// scalars writes one event per figure, in the figures' sorted order, each
// tagged prefix + name.
func (tb *TensorBoard) scalars(w *eventWriter, prefix string, step int64, logs nn.Logs) error {
	now := wallTime(time.Now())
	for _, k := range slices.Sorted(maps.Keys(logs)) {
		e := TensorBoardEvent{WallTime: now, Step: step, Values: []TensorBoardValue{{Tag: prefix + k, SimpleValue: float32(logs[k])}}}
		if err := w.write(e); err != nil {
			return fmt.Errorf("TensorBoard: %w", err)
		}
	}
	return nil
}

// histograms writes a histogram of each of the model's weights, in layer
// order. A weight holding NaN or infinities has no histogram; a warning
// says so.
func (tb *TensorBoard) histograms(step int64) error {
	ws, err := tb.Model.GetWeights()
	if err != nil {
		return fmt.Errorf("TensorBoard: histograms: %w", err)
	}
	var names []string
	for _, l := range tb.Model.Layers() {
		for _, p := range l.Params() {
			names = append(names, l.Name()+"/"+p.Name)
		}
	}
	if len(names) != len(ws) {
		return fmt.Errorf("TensorBoard: histograms: the model has %d weight tensors but its layers name %d", len(ws), len(names))
	}
	now := wallTime(time.Now())
	for i, wt := range ws {
		values, ok := wt.Data().([]float32)
		if !ok {
			return fmt.Errorf("TensorBoard: histograms: weight %s holds %T, not float32", names[i], wt.Data())
		}
		h, ok := histogram(values, histogramBuckets)
		if !ok {
			printf(&tb.CallbackBase, "WARNING: TensorBoard: weight %s holds NaN or infinite values: no histogram at epoch %d\n", names[i], step)
			continue
		}
		e := TensorBoardEvent{WallTime: now, Step: step, Values: []TensorBoardValue{{Tag: names[i] + "_0/histogram", Histogram: h}}}
		if err := tb.train.write(e); err != nil {
			return fmt.Errorf("TensorBoard: %w", err)
		}
	}
	return nil
}

// histogram counts values into n equal buckets from the smallest value to
// the largest; bucket i holds the values in (BucketLimit[i-1],
// BucketLimit[i]], the first also its lower edge, Min. When all values are
// equal there is one bucket. It returns false when a value is not finite.
func histogram(values []float32, n int) (*TensorBoardHistogram, bool) {
	h := &TensorBoardHistogram{Min: math.Inf(1), Max: math.Inf(-1), Num: float64(len(values))}
	for _, v := range values {
		x := float64(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		h.Min, h.Max = min(h.Min, x), max(h.Max, x)
		h.Sum += x
		h.SumSquares += x * x
	}
	if len(values) == 0 {
		h.Min, h.Max = 0, 0
		return h, true
	}
	if h.Min == h.Max {
		h.BucketLimit, h.Bucket = []float64{h.Max}, []float64{float64(len(values))}
		return h, true
	}
	width := (h.Max - h.Min) / float64(n)
	h.BucketLimit, h.Bucket = make([]float64, n), make([]float64, n)
	for i := range n {
		h.BucketLimit[i] = h.Min + float64(i+1)*width
	}
	h.BucketLimit[n-1] = h.Max // exactly, whatever the rounding
	for _, v := range values {
		x := float64(v)
		i := min(max(int(math.Ceil((x-h.Min)/width))-1, 0), n-1)
		// Rounding may land a value on the wrong side of an edge: settle
		// it against the limits themselves.
		for i > 0 && x <= h.BucketLimit[i-1] {
			i--
		}
		for i < n-1 && x > h.BucketLimit[i] {
			i++
		}
		h.Bucket[i]++
	}
	return h, true
}
