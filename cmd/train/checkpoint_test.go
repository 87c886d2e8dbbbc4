package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gokeras/gokeras/nn"
)

// countdownCtx is cancelled at its n+1-th Err call: Fit asks once before
// each epoch and once before each step, so a test can stop training at an
// exact step, as a Ctrl-C arriving during the step before would.
type countdownCtx struct {
	context.Context
	left atomic.Int32
	once sync.Once
	done chan struct{}
}

func cancelAfter(n int32) *countdownCtx {
	c := &countdownCtx{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *countdownCtx) Done() <-chan struct{} { return c.done }

func runTrainCtx(t *testing.T, ctx context.Context, args ...string) trainRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, &stdout, &stderr)
	return trainRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// quick trains the flagship model on a little synthetic data: 2 epochs of
// 3 steps of 8 samples, one line per epoch.
var quick = []string{"--synthetic", "--synthetic-samples", "40", "--batch-size", "8", "--steps-per-epoch", "3",
	"--epochs", "2", "--verbose", "2"}

func TestTrainResumesExactlyAfterCtrlC(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	whole, resumed, ck := filepath.Join(dir, "whole.safetensors"), filepath.Join(dir, "resumed.safetensors"), filepath.Join(dir, "ck.safetensors")

	r := runTrain(t, append(quick, "--seed", "5", "--save", whole)...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stdout, "Weights saved to "+whole) {
		t.Errorf("stdout does not say where the weights are:\n%s", r.stdout)
	}

	// Fit checks the context before each epoch and each step: the 7th check
	// is before step 2 of epoch 2. No --seed: the clock's seed must travel
	// in the checkpoint and the resume command.
	r = runTrainCtx(t, cancelAfter(6), append(quick, "--checkpoint", ck, "--seed", "5")...)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want an error wrapping context.Canceled (exit status 130)", r.err)
	}
	msg := r.err.Error()
	for _, want := range []string{"interrupted in epoch 2/2 after step 1/3", "checkpoint saved to " + ck, "resume with:\n  train "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	info, err := nn.ReadCheckpoint(ck)
	if err != nil || info.Epoch != 1 || info.Step != 1 {
		t.Fatalf("checkpoint at %+v, %v; want epoch 1 (0-based) step 1", info, err)
	}
	command := msg[strings.Index(msg, "resume with:\n  train ")+len("resume with:\n  train "):]
	args := strings.Fields(command)
	if strings.Join(args[len(args)-4:], " ") != "--seed 5 --resume "+ck {
		t.Errorf("resume command %q does not end with the seed and --resume", command)
	}

	r = runTrain(t, append(args, "--save", resumed, "--plot", filepath.Join(dir, "h.png"), "--trace")...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stdout, "Resuming from "+ck+" at epoch 2, after step 1\n") {
		t.Errorf("stdout does not say where training resumes:\n%s", r.stdout)
	}
	a, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(resumed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the resumed run ended with other weights than the uninterrupted one")
	}
	// The history came through the checkpoint: both epochs are charted.
	if !strings.Contains(r.stdout, "Training trace: loss per epoch (2 epochs)") || !strings.Contains(r.stdout, "* loss") {
		t.Errorf("no trace of 2 epochs:\n%s", r.stdout)
	}
	f, err := os.Open(filepath.Join(dir, "h.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("--plot wrote no PNG: %v", err)
	}
}

func TestTrainInterruptedWithoutCheckpoint(t *testing.T) {
	isolate(t)
	r := runTrainCtx(t, cancelAfter(2), append(quick, "--seed", "1")...)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", r.err)
	}
	if want := "interrupted in epoch 1/2 after step 1/3; nothing was saved (run with --checkpoint FILE to be able to resume)"; r.err.Error() != want {
		t.Errorf("message %q, want %q", r.err, want)
	}
}

func TestTrainResumeErrors(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	ck, weights := filepath.Join(dir, "ck.safetensors"), filepath.Join(dir, "w.safetensors")
	r := runTrain(t, append(quick, "--seed", "2", "--checkpoint", ck, "--save", weights, "--validation", "--throughput", "--verbose", "1")...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := strings.Count(r.stdout, "val_accuracy: "); n != 2 || !strings.Contains(r.stdout, " samples/s\n") {
		t.Errorf("want 2 epoch lines with validation and throughput:\n%s", r.stdout)
	}
	tests := []struct {
		args []string
		want string
	}{
		{append(quick, "--resume", ck), "saved after epoch 2, and --epochs is 2: nothing is left to train"},
		{append(quick, "--resume", weights), "holds weights only"},
		{append(quick, "--resume", filepath.Join(dir, "missing")), "no such file"},
		{append(quick, "--resume", dir), "--resume " + dir + ": is a directory, not a checkpoint: name the file that --checkpoint wrote"},
		{append(quick, "--resume", ck, "--epochs", "3", "--optimizer", "adam"), "SGD optimizer but model"},
	}
	for _, tc := range tests {
		r := runTrain(t, tc.args...)
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("train %s: error %v, want one mentioning %q", strings.Join(tc.args, " "), r.err, tc.want)
		}
	}
	r = runTrain(t, append(quick, "--resume", ck, "--epochs", "3", "--batch-size", "4")...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stderr, "was written with --batch-size 8, this run has 4") {
		t.Errorf("no warning about the changed batch size: %q", r.stderr)
	}
}

func TestResumeCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--epochs", "10", "--checkpoint", "ck.safetensors"}, "train --epochs 10 --checkpoint ck.safetensors --seed 7 --resume ck.safetensors"},
		{[]string{"--seed=3", "--resume", "old", "-epochs=4", "-seed", "9"}, "train -epochs=4 --seed 7 --resume ck.safetensors"},
		{[]string{"--data", "my data/cifar", "--plot", "it's.png"}, `train --data 'my data/cifar' --plot 'it'\''s.png' --seed 7 --resume ck.safetensors`},
	}
	for _, tc := range tests {
		if got := resumeCommand(tc.args, "ck.safetensors", 7); got != tc.want {
			t.Errorf("resumeCommand(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestHistoryKeepsEpochsThatLackAFigure(t *testing.T) {
	var h runHistory
	h.add(0, nn.Logs{"loss": 2})
	h.add(1, nn.Logs{"loss": 1, "val_loss": 1.5}) // --validation from the resumed run on
	h.add(2, nn.Logs{"loss": 0.5})
	data, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"epochs":[0,1,2],"values":{"loss":[2,1,0.5],"val_loss":[null,1.5,null]}}`; string(data) != want {
		t.Errorf("JSON %s, want %s", data, want)
	}
	var back runHistory
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	s, ok := series(&back, "val_loss", "validation", true)
	if !ok || len(s.X) != 1 || s.X[0] != 2 || s.Y[0] != 1.5 {
		t.Errorf("validation series %+v, want the one point (epoch 2, 1.5)", s)
	}
}

// --lr given with --resume is the rate the resumed run trains with, and
// train says so; without it the checkpoint's rate goes on. The final
// weights once did not depend on --lr at all.
func TestTrainResumeAppliesLR(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck.safetensors")
	first := append(quick[:len(quick):len(quick)], "--seed", "3", "--checkpoint", ck, "--lr", "0.01")
	first[slices.Index(first, "--epochs")+1] = "1"
	if r := runTrain(t, first...); r.err != nil {
		t.Fatal(r.err)
	}
	final := map[string][]byte{}
	for _, lr := range []string{"", "0.01", "0.5", "0.0001"} {
		out := filepath.Join(dir, "w"+lr+".safetensors")
		args := append(quick[:len(quick):len(quick)], "--seed", "3", "--resume", ck, "--save", out)
		if lr != "" {
			args = append(args, "--lr", lr)
		}
		r := runTrain(t, args...)
		if r.err != nil {
			t.Fatalf("--lr %q: %v", lr, r.err)
		}
		said := strings.Contains(r.stdout, "Learning rate: "+lr+" (--lr), where the checkpoint's was 0.01\n")
		if changed := lr != "" && lr != "0.01"; said != changed {
			t.Errorf("--lr %q: says the rate changed: %v, want %v\n%s", lr, said, changed, r.stdout)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		final[lr] = b
	}
	if !bytes.Equal(final[""], final["0.01"]) {
		t.Error("resuming with the checkpoint's own --lr trained otherwise than resuming without --lr")
	}
	if bytes.Equal(final["0.5"], final["0.0001"]) || bytes.Equal(final["0.5"], final[""]) {
		t.Error("--lr 0.5, --lr 0.0001 and no --lr ended with the same weights: --lr was ignored")
	}
}

// Resumed from a checkpoint older than the --csv-log (the last save failed
// or was killed after the log's row was written), the log has each epoch
// once: the redone epoch's row replaces the old one.
func TestTrainResumeLogsEachEpochOnce(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	ck, older, log := filepath.Join(dir, "ck.safetensors"), filepath.Join(dir, "older.safetensors"), filepath.Join(dir, "log.csv")
	one := append(quick[:len(quick):len(quick)], "--seed", "2", "--checkpoint", ck, "--csv-log", log)
	one[slices.Index(one, "--epochs")+1] = "1"
	if r := runTrain(t, one...); r.err != nil {
		t.Fatal(r.err)
	}
	b, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(older, b, 0o644); err != nil { // the checkpoint after epoch 1
		t.Fatal(err)
	}
	both := append(quick[:len(quick):len(quick)], "--seed", "2", "--checkpoint", ck, "--csv-log", log)
	for range 2 { // epoch 2, then epoch 2 again from the older checkpoint, as if its save had failed
		if r := runTrain(t, append(both, "--resume", older)...); r.err != nil {
			t.Fatal(r.err)
		}
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\r\n"), "\r\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "epoch,") || !strings.HasPrefix(lines[1], "0,") || !strings.HasPrefix(lines[2], "1,") {
		t.Errorf("--csv-log holds\n%s\nwant a header and epochs 0 and 1 once each", got)
	}
}
