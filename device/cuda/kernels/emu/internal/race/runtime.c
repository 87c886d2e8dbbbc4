// runtime.c — the race runtime: the scheduler of the instrumented copy of
// the kernels (kernels.cc) and the ThreadSanitizer entry points that GCC's
// -fsanitize=thread instrumentation calls there at every load, store and
// atomic operation. The ThreadSanitizer library is not linked: these
// functions are the whole of it. This file is C, compiled with the
// package's CFLAGS, which do not instrument, so nothing the runtime does
// calls back into it.
//
// At every access made while a CUDA thread runs, the runtime
//   - may switch to another runnable CUDA thread of the block, chosen at
//     random (race mode: a seed), before the access is made;
//   - checks the access against what the other threads of the block did to
//     the same 4-byte word since the last barrier, and what the other
//     blocks of the launch did to it (race detection);
//   - records the global memory read and written (tracing).
// Accesses to the CUDA threads' stacks (their local variables) and to the
// indices (threadIdx...) are no memory of the GPU's and are skipped.
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- CUDA threads as coroutines ----------------------------------------

typedef struct {
	unsigned int x, y, z;
} dim3c;

// emu_race_dims is what cuda_emu.h's threadIdx, blockIdx, blockDim and
// gridDim name in the race copy.
struct emu_race_dims_t {
	dim3c thread, block, blockDim, gridDim;
} emu_race_dims;

#if defined(__x86_64__)
// emu_race_switch(from, to) saves the callee-saved registers on the
// caller's stack, stores its stack pointer in *from and resumes the
// coroutine whose stack pointer is to (as emu.cc's emu_switch).
void emu_race_switch(void **from, void *to);
__asm__(".text\n"
        ".globl emu_race_switch\n"
        ".type emu_race_switch, @function\n"
        "emu_race_switch:\n"
        "	pushq %rbp\n"
        "	pushq %rbx\n"
        "	pushq %r12\n"
        "	pushq %r13\n"
        "	pushq %r14\n"
        "	pushq %r15\n"
        "	movq %rsp, (%rdi)\n"
        "	movq %rsi, %rsp\n"
        "	popq %r15\n"
        "	popq %r14\n"
        "	popq %r13\n"
        "	popq %r12\n"
        "	popq %rbx\n"
        "	popq %rbp\n"
        "	ret\n"
        ".size emu_race_switch, .-emu_race_switch\n"
        ".section .note.GNU-stack,\"\",@progbits\n"
        ".text\n");
typedef void *context;
#else
#include <ucontext.h>
typedef ucontext_t context;
#endif

enum { RUNNABLE, WAITING, DONE };

static const size_t stack_bytes = 256 << 10;
static char *stacks;        // stack_bytes for each CUDA thread, one allocation
static int stacks_for;      // how many threads stacks holds
static context *ctx;        // each CUDA thread's
static unsigned char *state; // each CUDA thread's: RUNNABLE, WAITING or DONE
static int *runq;           // the RUNNABLE threads, in race mode
static context scheduler;
static int cur = -1;        // the CUDA thread running, -1 when none
static int active;          // a CUDA thread runs: the hooks look at accesses
static void (*the_body)(void *);
static void *the_ctx;
static const char *the_kernel = "a kernel";

static void to_scheduler(void) {
#if defined(__x86_64__)
	emu_race_switch(&ctx[cur], scheduler);
#else
	swapcontext(&ctx[cur], &scheduler);
#endif
}

static void thread_main(void) {
	the_body(the_ctx);
	state[cur] = DONE;
#if defined(__x86_64__)
	emu_race_switch(&ctx[cur], scheduler);
	abort(); // a finished thread is never resumed
#endif
	// with ucontext, returning resumes the scheduler (uc_link)
}

static void start(int t) {
	state[t] = RUNNABLE;
#if defined(__x86_64__)
	// A stack on which emu_race_switch's pops find six zero registers and
	// return into thread_main, entered as a function is (its stack
	// pointer 8 past a multiple of 16).
	uintptr_t top = ((uintptr_t)(stacks + (size_t)t * stack_bytes) + stack_bytes) & ~(uintptr_t)15;
	void **sp = (void **)top;
	*--sp = NULL;                // thread_main's return address: none
	*--sp = (void *)&thread_main; // emu_race_switch's ret
	for (int i = 0; i < 6; i++) *--sp = NULL;
	ctx[t] = sp;
#else
	getcontext(&ctx[t]);
	ctx[t].uc_stack.ss_sp = stacks + (size_t)t * stack_bytes;
	ctx[t].uc_stack.ss_size = stack_bytes;
	ctx[t].uc_link = &scheduler;
	makecontext(&ctx[t], thread_main, 0);
#endif
}

