// cuda_emu.h — just enough of CUDA to run kernels.cu on the host, a
// coroutine per CUDA thread of a block and the blocks one after another, so
// that the kernels' indexing, grid-stride loops, shared-memory reductions
// and loss formulas can be checked on machines without a GPU (package emu,
// build tag kernelemu). Not a CUDA implementation: warps, memory ordering
// between blocks and CUDA's own math library are not modelled.
#pragma once

#include <algorithm>
#include <atomic>
#include <math.h>
#include <cstddef>
#include <cstring>

struct dim3 {
	unsigned int x = 1, y = 1, z = 1;
};

// Per CUDA thread: its index. Per launch: the grid and block shapes, the
// current block and its shared memory.
extern thread_local dim3 threadIdx;
extern dim3 blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__

// __syncthreads yields to the next CUDA thread of the block (emu.cc's
// run). In a launch whose threads run one after another (emu.cc's
// synchronizing) there is no barrier: it says so and aborts.
void emu_sync();
inline void __syncthreads() { emu_sync(); }

inline int atomicMin(int *p, int v) {
	std::atomic_ref<int> a(*p);
	int old = a.load();
	while (v < old && !a.compare_exchange_weak(old, v)) {
	}
	return old;
}

inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
	std::atomic_ref<unsigned long long> a(*p);
	unsigned long long old = a.load();
	while (v < old && !a.compare_exchange_weak(old, v)) {
	}
	return old;
}

// Arithmetic rounded to nearest that nvcc never contracts into fused
// multiply-adds; the host compiler, without -mfma, contracts nothing.
// Division and square roots are IEEE's, correctly rounded, on the host
// as in CUDA's _rn intrinsics.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return sqrt(a); }

inline unsigned int __float_as_uint(float f) {
	unsigned int u;
	memcpy(&u, &f, sizeof u);
	return u;
}

// CUDA's integer min and max, and the high word of a 32×32-bit product.
using std::max;
using std::min;

inline unsigned int __umulhi(unsigned int a, unsigned int b) {
	return (unsigned int)(((unsigned long long)a * b) >> 32);
}

// expf, logf, tanhf and the rest come from <math.h>, which kernels.cu
// includes, as nvcc provides them.

// Shared memory of the running block: kernels.cu declares it as
// `extern __shared__ float s[]` (and double sd[]) inside its kernels.
extern float s[];
extern double sd[];
