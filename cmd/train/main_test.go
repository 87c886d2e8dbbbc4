package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
	"github.com/gokeras/gokeras/device"
)

// The tests train the real flagship model (12,230,010 weights, about 0.15 s
// a step on a laptop CPU) on CIFAR-10 copies of recordsPerFile records per
// batch file: 100 training and 20 test samples, so a run with
// --steps-per-epoch 2 takes well under a second.
const recordsPerFile = 20

// Keras' output lines, as the seeds' notebook printed them.
var (
	deviceLine = regexp.MustCompile(`^Device: /CPU:0 \(/job:localhost/replica:0/task:0/device:CPU:0\)$`)
	// epochLine is the end-of-epoch line of fit and of evaluate at --verbose 1.
	epochLine    = regexp.MustCompile(`^\d+/\d+ \[=+\] - \d+s \d+(ms|us|s)/step - loss: \d\.\d{4} - accuracy: \d\.\d{4}$`)
	epochLineVal = regexp.MustCompile(`^\d+/\d+ \[=+\] - \d+s \d+(ms|us|s)/step - loss: \d\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d\.\d{4} - val_accuracy: \d\.\d{4}$`)
	// epochLine2 is Keras' --verbose 2 line.
	epochLine2 = regexp.MustCompile(`^\d+/\d+ - \d+s - loss: \d\.\d{4} - accuracy: \d\.\d{4} - \d+(ms|us|s)/epoch - \d+(ms|us|s)/step$`)
	summaryEnd = regexp.MustCompile(`^_{65}$`)
	testLine   = regexp.MustCompile(`^Test loss: \d+\.\d{4} - test accuracy: \d\.\d{4}$`)
	timeLine   = regexp.MustCompile(`^Total time: (\d+(\.\d+)? (s|ms|us|ns)|\d+min( \d+s)?)$`)
)

// asTrainEnv, set to 1, makes the test binary run train's main with its
// arguments instead of the tests: the signal tests run train as a process
// of its own this way. slowSaveEnv, set to 1 as well, makes an interrupted
// run wait a minute before it saves its checkpoint.
const (
	asTrainEnv  = "GOKERAS_TEST_RUN_TRAIN"
	slowSaveEnv = "GOKERAS_TEST_SLOW_SAVE"
)

// slowSaveLine is what an interrupted run prints when slowSaveEnv holds it.
const slowSaveLine = "test: waiting before saving the checkpoint"