static void resume(int t) {
	cur = t;
	emu_race_dims.thread.x = t;
	active = 1;
#if defined(__x86_64__)
	emu_race_switch(&scheduler, ctx[t]);
#else
	swapcontext(&scheduler, &ctx[t]);
#endif
	active = 0;
	cur = -1;
}

// emu_race_sync is __syncthreads: the thread waits until every thread of
// the block that has not returned waits too.
void emu_race_sync(void) {
	if (cur < 0) {
		fprintf(stderr, "emu race runtime: __syncthreads outside a CUDA thread\n");
		abort();
	}
	state[cur] = WAITING;
	to_scheduler();
}

// ---- the schedule's randomness ------------------------------------------

static uint64_t rng;       // splitmix64's state
static int yield_shift;    // 0: never switch at an access; else switch every 2^yield_shift accesses on average
static uint64_t countdown; // the accesses until the next switch

static uint64_t next(void) {
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// ---- what the hooks skip, and shared memory ------------------------------

static uintptr_t shared_lo, shared_len;

static int skipped(uintptr_t a) {
	return a - (uintptr_t)stacks < (uintptr_t)stacks_for * stack_bytes ||
	       a - (uintptr_t)&emu_race_dims < sizeof emu_race_dims;
}

// ---- tracing: the global memory read and written --------------------------

typedef struct {
	uintptr_t lo, hi;
} range;

typedef struct {
	range *r;
	size_t n, cap;
} ranges;

static int tracing;
static ranges traced[2]; // reads, writes

static void add_range(ranges *rs, uintptr_t lo, uintptr_t hi) {
	if (rs->n > 0) {
		range *last = &rs->r[rs->n - 1];
		if (lo <= last->hi && hi >= last->lo) { // touching or overlapping: grid-stride loops walk on
			if (lo < last->lo) last->lo = lo;
			if (hi > last->hi) last->hi = hi;
			return;
		}
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 256;
		rs->r = realloc(rs->r, rs->cap * sizeof(range));
		if (!rs->r) abort();
	}
	rs->r[rs->n++] = (range){lo, hi};
}

static int by_lo(const void *a, const void *b) {
	const range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

// merge sorts rs and joins its touching and overlapping ranges.
static void merge(ranges *rs) {
	if (rs->n == 0) return;
	qsort(rs->r, rs->n, sizeof(range), by_lo);
	size_t k = 0;
	for (size_t i = 1; i < rs->n; i++) {
		if (rs->r[i].lo <= rs->r[k].hi) {
			if (rs->r[i].hi > rs->r[k].hi) rs->r[k].hi = rs->r[i].hi;
		} else {
			rs->r[++k] = rs->r[i];
		}
	}
	rs->n = k + 1;
}

// ---- race detection --------------------------------------------------------

// The four ways of touching a word; each is also the index of its field
// in a shadow entry.
enum { PLAIN_WRITE, ATOMIC_WRITE, PLAIN_READ, ATOMIC_READ };

// conflicts[k]: the ways of another thread (or block) that race with an
// access of kind k: a plain write with everything; an atomic
// read-modify-write with plain accesses; a plain read with writes; an
// atomic load with plain writes. Atomics among themselves do not race.
static const int conflicts[4] = {
	[PLAIN_WRITE] = 1 << PLAIN_WRITE | 1 << ATOMIC_WRITE | 1 << PLAIN_READ | 1 << ATOMIC_READ,
	[ATOMIC_WRITE] = 1 << PLAIN_WRITE | 1 << PLAIN_READ,
	[PLAIN_READ] = 1 << PLAIN_WRITE | 1 << ATOMIC_WRITE,
	[ATOMIC_READ] = 1 << PLAIN_WRITE,
};
static const char *const verb[4] = {"writes", "atomically writes", "reads", "atomically reads"};
static const char *const past[4] = {"wrote", "atomically wrote", "read", "atomically read"};

// A field of a shadow entry: NONE, or the first thread (block) that
// touched the word that way, with MANY (MANY_BLOCKS) set once another did
// too.
enum { NONE = -1, MANY = 1 << 14, MANY_BLOCKS = 1 << 30 };

// shadow is what the launch did to one 4-byte word: its threads' accesses
// in the block's current barrier interval (epoch), and, for global memory,
// its blocks' accesses over the whole launch.
// 32 bytes: a thread index (up to 1023, with MANY) fits 16 bits.
typedef struct {
	uint32_t gen;   // the launch it belongs to: a stale entry is free
	uint32_t epoch; // the barrier interval of thread[]
	int16_t thread[4];
	int32_t block[4];
} shadow;

// The shadow entries live in pages of 1024, one per 4 KiB page of memory
// the launch touched, found by a hash table of pages: the entries of
// neighbouring words are neighbours, as a grid-stride loop walks them. A
// launch bumps gen, which makes every page and entry stale (free) at
// once; the pages' memory is kept for the next launches.
enum { PAGE_SHIFT = 12, PAGE_WORDS = 1 << (PAGE_SHIFT - 2) };

typedef struct {
	uintptr_t page; // address >> PAGE_SHIFT
	uint32_t gen;   // the launch it belongs to: a stale slot is free
	shadow *words;  // PAGE_WORDS entries, or NULL before first use
} page_slot;

static page_slot *pages;
static size_t pages_cap, pages_used;
static uint32_t gen = 1;
// A direct-mapped cache of the pages last looked up, and their entries: a
// kernel walks a few arrays at once.
enum { CACHED_PAGES = 64 };
static struct {
	uintptr_t page;
	shadow *words;
} cached[CACHED_PAGES];

static void forget_pages(void) {
	for (int i = 0; i < CACHED_PAGES; i++) cached[i].page = ~(uintptr_t)0;
}

static uint32_t epoch; // counts barriers and blocks: two threads' accesses are unordered only in one epoch
static int detecting;
static int cur_block;
static char *report;
static size_t report_len;
static int raced;

static size_t page_hash(uintptr_t page) { return (size_t)(page * 0x9e3779b97f4a7c15ull >> 32); }

// claim finds page's slot, claiming a free one (with its entries' memory,
// whose stale entries need no clearing) when it has none.
static page_slot *claim(uintptr_t page) {
	for (size_t i = page_hash(page) & (pages_cap - 1);; i = (i + 1) & (pages_cap - 1)) {
		page_slot *p = &pages[i];
		if (p->gen != gen) {
			if (!p->words) {
				p->words = calloc(PAGE_WORDS, sizeof(shadow)); // gen 0: stale
				if (!p->words) abort();
			}
			p->page = page;
			p->gen = gen;
			pages_used++;
			// The launch touches the page's entries in no order a
			// prefetcher follows (CUDA threads switch at random, blocks
			// run shuffled): fetch them all at once, rather than one
			// cache miss after another.
			for (int w = 0; w < PAGE_WORDS; w += 64 / sizeof(shadow)) __builtin_prefetch(&p->words[w], 1, 3);
			return p;
		}
		if (p->page == page) return p;
	}
}

// grow doubles the table of pages; the current pages move, with their
// entries, into free slots, whose memory the stale ones keep.
static void grow(void) {
	page_slot *old = pages;
	size_t n = pages_cap;
	pages_cap = n ? 2 * n : 1024;
	pages = calloc(pages_cap, sizeof(page_slot));
	if (!pages) abort();
	pages_used = 0;
	for (size_t i = 0; i < n; i++) { // the current ones first: their slots must hold their entries
		if (old[i].gen != gen) continue;
		size_t j = page_hash(old[i].page) & (pages_cap - 1);
		while (pages[j].gen == gen) j = (j + 1) & (pages_cap - 1);
		pages[j] = old[i];
		pages_used++;
	}
	size_t j = 0;
	for (size_t i = 0; i < n; i++) { // then the stale ones' memory, into free slots
		if (old[i].gen == gen || !old[i].words) continue;
		while (pages[j].gen == gen || pages[j].words) j++;
		pages[j].words = old[i].words;
		pages[j].gen = 0;
	}
	free(old);
	forget_pages();
}

static shadow *lookup(uintptr_t word) {
	uintptr_t page = word >> PAGE_SHIFT;
	int c = (int)(page & (CACHED_PAGES - 1));
	if (cached[c].page != page) {
		if (2 * (pages_used + 1) > pages_cap) grow();
		cached[c].words = claim(page)->words;
		cached[c].page = page;
	}
	shadow *e = &cached[c].words[(word >> 2) & (PAGE_WORDS - 1)];
	if (e->gen != gen) {
		e->gen = gen;
		e->epoch = epoch;
		for (int k = 0; k < 4; k++) e->thread[k] = e->block[k] = NONE;
	}
	return e;
}

static const char *who(int32_t v, int self, int32_t many, const char *one, char *buf, size_t n) {
	int id = v & ~many;
	if (id == self) {
		snprintf(buf, n, "another %s", one);
	} else {
		snprintf(buf, n, "%s %d%s", one, id, (v & many) ? " (and others)" : "");
	}
	return buf;
}

static void where(uintptr_t word, int shared, char *buf, size_t n) {
	if (shared) {
		snprintf(buf, n, "shared memory at byte %zu", (size_t)(word - shared_lo));
	} else {
		snprintf(buf, n, "global memory at %#zx", (size_t)word);
	}
}

// touch checks and records an access of kind k to word by the running
// thread; it reports the launch's first race.
static void touch(uintptr_t word, int k, int shared) {
	shadow *e = lookup(word);
	if (e->epoch != epoch) {
		for (int f = 0; f < 4; f++) e->thread[f] = NONE;
		e->epoch = epoch;
	}
	int t = cur;
	for (int f = 0; f < 4 && !raced; f++) {
		int32_t v = e->thread[f];
		if (!(conflicts[k] >> f & 1) || v == NONE || (!(v & MANY) && v == t)) continue;
		char other[64], place[64];
		where(word, shared, place, sizeof place);
		snprintf(report, report_len,
		         "kernel %s: a race on %s: thread %d of block %d %s it, and %s %s it since the last "
		         "__syncthreads",
		         the_kernel, place, t, cur_block, verb[k], who(v, t, MANY, "thread", other, sizeof other), past[f]);
		raced = 1;
	}
	int16_t *th = &e->thread[k];
	if (*th == NONE) {
		*th = (int16_t)t;
	} else if ((*th & ~MANY) != t) {
		*th |= MANY;
	}
	if (shared) return; // each block has its own shared memory
	int b = cur_block;
	int32_t *mine;
	for (int f = 0; f < 4 && !raced; f++) {
		int32_t v = e->block[f];
		if (!(conflicts[k] >> f & 1) || v == NONE || (!(v & MANY_BLOCKS) && v == b)) continue;
		char other[64], place[64];
		where(word, 0, place, sizeof place);
		snprintf(report, report_len,
		         "kernel %s: a race on %s: block %d (thread %d) %s it, and %s %s it: the blocks of a launch "
		         "are not ordered",
		         the_kernel, place, b, t, verb[k], who(v, b, MANY_BLOCKS, "block", other, sizeof other), past[f]);
		raced = 1;
	}
	mine = &e->block[k];
	if (*mine == NONE) {
		*mine = b;
	} else if ((*mine & ~MANY_BLOCKS) != b) {
		*mine |= MANY_BLOCKS;
	}
}

// ---- the hooks --------------------------------------------------------------

// hook_access is every hook's: n bytes at p, touched the k way.
static void hook_access(const volatile void *p, size_t n, int k) {
	uintptr_t a = (uintptr_t)p;
	if (n == 0 || skipped(a)) return;
	if (yield_shift && --countdown == 0) { // let another thread go first
		countdown = 1 + next() % (2ull << yield_shift);
		to_scheduler();
	}
	int shared = a - shared_lo < shared_len;
	if (tracing && !shared) {
		if (k != PLAIN_WRITE) add_range(&traced[0], a, a + n); // an atomic write reads too
		if (k == PLAIN_WRITE || k == ATOMIC_WRITE) add_range(&traced[1], a, a + n);
	}
	if (detecting) {
		for (uintptr_t w = a & ~(uintptr_t)3; w < a + n; w += 4) touch(w, k, shared);
	}
}

#define HOOK(k, p, n)                                                                                                  \
	do {                                                                                                           \
		if (__builtin_expect(active, 1)) hook_access(p, n, k);                                                      \
	} while (0)

void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **p, void *v) { (void)p, (void)v; }
void __tsan_vptr_read(void **p) { (void)p; }
void __tsan_read_range(const void *p, size_t n) { HOOK(PLAIN_READ, p, n); }
void __tsan_write_range(void *p, size_t n) { HOOK(PLAIN_WRITE, p, n); }

#define SIZED_HOOKS(n)                                                                                                 \
	void __tsan_read##n(const void *p) { HOOK(PLAIN_READ, p, n); }                                                \
	void __tsan_write##n(void *p) { HOOK(PLAIN_WRITE, p, n); }                                                    \
	void __tsan_unaligned_read##n(const void *p) { HOOK(PLAIN_READ, p, n); }                                      \
	void __tsan_unaligned_write##n(void *p) { HOOK(PLAIN_WRITE, p, n); }                                          \
	void __tsan_volatile_read##n(const void *p) { HOOK(PLAIN_READ, p, n); }                                       \
	void __tsan_volatile_write##n(void *p) { HOOK(PLAIN_WRITE, p, n); }                                           \
	void __tsan_unaligned_volatile_read##n(const void *p) { HOOK(PLAIN_READ, p, n); }                             \
	void __tsan_unaligned_volatile_write##n(void *p) { HOOK(PLAIN_WRITE, p, n); }
SIZED_HOOKS(1)
SIZED_HOOKS(2)
SIZED_HOOKS(4)
SIZED_HOOKS(8)
SIZED_HOOKS(16)

// The atomics, done for real (sequentially consistent, whatever order the
// instrumented code asked for: the CUDA threads share one OS thread, and
// the kernels use atomics only to combine values). Loads are atomic
// reads; everything else is an atomic write.
#define ATOMICS(n, T)                                                                                                  \
	T __tsan_atomic##n##_load(const volatile T *a, int mo) {                                                      \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_READ, a, sizeof(T));                                                                      \
		return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                          \
	}                                                                                                             \
	void __tsan_atomic##n##_store(volatile T *a, T v, int mo) {                                                   \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		__atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                             \
	}                                                                                                             \
	T __tsan_atomic##n##_exchange(volatile T *a, T v, int mo) {                                                   \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                   \
	}                                                                                                             \
	T __tsan_atomic##n##_fetch_add(volatile T *a, T v, int mo) {                                                  \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                             \
	T __tsan_atomic##n##_fetch_sub(volatile T *a, T v, int mo) {                                                  \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                             \
	T __tsan_atomic##n##_fetch_and(volatile T *a, T v, int mo) {                                                  \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                             \
	T __tsan_atomic##n##_fetch_or(volatile T *a, T v, int mo) {                                                   \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                     \
	}                                                                                                             \
	T __tsan_atomic##n##_fetch_xor(volatile T *a, T v, int mo) {                                                  \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                             \
	T __tsan_atomic##n##_fetch_nand(volatile T *a, T v, int mo) {                                                 \
		(void)mo;                                                                                             \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                   \
	}                                                                                                             \
	int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo) {                   \
		(void)mo, (void)fmo;                                                                                  \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
	}                                                                                                             \
	int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo) {                     \
		(void)mo, (void)fmo;                                                                                  \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		return __atomic_compare_exchange_n(a, c, v, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                   \
	}                                                                                                             \
	T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo) {                         \
		(void)mo, (void)fmo;                                                                                  \
		HOOK(ATOMIC_WRITE, a, sizeof(T));                                                                     \
		__atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                         \
		return c;                                                                                             \
	}
ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)

