//go:build cudavm && cgo && !kernelemu

package cuinit_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device/cuda/internal/cuinit"
	"gorgonia.org/cu"
)

// This test binary runs on a machine without a GPU (the reason it found
// is logged): cu's init did not exit, and the driver reports no devices.
func TestNoGPUMeansNoDevices(t *testing.T) {
	n, err := cu.NumDevices()
	why := cuinit.Unavailable()
	t.Logf("cu.NumDevices() = %d, %v; Unavailable() = %q", n, err, why)
	switch {
	case err != nil:
		t.Errorf("cu.NumDevices: %v, want no error whether or not there is a GPU", err)
	case why != "" && n != 0:
		t.Errorf("cu.NumDevices() = %d while cuInit failed (%s), want 0", n, why)
	case why == "" && n == 0:
		t.Error("cuInit succeeded but the driver sees no device")
	case why != "" && !strings.HasPrefix(why, "cuInit failed: "):
		t.Errorf("Unavailable() = %q", why)
	}
}

// stubDir is a directory holding the link stub of scripts/install-cuda.sh
// as libcuda.so.1, for LD_LIBRARY_PATH.
func stubDir(t *testing.T) string {
	t.Helper()
	prefix := os.Getenv("GOKERAS_CUDA_PREFIX")
	if prefix == "" {
		prefix = filepath.Join("..", "..", "..", "..", ".cuda")
	}
	stub, err := filepath.Abs(filepath.Join(prefix, "lib", "stubs", "libcuda.so"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stub); err != nil {
		t.Skipf("no CUDA link stub to load (%v): scripts/install-cuda.sh puts one in .cuda/lib/stubs", err)
	}
	dir := t.TempDir()
	if err := os.Symlink(stub, filepath.Join(dir, "libcuda.so.1")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// child runs this test binary again with the stub as libcuda.so.1, running
// TestChild only.
func child(t *testing.T, dir string, requireGPU bool) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
	env := []string{"LD_LIBRARY_PATH=" + dir, "GOKERAS_CUINIT_CHILD=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") && !strings.HasPrefix(kv, cuinit.RequireGPUEnv+"=") {
			env = append(env, kv)
		}
	}
	if requireGPU {
		env = append(env, cuinit.RequireGPUEnv+"=1")
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestChild reports what a child started by TestStubLibraryIsNamed sees.
func TestChild(t *testing.T) {
	if os.Getenv("GOKERAS_CUINIT_CHILD") == "" {
		t.Skip("run by TestStubLibraryIsNamed")
	}
	n, err := cu.NumDevices()
	t.Logf("child: %d devices, error %v", n, err)
}

// The toolkit's link stub loaded in place of the driver is named, with the
// fix: a failure with GOKERAS_REQUIRE_GPU=1, a skip of the GPU tests
// without it.
func TestStubLibraryIsNamed(t *testing.T) {
	dir := stubDir(t)
	lib := filepath.Join(dir, "libcuda.so.1")

	out, err := child(t, dir, true)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("with %s=1 and the stub: %v, want exit status 1; output:\n%s", cuinit.RequireGPUEnv, err, out)
	}
	for _, want := range []string{
		"gokeras: no usable CUDA GPU: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)",
		lib + " is the CUDA toolkit's link stub",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("with %s=1 and the stub, the output does not contain %q:\n%s", cuinit.RequireGPUEnv, want, out)
		}
	}
	if strings.Contains(out, "=== RUN") {
		t.Errorf("with %s=1 and the stub, tests ran:\n%s", cuinit.RequireGPUEnv, out)
	}

	out, err = child(t, dir, false)
	if err != nil {
		t.Errorf("without %s and with the stub: %v, want success; output:\n%s", cuinit.RequireGPUEnv, err, out)
	}
	for _, want := range []string{
		"SKIP: no usable CUDA GPU, the tests that need one skip: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)",
		"child: 0 devices, error <nil>",
		"--- PASS: TestChild",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("without %s and with the stub, the output does not contain %q:\n%s", cuinit.RequireGPUEnv, want, out)
		}
	}
}
