package main

import (
	"errors"
	"github.com/gokeras/gokeras/nn"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gokeras/gokeras/device"
)

func TestBenchmarkMode(t *testing.T) {
	r := runTrain(t, "--benchmark", "--benchmark-steps", "3", "--benchmark-warmup", "1", "--batch-size", "4", "--device=/CPU:0", "--seed", "1")
	if r.err != nil {
		t.Fatalf("train --benchmark: %v\n%s", r.err, r.stderr)
	}
	lines := r.lines()
	patterns := []*regexp.Regexp{
		deviceLine,
		regexp.MustCompile(`^BLAS: \S`),
		regexp.MustCompile(`^Benchmark: mlp model, 3 steps at batch size 4 \(after 1 warm-up steps\), SGD lr 0\.01, /CPU:0$`),
		regexp.MustCompile(`^median \d+\.\d\d ms/step \(p10 \d+\.\d\d, p90 \d+\.\d\d\) - \d+\.\d steps/s - \d+ samples/s - \d+\.\d GFLOP/s - \d+\.\d s per 50000-sample epoch$`),
	}
	if len(lines) != len(patterns) {
		t.Fatalf("output has %d lines, want %d:\n%s", len(lines), len(patterns), r.stdout)
	}
	for i, p := range patterns {
		if !p.MatchString(lines[i]) {
			t.Errorf("line %q does not match %s", lines[i], p)
		}
	}
	if r := runTrain(t, "--benchmark", "--benchmark-steps", "0", "--device=/CPU:0"); r.err == nil || !strings.Contains(r.err.Error(), "--benchmark-steps") {
		t.Errorf("--benchmark-steps 0: error %v, want one naming the flag", r.err)
	}
	// Batch sizes whose generated data would not fit (or whose sample count
	// overflows) are refused before anything is allocated.
	for _, bs := range []string{"1000000", "4611686018427387904", "9223372036854775807"} {
		r := runTrain(t, "--benchmark", "--batch-size", bs, "--device=/CPU:0")
		if r.err == nil || !strings.Contains(r.err.Error(), "--batch-size") || !strings.Contains(r.err.Error(), "generated samples") {
			t.Errorf("--benchmark --batch-size %s: error %v, want one naming the flag and the limit", bs, r.err)
		}
	}
}

// --benchmark-inference times Predict one batch at a time and prints its
// own figures; it needs --benchmark.
func TestBenchmarkInference(t *testing.T) {
	r := runTrain(t, "--benchmark", "--benchmark-inference", "--benchmark-steps", "3", "--benchmark-warmup", "1",
		"--batch-size", "4", "--device=/CPU:0", "--seed", "1")
	if r.err != nil {
		t.Fatalf("train --benchmark --benchmark-inference: %v\n%s", r.err, r.stderr)
	}
	lines := r.lines()
	patterns := []*regexp.Regexp{
		deviceLine,
		regexp.MustCompile(`^BLAS: \S`),
		regexp.MustCompile(`^Benchmark: mlp model, inference: Predict on 3 batches of size 4 \(after 1 warm-up batches\), /CPU:0$`),
		regexp.MustCompile(`^median \d+\.\d\d ms/batch \(p10 \d+\.\d\d, p90 \d+\.\d\d\) - \d+\.\d batches/s - \d+ samples/s - \d+\.\d GFLOP/s$`),
	}
	if len(lines) != len(patterns) {
		t.Fatalf("output has %d lines, want %d:\n%s", len(lines), len(patterns), r.stdout)
	}
	for i, p := range patterns {
		if !p.MatchString(lines[i]) {
			t.Errorf("line %q does not match %s", lines[i], p)
		}
	}
	if r := runTrain(t, "--benchmark-inference", "--device=/CPU:0"); r.err == nil || !strings.Contains(r.err.Error(), "add --benchmark") {
		t.Errorf("--benchmark-inference alone: error %v, want one asking for --benchmark", r.err)
	}
}

func TestBenchmarkArithmetic(t *testing.T) {
	built := func(name string) *nn.Sequential {
		m, err := newModel(name, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Build(32, 32, 3); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Batch 1: layer 1 forward and weight gradient, 2·3072·3000 each;
	// layers 2 and 3 also their input gradients.
	want := 2*2*3072*3000.0 + 3*2*3000*1000.0 + 3*2*1000*10.0
	mlp := built("mlp")
	if got := trainingFLOPs(mlp, 1); got != want {
		t.Errorf("MLP at batch 1: %v FLOPs, want %v", got, want)
	}
	if got := trainingFLOPs(mlp, 32); got != 32*want {
		t.Errorf("MLP at batch 32: %v FLOPs, want %v", got, 32*want)
	}
	// The CNN's convolutions as products: output positions × 3·3·inputs ×
	// filters; the first needs no input gradient.
	cnn := 2*2*32*32*27*32.0 + 3*2*30*30*288*32.0 + 3*2*15*15*288*64.0 + 3*2*13*13*576*64.0 +
		3*2*2304*512.0 + 3*2*512*10.0
	if got := trainingFLOPs(built("cnn"), 1); got != cnn {
		t.Errorf("CNN at batch 1: %v FLOPs, want %v", got, cnn)
	}
	// Inference: each layer's forward product only.
	cnnForward := 2*32*32*27*32.0 + 2*30*30*288*32.0 + 2*15*15*288*64.0 + 2*13*13*576*64.0 + 2*2304*512.0 + 2*512*10.0
	if got := inferenceFLOPs(built("cnn"), 128); got != 128*cnnForward {
		t.Errorf("CNN inference at batch 128: %v FLOPs, want %v", got, 128*cnnForward)
	}
	var times []time.Duration
	for i := 10; i >= 1; i-- { // 10 ms down to 1 ms
		times = append(times, time.Duration(i)*time.Millisecond)
	}
	r := summarize(times, want)
	if r.median != 6*time.Millisecond || r.p10 != 2*time.Millisecond || r.p90 != 10*time.Millisecond {
		t.Errorf("median %v, p10 %v, p90 %v; want 6ms, 2ms, 10ms", r.median, r.p10, r.p90)
	}
	if math.Abs(r.stepsPerSec-1/0.006) > 1e-9 || math.Abs(r.gflops-want/0.006/1e9) > 1e-9 {
		t.Errorf("%v steps/s, %v GFLOP/s", r.stepsPerSec, r.gflops)
	}
}

// bench/compare.py and bench/gpu.sh run `train --benchmark --device=/GPU:0`:
// a binary built without CUDA must refuse it at once, saying why and what
// to do, not time the CPU under a GPU label.
func TestBenchmarkGPUWithoutCUDAFailsFast(t *testing.T) {
	if device.DefaultSpec().Kind == device.GPU {
		t.Skip("this binary has a usable GPU")
	}
	r := runTrain(t, "--benchmark", "--device=/GPU:0", "--benchmark-steps", "1", "--seed", "1")
	if r.err != nil && strings.Contains(r.err.Error(), "driver sees no GPU") {
		t.Skip("built with CUDA support, on a machine without a GPU: the driver's own error, which package device tests")
	}
	if !errors.Is(r.err, device.ErrNoSuchDevice) {
		t.Fatalf("error %v, want device.ErrNoSuchDevice", r.err)
	}
	for _, want := range []string{"--device", "/GPU:0", "built without CUDA support", "rebuild with -tags", "/CPU:0"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not mention %q", r.err, want)
		}
	}
	if r.stdout != "" {
		t.Errorf("printed before failing: %q", r.stdout)
	}
}
