// test_kernels.h — kernels for package emu's tests of race mode, in the
// race copy only (kernels.cc includes this file inside namespace
// emu_race, after kernels.cu): LaunchKernel knows them in race mode and
// under no name of kernels.cu's. Written as kernels.cu's are.

// emu_test_racy_zero_one is gk_zero_one_labels without the barrier after
// thread 0's *flag = 1: another thread's atomicMin(flag, 0) may come
// first, and thread 0 then overwrites it. A real race on a GPU, which the
// fixed schedule hides (thread 0 always runs first).
extern "C" __global__ void emu_test_racy_zero_one(const float *y, int n, int *flag) {
	if (threadIdx.x == 0) *flag = 1;
	for (int i = threadIdx.x; i < n; i += blockDim.x) {
		float v = y[i];
		if (v != 0.0f && v != 1.0f) {
			atomicMin(flag, 0);
			break;
		}
	}
}

// emu_test_touch does what `how` says to *p: 0 reads it (into sink, at the
// thread's own global index), 1 writes it, 2 atomically writes it (atomicMin with
// a smaller value), 3 atomically reads it (atomicMin with a larger one,
// which only loads).
__device__ void emu_test_touch(int how, int *p, int *sink) {
	switch (how) {
	case 0:
		sink[blockIdx.x * blockDim.x + threadIdx.x] = *p;
		break;
	case 1:
		*p = threadIdx.x;
		break;
	case 2:
		atomicMin(p, -1 - (int)threadIdx.x);
		break;
	case 3:
		atomicMin(p, 1 << 30);
		break;
	}
}

// emu_test_pair: thread a touches a word the `first` way, then thread b
// the `second` way (emu_test_touch), with a __syncthreads between them
// when sync. The word is p[0] in global memory, or with shared the first
// word of the block's shared memory. With blocks, a and b are blocks (of
// one thread each, thread 0 of block a, then of block b) instead.
extern "C" __global__ void emu_test_pair(int *p, int *sink, int a, int b, int first, int second, int sync, int shared,
		int blocks) {
	extern __shared__ float s[];
	int *w = shared ? (int *)s : p;
	int me = blocks ? (int)blockIdx.x : (int)threadIdx.x;
	if (shared && threadIdx.x == 0) *w = 1000; // before the barrier below, as a kernel initializes its shared memory
	__syncthreads();
	if (me == a) emu_test_touch(first, w, sink);
	if (sync) __syncthreads();
	if (me == b) emu_test_touch(second, w, sink);
}

// emu_test_order records the order the CUDA threads (and blocks) run in:
// each thread takes a ticket (the atomic counter count[0]) and writes its
// global index at it into order, and counts itself in its block's
// arrivals; after a barrier it writes the arrivals it sees into seen (the
// block's size, if the barrier waited for every thread), and thread 0
// writes its block's index at the block ticket (count[1]) into blocks.
extern "C" __global__ void emu_test_order(int *count, int *arrivals, int *order, int *seen, int *blocks) {
	int me = blockIdx.x * blockDim.x + threadIdx.x;
	order[std::atomic_ref<int>(count[0]).fetch_add(1)] = me;
	std::atomic_ref<int>(arrivals[blockIdx.x]).fetch_add(1);
	__syncthreads();
	seen[me] = std::atomic_ref<int>(arrivals[blockIdx.x]).load();
	if (threadIdx.x == 0) blocks[std::atomic_ref<int>(count[1]).fetch_add(1)] = blockIdx.x;
}

// emu_test_fma: out[0] = v[0]*v[1] + v[2] as kernels.cu would write it,
// which nvcc (and cuda_emu.h's host build) contracts into a fused
// multiply-add, and out[1] the same with the _rn intrinsics, which are
// never fused.
extern "C" __global__ void emu_test_fma(const float *v, float *out) {
	out[0] = v[0] * v[1] + v[2];
	out[1] = __fadd_rn(__fmul_rn(v[0], v[1]), v[2]);
}
