//go:build cudavm && cgo && !kernelemu

package cuda

import (
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device/cuda/internal/cuinit"
)

func TestOpenBLAS(t *testing.T) {
	if _, err := openBLAS(blasCandidate{path: "/nonexistent/libcublas.so.12"}); err == nil ||
		!strings.Contains(err.Error(), "/nonexistent/libcublas.so.12: cannot open shared object file") {
		t.Errorf("openBLAS of a missing file: %v, want dlopen's error naming it", err)
	}
	for _, name := range blasSonames {
		lib, err := openBLAS(blasCandidate{path: name})
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(lib.file, "/") || !strings.Contains(lib.String(), name+" (/") {
			t.Errorf("%s opened, but the file is %q (%s)", name, lib.file, lib)
		}
		return
	}
	t.Skipf("no cuBLAS on the loader's path to open (%s)", strings.Join(blasSonames, ", "))
}

// Without a GPU every cuBLAS loads but cannot create a handle: each is
// tried and named, and the error says where else it looked.
func TestNoHandleWithoutAGPU(t *testing.T) {
	why := cuinit.Unavailable()
	if why == "" {
		t.Skip("there is a GPU: handles can be created")
	}
	t.Setenv(BLASEnv, "")
	_, _, err := createBLASHandle()
	if err == nil {
		t.Fatalf("a cuBLAS handle was created without a usable GPU (%s)", why)
	}
	t.Log(err)
	msg := err.Error()
	for _, want := range []string{"no usable cuBLAS", "libcublas.so.13 (the loader's path)", "libcublas.so.11 (the loader's path)", "python3's site-packages"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not contain %q", want)
		}
	}
	if blasChosen.lib != nil {
		t.Errorf("a failed search was remembered: %s", blasChosen.lib)
	}
}
