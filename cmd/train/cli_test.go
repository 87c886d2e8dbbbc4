package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/nn"
)

// trainProcess runs train's main in a process of its own, as a shell
// would, and returns its stdout, stderr and exit status.
func trainProcess(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asTrainEnv+"=1", cifar10.HomeEnv+"="+t.TempDir(), cifar10.URLEnv+"=http://127.0.0.1:1/none.tar.gz")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func TestTrainCommandLineExitStatusAndHelp(t *testing.T) {
	const hint = "Run train --help for the flags.\n"
	for _, tc := range []struct {
		args       []string
		status     int
		stdout     string // a prefix of stdout
		stderr     string // all of stderr
		stdoutNone bool
	}{
		{[]string{"--help"}, 0, "Usage: train [flags]\n", "", false},
		{[]string{"-h"}, 0, "Usage: train [flags]\n", "", false},
		{[]string{"--epochs", "0"}, 2, "", "train: --epochs must be positive, got 0 (0, to evaluate only, needs --load-model)\n" + hint, true},
		{[]string{"--no-such-flag"}, 2, "", "train: unknown flag --no-such-flag\n" + hint, true},
		{[]string{"--epochs", "ten"}, 2, "", "train: invalid value \"ten\" for --epochs: parse error\n" + hint, true},
		{[]string{"--epochs"}, 2, "", "train: flag needs an argument: --epochs\n" + hint, true},
		{[]string{"extra"}, 2, "", "train: unexpected arguments [\"extra\"]: train takes flags only\n" + hint, true},
		{[]string{"--validation", "--validation-split", "0.2"}, 2, "", "train: --validation and --validation-split exclude each other: validate on the test set or on part of the training set, not both\n" + hint, true},
		{[]string{"--validation-split", "1"}, 2, "", "train: --validation-split must be at least 0 and below 1, got 1\n" + hint, true},
		{[]string{"--early-stopping", "-1"}, 2, "", "train: --early-stopping must not be negative, got -1 (0 turns it off)\n" + hint, true},
		{[]string{"--optimizer", "lion"}, 2, "", "train: --optimizer: unknown optimizer \"lion\": known optimizers are sgd, adam, adamw, rmsprop, adagrad, adadelta, adamax, nadam\n" + hint, true},
		{[]string{"--device", "/TPU:0"}, 2, "", "", true},
		// Not a usage error: the command line is fine, the path is not.
		{[]string{"--json", "/nonexistent-dir/run.json"}, 1, "", "train: --json /nonexistent-dir/run.json: directory /nonexistent-dir does not exist: create it or choose another path\n", true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, status := trainProcess(t, tc.args...)
			if status != tc.status {
				t.Errorf("exit status %d, want %d\nstderr %q", status, tc.status, stderr)
			}
			if !strings.HasPrefix(stdout, tc.stdout) || tc.stdoutNone && stdout != "" {
				t.Errorf("stdout %q, want it to start with %q", stdout, tc.stdout)
			}
			if tc.stderr != "" && stderr != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if n := strings.Count(stderr, "train: "); tc.status != 0 && n != 1 {
				t.Errorf("the error is printed %d times, want once:\n%s", n, stderr)
			}
		})
	}
}

// TestTrainUsageMatchesREADME checks that the README and docs/train.md
// spell every flag as the usage text does and name only flags that exist,
// and that docs/train.md, the command's reference, names every flag.
func TestTrainUsageMatchesREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	reference, err := os.ReadFile("../../docs/train.md")
	if err != nil {
		t.Fatal(err)
	}
	var help bytes.Buffer
	if _, err := parseFlags([]string{"--help"}, &help); err == nil {
		t.Fatal("--help returned no error")
	}
	usageFlags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  (-+)([a-z-]+)`).FindAllStringSubmatch(help.String(), -1) {
		if m[1] != "--" {
			t.Errorf("usage spells the flag %s%s, want --%s", m[1], m[2], m[2])
		}
		usageFlags[m[2]] = true
	}
	if len(usageFlags) < 20 {
		t.Fatalf("found %d flags in the usage text:\n%s", len(usageFlags), help.String())
	}
	// The flag tables: rows that start with a flag.
	referenceFlags := map[string]bool{}
	for name, doc := range map[string][]byte{"README.md": readme, "docs/train.md": reference} {
		for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z-]+)").FindAllStringSubmatch(string(doc), -1) {
			if name == "docs/train.md" {
				referenceFlags[m[1]] = true
			}
			if !usageFlags[m[1]] {
				t.Errorf("the flag table of %s has --%s, which train does not have", name, m[1])
			}
		}
	}
	for name := range usageFlags {
		if !referenceFlags[name] && !strings.Contains(string(reference), "`--"+name) {
			t.Errorf("docs/train.md does not mention --%s", name)
		}
	}
}