void __tsan_atomic_thread_fence(int mo) {
	(void)mo;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int mo) { (void)mo; }

// ---- a launch -----------------------------------------------------------------

static pthread_mutex_t launch_mu = PTHREAD_MUTEX_INITIALIZER;

static void run_block(int block) {
	for (int t = 0; t < block; t++) start(t);
	epoch++;
	int live = block;
	if (!yield_shift) {
		// In thread order, each to its next barrier, as emu.cc runs them.
		while (live > 0) {
			for (int t = 0; t < block; t++) {
				if (state[t] != RUNNABLE) continue;
				resume(t);
				if (state[t] == DONE) live--;
			}
			epoch++;
			for (int t = 0; t < block; t++)
				if (state[t] == WAITING) state[t] = RUNNABLE;
		}
		return;
	}
	int n = block;
	for (int t = 0; t < block; t++) runq[t] = t;
	while (live > 0) {
		if (n == 0) { // every live thread waits at the barrier: it opens
			epoch++;
			for (int t = 0; t < block; t++) {
				if (state[t] == WAITING) {
					state[t] = RUNNABLE;
					runq[n++] = t;
				}
			}
		}
		int i = (int)(next() % (uint64_t)n), t = runq[i];
		resume(t);
		if (state[t] != RUNNABLE) {
			runq[i] = runq[--n];
			if (state[t] == DONE) live--;
		}
	}
}

