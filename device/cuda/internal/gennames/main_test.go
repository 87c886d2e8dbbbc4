package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesUpToDate: the committed kernelnames.go and
// kernel_list.h are what gennames writes from the committed kernels.cu.
func TestGeneratedFilesUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..")
	files, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what gennames writes from %s: run go generate ./device/cuda (or, without nvcc, go run ./internal/gennames in device/cuda)", name, source)
		}
	}
}

func TestGoName(t *testing.T) {
	for kernel, want := range map[string]string{
		"gk_bias_act": "kBiasAct", "gk_sgd": "kSGD", "gk_u8_to_f32": "kU8ToF32", "gk_metric_auc": "kMetricAUC",
		"gk_rmsprop": "kRMSprop", "gk_metric_f1": "kMetricF1",
	} {
		if got := goName(kernel); got != want {
			t.Errorf("goName(%s) = %s, want %s", kernel, got, want)
		}
	}
}

func TestKernelsRefusesBadSources(t *testing.T) {
	for src, want := range map[string]string{
		"": "defines no kernel",
		"extern \"C\" __global__ void add(float *x) {}":                                  "starts with gk_",
		"extern \"C\" __global__ void gk_a() {}\nextern \"C\" __global__ void gk_a() {}": "defined twice",
	} {
		if _, err := kernels([]byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("kernels(%q): %v, want an error saying %q", src, err, want)
		}
	}
}
