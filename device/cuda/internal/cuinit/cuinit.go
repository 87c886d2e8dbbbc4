//go:build cudavm && cgo

// Package cuinit initialises the CUDA driver before gorgonia.org/cu does, so
// that a program built with -tags cudavm on a machine where the driver
// does not work stops with a message that says why and what to do.
//
// gorgonia.org/cu (v0.9.6, cu.go) calls cuInit(0) in its init function and,
// when that fails, prints "Error in initialization, please refer to ..." and
// calls os.Exit(1): importing cu makes a working NVIDIA driver a condition of
// starting the program at all. This package makes the same call first. Go
// initialises packages in import-path order among those whose imports are
// ready (the Go spec since Go 1.21, "Package initialization"), and this
// package imports nothing cu does not, so it runs before cu whenever both are
// linked in; device/cuda imports both.
//
// When cuInit fails it writes one line naming the CUDA error and the fix to
// standard error and exits with status 1, as cu would have. In a test binary
// (a name ending in ".test") it exits with status 0 after a line starting
// "SKIP", so `go test -tags cudavm` on a machine without a GPU skips
// the CUDA tests, unless GOKERAS_REQUIRE_GPU is set to a non-empty value:
// then a missing GPU fails the run (scripts/gpu-verify.sh sets it).
//
// A machine without the driver library at all fails earlier still: the
// dynamic loader refuses to start a program linked against libcuda.so.1 when
// that library is missing, before any Go code runs.
package cuinit

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>

// probe runs cuInit and describes its result.
static CUresult probe(const char **name, const char **msg) {
	CUresult r = cuInit(0);
	*name = "";
	*msg = "";
	if (r != CUDA_SUCCESS) {
		if (cuGetErrorName(r, name) != CUDA_SUCCESS) *name = "unknown CUDA error";
		if (cuGetErrorString(r, msg) != CUDA_SUCCESS) *msg = "";
	}
	return r;
}
*/
import "C"

import "os"

func init() {
	var name, msg *C.char
	r := C.probe(&name, &msg)
	if r == C.CUDA_SUCCESS {
		return
	}
	why := "cuInit failed: " + C.GoString(name) + " (" + itoa(int(r)) + ")"
	if s := C.GoString(msg); s != "" {
		why += ": " + s
	}
	const fix = "; this program was built with -tags cudavm and needs an NVIDIA GPU with a working driver " +
		"(check nvidia-smi); build without that tag to run on the CPU"
	if isTest() && os.Getenv("GOKERAS_REQUIRE_GPU") == "" {
		_, _ = os.Stderr.WriteString("SKIP: no usable CUDA GPU, the CUDA tests did not run: " + why + " (set GOKERAS_REQUIRE_GPU=1 to make this a failure)\n")
		os.Exit(0)
	}
	_, _ = os.Stderr.WriteString("gokeras: no usable CUDA GPU: " + why + fix + "\n")
	os.Exit(1)
}

// isTest reports whether this is a test binary, as go test builds them.
func isTest() bool {
	name := os.Args[0]
	for _, suffix := range []string{".test", ".test.exe"} {
		if len(name) >= len(suffix) && name[len(name)-len(suffix):] == suffix {
			return true
		}
	}
	return false
}

// itoa formats a small non-negative number (strconv is not imported: see the
// package documentation for why this package imports so little).
func itoa(n int) string {
	if n <= 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
