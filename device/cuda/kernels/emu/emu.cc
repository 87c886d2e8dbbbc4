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
// threads concurrently. The block's OS threads are started once and run
// every block in turn, meeting at the block barrier between blocks.
static void run(int grid, int block, const std::function<void()> &kernel) {
	gridDim.x = grid;
	blockDim.x = block;
	blockIdx.x = 0;
	std::barrier<> bar(block);
	emu_block_barrier = &bar;
	std::vector<std::thread> threads;
	threads.reserve(block);
	for (int t = 0; t < block; t++) {
		threads.emplace_back([t, grid, &kernel, &bar] {
			threadIdx.x = t;
			for (int b = 0; b < grid; b++) {
				kernel();
				bar.arrive_and_wait(); // every thread is done with block b
				if (t == 0) blockIdx.x = b + 1;
				bar.arrive_and_wait(); // and sees the next block's index
			}
		});
	}
	for (auto &th : threads) th.join();
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
void emu_zero_one_labels(int b, const float *y, int n, int *flag) {
	run(1, b, [=] { gk_zero_one_labels(y, n, flag); });
}
void emu_loss(int b, const float *p, const float *y, const float *w, const int *zero_one, int rows, int cols, int kind,
		double ls, double delta, float *out, int *bad) {
	run(1, b, [=] { gk_loss(p, y, w, zero_one, rows, cols, kind, ls, delta, out, bad); });
}
void emu_loss_grad(int g, int b, const float *p, const float *y, const float *w, const int *zero_one, const float *seed,
		int rows, int cols, int kind, double ls, double delta, float *dp, int *bad) {
	run(g, b, [=] { gk_loss_grad(p, y, w, zero_one, seed, rows, cols, kind, ls, delta, dp, bad); });
}
// emu_update runs the kernel of optim.Rule rule (numbered as optim
// numbers them) with the arguments of a launch.Update: the slot pointers
// sl[0..2] as its Slots place them, the scalars p in its order.
void emu_update(int g, int b, int rule, float *w, float *s0, float *s1, float *s2, const float *gr, int n, int nesterov,
		const float *p, const float *gscale, float cv, int decays, float decay) {
	switch (rule) {
	case 1: // RuleSGD
		run(g, b, [=] { gk_sgd(w, gr, n, p[0], gscale, cv, decays, decay); });
		break;
	case 2: // RuleMomentum
	case 3: // RuleNesterov
		run(g, b, [=] { gk_momentum(w, s0, gr, n, nesterov, p[0], p[1], gscale, cv, decays, decay); });
		break;
	case 4: // RuleAdam
		run(g, b, [=] { gk_adam(w, s0, s1, s2, gr, n, p[0], p[1], p[2], p[3], p[4], p[5], gscale, cv, decays, decay); });
		break;
	case 5: // RuleRMSprop
		run(g, b, [=] { gk_rmsprop(w, s0, s1, s2, gr, n, p[0], p[1], p[2], p[3], p[4], gscale, cv, decays, decay); });
		break;
	case 6: // RuleAdagrad
		run(g, b, [=] { gk_adagrad(w, s0, gr, n, p[0], p[1], gscale, cv, decays, decay); });
		break;
	case 7: // RuleAdadelta
		run(g, b, [=] { gk_adadelta(w, s0, s1, gr, n, p[0], p[1], p[2], p[3], gscale, cv, decays, decay); });
		break;
	case 8: // RuleAdamax
		run(g, b, [=] { gk_adamax(w, s0, s1, gr, n, p[0], p[1], p[2], p[3], p[4], gscale, cv, decays, decay); });
		break;
	case 9: // RuleNadam
		run(g, b, [=] { gk_nadam(w, s0, s1, gr, n, p[0], p[1], p[2], p[3], p[4], p[5], p[6], gscale, cv, decays, decay); });
		break;
	}
}
void emu_abs_sq_sums(int g, int b, const float *x, int n, double *part) {
	run(g, b, [=] { gk_abs_sq_sums(x, n, part); });
}
void emu_clip_scale(int b, const double *part, int parts, double clipnorm, float *scale) {
	run(1, b, [=] { gk_clip_scale(part, parts, clipnorm, scale); });
}
void emu_global_scale(int b, const double *part, int parts, double clipnorm, float *scale) {
	run(1, b, [=] { gk_global_scale(part, parts, clipnorm, scale); });
}
void emu_penalty(int b, const double *part, int parts, double l1, double l2, double scale, float *out) {
	run(1, b, [=] { gk_penalty(part, parts, l1, l2, scale, out); });
}
void emu_penalty_grad(int g, int b, const float *x, const float *seed, float *out, int n, double l1, double l2x2,
		double scale) {
	run(g, b, [=] { gk_penalty_grad(x, seed, out, n, l1, l2x2, scale); });
}
void emu_metric_sum(int b, const float *p, const float *y, float *out, int rows, int cols, int ycols, int kind,
		float threshold, int k) {
	run(1, b, [=] { gk_metric_sum(p, y, out, rows, cols, ycols, kind, threshold, k); });
}
void emu_metric_pr(int b, const float *p, const float *y, float *out, int rows, int cols, float threshold, int topk, int lo,
		int hi) {
	run(1, b, [=] { gk_metric_pr(p, y, out, rows, cols, threshold, topk, lo, hi); });
}
void emu_metric_auc(int g, int b, const float *p, const float *y, float *out, int rows, int cols, int n, int multi,
		int logits) {
	run(g, b, [=] { gk_metric_auc(p, y, out, rows, cols, n, multi, logits); });
}
void emu_metric_f1(int g, int b, const float *p, const float *y, float *out, int rows, int cols, float threshold) {
	run(g, b, [=] { gk_metric_f1(p, y, out, rows, cols, threshold); });
}
void emu_add(int g, int b, const float *a, const float *bb, float *out, int n) {
	run(g, b, [=] { gk_add(a, bb, out, n); });
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

void emu_norm_col_sums(int g, int b, int kind, const float *x, const float *mean, const float *var, const float *dy,
		const double *rowStats, int rows, int cols, double eps, int tw, int rps, double *part) {
	run(g, b, [=] { gk_norm_col_sums(kind, x, mean, var, dy, rowStats, rows, cols, eps, tw, rps, part); });
}
void emu_norm_col_finish(int g, int b, int kind, double *part, int splits, int rows, int cols, float *out) {
	run(g, b, [=] { gk_norm_col_finish(kind, part, splits, rows, cols, out); });
}
void emu_batch_norm(int g, int b, const float *x, const float *mean, const float *var, const float *gamma, const float *beta,
		int rows, int cols, double eps, int tw, int rps, float *y) {
	run(g, b, [=] { gk_batch_norm(x, mean, var, gamma, beta, rows, cols, eps, tw, rps, y); });
}
void emu_batch_norm_grad(int g, int b, const float *x, const float *mean, const float *var, const float *gamma, const float *dy,
		const double *sums, int rows, int cols, double eps, int tw, int rps, float *dx) {
	run(g, b, [=] { gk_batch_norm_grad(x, mean, var, gamma, dy, sums, rows, cols, eps, tw, rps, dx); });
}
void emu_layer_norm(int g, int b, int kind, const float *x, const float *gamma, const float *bb, int rows, int cols, double eps,
		float *out, double *rowStats) {
	run(g, b, [=] { gk_layer_norm(kind, x, gamma, bb, rows, cols, eps, out, rowStats); });
}
void emu_gather(int g, int b, const float *table, const float *idx, float *out, int m, int n, int rows,
		unsigned long long *bad) {
	run(g, b, [=] { gk_gather(table, idx, out, m, n, rows, bad); });
}
void emu_scatter_add(int g, int b, const float *idx, const float *dy, float *out, int m, int n, int rows,
		unsigned long long *bad) {
	run(g, b, [=] { gk_scatter_add(idx, dy, out, m, n, rows, bad); });
}
}
