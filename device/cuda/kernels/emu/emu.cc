// emu.cc — kernels.cu compiled for the host with cuda_emu.h, and a launcher.
#include "cuda_emu.h"

#include <functional>
#include <thread>
#include <vector>

thread_local dim3 threadIdx;
dim3 blockIdx, blockDim, gridDim;
std::barrier<> *emu_block_barrier;
float s[1 << 14];
double sd[1 << 13];

// kernels_cu.h links to ../kernels.cu: as a header of this package, go
// hashes it, so that an edit to the kernels rebuilds the emulator.
#include "kernels_cu.h"

// run executes kernel(grid, block): the blocks in order, each block's
// threads concurrently.
static void run(int grid, int block, const std::function<void()> &kernel) {
	gridDim.x = grid;
	blockDim.x = block;
	for (int b = 0; b < grid; b++) {
		blockIdx.x = b;
		std::barrier<> bar(block);
		emu_block_barrier = &bar;
		std::vector<std::thread> threads;
		threads.reserve(block);
		for (int t = 0; t < block; t++) {
			threads.emplace_back([t, &kernel] {
				threadIdx.x = t;
				kernel();
			});
		}
		for (auto &th : threads) th.join();
	}
}

extern "C" {
void emu_bias_act(int g, int b, const float *x, const float *bias, float *z, float *y, int rows, int cols, int act) {
	run(g, b, [=] { gk_bias_act(x, bias, z, y, rows, cols, act); });
}
void emu_softmax_rows(int g, int b, const float *x, float *y, int rows, int cols) {
	run(g, b, [=] { gk_softmax_rows(x, y, rows, cols); });
}
void emu_act_grad(int g, int b, const float *x, const float *y, const float *dy, float *dx, int n, int act) {
	run(g, b, [=] { gk_act_grad(x, y, dy, dx, n, act); });
}
void emu_softmax_grad_rows(int g, int b, const float *y, const float *dy, float *dx, int rows, int cols) {
	run(g, b, [=] { gk_softmax_grad_rows(y, dy, dx, rows, cols); });
}
void emu_sum_rows(int g, int b, const float *a, float *out, int rows, int cols) {
	run(g, b, [=] { gk_sum_rows(a, out, rows, cols); });
}
void emu_loss(int b, const float *p, const float *y, int rows, int cols, int kind, float *out, int *bad) {
	run(1, b, [=] { gk_loss(p, y, rows, cols, kind, out, bad); });
}
void emu_loss_grad(int g, int b, const float *p, const float *y, const float *seed, int rows, int cols, int kind, float *dp,
		int *bad) {
	run(g, b, [=] { gk_loss_grad(p, y, seed, rows, cols, kind, dp, bad); });
}
void emu_sgd(int g, int b, float *w, const float *gr, int n, float lr) { run(g, b, [=] { gk_sgd(w, gr, n, lr); }); }
void emu_momentum(int g, int b, float *w, float *v, const float *gr, int n, float lr, float mom, int nesterov) {
	run(g, b, [=] { gk_momentum(w, v, gr, n, lr, mom, nesterov); });
}
void emu_adam(int g, int b, float *w, float *m, float *v, const float *gr, int n, float lrT, float b1, float b2, float eps) {
	run(g, b, [=] { gk_adam(w, m, v, gr, n, lrT, b1, b2, eps); });
}
void emu_u8_to_f32(int g, int b, const unsigned char *in, float *out, int n, float scale) {
	run(g, b, [=] { gk_u8_to_f32(in, out, n, scale); });
}

// The image kernels take the window as an array of the fourteen ints of
// ops.Window, in field order.
#define WIN(v) v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]

void emu_patches(int g, int b, const float *x, float *cols, const int *win) {
	run(g, b, [=] { gk_patches(x, cols, WIN(win)); });
}
void emu_patches_grad(int g, int b, const float *dcols, float *dx, const int *win) {
	run(g, b, [=] { gk_patches_grad(dcols, dx, WIN(win)); });
}
void emu_pool(int g, int b, const float *x, float *y, int kind, const int *win) {
	run(g, b, [=] { gk_pool(x, y, kind, WIN(win)); });
}
void emu_pool_grad(int g, int b, const float *x, const float *y, const float *dy, float *dx, int kind, const int *win) {
	run(g, b, [=] { gk_pool_grad(x, y, dy, dx, kind, WIN(win)); });
}
void emu_dropout(int g, int b, const float *x, float *y, int n, const float *step, unsigned int keyLo, unsigned int keyHi,
		unsigned int threshold, float scale) {
	run(g, b, [=] { gk_dropout(x, y, n, step, keyLo, keyHi, threshold, scale); });
}
}
