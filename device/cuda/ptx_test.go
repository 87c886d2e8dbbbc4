package cuda

import (
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPTXUpToDate checks that the committed PTX and fatbin were generated
// from the committed kernels.cu, the PTX for compute_75, and that the PTX
// defines every kernel the machine loads. It needs no GPU and no CUDA: it
// runs in every build.
func TestPTXUpToDate(t *testing.T) {
	src, err := os.ReadFile("kernels/kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := os.ReadFile("kernels/kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	text := string(ptx)
	want := fmt.Sprintf("(sha256 %x)", sha256.Sum256(src))
	first, _, _ := strings.Cut(text, "\n")
	if !strings.Contains(first, want) {
		t.Errorf("kernels.ptx was not generated from this kernels.cu (its first line is %q, want one with %s): run go generate ./device/cuda (needs nvcc: scripts/install-cuda.sh --nvcc)", first, want)
	}
	if !regexp.MustCompile(`(?m)^\.target sm_75$`).MatchString(text) {
		t.Error("kernels.ptx does not target sm_75 (compute_75), the oldest target of CUDA 12 and 13")
	}
	sum, err := os.ReadFile("kernels/kernels.sum")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(sum)), fmt.Sprintf("%x  kernels.cu", sha256.Sum256(src)); got != want {
		t.Errorf("kernels.sum says %q, want %q: kernels.fatbin was not generated from this kernels.cu; run go generate ./device/cuda", got, want)
	}
	fat, err := os.ReadFile("kernels/kernels.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	// A fatbin starts with its magic, 0xBA55ED50, little-endian.
	if len(fat) < 16 || string(fat[:4]) != "\x50\xed\x55\xba" {
		t.Errorf("kernels.fatbin (%d bytes) does not start with the fatbin magic", len(fat))
	}
	entries := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`).FindAllStringSubmatch(text, -1) {
		entries[m[1]] = true
	}
	for _, name := range kernelNames {
		if !entries[name] {
			t.Errorf("kernels.ptx has no kernel %s", name)
		}
	}
	declared := regexp.MustCompile(`extern "C" __global__ void (\w+)\(`).FindAllStringSubmatch(string(src), -1)
	if len(declared) != len(kernelNames) {
		t.Errorf("kernels.cu declares %d kernels, kernelNames lists %d", len(declared), len(kernelNames))
	}
}
