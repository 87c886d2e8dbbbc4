// cuda_emu.h — just enough of CUDA to run kernels.cu on the host, a
// coroutine per CUDA thread of a block and the blocks one after another, so
// that the kernels' indexing, grid-stride loops, shared-memory reductions
// and loss formulas can be checked on machines without a GPU (package emu,
// build tag kernelemu). Not a CUDA implementation.
//
// Two copies of the kernels are built against this header. emu.cc's is
// the fast one, run in one fixed schedule. internal/race/kernels.cc's
// (EMU_RACE_COPY defined, the header and kernels.cu included inside
// namespace emu_race) is compiled with GCC's ThreadSanitizer
// instrumentation, whose calls at every load, store and atomic operation
// the race runtime (internal/race/runtime.c) answers itself: it switches
// CUDA threads at random there, reports two threads of a block that touch
// one word between two barriers (one of them writing), or two blocks of a
// launch, and records the global memory a launch read and wrote (package
// emu's race mode, SetRace and GOKERAS_EMU_RACE, and LaunchKernelTraced).
//
// Arithmetic: nvcc contracts a*b+c into a fused multiply-add (its default
// -fmad=true) except in the _rn intrinsics; the host build does the same
// (fp-contract=fast, and FMA instructions on x86-64: pragmas below), and
// the intrinsics below hide their operands and results from the compiler
// so that it cannot fuse them. GCC and nvcc need not pick the same
// products to fuse in an expression such as a*b + c*d, so results may
// still differ from the GPU's in the last bit.
//
// What the emulator cannot see (the GPU tests of device/cuda do): real
// cuBLAS (sgemm is computed by package blas), memory coalescing and shared
// memory bank conflicts, warp-level behaviour (warp shuffles and votes,
// and the implicit synchronicity of a warp's threads, which kernels.cu
// must not rely on), memory ordering beyond __syncthreads and atomics
// (__threadfence), fatbin and PTX loading and the driver's JIT, the exact
// results of CUDA's math library (expf, logf, tanhf... are the host's),
// and timing and occupancy (registers, shared memory per SM, launch
// limits other than the block size).
#pragma once

#include <algorithm>
#include <atomic>
#include <math.h>
#include <cstddef>
#include <cstring>

// nvcc contracts a*b+c into a fused multiply-add: so does every function
// defined after this point. cgo does not pass -ffp-contract=fast, and
// GCC forms fused multiply-adds only with its expensive optimizations
// (-O2), hence the pragma. Contraction needs the FMA instructions, which
// x86-64's baseline lacks (emu.go refuses to run on a CPU without them);
// elsewhere (arm64) they are always there.
#pragma GCC optimize("fp-contract=fast", "expensive-optimizations")
#if defined(__x86_64__)
#pragma GCC target("fma")
#endif

struct dim3 {
	unsigned int x = 1, y = 1, z = 1;
};

#ifndef EMU_RACE_COPY
// Per CUDA thread: its index. Per launch: the grid and block shapes, the
// current block and its shared memory.
extern thread_local dim3 threadIdx;
extern dim3 blockIdx, blockDim, gridDim;

#define __global__

// __syncthreads yields to the next CUDA thread of the block (emu.cc's
// run). In a launch whose threads run one after another (emu.cc's
// synchronizing) there is no barrier: it says so and aborts.
void emu_sync();
inline void __syncthreads() { emu_sync(); }
#else
// The race copy: the indices are the race runtime's (C, uninstrumented,
// so that reading them is no memory access the runtime sees), set at
// every switch between CUDA threads.
struct emu_race_dims_t {
	dim3 thread, block, blockDim, gridDim;
};
extern "C" emu_race_dims_t emu_race_dims;
#define threadIdx (emu_race_dims.thread)
#define blockIdx (emu_race_dims.block)
#define blockDim (emu_race_dims.blockDim)
#define gridDim (emu_race_dims.gridDim)

// kernels.cu declares its kernels extern "C" __global__: here the two
// string literals join into extern "C++", so that the copy's kernels,
// inside namespace emu_race, do not collide with emu.cc's at link time.
#define __global__ "++"

// __syncthreads waits until every CUDA thread of the block that has not
// returned arrives (runtime.c).
extern "C" void emu_race_sync(void);
inline void __syncthreads() { emu_race_sync(); }
#endif

#define __device__
#define __forceinline__ inline
#define __noinline__
#define __shared__

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
// multiply-adds. The host compiler contracts as nvcc does elsewhere
// (-ffp-contract=fast), so these pass their operands and results through
// emu_opaque, an empty asm statement that the compiler must assume changes
// the value: it cannot fuse a product made outside into an _rn addition,
// nor an _rn product into an addition outside. Division and square roots
// are IEEE's, correctly rounded, on the host as in CUDA's _rn intrinsics.
template <typename T> inline T emu_opaque(T v) {
#if defined(__x86_64__)
	asm("" : "+x"(v));
#elif defined(__aarch64__)
	asm("" : "+w"(v));
#else
	volatile T w = v;
	v = w;
#endif
	return v;
}
inline float __fadd_rn(float a, float b) { return emu_opaque(emu_opaque(a) + emu_opaque(b)); }
inline float __fsub_rn(float a, float b) { return emu_opaque(emu_opaque(a) - emu_opaque(b)); }
inline float __fmul_rn(float a, float b) { return emu_opaque(emu_opaque(a) * emu_opaque(b)); }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return emu_opaque(emu_opaque(a) + emu_opaque(b)); }
inline double __dsub_rn(double a, double b) { return emu_opaque(emu_opaque(a) - emu_opaque(b)); }
inline double __dmul_rn(double a, double b) { return emu_opaque(emu_opaque(a) * emu_opaque(b)); }
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
