package callbacks_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/nn"
)

// scalarKey names one scalar of an event file.
type scalarKey struct {
	tag  string
	step int64
}

// readRun reads the one event file of a run directory, checking its
// records' checksums (ReadTensorBoardEvents does) and its first record,
// and returns its scalars and histograms by tag and step.
func readRun(t *testing.T, dir string) (map[scalarKey]float32, map[scalarKey]*callbacks.TensorBoardHistogram) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !regexp.MustCompile(`^events\.out\.tfevents\.\d+\..+\.\d+\.\d+\.v2$`).MatchString(entries[0].Name()) {
		t.Fatalf("%s holds %v, want one event file", dir, entries)
	}
	events, err := callbacks.ReadTensorBoardEvents(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[0].FileVersion != "brain.Event:2" || len(events[0].Values) != 0 {
		t.Fatalf("first record %+v, want file_version brain.Event:2 alone", events[:min(len(events), 1)])
	}
	scalars, histos := map[scalarKey]float32{}, map[scalarKey]*callbacks.TensorBoardHistogram{}
	for _, e := range events[1:] {
		if e.FileVersion != "" || e.WallTime == 0 {
			t.Errorf("event %+v: want a wall time and no file version", e)
		}
		for _, v := range e.Values {
			k := scalarKey{v.Tag, e.Step}
			if _, dup := scalars[k]; dup {
				t.Errorf("%s at step %d written twice", v.Tag, e.Step)
			}
			if _, dup := histos[k]; dup {
				t.Errorf("%s at step %d written twice", v.Tag, e.Step)
			}
			if v.Histogram != nil {
				histos[k] = v.Histogram
			} else {
				scalars[k] = v.SimpleValue
			}
		}
	}
	return scalars, histos
}

func TestTensorBoardWritesKerasRuns(t *testing.T) {
	const epochs, batch, samples = 3, 16, 64 // 4 batches an epoch
	dir := filepath.Join(t.TempDir(), "logs")
	m := tinyModel(t, 0.1)
	tb := callbacks.NewTensorBoard(dir)
	tb.UpdateFreq, tb.HistogramFreq = 3, 2
	hist, err := m.Fit(context.Background(), blobs(t, samples, 1), nn.Epochs(epochs), nn.BatchSize(batch), nn.Verbose(0),
		nn.ValidationData(blobs(t, 20, 2)), nn.Callbacks(tb))
	if err != nil {
		t.Fatal(err)
	}
	// What every scalar must be: the History's figures, as float32.
	wantTrain, wantVal := map[scalarKey]float32{}, map[scalarKey]float32{}
	for i, e := range hist.Epochs {
		for _, name := range []string{"loss", "accuracy"} {
			wantTrain[scalarKey{"epoch_" + name, int64(e)}] = float32(hist.Get(name)[i])
			wantVal[scalarKey{"epoch_" + name, int64(e)}] = float32(hist.Get("val_" + name)[i])
		}
		wantTrain[scalarKey{"epoch_learning_rate", int64(e)}] = 0.1
		// The last batch of an epoch has the epoch's running means.
		if last := int64(4 * (e + 1)); last%3 == 0 {
			wantTrain[scalarKey{"batch_loss", last}] = float32(hist.Get("loss")[i])
			wantTrain[scalarKey{"batch_accuracy", last}] = float32(hist.Get("accuracy")[i])
		}
	}
	train, histos := readRun(t, filepath.Join(dir, "train"))
	val, valHistos := readRun(t, filepath.Join(dir, "validation"))
	var batchSteps []int64
	for k := range train {
		if k.tag == "batch_loss" {
			batchSteps = append(batchSteps, k.step)
		}
	}
	slices.Sort(batchSteps)
	if want := []int64{3, 6, 9, 12}; !slices.Equal(batchSteps, want) {
		t.Errorf("batch_loss at steps %v, want %v (every 3rd of 12 batches)", batchSteps, want)
	}
	tests := []struct {
		run       string
		got, want map[scalarKey]float32
		others    int // scalars not checked by value: the batch figures mid-epoch
	}{
		{"train", train, wantTrain, 2 * 3},
		{"validation", val, wantVal, 0},
	}
	for _, tc := range tests {
		for k, want := range tc.want {
			if got, ok := tc.got[k]; !ok || got != want {
				t.Errorf("%s run: %s at step %d = %v (written %t), want %v", tc.run, k.tag, k.step, got, ok, want)
			}
		}
		if len(tc.got) != len(tc.want)+tc.others {
			t.Errorf("%s run has %d scalars, want %d: %v", tc.run, len(tc.got), len(tc.want)+tc.others, tc.got)
		}
	}
	if len(valHistos) != 0 {
		t.Errorf("histograms in the validation run: %v", valHistos)
	}
	// Histograms at epochs 0 and 2, one per weight; the last are of the
	// weights Fit ended with.
	final, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i, tag := range []string{"dense/kernel_0/histogram", "dense/bias_0/histogram"} {
		w := final[i].Data().([]float32)
		for _, step := range []int64{0, 2} {
			h := histos[scalarKey{tag, step}]
			if h == nil {
				t.Fatalf("no %s at epoch %d; histograms: %v", tag, step, histos)
			}
			var count float64
			for _, c := range h.Bucket {
				count += c
			}
			if count != float64(len(w)) || h.Num != float64(len(w)) || len(h.Bucket) != len(h.BucketLimit) {
				t.Errorf("%s at %d: buckets count %v, Num %v, want the weight's size %d", tag, step, count, h.Num, len(w))
			}
		}
		h := histos[scalarKey{tag, 2}]
		var sum float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range w {
			sum += float64(v)
			lo, hi = min(lo, float64(v)), max(hi, float64(v))
		}
		if h.Min != lo || h.Max != hi || math.Abs(h.Sum-sum) > 1e-9 {
			t.Errorf("%s at epoch 2: min %v max %v sum %v, want the final weights' %v %v %v", tag, h.Min, h.Max, h.Sum, lo, hi, sum)
		}
	}
	if len(histos) != 4 {
		t.Errorf("%d histograms, want 2 weights × epochs 0 and 2", len(histos))
	}
}

