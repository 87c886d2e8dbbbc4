// emu.cc — kernels.cu compiled for the host with cuda_emu.h, and a launcher.

// emu_cpu_ok: whether this CPU runs the kernels, which cuda_emu.h compiles
// with fused multiply-adds on x86-64. Defined before cuda_emu.h, without
// them.
extern "C" int emu_cpu_ok(void) {
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("fma");
#else
	return 1;
#endif
}

#include "cuda_emu.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <ucontext.h>
#include <type_traits>
#include <utility>
#include <vector>

thread_local dim3 threadIdx;
dim3 blockIdx, blockDim, gridDim;

// The dynamic shared memory, 64 KiB. kernels.cu's two names for it,
// float s[] and double sd[], are one block of memory, as on a GPU, where
// every extern __shared__ array of a kernel starts at the same address.
static const size_t shared_bytes = 64 << 10;
alignas(16) float s[shared_bytes / sizeof(float)];
extern double sd[shared_bytes / sizeof(double)] __attribute__((alias("s")));

// kernels_cu.h links to ../kernels.cu: as a header of this package, go
// hashes it, so that an edit to the kernels rebuilds the emulator.
#include "kernels_cu.h"
#include "kernel_list.h"

// One launch at a time: the grid's shape, the CUDA threads' contexts and
// the shared memory are the process's.
static std::mutex launch_mu;

// The CUDA threads of a block are coroutines on the calling OS thread:
// each runs until it meets __syncthreads (emu_sync) or returns, then the
// next; once every thread of the block has, the round starts again, so
// each barrier is met by every thread before any passes it. On x86-64 a
// switch saves and restores the callee-saved registers and the stack
// pointer (emu_switch, below: ucontext's switches make a system call
// each, and kernels with block reductions switch millions of times);
// elsewhere ucontext does it.
#if defined(__x86_64__)
// emu_switch(from, to) saves the caller's callee-saved registers on its
// stack, stores its stack pointer in *from and resumes the coroutine whose
// stack pointer is to.
extern "C" void emu_switch(void **from, void *to);
asm(R"(
	.text
	.globl emu_switch
	.type emu_switch, @function
emu_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_switch, .-emu_switch
	.section .note.GNU-stack,"",@progbits
	.text
)");
struct cuda_thread {
	void *sp;
	bool done;
};
static void *scheduler;
#else
struct cuda_thread {
	ucontext_t ctx;
	bool done;
};
static ucontext_t scheduler;
#endif
static const size_t stack_bytes = 256 << 10;
static std::vector<cuda_thread> threads;
static std::vector<char *> stacks;
static const std::function<void()> *the_body;
static int running = -1; // the coroutine running, -1 outside a block

// the_kernel names the kernel being run, for emu_no_barrier's message.
static const char *the_kernel = "a kernel";

void emu_no_barrier() {
	fprintf(stderr, "emu: kernel %s calls __syncthreads but runs its threads one after another: add it to "
	                "emu.cc's list of block-synchronizing kernels (synchronizing)\n", the_kernel);
	abort();
}

#if defined(__x86_64__)
void emu_sync() {
	if (running < 0) emu_no_barrier();
	emu_switch(&threads[running].sp, scheduler);
}

// thread_main is where a coroutine starts: its stack's first return
// address.
static void thread_main() {
	(*the_body)();
	threads[running].done = true;
	emu_switch(&threads[running].sp, scheduler);
	abort(); // a finished thread is never resumed
}

// start readies thread t's coroutine: a stack on which emu_switch's pops
// find six zero registers and return into thread_main, entered as a
// function is (its stack pointer 8 past a multiple of 16).
static void start(int t) {
	uintptr_t top = (reinterpret_cast<uintptr_t>(stacks[t]) + stack_bytes) & ~uintptr_t(15);
	void **sp = reinterpret_cast<void **>(top);
	*--sp = nullptr;                                      // thread_main's return address: none
	*--sp = reinterpret_cast<void *>(&thread_main);        // emu_switch's ret
	for (int i = 0; i < 6; i++) *--sp = nullptr;          // rbp, rbx, r12-r15
	threads[t].sp = sp;
	threads[t].done = false;
}

static void resume(int t) { emu_switch(&scheduler, threads[t].sp); }
#else
void emu_sync() {
	if (running < 0) emu_no_barrier();
	swapcontext(&threads[running].ctx, &scheduler);
}

static void thread_main() {
	(*the_body)();
	threads[running].done = true;
	// returning resumes the scheduler (uc_link)
}