func TestMain(m *testing.M) {
	if os.Getenv(asTrainEnv) == "1" {
		if os.Getenv(slowSaveEnv) == "1" {
			testHookInterruptSave = func() {
				fmt.Fprintln(os.Stderr, slowSaveLine)
				time.Sleep(time.Minute)
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// trainRun is what one call of run left behind.
type trainRun struct {
	stdout, stderr string
	err            error
}

func (r trainRun) lines() []string { return strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") }

func runTrain(t *testing.T, args ...string) trainRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	r := trainRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
	// A log file or pipe must hold plain lines: no live bars.
	if strings.ContainsAny(r.stdout+r.stderr, "\r\b") {
		t.Errorf("train %s wrote carriage returns or backspaces to non-terminal output:\nstdout %q\nstderr %q",
			strings.Join(args, " "), r.stdout, r.stderr)
	}
	return r
}

// archiveServer serves archive at /cifar-10-binary.tar.gz and counts the
// requests.
func archiveServer(t *testing.T, archive []byte) (url string, requests *atomic.Int32) {
	t.Helper()
	requests = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.ServeContent(w, r, cifar10test.ArchiveName, time.Time{}, bytes.NewReader(archive))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + cifar10test.ArchiveName, requests
}

// isolate gives the test its own empty cache and a download URL that fails
// the test if anything requests it, so no test reaches the network or a
// user's real cache. It returns the cache's home directory.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv(cifar10.HomeEnv, home)
	t.Setenv(cifar10.MD5Env, "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected download request %s %s", r.Method, r.URL)
		http.Error(w, "no downloads in this test", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(cifar10.URLEnv, srv.URL+"/"+cifar10test.ArchiveName)
	return home
}

// seedLine is what train prints when the seed comes from the clock.
var seedLine = regexp.MustCompile(`^Seed: (\d+) \(pass --seed (\d+) to repeat\)$`)

// checkHeader checks the lines before the model summary: the device, the
// seed when it came from the clock, and the dataset shapes, as
// keras.datasets.cifar10.load_data documents them.
func checkHeader(t *testing.T, lines []string, train, test int) {
	t.Helper()
	if len(lines) > 1 && seedLine.MatchString(lines[1]) {
		lines = append(lines[:1:1], lines[2:]...)
	}
	want := []string{
		"x_train: (" + strconv.Itoa(train) + ", 32, 32, 3) uint8, y_train: (" + strconv.Itoa(train) + ", 1) uint8",
		"x_test: (" + strconv.Itoa(test) + ", 32, 32, 3) uint8, y_test: (" + strconv.Itoa(test) + ", 1) uint8",
	}
	if len(lines) < 3 || !deviceLine.MatchString(lines[0]) || lines[1] != want[0] || lines[2] != want[1] {
		t.Fatalf("output starts\n%s\nwant the device line, then\n%s", strings.Join(lines[:min(3, len(lines))], "\n"), strings.Join(want, "\n"))
	}
}

// checkSummary checks the model summary's totals, the flagship model's.
func checkSummary(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{
		"\nModel: \"sequential\"\n",
		" dense_2 (Dense)             (None, 10)                10010     \n",
		"\nTotal params: 12,230,010\nTrainable params: 12,230,010\nNon-trainable params: 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("model summary lacks %q:\n%s", want, out)
		}
	}
}

// checkTail checks the lines from "Epoch 1/1" to the end against patterns,
// one per line.
func checkTail(t *testing.T, lines []string, first string, patterns ...*regexp.Regexp) {
	t.Helper()
	at := -1
	for i, l := range lines {
		if l == first {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatalf("no line %q in\n%s", first, strings.Join(lines, "\n"))
	}
	tail := lines[at+1:]
	if len(tail) != len(patterns) {
		t.Fatalf("after %q: %d lines, want %d:\n%s", first, len(tail), len(patterns), strings.Join(tail, "\n"))
	}
	for i, p := range patterns {
		if !p.MatchString(tail[i]) {
			t.Errorf("line %q does not match %s", tail[i], p)
		}
	}
}

func TestTrainDownloadsOnceThenUsesCache(t *testing.T) {
	home := isolate(t)
	archive := cifar10test.Archive(t, recordsPerFile)
	url, requests := archiveServer(t, archive)
	t.Setenv(cifar10.URLEnv, url)
	t.Setenv(cifar10.MD5Env, cifar10test.MD5(archive)) // a repackaged mirror
	args := []string{"--device=/CPU:0", "--epochs", "1", "--steps-per-epoch", "2", "--seed", "1"}

	first := runTrain(t, args...)
	if first.err != nil {
		t.Fatalf("first run: %v\n%s", first.err, first.stderr)
	}
	if got := requests.Load(); got != 1 {
		t.Errorf("first run made %d download requests, want 1", got)
	}
	cache := filepath.Join(home, "datasets", cifar10test.BatchesDir)
	for _, want := range []string{"downloading " + url, "downloaded " + strconv.Itoa(len(archive)) + " bytes", "extracting"} {
		if !strings.Contains(first.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, first.stderr)
		}
	}
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("no cache at %s: %v", cache, err)
	}
	lines := first.lines()
	checkHeader(t, lines, 5*recordsPerFile, recordsPerFile)
	checkSummary(t, first.stdout)
	// 2 training steps, then evaluate's single step over the 20 test samples.
	checkTail(t, lines, "Epoch 1/1", epochLine, epochLine, testLine, timeLine)
	if tail := lines[len(lines)-4:]; !strings.HasPrefix(tail[0], "2/2 [") || !strings.HasPrefix(tail[1], "1/1 [") {
		t.Errorf("step counts: %q and %q, want 2/2 (fit) and 1/1 (evaluate)", tail[0], tail[1])
	}

	second := runTrain(t, args...)
	if second.err != nil {
		t.Fatalf("second run: %v\n%s", second.err, second.stderr)
	}
	if got := requests.Load(); got != 1 {
		t.Errorf("second run made %d more download requests, want none", got-1)
	}
	if want := "cifar10: using cached CIFAR-10 at " + cache + "\n"; second.stderr != want {
		t.Errorf("second run's stderr %q, want %q", second.stderr, want)
	}
	// The same seed on the same data gives the same model.
	if a, b := lines[len(lines)-2], second.lines()[len(second.lines())-2]; a != b {
		t.Errorf("--seed 1 twice: %q then %q", a, b)
	}
}

func TestTrainLocalCopiesAndOutputModes(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	files := cifar10test.Files(recordsPerFile)
	dir := filepath.Join(root, "copy", cifar10test.BatchesDir)
	cifar10test.WriteDir(t, dir, files)
	archive := filepath.Join(root, cifar10test.ArchiveName)
	cifar10test.WriteDir(t, root, map[string][]byte{cifar10test.ArchiveName: cifar10test.TarGz(t, files, cifar10test.BatchesDir+"/")})

	for _, tc := range []struct {
		name, data string
		flags      []string
		tail       []*regexp.Regexp // the lines after "Epoch 1/1"
	}{
		{"directory, verbose 2", dir, []string{"--verbose", "2"}, []*regexp.Regexp{epochLine2, epochLine2, testLine, timeLine}},
		{"archive, verbose 1", archive, nil, []*regexp.Regexp{epochLine, epochLine, testLine, timeLine}},
		{"parent directory, validation", filepath.Dir(dir), []string{"--validation"}, []*regexp.Regexp{epochLineVal, epochLine, testLine, timeLine}},
		{"directory, verbose 0", dir, []string{"--verbose", "0"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--device=/CPU:0", "--epochs", "1", "--steps-per-epoch", "2", "--seed", "3", "--data", tc.data}, tc.flags...)
			r := runTrain(t, args...)
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.stderr)
			}
			if tc.tail == nil {
				// --verbose 0: errors only, and there were none.
				if r.stdout != "" || r.stderr != "" {
					t.Errorf("--verbose 0 printed\nstdout %q\nstderr %q", r.stdout, r.stderr)
				}
				return
			}
			if want := "cifar10: reading CIFAR-10 from " + tc.data + "\n"; r.stderr != want {
				t.Errorf("stderr %q, want %q", r.stderr, want)
			}
			lines := r.lines()
			checkHeader(t, lines, 5*recordsPerFile, recordsPerFile)
			checkSummary(t, r.stdout)
			checkTail(t, lines, "Epoch 1/1", tc.tail...)
		})
	}
}