func TestTrainPrintsTheClockSeed(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name     string
		args     []string
		wantLine bool
	}{
		{"clock seed", nil, true},
		{"--seed", []string{"--seed", "42"}, false},
		{"clock seed, --verbose 0", []string{"--verbose", "0"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ck := filepath.Join(t.TempDir(), "ck.safetensors")
			args := append(append(slices.Clone(quick), "--epochs", "1", "--checkpoint", ck), tc.args...)
			r := runTrain(t, args...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			info, err := nn.ReadCheckpoint(ck)
			if err != nil {
				t.Fatal(err)
			}
			lines := r.lines()
			var m []string
			for _, l := range lines {
				if m = seedLine.FindStringSubmatch(l); m != nil {
					break
				}
			}
			switch {
			case !tc.wantLine && m != nil:
				t.Errorf("printed %q, want no seed line", m[0])
			case tc.wantLine && m == nil:
				t.Fatalf("no line %q in\n%s", seedLine, r.stdout)
			case tc.wantLine && (m[1] != m[2] || info.Metadata[metaSeed] != m[1]):
				t.Errorf("printed %q; the checkpoint holds seed %s", m[0], info.Metadata[metaSeed])
			case tc.wantLine && lines[1] != m[0]:
				t.Errorf("the seed line is not right after the device line:\n%s", r.stdout)
			}
			if info.Metadata[metaSeed] == "" {
				t.Error("the checkpoint lacks the seed")
			}
		})
	}
}

func TestTrainVerboseZeroPrintsOnlyErrors(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"plain", nil, ""},
		{"clock seed and outputs", []string{"--save", filepath.Join(dir, "w.safetensors"), "--plot", filepath.Join(dir, "h.png"),
			"--checkpoint", filepath.Join(dir, "ck.safetensors"), "--csv-log", filepath.Join(dir, "log.csv"), "--validation", "--early-stopping", "1"}, ""},
		{"an error", []string{"--resume", filepath.Join(dir, "missing.safetensors")}, "--resume: stat "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runTrain(t, append(append(slices.Clone(quick), "--verbose", "0"), tc.args...)...)
			if tc.wantErr == "" && r.err != nil || tc.wantErr != "" && (r.err == nil || !strings.Contains(r.err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", r.err, tc.wantErr)
			}
			if r.stdout != "" || r.stderr != "" {
				t.Errorf("--verbose 0 printed\nstdout %q\nstderr %q", r.stdout, r.stderr)
			}
		})
	}
}

func TestTrainJSONSummary(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name      string
		toStdout  bool
		args      []string
		figures   []string
		monitored bool
	}{
		{"file", false, nil, []string{"accuracy", "loss"}, false},
		{"stdout, quiet", true, []string{"--verbose", "0"}, []string{"accuracy", "loss"}, false},
		{"validation split", false, []string{"--validation-split", "0.25"}, []string{"accuracy", "loss", "val_accuracy", "val_loss"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.json")
			if tc.toStdout {
				path = "-"
			}
			r := runTrain(t, append(append(slices.Clone(quick), "--seed", "7", "--json", path), tc.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			b := []byte(r.stdout)
			if !tc.toStdout {
				var err error
				if b, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			var s summary
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("%v in\n%s", err, b)
			}
			if dec.More() {
				t.Errorf("more than the summary: %s", b)
			}
			if s.Device != device.DefaultSpec().Short() || s.Seed != 7 || s.SeedFromClock || s.Dataset != "synthetic" || s.Flags["epochs"] != "2" || s.Flags["seed"] != "7" {
				t.Errorf("summary %+v", s)
			}
			if len(s.Epochs) != 2 || s.Epochs[0].Epoch != 1 || s.Epochs[1].Epoch != 2 {
				t.Fatalf("epochs %+v, want 1 and 2", s.Epochs)
			}
			for _, e := range s.Epochs {
				got := slices.Sorted(func(yield func(string) bool) {
					for k := range e.Figures {
						if !yield(k) {
							return
						}
					}
				})
				if !slices.Equal(got, tc.figures) || e.Steps == nil || *e.Steps != 3 || !(e.MsPerStep > 0) {
					t.Errorf("epoch %+v, want figures %v, 3 steps and their time", e, tc.figures)
				}
			}
			if _, ok := s.Test["loss"]; !ok || !(s.MsPerStep > 0) || s.TotalTimeS <= 0 {
				t.Errorf("test %v, ms/step %v, total %v", s.Test, s.MsPerStep, s.TotalTimeS)
			}
		})
	}
}

func TestTrainCSVLogAndEarlyStopping(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name    string
		args    []string
		header  []string
		rows    int    // at most
		stopped string // "yes", "no", or "" for either
	}{
		{"csv", nil, []string{"epoch", "accuracy", "loss"}, 2, "no"},
		{"csv with validation split", []string{"--validation-split", "0.25"}, []string{"epoch", "accuracy", "loss", "val_accuracy", "val_loss"}, 2, "no"},
		// The training loss moves with the batches: the run may stop or not.
		{"early stopping on loss", []string{"--early-stopping", "1", "--epochs", "3"}, []string{"epoch", "accuracy", "loss"}, 3, ""},
		// A learning rate this small leaves the weights as they are: the
		// val_loss on the same test set stays put, and patience 1 ends the
		// run after epoch 2 of 5.
		{"early stopping on val_loss", []string{"--lr", "1e-30", "--early-stopping", "1", "--epochs", "5", "--validation"},
			[]string{"epoch", "accuracy", "loss", "val_accuracy", "val_loss"}, 2, "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.csv")
			r := runTrain(t, append(append(slices.Clone(quick), "--seed", "3", "--csv-log", path), tc.args...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			records, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(records) < 2 || !slices.Equal(records[0], tc.header) || len(records)-1 > tc.rows {
				t.Errorf("CSV %v, want header %v and at most %d rows", records, tc.header, tc.rows)
			}
			stopped := map[bool]string{true: "yes", false: "no"}[regexp.MustCompile(`(?m)^Epoch \d: early stopping$`).MatchString(r.stdout)]
			if tc.stopped != "" && stopped != tc.stopped {
				t.Errorf("stopped early: %v, want %v\n%s", stopped, tc.stopped, r.stdout)
			}
		})
	}
}