static void start(int t) {
	cuda_thread &th = threads[t];
	th.done = false;
	getcontext(&th.ctx);
	th.ctx.uc_stack.ss_sp = stacks[t];
	th.ctx.uc_stack.ss_size = stack_bytes;
	th.ctx.uc_link = &scheduler;
	makecontext(&th.ctx, thread_main, 0);
}

static void resume(int t) { swapcontext(&scheduler, &threads[t].ctx); }
#endif

// run executes kernel(grid, block): the blocks in order, each block's
// threads as coroutines.
static void run(int grid, int block, const std::function<void()> &kernel, const char *name = "a kernel") {
	std::lock_guard<std::mutex> lock(launch_mu);
	the_kernel = name;
	gridDim.x = grid;
	blockDim.x = block;
	the_body = &kernel;
	threads.resize(block);
	while ((int)stacks.size() < block) stacks.push_back(new char[stack_bytes]);
	for (int b = 0; b < grid; b++) {
		blockIdx.x = b;
		for (int t = 0; t < block; t++) start(t);
		for (int live = block; live > 0;) {
			for (int t = 0; t < block; t++) {
				if (threads[t].done) continue;
				running = t;
				threadIdx.x = t;
				resume(t);
				if (threads[t].done) live--;
			}
		}
		running = -1;
	}
	threadIdx.x = 0;
}

// Race mode (package emu's SetRace): the typed launchers below run the
// race copy of the kernels (internal/race) instead of this file's, through
// race_direct, which package emu sets with the seed; nullptr: off.
typedef int (*race_direct_fn)(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args,
                              uint64_t seed, char *report, size_t report_len);
static std::atomic<race_direct_fn> race_direct;
static std::atomic<uint64_t> race_seed;

extern "C" void emu_set_race(void *direct, uint64_t seed) {
	race_seed = seed;
	race_direct = reinterpret_cast<race_direct_fn>(direct);
}

// The first race (or failure) of the typed launches since package emu last
// took it (emu_take_race): the typed launchers return nothing.
static std::mutex race_mu;
static char race_report[512];

extern "C" int emu_take_race(char *buf, size_t n) {
	std::lock_guard<std::mutex> lock(race_mu);
	if (!race_report[0]) return 0;
	snprintf(buf, n, "%s", race_report);
	race_report[0] = 0;
	return 1;
}

// to_slot is argument v of a kernel's parameter of type T in the 8-byte
// slot LaunchKernel takes (the inverse of from_slot, below).
template <typename T, typename V> static uint64_t to_slot(V v) {
	T x = v;
	if constexpr (std::is_pointer_v<T>) {
		return reinterpret_cast<uintptr_t>(x);
	} else if constexpr (std::is_same_v<T, float>) {
		uint32_t u;
		memcpy(&u, &x, sizeof u);
		return u;
	} else if constexpr (std::is_same_v<T, double>) {
		uint64_t u;
		memcpy(&u, &x, sizeof u);
		return u;
	} else {
		static_assert(std::is_integral_v<T> && sizeof(T) == 4, "a kernel parameter of a type the launcher does not encode");
		return static_cast<uint32_t>(x);
	}
}

// direct runs kernel k, called name, over grid blocks of block threads with
// arguments v: this file's copy in a thread per CUDA thread (run), or in
// race mode the race copy, with the 64 KiB of shared memory run gives.
template <typename... A, typename... V>
static void direct(const char *name, void (*k)(A...), int grid, int block, V... v) {
	static_assert(sizeof...(A) == sizeof...(V), "a kernel's arguments");
	if (race_direct_fn rd = race_direct.load()) {
		uint64_t slots[] = {to_slot<A>(v)...};
		char rep[512];
		int rc = rd(name, grid, block, (int)shared_bytes, sizeof...(A), slots, race_seed.load(), rep, sizeof rep);
		if (rc != 0) {
			std::lock_guard<std::mutex> lock(race_mu);
			if (!race_report[0]) {
				if (rc == -4) {
					snprintf(race_report, sizeof race_report, "%s", rep);
				} else {
					snprintf(race_report, sizeof race_report, "kernel %s: the race copy's launch failed (%d)", name, rc);
				}
			}
		}
		return;
	}
	run(grid, block, [=] { k(v...); }, name);
}

#define DIRECT(k, ...) direct(#k, k, __VA_ARGS__)