func TestTrainGPUWithoutCUDAFailsFast(t *testing.T) {
	if device.DefaultSpec().Kind == device.GPU {
		t.Skip("this binary has a usable GPU")
	}
	home := isolate(t)
	r := runTrain(t, "--device=/GPU:0", "--epochs", "1")
	if r.err != nil && strings.Contains(r.err.Error(), "driver sees no GPU") {
		t.Skip("built with CUDA support, on a machine without a GPU: the driver's own error, which package device tests")
	}
	if !errors.Is(r.err, device.ErrNoSuchDevice) {
		t.Fatalf("error %v, want device.ErrNoSuchDevice", r.err)
	}
	for _, want := range []string{"--device", "/GPU:0", "built without CUDA support", "rebuild with -tags", "/CPU:0", "--soft-placement"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not mention %q", r.err, want)
		}
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("printed before failing:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	if entries, err := os.ReadDir(home); err != nil || len(entries) != 0 {
		t.Errorf("the dataset cache was touched before the device check (%v, %v)", entries, err)
	}
}

func TestTrainSoftPlacementFallsBackToCPU(t *testing.T) {
	if device.DefaultSpec().Kind == device.GPU {
		t.Skip("this binary has a usable GPU")
	}
	isolate(t)
	r := runTrain(t, "--device=/GPU:0", "--soft-placement", "--synthetic", "--synthetic-samples", "64",
		"--epochs", "1", "--steps-per-epoch", "1", "--verbose", "2", "--seed", "1")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "gokeras: warning: soft placement: /GPU:0 does not exist"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
	lines := r.lines()
	checkHeader(t, lines, 64, 12)
	checkTail(t, lines, "Epoch 1/1", epochLine2, epochLine2, testLine, timeLine)
}