func TestTensorBoardEpochOnlyAndNoValidation(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 0.05)
	tb := callbacks.NewTensorBoard(dir)
	halve := callbacks.NewLearningRateScheduler(func(epoch int, lr float64) float64 {
		if epoch == 0 {
			return lr
		}
		return lr / 2
	})
	hist, err := m.Fit(context.Background(), blobs(t, 32, 1), nn.Epochs(2), nn.Verbose(0), nn.Callbacks(halve, tb))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "validation")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a validation run without validation data: %v", err)
	}
	train, histos := readRun(t, filepath.Join(dir, "train"))
	var tags []string
	for k := range train {
		tags = append(tags, fmt.Sprintf("%s@%d", k.tag, k.step))
	}
	slices.Sort(tags)
	want := "epoch_accuracy@0 epoch_accuracy@1 epoch_learning_rate@0 epoch_learning_rate@1 epoch_loss@0 epoch_loss@1 epoch_lr@0 epoch_lr@1"
	if got := strings.Join(tags, " "); got != want || len(histos) != 0 {
		t.Fatalf("scalars %s and %d histograms, want %s and none", got, len(histos), want)
	}
	for i, e := range hist.Epochs {
		lr := float32(hist.Get("lr")[i])
		if got := train[scalarKey{"epoch_learning_rate", int64(e)}]; got != lr || train[scalarKey{"epoch_lr", int64(e)}] != lr {
			t.Errorf("epoch %d: learning rate %v, lr %v, want %v", e, got, train[scalarKey{"epoch_lr", int64(e)}], lr)
		}
	}
	if lr := train[scalarKey{"epoch_learning_rate", 1}]; lr != 0.025 {
		t.Errorf("epoch 1's learning rate %v, want 0.025 (halved from 0.05)", lr)
	}
}

// failAt fails its batch hook at one epoch's first batch.
type failAt struct {
	nn.CallbackBase
	epoch, current int
}

func (f *failAt) OnEpochBegin(epoch int, _ nn.Logs) error { f.current = epoch; return nil }

func (f *failAt) OnTrainBatchBegin(batch int, _ nn.Logs) error {
	if f.current == f.epoch && batch == 0 {
		return errors.New("boom")
	}
	return nil
}

