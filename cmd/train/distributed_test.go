package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/distribute"
	"github.com/gokeras/gokeras/distribute/mpi"
	"github.com/gokeras/gokeras/internal/sys/mpitest"
)

// Started by hand, --distributed refuses at once and says how to launch,
// also with --benchmark; the files (rank 0 writes them) are not refused.
func TestTrainDistributedNeedsMPIRun(t *testing.T) {
	isolate(t)
	for _, v := range mpi.LaunchVars() {
		t.Setenv(v, "")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--distributed", "--synthetic"}, "mpirun -np 2 train --distributed"},
		{[]string{"--distributed", "--synthetic", "--save", "w.safetensors", "--checkpoint", "c.safetensors", "--csv-log", "l.csv"}, "mpirun -np 2 train --distributed"},
		{[]string{"--distributed", "--benchmark"}, "mpirun -np 2 train --distributed"},
	} {
		r := runTrain(t, tc.args...)
		var u *usageError
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) || !errors.As(r.err, &u) {
			t.Errorf("%v: error %v, want a usage error containing %q", tc.args, r.err, tc.want)
		}
		if r.stdout != "" {
			t.Errorf("%v: printed %q before the error", tc.args, r.stdout)
		}
	}
}

// mpirun -np 2 train --distributed prints one Keras progress stream, rank
// 0's, says how long collectives wait (--distributed-timeout), and ends
// with the samples per second of the whole job.
func TestTrainDistributedUnderMPIRun(t *testing.T) {
	mpirun := mpitest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := mpitest.Command(t, ctx, mpirun, 2, []string{asTrainEnv}, nil,
		os.Args[0], "--device=/CPU:0", "--synthetic", "--synthetic-samples", "1000", "--epochs", "1", "--steps-per-epoch", "20",
		"--batch-size", "32", "--seed", "1", "--distributed", "--distributed-timeout", "90s")
	cmd.Env = append(cmd.Env, asTrainEnv+"=1", cifar10.HomeEnv+"="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("mpirun -np 2 train --distributed: %v\n%s", err, out.String())
	}
	text := out.String()
	// --distributed-timeout reached the strategy (its Timeout, printed).
	timeout := "Distributed: 2 processes share the global batch of 32; collectives time out after 1m30s (--distributed-timeout)\n"
	for _, once := range []string{"Epoch 1/1", "Device: /CPU:0", "Test loss: ", "Total time: ", timeout} {
		if n := strings.Count(text, once); n != 1 {
			t.Errorf("%q %d times in the output, want once (rank 0's):\n%s", once, n, text)
		}
	}
	if !strings.Contains(text, "20/20 [==============================]") {
		t.Errorf("no finished progress bar of 20 steps:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Distributed: 2 processes, global batch 32: ") || !strings.HasSuffix(last, " samples/s") {
		t.Errorf("last line %q, want the job's samples/s", last)
	}
	t.Logf("mpirun -np 2 train --distributed: %v", time.Since(start).Round(time.Millisecond))
}

// --distributed-timeout is a Go duration, DefaultTimeout unless given,
// 0 for ever; it is refused without --distributed, or below 0.
func TestTrainDistributedTimeoutFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
		err  string
	}{
		{[]string{"--distributed"}, distribute.DefaultTimeout, ""},
		{[]string{"--distributed", "--distributed-timeout", "90s"}, 90 * time.Second, ""},
		{[]string{"--distributed", "--distributed-timeout=0"}, 0, ""},
		{[]string{"--distributed-timeout", "90s"}, 0, "--distributed-timeout applies to --distributed only: add --distributed"},
		{[]string{"--distributed-timeout", "0"}, 0, "--distributed-timeout applies to --distributed only"},
		{[]string{"--distributed", "--distributed-timeout", "-1s"}, 0, "--distributed-timeout must not be negative, got -1s"},
		{[]string{"--distributed", "--distributed-timeout", "10"}, 0, "--distributed-timeout"},
	} {
		c, err := parseFlags(tc.args, io.Discard)
		var u *usageError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err == "" && c.distTimeout != tc.want:
			t.Errorf("%v: timeout %v, want %v", tc.args, c.distTimeout, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &u)):
			t.Errorf("%v: error %v, want a usage error containing %q", tc.args, err, tc.err)
		}
	}
}