func TestTrainFlagErrors(t *testing.T) {
	isolate(t) // any flag error must come before the dataset is looked for
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--epochs", "0"}, "--epochs must be positive, got 0"},
		{[]string{"--verbose", "3"}, "--verbose must be 0, 1 or 2, got 3"},
		{[]string{"--optimizer", "lion"}, `--optimizer: unknown optimizer "lion": known optimizers are sgd, adam, adamw`},
		{[]string{"--lr", "0"}, "--lr must be a positive number, got 0"},
		{[]string{"--lr", "-0.1"}, "--lr must be a positive number, got -0.1"},
		{[]string{"--batch-size", "0"}, "--batch-size must be positive, got 0"},
		{[]string{"--steps-per-epoch", "-1"}, "--steps-per-epoch must not be negative"},
		{[]string{"--synthetic", "--synthetic-samples", "9223372036854775807"}, "--synthetic-samples 9223372036854775807 is more than the 100000000 the generated dataset allows"},
		{[]string{"--synthetic", "--data", "x"}, "--synthetic and --data exclude each other"},
		{[]string{"--device", "/TPU:0"}, "--device"},
		{[]string{"--device=/CPU:0", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"--epochs", "ten"}, `invalid value "ten" for --epochs`},
		{[]string{"--no-such-flag"}, "unknown flag --no-such-flag"},
		{[]string{"--load-model", "m.safetensors", "--optimizer", "adam"}, "--load-model and --optimizer exclude each other"},
		{[]string{"--load-model", "m.safetensors", "--model", "cnn"}, "--load-model and --model exclude each other"},
		{[]string{"--save-model", "m.safetensors", "--save", "m.safetensors"}, "both name m.safetensors"},
		{[]string{"--load-model", "m.safetensors", "--checkpoint", "ck.safetensors"}, "--load-model and --checkpoint exclude each other"},
		{[]string{"--load-model", "m.safetensors", "--epochs", "0", "--plot", "p.png"}, "--epochs 0 only evaluates: --plot"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runTrain(t, tc.args...)
			if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", r.err, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("printed %q before the error", r.stdout)
			}
		})
	}
}

func TestTrainHelp(t *testing.T) {
	isolate(t)
	r := runTrain(t, "-h")
	if !errors.Is(r.err, flag.ErrHelp) {
		t.Fatalf("error %v, want flag.ErrHelp", r.err)
	}
	for _, want := range []string{"--device", "--epochs", "--data", cifar10.URLEnv, cifar10.MD5Env, cifar10.HomeEnv, "--soft-placement"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestTrainDataErrorsSayHowToFix(t *testing.T) {
	isolate(t)
	missing := filepath.Join(t.TempDir(), "nowhere")
	r := runTrain(t, "--device=/CPU:0", "--data", missing, "--seed", "1")
	if r.err == nil || !strings.Contains(r.err.Error(), "loading CIFAR-10") || !strings.Contains(r.err.Error(), "point --data at") {
		t.Fatalf("error %v, want a loading error telling where to point --data", r.err)
	}
	// The device was chosen and printed before the data was looked for.
	if !deviceLine.MatchString(strings.TrimSuffix(r.stdout, "\n")) {
		t.Errorf("stdout %q, want only the device line", r.stdout)
	}
}

func TestFormatTime(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		want    string
	}{
		{146, "2min 26s"},
		{593, "9min 53s"},
		{60, "1min"},
		{3725, "1h 2min 5s"},
		{59.4, "59.4 s"},
		{9.876, "9.88 s"},
		{0.7124, "712 ms"},
		{0.9997, "1 s"},
		{0.0123, "12.3 ms"},
		{4.5e-5, "45 us"},
		{0, "0 ns"},
	} {
		if got := formatTime(time.Duration(tc.seconds * float64(time.Second))); got != tc.want {
			t.Errorf("formatTime(%vs) = %q, want %q", tc.seconds, got, tc.want)
		}
	}
}

// The run's step count, which the cosine schedule decays over, never
// overflows: a --batch-size near 2^63 once made it negative, the schedule
// decayed over one step, and training stopped learning after it.
func TestTotalSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  config
		want int64
	}{
		{"CIFAR-10", config{epochs: 10, batchSize: 32}, 10 * 1563},
		{"synthetic", config{epochs: 2, batchSize: 32, synthetic: true, syntheticTrain: 100}, 2 * 4},
		{"steps per epoch", config{epochs: 3, batchSize: 32, stepsPerEpoch: 7}, 21},
		{"validation split", config{epochs: 1, batchSize: 10, synthetic: true, syntheticTrain: 100, validSplit: 0.2}, 8},
		{"batch near 2^63", config{epochs: 5, batchSize: math.MaxInt}, 5},
		{"batch 2^62", config{epochs: 1, batchSize: 1 << 62, synthetic: true, syntheticTrain: 3}, 1},
		{"epochs times steps past 2^63", config{epochs: math.MaxInt, stepsPerEpoch: 4, batchSize: 32}, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := totalSteps(tc.cfg); got != tc.want {
				t.Errorf("totalSteps = %d, want %d", got, tc.want)
			}
		})
	}
}