static uint64_t hash_name(const char *s) {
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

// The ranges of the last traced launch, until the next one.
typedef struct {
	const range *reads, *writes;
	size_t nreads, nwrites;
} emu_race_trace;

// emu_race_run runs fn(arg) as each CUDA thread of grid blocks of block
// threads. shared is the block's shared memory, n bytes. seed 0 runs the
// blocks in order and the threads of a block each to its next barrier in
// thread order; another seed runs the blocks in a random order and
// switches threads at random accesses (the seed, the kernel's name and
// the launch's shape choose the schedule). detect reports the launch's
// first race in rep (n bytes) and returns -4; trace records the global
// memory read and written, for emu_race_traced. The caller holds
// emu_race_lock.
int emu_race_run(const char *name, int grid, int block, void (*fn)(void *), void *arg, void *shared, size_t n,
                 uint64_t seed, int detect, int trace, char *rep, size_t rep_len) {
	if (block > stacks_for) {
		free(stacks);
		free(ctx);
		free(state);
		free(runq);
		stacks = malloc((size_t)block * stack_bytes);
		ctx = malloc((size_t)block * sizeof(context));
		state = malloc((size_t)block);
		runq = malloc((size_t)block * sizeof(int));
		if (!stacks || !ctx || !state || !runq) abort();
		stacks_for = block;
	}
	the_kernel = name;
	the_body = fn;
	the_ctx = arg;
	shared_lo = (uintptr_t)shared;
	shared_len = n;
	rng = seed ^ hash_name(name) ^ ((uint64_t)grid << 32 | (uint32_t)block);
	yield_shift = seed ? 2 + 2 * (int)(next() % 4) : 0; // a switch every 4, 16, 64 or 256 accesses
	countdown = 1 + next() % (2ull << yield_shift);
	detecting = detect;
	tracing = trace;
	traced[0].n = traced[1].n = 0;
	report = rep;
	report_len = rep_len;
	raced = 0;
	if (++gen == 0) { // 2^32 launches: clear the stale pages and entries once
		for (size_t i = 0; i < pages_cap; i++) {
			pages[i].gen = 0;
			if (pages[i].words) memset(pages[i].words, 0, PAGE_WORDS * sizeof(shadow));
		}
		gen = 1;
	}
	pages_used = 0;
	forget_pages();
	emu_race_dims.gridDim = (dim3c){(unsigned)grid, 1, 1};
	emu_race_dims.blockDim = (dim3c){(unsigned)block, 1, 1};
	int *order = malloc((size_t)grid * sizeof(int));
	if (!order) abort();
	for (int b = 0; b < grid; b++) order[b] = b;
	if (seed) {
		for (int b = grid - 1; b > 0; b--) {
			int j = (int)(next() % (uint64_t)(b + 1)), x = order[b];
			order[b] = order[j];
			order[j] = x;
		}
	}
	for (int b = 0; b < grid; b++) {
		cur_block = order[b];
		emu_race_dims.block = (dim3c){(unsigned)order[b], 1, 1};
		run_block(block);
	}
	free(order);
	emu_race_dims.thread.x = 0;
	if (trace) {
		merge(&traced[0]);
		merge(&traced[1]);
	}
	return raced ? -4 : 0;
}

// emu_race_traced gives the last launch's sorted, merged ranges.
emu_race_trace emu_race_traced(void) {
	return (emu_race_trace){traced[0].r, traced[1].r, traced[0].n, traced[1].n};
}

void emu_race_lock(void) { pthread_mutex_lock(&launch_mu); }
void emu_race_unlock(void) { pthread_mutex_unlock(&launch_mu); }