func TestEarlyStoppingMonitor(t *testing.T) {
	for _, tc := range []struct {
		cfg  config
		want string
	}{
		{config{}, "loss"},
		{config{validation: true}, "val_loss"},
		{config{validSplit: 0.1}, "val_loss"},
	} {
		if got := earlyStoppingMonitor(tc.cfg); got != tc.want {
			t.Errorf("earlyStoppingMonitor(%+v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

func TestTrainMessagesNameFlagsNotGoAPI(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	weights := filepath.Join(dir, "w.safetensors")
	if r := runTrain(t, append(slices.Clone(quick), "--seed", "1", "--epochs", "1", "--save", weights)...); r.err != nil {
		t.Fatal(r.err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad device", []string{"--device", "/TPU:0"}, `--device: invalid device spec "/TPU:0"`},
		{"missing data", []string{"--device=/CPU:0", "--data", filepath.Join(dir, "nowhere"), "--seed", "1"}, "point --data at"},
		{"offline", []string{"--device=/CPU:0", "--seed", "1", "--verbose", "0"}, "run train with --synthetic"},
		{"weights as checkpoint", append(slices.Clone(quick), "--resume", weights), "holds weights only, no optimizer state or epoch: train --resume needs a file written by --checkpoint"},
		{"missing checkpoint", append(slices.Clone(quick), "--resume", filepath.Join(dir, "missing")), "--resume: stat "},
		{"unknown optimizer", []string{"--optimizer", "lion"}, `--optimizer: unknown optimizer "lion": known optimizers are sgd, adam, adamw`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "offline" {
				t.Setenv(cifar10.URLEnv, "http://127.0.0.1:1/"+"cifar-10-binary.tar.gz")
			}
			r := runTrain(t, tc.args...)
			if r.err == nil {
				t.Fatal("no error")
			}
			msg := r.err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q lacks %q", msg, tc.want)
			}
			if m := regexp.MustCompile(`Options\.|cifar10\.|LoadWeights|NewSGD|(--[a-z-]+|CIFAR-10): (device|cifar10|nn|safetensors|optim|read checkpoint|load checkpoint): `).FindString(msg); m != "" {
				t.Errorf("error %q names %q", msg, m)
			}
		})
	}
}

// TestTrainSyntheticIsHard checks that --synthetic data is not learnt in a
// few dozen steps (the old data reached accuracy 1 after about 60) and
// stays the same for a seed.
func TestTrainSyntheticIsHard(t *testing.T) {
	isolate(t)
	for _, seed := range []string{"1", "2"} {
		t.Run("seed "+seed, func(t *testing.T) {
			var losses []maybeFloat
			for range 2 {
				path := filepath.Join(t.TempDir(), "run.json")
				r := runTrain(t, "--synthetic", "--synthetic-samples", "1000", "--steps-per-epoch", "30", "--epochs", "2",
					"--seed", seed, "--verbose", "0", "--json", path)
				if r.err != nil {
					t.Fatal(r.err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var s summary
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				last := s.Epochs[len(s.Epochs)-1].Figures
				if last["accuracy"] > 0.6 || s.Test["accuracy"] > 0.6 {
					t.Errorf("after 60 steps: accuracy %v, test accuracy %v; want both at most 0.6", last["accuracy"], s.Test["accuracy"])
				}
				losses = append(losses, last["loss"])
			}
			if losses[0] != losses[1] {
				t.Errorf("two runs with --seed %s ended with losses %v and %v", seed, losses[0], losses[1])
			}
		})
	}
}