// --save-model writes the whole model; --load-model --epochs 0 evaluates
// it to the same test figures, --load-model trains it on, and a .onnx name
// exports it.
func TestTrainSaveAndLoadModel(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.safetensors")
	common := []string{"--synthetic", "--synthetic-samples", "200", "--seed", "3", "--device=/CPU:0", "--verbose", "2"}
	first := runTrain(t, append(common, "--epochs", "1", "--save-model", model)...)
	if first.err != nil {
		t.Fatalf("train --save-model: %v\n%s", first.err, first.stderr)
	}
	test := regexp.MustCompile(`(?m)^Test loss: .*$`)
	saved := test.FindString(first.stdout)
	if saved == "" || !strings.Contains(first.stdout, "Model saved to "+model) {
		t.Fatalf("output:\n%s", first.stdout)
	}
	again := runTrain(t, append(common, "--epochs", "0", "--load-model", model)...)
	if again.err != nil {
		t.Fatalf("train --load-model --epochs 0: %v\n%s", again.err, again.stderr)
	}
	if got := test.FindString(again.stdout); got != saved {
		t.Errorf("the loaded model evaluates to %q, the saved one to %q", got, saved)
	}
	onnxFile := filepath.Join(dir, "m.onnx")
	on := runTrain(t, append(common, "--epochs", "1", "--load-model", model, "--save-model", onnxFile)...)
	if on.err != nil {
		t.Fatalf("train --load-model --save-model m.onnx: %v\n%s", on.err, on.stderr)
	}
	if info, err := os.Stat(onnxFile); err != nil || info.Size() < 1000 {
		t.Errorf("the ONNX file: %v, %v", info, err)
	}
	web := filepath.Join(dir, "web.tfjs")
	js := runTrain(t, append(common, "--epochs", "0", "--load-model", model, "--save-model", web)...)
	if js.err != nil {
		t.Fatalf("train --save-model web.tfjs: %v\n%s", js.err, js.stderr)
	}
	if _, err := os.Stat(filepath.Join(web, "model.json")); err != nil {
		t.Errorf("the TF.js folder: %v", err)
	}
	if test.FindString(on.stdout) == saved {
		t.Errorf("an epoch more of training left the test figures as they were: %q", saved)
	}
	missing := runTrain(t, append(common, "--epochs", "0", "--load-model", filepath.Join(dir, "none.safetensors"))...)
	if missing.err == nil || !strings.Contains(missing.err.Error(), "--load-model") {
		t.Errorf("a missing --load-model file: %v", missing.err)
	}
}

// --save-model m.keras writes Keras 3's archive (m.h5 Keras 2's model
// file); --load-model of it with --epochs 0 evaluates it to the same test
// figures, and trains it on.
func TestTrainSaveModelKeras(t *testing.T) {
	for _, c := range []struct{ name, says, magic string }{
		{"m.keras", "Keras 3 .keras archive", "PK\x03\x04"},
		{"m.h5", "Keras 2 HDF5 model file", "\x89HDF"},
	} {
		t.Run(c.name, func(t *testing.T) { trainSaveModelKeras(t, c.name, c.says, c.magic) })
	}
}

func trainSaveModelKeras(t *testing.T, name, says, magic string) {
	isolate(t)
	dir := t.TempDir()
	model := filepath.Join(dir, name)
	common := []string{"--synthetic", "--synthetic-samples", "200", "--seed", "3", "--device=/CPU:0", "--verbose", "2"}
	first := runTrain(t, append(common, "--epochs", "1", "--save-model", model)...)
	if first.err != nil {
		t.Fatalf("train --save-model %s: %v\n%s", name, first.err, first.stderr)
	}
	test := regexp.MustCompile(`(?m)^Test loss: .*$`)
	saved := test.FindString(first.stdout)
	if saved == "" || !strings.Contains(first.stdout, "Model saved to "+model+" ("+says+")") {
		t.Fatalf("output:\n%s", first.stdout)
	}
	head := make([]byte, 4)
	if f, err := os.Open(model); err != nil {
		t.Fatal(err)
	} else {
		_, err := io.ReadFull(f, head)
		f.Close()
		if err != nil || string(head) != magic {
			t.Fatalf("%s starts with %q (%v), not %q", name, head, err, magic)
		}
	}
	again := runTrain(t, append(common, "--epochs", "0", "--load-model", model)...)
	if again.err != nil {
		t.Fatalf("train --load-model %s --epochs 0: %v\n%s", name, again.err, again.stderr)
	}
	if got := test.FindString(again.stdout); got != saved {
		t.Errorf("the loaded model evaluates to %q, the saved one to %q", got, saved)
	}
	on := runTrain(t, append(common, "--epochs", "1", "--load-model", model)...)
	if on.err != nil {
		t.Fatalf("train --load-model %s --epochs 1: %v\n%s", name, on.err, on.stderr)
	}
}
