//go:build cudavm && cgo && !kernelemu

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
// When cuInit fails it writes one line naming the CUDA error, the
// libcuda.so.1 that was loaded, and the fix to standard error and exits with
// status 1, as cu would have. The link stub of the CUDA toolkit
// (CUDA_ERROR_STUB_LIBRARY, which the stub cannot name itself) is named as
// such.
//
// In a test binary (a name ending in ".test") without a usable GPU the
// tests run instead, and those that need a GPU skip: this package wraps
// cuInit and cuDeviceGetCount (interpose.c) so that cu's init sees success
// and the driver then reports no devices. It writes a line starting "SKIP"
// with the reason first when the binary runs tests (not when a test runs
// its binary again as a program, as cmd/train's tests do). Tests that need
// no GPU run as in any other build. With GOKERAS_REQUIRE_GPU set to a
// non-empty value a missing GPU fails the test binary at start instead
// (scripts/gpu-verify.sh sets it).
// Unavailable reports the hidden failure.
//
// A machine without the driver library at all fails earlier still: the
// dynamic loader refuses to start a program linked against libcuda.so.1 when
// that library is missing, before any Go code runs.
package cuinit

/*
#cgo LDFLAGS: -lcuda -ldl
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <cuda.h>
#include "cuinit.h"

// probe runs cuInit and describes its result; tolerate: see interpose.c.
static CUresult probe(int tolerate, const char **name, const char **msg) {
	gk_cuinit_tolerate = tolerate;
	CUresult r = cuInit(0);
	if (r == CUDA_SUCCESS) r = gk_cuinit_masked;
	*name = "";
	*msg = "";
	if (r != CUDA_SUCCESS) {
		if (cuGetErrorName(r, name) != CUDA_SUCCESS) *name = "";
		if (cuGetErrorString(r, msg) != CUDA_SUCCESS) *msg = "";
	}
	return r;
}

// libcuda_path is the path the dynamic loader opened libcuda.so.1 from,
// or "" (the string lives as long as the library stays loaded: always).
static const char *libcuda_path(void) {
	const char *p = "";
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h) return p;
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) p = lm->l_name;
	dlclose(h);
	return p;
}
*/
import "C"

import "os"

// unavailable is why there is no usable GPU in a test binary that runs
// anyway (see the package documentation), or "".
var unavailable string

func init() {
	tolerate := isTest() && os.Getenv(RequireGPUEnv) == ""
	var name, msg *C.char
	t := C.int(0)
	if tolerate {
		t = 1
	}
	r := C.probe(t, &name, &msg)
	if r == C.CUDA_SUCCESS {
		return
	}
	why := Why(int(r), C.GoString(name), C.GoString(msg), C.GoString(C.libcuda_path()))
	if tolerate {
		unavailable = why
		if !runsTests() {
			return // a test re-running its binary as a program (cmd/train's do): keep its output as the program's
		}
		_, _ = os.Stderr.WriteString("SKIP: no usable CUDA GPU, the tests that need one skip: " + why +
			" (set " + RequireGPUEnv + "=1 to make this a failure)\n")
		return
	}
	_, _ = os.Stderr.WriteString("gokeras: no usable CUDA GPU: " + why + "; this program was built with -tags cudavm " +
		"and needs an NVIDIA GPU with a working driver (check nvidia-smi); build without that tag to run on the CPU\n")
	os.Exit(1)
}

// Unavailable says why the tests that need a GPU skip in this test binary,
// or returns "" when cuInit succeeded (or this is not a test binary: those
// exit at start without a GPU).
func Unavailable() string { return unavailable }

// runsTests reports whether the testing package will run tests: go test
// passes -test. flags (-test.paniconexit0, -test.timeout, ...) to the
// binary, and a test that runs its own binary as a program does not.
func runsTests() bool {
	for _, a := range os.Args[1:] {
		if len(a) > 6 && (a[:6] == "-test." || a[:7] == "--test.") {
			return true
		}
	}
	return false
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