extern "C" {
void emu_bias_act(int g, int b, const float *x, const float *bias, float *z, float *y, int rows, int cols, int act, float alpha) {
	DIRECT(gk_bias_act, g, b, x, bias, z, y, rows, cols, act, alpha);
}
void emu_softmax_rows(int g, int b, const float *x, float *y, int rows, int cols) {
	DIRECT(gk_softmax_rows, g, b, x, y, rows, cols);
}
void emu_act_grad(int g, int b, const float *x, const float *y, const float *dy, float *dx, int n, int act, float alpha) {
	DIRECT(gk_act_grad, g, b, x, y, dy, dx, n, act, alpha);
}
void emu_softmax_grad_rows(int g, int b, const float *y, const float *dy, float *dx, int rows, int cols) {
	DIRECT(gk_softmax_grad_rows, g, b, y, dy, dx, rows, cols);
}
void emu_sum_rows(int g, int b, const float *a, float *out, int rows, int cols) {
	DIRECT(gk_sum_rows, g, b, a, out, rows, cols);
}
void emu_zero_one_labels(int b, const float *y, int n, int *flag) {
	DIRECT(gk_zero_one_labels, 1, b, y, n, flag);
}
void emu_loss(int b, const float *p, const float *y, const float *w, const int *zero_one, int rows, int cols, int kind,
		double ls, double delta, float *out, int *bad) {
	DIRECT(gk_loss, 1, b, p, y, w, zero_one, rows, cols, kind, ls, delta, out, bad);
}
void emu_loss_grad(int g, int b, const float *p, const float *y, const float *w, const int *zero_one, const float *seed,
		int rows, int cols, int kind, double ls, double delta, float *dp, int *bad) {
	DIRECT(gk_loss_grad, g, b, p, y, w, zero_one, seed, rows, cols, kind, ls, delta, dp, bad);
}
// emu_update runs the kernel of optim.Rule rule (numbered as optim
// numbers them) with the arguments of a launch.Update: the slot pointers
// sl[0..2] as its Slots place them, the scalars p in its order.
void emu_update(int g, int b, int rule, float *w, float *s0, float *s1, float *s2, const float *gr, int n, int nesterov,
		const float *p, const float *gscale, float cv, int decays, float decay) {
	switch (rule) {
	case 1: // RuleSGD
		DIRECT(gk_sgd, g, b, w, gr, n, p[0], gscale, cv, decays, decay);
		break;
	case 2: // RuleMomentum
	case 3: // RuleNesterov
		DIRECT(gk_momentum, g, b, w, s0, gr, n, nesterov, p[0], p[1], gscale, cv, decays, decay);
		break;
	case 4: // RuleAdam
		DIRECT(gk_adam, g, b, w, s0, s1, s2, gr, n, p[0], p[1], p[2], p[3], p[4], p[5], gscale, cv, decays, decay);
		break;
	case 5: // RuleRMSprop
		DIRECT(gk_rmsprop, g, b, w, s0, s1, s2, gr, n, p[0], p[1], p[2], p[3], p[4], gscale, cv, decays, decay);
		break;
	case 6: // RuleAdagrad
		DIRECT(gk_adagrad, g, b, w, s0, gr, n, p[0], p[1], gscale, cv, decays, decay);
		break;
	case 7: // RuleAdadelta
		DIRECT(gk_adadelta, g, b, w, s0, s1, gr, n, p[0], p[1], p[2], p[3], gscale, cv, decays, decay);
		break;
	case 8: // RuleAdamax
		DIRECT(gk_adamax, g, b, w, s0, s1, gr, n, p[0], p[1], p[2], p[3], p[4], gscale, cv, decays, decay);
		break;
	case 9: // RuleNadam
		DIRECT(gk_nadam, g, b, w, s0, s1, gr, n, p[0], p[1], p[2], p[3], p[4], p[5], p[6], gscale, cv, decays, decay);
		break;
	}
}
void emu_abs_sq_sums(int g, int b, const float *x, int n, double *part) {
	DIRECT(gk_abs_sq_sums, g, b, x, n, part);
}
void emu_clip_scale(int b, const double *part, int parts, double clipnorm, float *scale) {
	DIRECT(gk_clip_scale, 1, b, part, parts, clipnorm, scale);
}
void emu_global_scale(int b, const double *part, int parts, double clipnorm, float *scale) {
	DIRECT(gk_global_scale, 1, b, part, parts, clipnorm, scale);
}
void emu_penalty(int b, const double *part, int parts, double l1, double l2, double scale, float *out) {
	DIRECT(gk_penalty, 1, b, part, parts, l1, l2, scale, out);
}
void emu_penalty_grad(int g, int b, const float *x, const float *seed, float *out, int n, double l1, double l2x2,
		double scale) {
	DIRECT(gk_penalty_grad, g, b, x, seed, out, n, l1, l2x2, scale);
}
void emu_metric_sum(int b, const float *p, const float *y, float *out, int rows, int cols, int ycols, int kind,
		float threshold, int k) {
	DIRECT(gk_metric_sum, 1, b, p, y, out, rows, cols, ycols, kind, threshold, k);
}
void emu_metric_pr(int b, const float *p, const float *y, float *out, int rows, int cols, float threshold, int topk, int lo,
		int hi) {
	DIRECT(gk_metric_pr, 1, b, p, y, out, rows, cols, threshold, topk, lo, hi);
}
void emu_metric_auc(int g, int b, const float *p, const float *y, float *out, int rows, int cols, int n, int multi,
		int logits) {
	DIRECT(gk_metric_auc, g, b, p, y, out, rows, cols, n, multi, logits);
}
void emu_metric_f1(int g, int b, const float *p, const float *y, float *out, int rows, int cols, float threshold) {
	DIRECT(gk_metric_f1, g, b, p, y, out, rows, cols, threshold);
}
void emu_add(int g, int b, const float *a, const float *bb, float *out, int n) {
	DIRECT(gk_add, g, b, a, bb, out, n);
}
void emu_u8_to_f32(int g, int b, const unsigned char *in, float *out, int n, float scale) {
	DIRECT(gk_u8_to_f32, g, b, in, out, n, scale);
}

// The image kernels take the window as an array of the fourteen ints of
// ops.Window, in field order.
#define WIN(v) v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]

void emu_patches(int g, int b, const float *x, float *cols, const int *win) {
	DIRECT(gk_patches, g, b, x, cols, WIN(win));
}
void emu_patches_grad(int g, int b, const float *dcols, float *dx, const int *win) {
	DIRECT(gk_patches_grad, g, b, dcols, dx, WIN(win));
}
void emu_pool(int g, int b, const float *x, float *y, int kind, const int *win) {
	DIRECT(gk_pool, g, b, x, y, kind, WIN(win));
}
void emu_pool_grad(int g, int b, const float *x, const float *y, const float *dy, float *dx, int kind, const int *win) {
	DIRECT(gk_pool_grad, g, b, x, y, dy, dx, kind, WIN(win));
}
void emu_dropout(int g, int b, const float *x, float *y, int n, int per_row, const float *step, unsigned int keyLo,
		unsigned int keyHi, unsigned int threshold, float scale) {
	DIRECT(gk_dropout, g, b, x, y, n, per_row, step, keyLo, keyHi, threshold, scale);
}

void emu_norm_col_sums(int g, int b, int kind, const float *x, const float *mean, const float *var, const float *dy,
		const double *rowStats, int rows, int cols, double eps, int tw, int rps, double *part) {
	DIRECT(gk_norm_col_sums, g, b, kind, x, mean, var, dy, rowStats, rows, cols, eps, tw, rps, part);
}
void emu_norm_col_finish(int g, int b, int kind, double *part, int splits, int rows, int cols, float *out) {
	DIRECT(gk_norm_col_finish, g, b, kind, part, splits, rows, cols, out);
}
void emu_batch_norm(int g, int b, const float *x, const float *mean, const float *var, const float *gamma, const float *beta,
		int rows, int cols, double eps, int tw, int rps, float *y) {
	DIRECT(gk_batch_norm, g, b, x, mean, var, gamma, beta, rows, cols, eps, tw, rps, y);
}
void emu_batch_norm_grad(int g, int b, const float *x, const float *mean, const float *var, const float *gamma, const float *dy,
		const double *sums, int rows, int cols, double eps, int tw, int rps, float *dx) {
	DIRECT(gk_batch_norm_grad, g, b, x, mean, var, gamma, dy, sums, rows, cols, eps, tw, rps, dx);
}
void emu_layer_norm(int g, int b, int kind, const float *x, const float *gamma, const float *bb, int rows, int cols, double eps,
		float *out, double *rowStats) {
	DIRECT(gk_layer_norm, g, b, kind, x, gamma, bb, rows, cols, eps, out, rowStats);
}
void emu_gather(int g, int b, const float *table, const float *idx, float *out, int m, int n, int rows,
		unsigned long long *bad) {
	DIRECT(gk_gather, g, b, table, idx, out, m, n, rows, bad);
}
void emu_scatter_add(int g, int b, const float *idx, const float *dy, float *out, int m, int n, int rows,
		unsigned long long *bad) {
	DIRECT(gk_scatter_add, g, b, idx, dy, out, m, n, rows, bad);
}
}

