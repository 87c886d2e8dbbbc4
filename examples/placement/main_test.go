package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device"
)

func TestRunOnCPU(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"--device=/CPU:0", "--epochs=3"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"1. data input: x (1000, 10) and y (1000, 1) on /CPU:0",
		"2. tensor placement: Tensor(float32 [1000 10] on /CPU:0)",
		"copied 40.0 kB /CPU:0 -> /CPU:0 in ",
		"(back, to check the round trip)",
		"3. model training on /CPU:0",
		"Epoch 3/3",
		"4. metrics on /CPU:0 from the 1000 predictions",
		"ops and 36 tensors on /job:localhost/replica:0/task:0/device:CPU:0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// The CPU's metrics from the predictions agree with Evaluate's: the
	// same accuracy, and the loss computed from the probabilities close to
	// the one computed from the logits.
	m := regexp.MustCompile(`loss (\d\.\d+) \(binary cross-entropy of the probabilities\) - accuracy (\d\.\d+)\n\s+Evaluate on /CPU:0: loss (\d\.\d+) - accuracy (\d\.\d+)`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no metrics lines in:\n%s", got)
	}
	f := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if m[2] != m[4] {
		t.Errorf("accuracy %s on the CPU, %s from Evaluate", m[2], m[4])
	}
	if d := f(m[1]) - f(m[3]); d > 1e-3 || d < -1e-3 {
		t.Errorf("loss %s on the CPU, %s from Evaluate", m[1], m[3])
	}
	if acc := f(m[2]); acc < 0.8 {
		t.Errorf("accuracy %v after 3 epochs, want at least 0.8 (the labels are a linear rule)", acc)
	}
}

func TestRunOnGPU(t *testing.T) {
	gpus, err := device.ListPhysicalDevices(device.GPU)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"--device=/GPU:0", "--epochs=2"}, &out, &errOut)
	if len(gpus) == 0 {
		if err != nil && strings.Contains(err.Error(), "driver sees no GPU") {
			t.Skip("built with CUDA support, on a machine without a GPU: the driver's own error, which package device tests")
		}
		if !errors.Is(err, device.ErrNoSuchDevice) || !strings.Contains(err.Error(), "rebuild with -tags") {
			t.Errorf("run on /GPU:0 without a GPU: %v; want ErrNoSuchDevice with the rebuild hint", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("run on /GPU:0: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"copied 40.0 kB /CPU:0 -> /GPU:0", "copied 40.0 kB /GPU:0 -> /CPU:0", "tensors on /job:localhost/replica:0/task:0/device:GPU:0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"--samples=1"}, {"--epochs=0"}, {"extra"}, {"--device=/TPU:0"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("run %q succeeded", args)
		}
	}
}
