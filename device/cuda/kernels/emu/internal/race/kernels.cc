// kernels.cc — the race copy of kernels.cu: compiled with -fsanitize=thread
// (this package's CXXFLAGS), so that every load, store and atomic
// operation of a kernel calls runtime.c's hooks, and launched by name as
// emu.cc's launcher does. cuda_emu.h and kernels.cu are included inside
// namespace emu_race (EMU_RACE_COPY: see cuda_emu.h), so that nothing here
// collides with emu.cc's copy at link time.
//
// The launcher's own code (decoding the arguments) is not instrumented
// (EMU_NOTSAN): only the kernels' accesses reach the hooks.

// The standard headers cuda_emu.h and kernels.cu include, outside the
// namespace: their includes inside it are then no-ops.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <string_view>
#include <type_traits>
#include <utility>

#define EMU_NOTSAN __attribute__((no_sanitize("thread")))

extern "C" {
struct emu_race_trace;
int emu_race_run(const char *name, int grid, int block, void (*fn)(void *), void *arg, void *shared, size_t n,
                 uint64_t seed, int detect, int trace, char *rep, size_t rep_len);
void emu_race_lock(void);
void emu_race_unlock(void);
}

#define EMU_RACE_COPY 1
namespace emu_race {
#include "cuda_emu.h"

// The block's dynamic shared memory, 64 KiB, as in emu.cc: float s[] and
// double sd[] are one block of memory.
static const size_t shared_bytes = 64 << 10;
alignas(16) float s[shared_bytes / sizeof(float)];
extern double sd[shared_bytes / sizeof(double)] __attribute__((alias("_ZN8emu_race1sE")));

#include "kernels_cu.h"
#include "test_kernels.h"
} // namespace emu_race

#include "kernel_list.h"

namespace {

template <typename T> EMU_NOTSAN T from_slot(uint64_t v) {
	if constexpr (std::is_pointer_v<T>) {
		return reinterpret_cast<T>(static_cast<uintptr_t>(v));
	} else if constexpr (std::is_same_v<T, float>) {
		uint32_t u = static_cast<uint32_t>(v);
		float f;
		__builtin_memcpy(&f, &u, sizeof f);
		return f;
	} else if constexpr (std::is_same_v<T, double>) {
		double d;
		__builtin_memcpy(&d, &v, sizeof d);
		return d;
	} else {
		static_assert(std::is_integral_v<T> && sizeof(T) == 4, "a kernel parameter of a type the launcher does not decode");
		return static_cast<T>(static_cast<uint32_t>(v));
	}
}

// A launch's kernel and its argument slots: what every CUDA thread runs.
template <typename... A> struct closure {
	void (*k)(A...);
	const uint64_t *args;
};

template <typename... A, size_t... I> EMU_NOTSAN void call(const closure<A...> *c, std::index_sequence<I...>) {
	c->k(from_slot<A>(c->args[I])...);
}

template <typename... A> EMU_NOTSAN void body(void *c) {
	call(static_cast<const closure<A...> *>(c), std::index_sequence_for<A...>{});
}

const unsigned char poison = 0xff;

struct options {
	uint64_t seed;
	int detect, trace;
	char *report;
	size_t report_len;
};

// launch runs k as emu.cc's launch does: shared bytes of shared memory,
// poisoned (NaNs) first, -3 when the kernel wrote past them.
template <typename... A>
int launch(const char *name, void (*k)(A...), int grid, int block, int shared, int nargs, const uint64_t *args,
           const options &o) {
	if (nargs != (int)sizeof...(A)) return -2;
	if (shared < 0 || (size_t)shared > emu_race::shared_bytes) return -3;
	closure<A...> c{k, args};
	unsigned char *mem = reinterpret_cast<unsigned char *>(emu_race::s);
	memset(mem, poison, emu_race::shared_bytes);
	int rc = emu_race_run(name, grid, block, &body<A...>, &c, mem, emu_race::shared_bytes, o.seed, o.detect, o.trace,
	                      o.report, o.report_len);
	for (size_t i = shared; i < emu_race::shared_bytes; i++)
		if (mem[i] != poison) return -3;
	return rc;
}

struct named_kernel {
	const char *name;
	int (*launch)(int grid, int block, int shared, int nargs, const uint64_t *args, const options &o);
};

#define RACE_KERNEL(k)                                                                                                 \
	{#k, [](int g, int b, int sh, int n, const uint64_t *a, const options &o) {                                    \
		 return launch(#k, emu_race::k, g, b, sh, n, a, o);                                                    \
	 }},

// kernels.cu's, and test_kernels.h's for package emu's tests.
const named_kernel all_kernels[] = {
	EMU_KERNELS(RACE_KERNEL) RACE_KERNEL(emu_test_racy_zero_one) RACE_KERNEL(emu_test_pair) RACE_KERNEL(emu_test_order)
		RACE_KERNEL(emu_test_fma)};

} // namespace

// emu_race_launch runs kernel name of the race copy: 0, or emu.cc's
// emu_launch's codes (-1 no such kernel, -2 a wrong count of arguments, -3
// shared memory written past shared bytes), or -4: a race, described in
// report. The caller holds emu_race_lock, and reads the trace
// (emu_race_traced) before releasing it.
extern "C" int emu_race_launch(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args,
                               uint64_t seed, int detect, int trace, char *report, size_t report_len) {
	options o{seed, detect, trace, report, report_len};
	for (const auto &k : all_kernels)
		if (std::string_view(k.name) == name) return k.launch(grid, block, shared, nargs, args, o);
	return -1;
}

// emu_race_direct is emu_race_launch for emu.cc's typed launchers in race
// mode (emu.cc's direct), which reach it through a pointer that package
// emu hands them: it takes the lock itself and detects races, tracing
// nothing.
extern "C" int emu_race_direct(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args,
                               uint64_t seed, char *report, size_t report_len) {
	emu_race_lock();
	int rc = emu_race_launch(name, grid, block, shared, nargs, args, seed, 1, 0, report, report_len);
	emu_race_unlock();
	return rc;
}