func TestTensorBoardFlushesEachEpochAndCloses(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 0.1)
	tb := callbacks.NewTensorBoard(dir)
	tb.UpdateFreq = 1
	_, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(3), nn.Verbose(0), nn.Callbacks(tb, &failAt{epoch: 1}))
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Fit: %v, want the callback's failure", err)
	}
	// Epoch 0 was flushed at its end, before Fit failed and left the file open.
	train, _ := readRun(t, filepath.Join(dir, "train"))
	if _, ok := train[scalarKey{"epoch_loss", 0}]; !ok {
		t.Fatalf("epoch 0's loss is not in the file before Close: %v", train)
	}
	if _, ok := train[scalarKey{"batch_loss", 2}]; !ok {
		t.Errorf("batch 2's loss is not in the file before Close: %v", train)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The same callback trains again into a new file of the same run.
	if _, err := m.Fit(context.Background(), blobs(t, 64, 1), nn.Epochs(1), nn.Verbose(0), nn.Callbacks(tb)); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "train")); len(entries) != 2 {
		t.Errorf("train holds %d files after two fits, want 2", len(entries))
	}
}

func TestTensorBoardRefusesWhatItCannotWrite(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"train", "validation"} {
		if err := os.MkdirAll(filepath.Join(base, "has-"+run), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, "has-"+run, run), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		logDir    string
		configure func(*callbacks.TensorBoard)
		want      string // the whole error after "fit: callback *callbacks.TensorBoard, on_train_begin: "; {base} stands for base
	}{
		{"under a regular file", filepath.Join(file, "logs"), nil,
			"TensorBoard: LogDir {base}/file/logs: {base}/file is not a directory: remove it or choose another log directory"},
		{"the log dir is a file", file, nil,
			"TensorBoard: LogDir {base}/file: {base}/file is not a directory: remove it or choose another log directory"},
		{"train is a file", filepath.Join(base, "has-train"), nil,
			"TensorBoard: LogDir {base}/has-train: {base}/has-train/train is not a directory: remove it or choose another log directory"},
		{"validation is a file", filepath.Join(base, "has-validation"), nil,
			"TensorBoard: LogDir {base}/has-validation: {base}/has-validation/validation is not a directory: remove it or choose another log directory"},
		{"no log dir", "", nil, `TensorBoard: no log directory given: set LogDir, e.g. "logs"`},
		{"negative histogram frequency", base, func(tb *callbacks.TensorBoard) { tb.HistogramFreq = -1 },
			"TensorBoard: HistogramFreq must not be negative, got -1 (0 writes no histograms)"},
		{"negative update frequency", base, func(tb *callbacks.TensorBoard) { tb.UpdateFreq = -2 },
			"TensorBoard: UpdateFreq must not be negative, got -2 (0 writes once per epoch)"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(base, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct {
			name      string
			logDir    string
			configure func(*callbacks.TensorBoard)
			want      string
		}{"read-only directory", filepath.Join(ro, "logs"), nil,
			"TensorBoard: LogDir {base}/read-only/logs: cannot create files in {base}/read-only (permission denied): choose a log directory you can write to"})
	}
	m := tinyModel(t, 0.1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &callbacks.TensorBoard{LogDir: tc.logDir}
			if tc.configure != nil {
				tc.configure(tb)
			}
			hist, err := m.Fit(context.Background(), blobs(t, 32, 1), nn.Verbose(0), nn.Callbacks(tb))
			want := "fit: callback *callbacks.TensorBoard, on_train_begin: " + strings.ReplaceAll(tc.want, "{base}", base)
			if err == nil || err.Error() != want {
				t.Fatalf("error %v\nwant  %s", err, want)
			}
			if len(hist.Epochs) != 0 {
				t.Errorf("trained %d epochs before failing", len(hist.Epochs))
			}
			if tc.logDir != "" && tb.Check() == nil && tc.configure == nil {
				t.Errorf("Check accepts %s", tc.logDir)
			}
		})
	}
	made := []string{"file", "has-train", "has-validation"}
	if os.Geteuid() != 0 {
		made = append(made, "read-only")
	}
	var names []string
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, made) {
		t.Errorf("%s holds %v after the checks, want %v", base, names, made)
	}
}

func TestNewTensorBoardKeepsKerasDefaults(t *testing.T) {
	tests := []struct {
		logDir, want string
	}{
		{"", "logs 0 0"},
		{"runs/a", "runs/a 0 0"},
	}
	for _, tc := range tests {
		tb := callbacks.NewTensorBoard(tc.logDir)
		if got := fmt.Sprintf("%s %d %d", tb.LogDir, tb.HistogramFreq, tb.UpdateFreq); got != tc.want {
			t.Errorf("NewTensorBoard(%q): %s, want %s", tc.logDir, got, tc.want)
		}
	}
}