// The generic launcher, for the emulated GPU of package device/cuda (its
// build tag kernelemu): a kernel by name, its arguments in the 8-byte
// slots the CUDA driver takes (cuLaunchKernel's kernelParams), each
// decoded to the type of the kernel's parameter.

// run_sequential executes kernel(grid, block) on the calling thread, each
// CUDA thread after the one before: for the kernels that never meet at a
// barrier, whose threads cannot tell, and much faster than a thread each.
static void run_sequential(const char *name, int grid, int block, const std::function<void()> &kernel) {
	std::lock_guard<std::mutex> lock(launch_mu);
	the_kernel = name;
	gridDim.x = grid;
	blockDim.x = block;
	for (int b = 0; b < grid; b++) {
		blockIdx.x = b;
		for (int t = 0; t < block; t++) {
			threadIdx.x = t;
			kernel();
		}
	}
	threadIdx.x = 0;
}

template <typename T> static T from_slot(uint64_t v) {
	if constexpr (std::is_pointer_v<T>) {
		return reinterpret_cast<T>(static_cast<uintptr_t>(v));
	} else if constexpr (std::is_same_v<T, float>) {
		uint32_t u = static_cast<uint32_t>(v);
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	} else if constexpr (std::is_same_v<T, double>) {
		double d;
		memcpy(&d, &v, sizeof d);
		return d;
	} else {
		static_assert(std::is_integral_v<T> && sizeof(T) == 4, "a kernel parameter of a type the launcher does not decode");
		return static_cast<T>(static_cast<uint32_t>(v));
	}
}