// mpirun -np 2 train --distributed --benchmark prints one report, rank
// 0's: the header naming the processes and one line of figures with the
// job's samples/s.
func TestTrainDistributedBenchmark(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, out := mpiTrain(t, ctx, nil, "--device=/CPU:0", "--benchmark", "--benchmark-steps", "4", "--benchmark-warmup", "1",
		"--batch-size", "16", "--seed", "1", "--distributed")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mpirun -np 2 train --distributed --benchmark: %v\n%s", err, out)
	}
	text := out.String()
	header := "Benchmark: mlp model, 4 steps at batch size 16 (after 1 warm-up steps), SGD lr 0.01, /CPU:0, 2 processes\n"
	if n := strings.Count(text, header); n != 1 {
		t.Errorf("%q %d times in the output, want once (rank 0's):\n%s", header, n, text)
	}
	figures := regexp.MustCompile(`(?m)^median \d+\.\d\d ms/step \(p10 \d+\.\d\d, p90 \d+\.\d\d\) - \d+\.\d steps/s - \d+ samples/s - \d+\.\d GFLOP/s - \d+\.\d s per 50000-sample epoch$`)
	if n := len(figures.FindAllString(text, -1)); n != 1 || strings.Count(text, "ms/step") != 1 {
		t.Errorf("%d lines of figures, want one (rank 0's):\n%s", n, text)
	}
	if n := strings.Count(text, "Device: "); n != 1 {
		t.Errorf("%d device lines, want one (rank 0's):\n%s", n, text)
	}
}

// mpiTrain starts train under mpirun -np 2 (given mpirun's own flags
// mpiArgs too) with args; it returns the command, started, and its output.
func mpiTrain(t *testing.T, ctx context.Context, mpiArgs []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	mpirun := mpitest.Need(t)
	cmd := mpitest.Command(t, ctx, mpirun, 2, []string{asTrainEnv}, mpiArgs, os.Args[0], args...)
	cmd.Env = append(cmd.Env, asTrainEnv+"=1", cifar10.HomeEnv+"="+t.TempDir())
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// A distributed run whose rank (one of them) gets SIGTERM mid-epoch stops
// on every rank after the same step and saves rank 0's checkpoint; resumed from it, the
// job ends with the weights of the uninterrupted job, bit for bit. Rank 0
// alone writes the CSV log.
func TestTrainDistributedInterruptResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	common := []string{"--device=/CPU:0", "--synthetic", "--synthetic-samples", "2000", "--epochs", "2", "--steps-per-epoch", "30",
		"--batch-size", "32", "--seed", "5", "--optimizer", "adam", "--verbose", "2", "--distributed"}
	start := time.Now()
	cmd, out := mpiTrain(t, ctx, nil, append(common, "--save", dir+"/full.safetensors", "--csv-log", dir+"/log.csv")...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the uninterrupted job: %v\n%s", err, out)
	}
	full := time.Since(start)
	csv, err := os.ReadFile(dir + "/log.csv")
	if err != nil || strings.Count(string(csv), "\n") != 3 {
		t.Errorf("the CSV log: want a header and 2 epochs, got %q (%v)", csv, err)
	}

	ck := dir + "/ck.safetensors"
	// SIGTERM to one rank, as a scheduler or kill would send it: Ctrl-C on
	// mpirun sends SIGTERM to every rank, but SIGKILL 1 s later (Open MPI's
	// odls_base_sigkill_timeout), which may cut the save short.
	cmd, out = mpiTrain(t, ctx, nil, append(common, "--checkpoint", ck)...)
	for { // the checkpoint of epoch 1 is written: stop in epoch 2
		if _, err := os.Stat(ck); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	ranks, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	if err != nil || len(strings.Fields(string(ranks))) != 2 {
		t.Fatalf("the ranks of mpirun: %q, %v", ranks, err)
	}
	pid, _ := strconv.Atoi(strings.Fields(string(ranks))[1])
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the interrupted job exited 0:\n%s", out)
	}
	text := out.String()
	saved := regexp.MustCompile(`rank 0 of 2: interrupted(?: by SIGTERM)? in epoch 2/2 after step (\d+)/30; checkpoint saved to`).FindStringSubmatch(text)
	if saved == nil || !regexp.MustCompile(`rank 1 of 2: interrupted(?: by SIGTERM)? in epoch 2/2 after step `+saved[1]+`/30; rank 0 saved the checkpoint`).MatchString(text) ||
		!strings.Contains(text, "mpirun -np 2 train ") || strings.Count(text, " by SIGTERM ") != 1 {
		t.Fatalf("want both ranks interrupted after the same step of epoch 2, one by SIGTERM, rank 0 saving:\n%s", text)
	}

	cmd, out = mpiTrain(t, ctx, nil, append(common, "--resume", ck, "--save", dir+"/resumed.safetensors")...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the resumed job: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "Resuming from "+ck+" at epoch 2, after step "+saved[1]) {
		t.Errorf("the resumed job did not say where it resumed:\n%s", out)
	}
	a, errA := os.ReadFile(dir + "/full.safetensors")
	b, errB := os.ReadFile(dir + "/resumed.safetensors")
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("the resumed job's weights (%d bytes, %v) differ from the uninterrupted job's (%d bytes, %v)", len(b), errB, len(a), errA)
	}
	t.Logf("interrupted after step %s of epoch 2; the uninterrupted job took %v, all three %v\n%s", saved[1], full.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), text)
}

