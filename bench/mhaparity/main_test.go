package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestParityWithPyTorch runs bench/mha_parity.py on what run writes, when
// Debian's python3-torch is installed: gokeras' MultiHeadAttention agrees
// with PyTorch's nn.MultiheadAttention given the same weights.
func TestParityWithPyTorch(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("%s cannot import torch and numpy (Debian's python3-torch): %v", py, err)
	}
	out := filepath.Join(t.TempDir(), "run.json")
	os.Args = []string{"mhaparity", "--out", out, "--train-steps", "3"}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "../mha_parity.py", out)
	for _, kv := range os.Environ() { // PyTorch's OpenBLAS without this machine's overrides
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") && !strings.HasPrefix(kv, "OPENBLAS_L2_SIZE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	report, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mha_parity.py: %v\n%s", err, report)
	}
	t.Logf("%s", report)
}