template <typename... A, size_t... I>
static void call(void (*k)(A...), const uint64_t *a, std::index_sequence<I...>) {
	k(from_slot<A>(a[I])...);
}

// The kernels that meet at __syncthreads (directly or through a block
// reduction): their threads run concurrently. The others run one thread
// after another; one of those that synchronizes after all stops the
// process with a message (emu_no_barrier).
static bool synchronizing(std::string_view name) {
	static const std::string_view list[] = {
		"gk_softmax_rows", "gk_softmax_grad_rows", "gk_sum_rows", "gk_zero_one_labels", "gk_loss", "gk_loss_grad",
		"gk_abs_sq_sums", "gk_clip_scale", "gk_global_scale", "gk_penalty", "gk_metric_sum", "gk_metric_pr",
		"gk_norm_col_sums", "gk_layer_norm", "gk_transpose",
	};
	for (auto n : list)
		if (n == name) return true;
	return false;
}

// poison is the byte the shared memory holds where the launch did not
// write: all ones, a NaN as a float and as a double.
static const unsigned char poison = 0xff;

// launch runs kernel k with the launch's shared bytes of dynamic shared
// memory, as a GPU gives it: the memory starts poisoned (NaNs), so a
// kernel that reads past what it asked for computes NaNs, and one that
// writes past it is refused once it has run (-3).
template <typename... A>
static int launch(const char *name, void (*k)(A...), int grid, int block, int shared, int nargs, const uint64_t *args) {
	if (nargs != (int)sizeof...(A)) return -2;
	if (shared < 0 || (size_t)shared > shared_bytes) return -3;
	auto body = [=] { call(k, args, std::index_sequence_for<A...>{}); };
	unsigned char *mem = reinterpret_cast<unsigned char *>(s);
	memset(mem, poison, shared_bytes);
	if (synchronizing(name)) {
		run(grid, block, body, name);
	} else {
		run_sequential(name, grid, block, body);
	}
	for (size_t i = shared; i < shared_bytes; i++)
		if (mem[i] != poison) return -3;
	return 0;
}

#define GK_KERNEL(k) {#k, [](int g, int b, int sh, int n, const uint64_t *a) { return launch(#k, k, g, b, sh, n, a); }},

struct named_kernel {
	const char *name;
	int (*launch)(int grid, int block, int shared, int nargs, const uint64_t *args);
};

static const named_kernel all_kernels[] = {EMU_KERNELS(GK_KERNEL)};

// emu_launch runs kernel name with shared bytes of dynamic shared memory:
// 0, or -1 for a kernel it does not know, -2 for a count of arguments that
// is not the kernel's, -3 for a kernel that wrote past its shared memory.
extern "C" int emu_launch(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args) {
	for (const auto &k : all_kernels)
		if (std::string_view(k.name) == name) return k.launch(grid, block, shared, nargs, args);
	return -1;
}