// Overlapping the all-reduce with the backward pass (the default) trains
// the same weights, bit for bit, as reducing after it
// (GOKERAS_REDUCE_OVERLAP=0).
func TestTrainDistributedOverlapBitIdentical(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	var files [2][]byte
	for i, overlap := range []string{"1", "0"} {
		t.Setenv("GOKERAS_REDUCE_OVERLAP", overlap)
		path := fmt.Sprintf("%s/w%s.safetensors", dir, overlap)
		cmd, out := mpiTrain(t, ctx, []string{"-x", "GOKERAS_REDUCE_OVERLAP"}, "--device=/CPU:0", "--synthetic", "--synthetic-samples", "2000",
			"--epochs", "1", "--steps-per-epoch", "10", "--batch-size", "64", "--seed", "2", "--optimizer", "sgd", "--momentum", "0.9",
			"--verbose", "0", "--distributed", "--save", path)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("GOKERAS_REDUCE_OVERLAP=%s: %v\n%s", overlap, err, out)
		}
		var err error
		if files[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Errorf("the weights trained with the all-reduce overlapped differ from those reduced after the backward pass")
	}
}

// Ranks started with different flags (mpirun's "A : B" form, or a wrapper
// that adds a flag on one host) all stop at once, before any data or
// training, each naming the difference or the ranks that have it: a flag
// on one rank only once hung the job until --distributed-timeout
// (--early-stopping), failed with a bare MPI_ERR_TRUNCATE (--resume) or
// silently wrote nothing (--checkpoint on rank 1).
func TestTrainDistributedRanksAgreeOnFlags(t *testing.T) {
	mpirun := mpitest.Need(t)
	base := []string{"--device=/CPU:0", "--synthetic", "--synthetic-samples", "200", "--epochs", "2", "--steps-per-epoch", "5",
		"--batch-size", "32", "--seed", "1", "--distributed", "--distributed-timeout", "60s"}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		extra []string // rank 1's flags beyond rank 0's
		flag  string
	}{
		{"early stopping", []string{"--early-stopping", "1"}, "--early-stopping"},
		{"resume", []string{"--resume", filepath.Join(dir, "ck.safetensors")}, "--resume"},
		{"checkpoint", []string{"--checkpoint", filepath.Join(dir, "ck.safetensors")}, "--checkpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rank1 := append(append([]string{":", "-np", "1", "-x", asTrainEnv, os.Args[0]}, base...), tc.extra...)
			cmd := mpitest.Command(t, ctx, mpirun, 1, []string{asTrainEnv}, nil, os.Args[0], append(slices.Clone(base), rank1...)...)
			cmd.Env = append(cmd.Env, asTrainEnv+"=1", cifar10.HomeEnv+"="+t.TempDir())
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.WaitDelay = 5 * time.Second
			start := time.Now()
			err := cmd.Run()
			text := out.String()
			if err == nil {
				t.Fatalf("the job succeeded:\n%s", text)
			}
			for _, want := range []string{
				"rank 1 of 2 does not run what rank 0 runs: " + tc.flag + ": ",
				"ranks [1] do not run what rank 0 runs",
				"start every rank with the same flags",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "Epoch 1/") {
				t.Errorf("training started before the ranks agreed:\n%s", text)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the job took %v to stop", took)
			}
		})
	}
}
