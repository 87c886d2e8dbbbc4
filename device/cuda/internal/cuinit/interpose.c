//go:build cudavm && cgo && !kernelemu

// Test binaries that may skip: cuInit and cuDeviceGetCount, wrapped.
//
// gorgonia.org/cu calls cuInit in its init function and exits the process
// when it fails, so a test binary on a machine without a GPU could not run
// any test at all: not those that need no GPU, and not the t.Skip of those
// that do. These two definitions take the place of the driver's in every
// binary that links this package (a definition in the executable wins over
// a shared library's) and forward to the driver's (dlsym RTLD_NEXT). Only
// when gk_cuinit_tolerate is set (cuinit.go sets it in a test binary
// without GOKERAS_REQUIRE_GPU) does a failed cuInit return CUDA_SUCCESS,
// remembering the real result, and cuDeviceGetCount then reports no
// devices: every test that asks for a GPU skips. Everywhere else they are
// the driver's functions, called through one more jump.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <cuda.h>

#include "cuinit.h"

int gk_cuinit_tolerate;
CUresult gk_cuinit_masked; // the failure cuInit hid, or CUDA_SUCCESS

typedef CUresult (*gk_cuInit_t)(unsigned int);
typedef CUresult (*gk_cuDeviceGetCount_t)(int *);

CUresult CUDAAPI cuInit(unsigned int flags) {
	gk_cuInit_t real = (gk_cuInit_t)dlsym(RTLD_NEXT, "cuInit");
	CUresult r = real ? real(flags) : CUDA_ERROR_NOT_FOUND;
	if (r != CUDA_SUCCESS && gk_cuinit_tolerate) {
		gk_cuinit_masked = r;
		return CUDA_SUCCESS;
	}
	return r;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
	if (gk_cuinit_masked != CUDA_SUCCESS) {
		*count = 0;
		return CUDA_SUCCESS;
	}
	gk_cuDeviceGetCount_t real = (gk_cuDeviceGetCount_t)dlsym(RTLD_NEXT, "cuDeviceGetCount");
	return real ? real(count) : CUDA_ERROR_NOT_FOUND;
}
