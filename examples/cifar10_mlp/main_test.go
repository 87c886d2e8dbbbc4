package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
	"github.com/gokeras/gokeras/device"
)

// TestNotebookOnTinyCopy runs the program for one epoch on a CIFAR-10 copy
// in the real format with 10 records per batch file (50 training samples:
// two steps of the 12M-weight model) and checks it prints what the
// notebook's cell printed: the epoch header, Keras' epoch line, the time.
func TestNotebookOnTinyCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cifar10test.BatchesDir)
	cifar10test.WriteDir(t, dir, cifar10test.Files(10))
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--device=/CPU:0", "--epochs", "1", "--data", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^Epoch 1/1$`),
		// Keras writes figures below 1e-3 as %.4e: an untrained model gets
		// all 50 samples wrong about once in 200 runs (0.9^50).
		regexp.MustCompile(`^2/2 \[={30}\] - \d+s \d+(ms|us|s)/step - loss: \d\.\d{4} - accuracy: (\d\.\d{4}|0\.0000e\+00)$`),
		regexp.MustCompile(`^(\d+m)?\d+(\.\d+)?(ms|s) per loop \(1 run, 1 loop each\)$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("printed %d lines, want %d:\n%s", len(lines), len(want), stdout.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %q does not match %s", lines[i], re)
		}
	}
	if !strings.Contains(stderr.String(), "reading CIFAR-10 from "+dir) {
		t.Errorf("stderr %q does not say where the data came from", stderr.String())
	}
}

func TestMissingGPUFailsBeforeLoading(t *testing.T) {
	if device.DefaultSpec().Kind == device.GPU {
		t.Skip("this binary has a usable GPU")
	}
	missing := filepath.Join(t.TempDir(), "nowhere") // loading it would fail differently
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--device=/GPU:0", "--data", missing}, &stdout, &stderr)
	if err != nil && strings.Contains(err.Error(), "driver sees no GPU") {
		t.Skip("built with CUDA support, on a machine without a GPU: the driver's own error, which package device tests")
	}
	if !errors.Is(err, device.ErrNoSuchDevice) || !strings.Contains(err.Error(), "rebuild with -tags") {
		t.Fatalf("error %v, want ErrNoSuchDevice with the CUDA rebuild hint", err)
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("printed before failing: %q %q", stdout.String(), stderr.String())
	}
}
