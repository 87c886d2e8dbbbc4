// Kernels of the gokeras CUDA machine (package device/cuda).
//
// Each kernel computes what an op of package ops computes on the CPU (see
// the comment above it), in float32 with the same formulas, so that a model
// trains to the same losses on either device. Matrix products go to cuBLAS,
// but for a Dot layer's per-sample products (gk_batch_matmul, summed in
// double as the CPU sums them); everything else is here.
//
// Compiled by gen.sh (go generate ./device/cuda) to PTX for compute_75,
// which the driver JIT-compiles for the GPU at hand (sm_75 and later), and
// to a fatbin with machine code for sm_80 and sm_90 beside that PTX; both
// are committed and embedded in the Go binary. Parameters are pointers,
// ints, floats and doubles only: the Go side passes each in an 8-byte slot.
//
// Launch shapes: elementwise kernels use a grid-stride loop over n items;
// row kernels (softmax, its gradient) one block per row with a power-of-two
// block size; the loss kernel one block for the whole batch, its gradient
// a thread per value, a block per row or a thread per row by the loss's
// kind (gk_grad_mode), both after a one-block pass over the batch's labels
// for the hinge losses (gk_zero_one_labels). The image kernels (patches,
// pooling and their gradients) are elementwise over their output, one
// thread per value written: the gradients gather what each input value
// receives rather than scatter with atomics, so they are deterministic and
// add in the order package ops does. The normalization
// kernels work per column (batch normalization: column-tiled blocks over
// splits of the rows, whose per-split sums in double a second kernel adds
// in split order; see package internal/launch) or one block per row
// (layer normalization). The embedding's kernels copy rows (gather) and
// sum them per table row in index order (scatter-add, as a gather: no
// atomics); both report the first index that names no row. The optimizer
// updates are elementwise, one kernel per rule, each with the options
// (clipping, weight decay) applied first; clipping by norm and the
// regularization penalty sum |x| and x² in double per block
// (gk_abs_sq_sums, launch.SumGrid's shape) and one block adds the blocks'
// sums in a fixed order (gk_clip_scale, gk_penalty); clipping by global
// norm sums each gradient's blocks so, one gradient after another, and one
// block adds all their sums (gk_global_scale) into a device float that
// every update of the step then reads.

#include <math.h>

// Activations, numbered as ops.Activation.
#define ACT_LINEAR 0
#define ACT_RELU 1
#define ACT_SIGMOID 2
#define ACT_TANH 3
#define ACT_SOFTMAX 4
#define ACT_GELU 5
#define ACT_GELU_APPROXIMATE 6
#define ACT_SWISH 7
#define ACT_ELU 8
#define ACT_SELU 9
#define ACT_SOFTPLUS 10
#define ACT_SOFTSIGN 11
#define ACT_HARD_SIGMOID 12
#define ACT_EXPONENTIAL 13
#define ACT_LEAKY_RELU 14

// Keras' SELU constants, as ops.SELUAlpha and ops.SELUScale.
#define SELU_ALPHA 1.6732632423543772848170429916717f
#define SELU_SCALE 1.0507009873554804934193349852946f
// √(2/π), the tanh form of GELU's scale (ops' geluApproxC).
#define GELU_APPROX_C 0.7978845608028654f

// Losses, numbered as ops.LossKind.
#define LOSS_SOFTMAX_CE 0
#define LOSS_SPARSE_SOFTMAX_CE 1
#define LOSS_SIGMOID_CE 2
#define LOSS_CATEGORICAL_CE 3
#define LOSS_SPARSE_CATEGORICAL_CE 4
#define LOSS_BINARY_CE 5
#define LOSS_MSE 6
#define LOSS_MAE 7
#define LOSS_MAPE 8
#define LOSS_MSLE 9
#define LOSS_HUBER 10
#define LOSS_LOG_COSH 11
#define LOSS_KLD 12
#define LOSS_POISSON 13
#define LOSS_HINGE 14
#define LOSS_SQUARED_HINGE 15
#define LOSS_CATEGORICAL_HINGE 16
#define LOSS_COSINE 17

#define GRID_STRIDE(i, n) \
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// sigmoid without overflow for any v, as ops' sigmoid.
__device__ __forceinline__ float gk_sigmoid(float v) {
	if (v >= 0.0f) return 1.0f / (1.0f + expf(-v));
	float e = expf(v);
	return e / (1.0f + e);
}

// GELU, exact (Keras' approximate=False): v·Φ(v) = 0.5·v·erfc(-v/√2), as
// ops' gelu; a zero of v's sign where erfc is 0 (v = -∞ included).
__device__ __forceinline__ float gk_gelu(float v) {
	float c = erfcf(-v * 0.70710678118654752f);
	return c == 0.0f ? copysignf(0.0f, v) : 0.5f * v * c;
}

// GELU's derivative Φ(v) + v·φ(v), as ops' geluGrad: Φ(v) where φ(v) is 0.
__device__ __forceinline__ float gk_gelu_grad(float v) {
	float p = 0.5f * erfcf(-v * 0.70710678118654752f);
	float d = expf(-0.5f * v * v) * 0.39894228040143268f;
	return d == 0.0f ? p : p + v * d;
}

// GELU's tanh form (Keras' approximate=True), as ops' geluApprox: a zero
// of v's sign where 1 + tanh is 0.
__device__ __forceinline__ float gk_gelu_approx(float v) {
	float p = 1.0f + tanhf(GELU_APPROX_C * (v + 0.044715f * v * v * v));
	return p == 0.0f ? copysignf(0.0f, v) : 0.5f * v * p;
}

// Its derivative, as ops' geluApproxGrad: 0.5·(1 + t) where 1 - t² is 0.
__device__ __forceinline__ float gk_gelu_approx_grad(float v) {
	float t = tanhf(GELU_APPROX_C * (v + 0.044715f * v * v * v));
	float s = 1.0f - t * t;
	if (s == 0.0f) return 0.5f * (1.0f + t);
	return 0.5f * (1.0f + t) + 0.5f * v * s * GELU_APPROX_C * (1.0f + 3.0f * 0.044715f * v * v);
}

// swish, v·sigmoid(v), as ops' swish: a zero of v's sign where the sigmoid
// is 0.
__device__ __forceinline__ float gk_swish(float v) {
	float s = gk_sigmoid(v);
	return s == 0.0f ? copysignf(0.0f, v) : v * s;
}

// Its derivative s·(1 + v·(1 - s)), as ops' swishGrad: s where s is 0 or 1.
__device__ __forceinline__ float gk_swish_grad(float v) {
	float s = gk_sigmoid(v);
	if (s == 0.0f || s == 1.0f) return s;
	return s * (1.0f + v * (1.0f - s));
}

// gk_hard_sigmoid_arg is 0.2·v + 0.5, hard_sigmoid's line, rounded after
// the product as ops computes it: a fused multiply-add would put -2.5's
// just below 0 and stop its gradient, which clip_by_value passes.
__device__ __forceinline__ float gk_hard_sigmoid_arg(float v) { return __fadd_rn(__fmul_rn(0.2f, v), 0.5f); }

// gk_max_go is Go's math.Max: NaN if either is NaN (CUDA's fmax returns
// the other), +0 over -0.
__device__ __forceinline__ double gk_max_go(double a, double b) {
	if (isnan(a) || isnan(b)) return NAN;
	if (a == 0.0 && b == 0.0) return signbit(a) ? b : a;
	return a > b ? a : b;
}

// gk_softplus is ops' softplus, log(1 + exp(z)) computed stably: the
// softplus activation and the log-cosh loss.
__device__ __forceinline__ double gk_softplus(double z) { return gk_max_go(z, 0.0) + log1p(exp(-fabs(z))); }

// gk_act is ops' activateOne (and the loops before it) for one value;
// alpha is ELU's or LeakyReLU's.
__device__ __forceinline__ float gk_act(int act, float alpha, float v) {
	switch (act) {
	case ACT_RELU: return v > 0.0f ? v : 0.0f;
	case ACT_SIGMOID: return gk_sigmoid(v);
	case ACT_TANH: return tanhf(v);
	case ACT_GELU: return gk_gelu(v);
	case ACT_GELU_APPROXIMATE: return gk_gelu_approx(v);
	case ACT_SWISH: return gk_swish(v);
	case ACT_ELU: return v > 0.0f ? v : alpha * expm1f(v);
	case ACT_SELU: return v >= 0.0f ? SELU_SCALE * v : SELU_SCALE * SELU_ALPHA * expm1f(v);
	case ACT_SOFTPLUS: return (float)gk_softplus((double)v);
	case ACT_SOFTSIGN: return isinf(v) ? copysignf(1.0f, v) : v / (1.0f + fabsf(v));
	case ACT_HARD_SIGMOID: {
		float p = gk_hard_sigmoid_arg(v);
		return p < 0.0f ? 0.0f : (p > 1.0f ? 1.0f : p);
	}
	case ACT_EXPONENTIAL: return expf(v);
	case ACT_LEAKY_RELU: return v > 0.0f ? v : alpha * v;
	default: return v;
	}
}

// gk_act_deriv is ops' activateOneGrad: act'(v), given y = act(v), for
// the activations after softmax.
__device__ __forceinline__ float gk_act_deriv(int act, float alpha, float v, float y) {
	switch (act) {
	case ACT_GELU: return gk_gelu_grad(v);
	case ACT_GELU_APPROXIMATE: return gk_gelu_approx_grad(v);
	case ACT_SWISH: return gk_swish_grad(v);
	case ACT_ELU: return v > 0.0f ? 1.0f : alpha * expf(v);
	case ACT_SELU: return v >= 0.0f ? SELU_SCALE : SELU_SCALE * SELU_ALPHA * expf(v);
	case ACT_SOFTPLUS: return gk_sigmoid(v);
	case ACT_SOFTSIGN: {
		float d = 1.0f + fabsf(v);
		return 1.0f / (d * d);
	}
	case ACT_HARD_SIGMOID: {
		float p = gk_hard_sigmoid_arg(v);
		return (p < 0.0f || p > 1.0f) ? 0.0f : 0.2f;
	}
	case ACT_EXPONENTIAL: return y;
	case ACT_LEAKY_RELU: return v > 0.0f ? 1.0f : alpha;
	default: return 1.0f;
	}
}

// gk_bias_act: v = x + b (b broadcast over the rows; b may be NULL), then
// z = v and y = act(v), each only if not NULL. x and z may be the same.
// Affine's bias (ops.Affine after the cuBLAS product), Activate for the
// elementwise activations, and the two fused.
extern "C" __global__ void gk_bias_act(const float *x, const float *b, float *z, float *y, int rows, int cols, int act, float alpha) {
	GRID_STRIDE(i, rows * cols) {
		float v = x[i];
		if (b) v += b[i % cols];
		if (z) z[i] = v;
		if (y) y[i] = gk_act(act, alpha, v);
	}
}

// Block-wide reductions over blockDim.x threads (a power of two, at most
// 1024) through shared memory s of blockDim.x floats.
__device__ float gk_block_max(float v, float *s) {
	s[threadIdx.x] = v;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + k]);
		__syncthreads();
	}
	float r = s[0];
	__syncthreads();
	return r;
}

__device__ float gk_block_sum(float v, float *s) {
	s[threadIdx.x] = v;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	float r = s[0];
	__syncthreads();
	return r;
}

// gk_softmax_rows: y = softmax of each row of x (rows × cols), shifted by the
// row maximum (ops' softmaxRow). One block per row; shared memory: blockDim.x
// floats.
extern "C" __global__ void gk_softmax_rows(const float *x, float *y, int rows, int cols) {
	extern __shared__ float s[];
	for (int r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *xr = x + (size_t)r * cols;
		float *yr = y + (size_t)r * cols;
		float m = -INFINITY;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
		m = gk_block_max(m, s);
		float sum = 0.0f;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) {
			float e = expf(xr[j] - m);
			yr[j] = e;
			sum += e;
		}
		sum = gk_block_sum(sum, s);
		for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] /= sum;
	}
}

// gk_act_grad: dx = act'(x) · dy for the elementwise activations, given
// x, y = act(x) and dy (ops' activateGrad). ReLU passes no gradient where
// x <= 0, as TensorFlow's ReluGrad.
extern "C" __global__ void gk_act_grad(const float *x, const float *y, const float *dy, float *dx, int n, int act, float alpha) {
	GRID_STRIDE(i, n) {
		float g = dy[i];
		switch (act) {
		case ACT_LINEAR: break;
		case ACT_RELU: g = x[i] > 0.0f ? g : 0.0f; break;
		case ACT_SIGMOID: g = g * y[i] * (1.0f - y[i]); break;
		case ACT_TANH: g = g * (1.0f - y[i] * y[i]); break;
		default: g = g * gk_act_deriv(act, alpha, x[i], y[i]); break;
		}
		dx[i] = g;
	}
}

// gk_softmax_grad_rows: dx = y · (dy - Σ y·dy) row by row. One block per
// row; shared memory: blockDim.x floats.
extern "C" __global__ void gk_softmax_grad_rows(const float *y, const float *dy, float *dx, int rows, int cols) {
	extern __shared__ float s[];
	for (int r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *yr = y + (size_t)r * cols;
		const float *dyr = dy + (size_t)r * cols;
		float *dxr = dx + (size_t)r * cols;
		float dot = 0.0f;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) dot += yr[j] * dyr[j];
		dot = gk_block_sum(dot, s);
		for (int j = threadIdx.x; j < cols; j += blockDim.x) dxr[j] = yr[j] * (dyr[j] - dot);
	}
}

// gk_sum_rows: out[c] = Σ_r a[r, c], the gradient of a bias (ops' SumRows).
// A block takes 32 columns at a time, its threads in lanes of 32, a thread
// a column (consecutive threads read consecutive addresses); each lane
// sums every lanes-th row, and the lanes' sums are added in lane order
// (shared memory: blockDim.x floats). So a few columns over many rows (a
// 10-class bias at batch 1024) spread over the block instead of a thread
// each. A block whose size is not a multiple of 32 sums each column on a
// thread of its own.
extern "C" __global__ void gk_sum_rows(const float *a, float *out, int rows, int cols) {
	if (blockDim.x % 32 != 0) {
		GRID_STRIDE(c, cols) {
			float sum = 0.0f;
			for (int r = 0; r < rows; r++) sum += a[(size_t)r * cols + c];
			out[c] = sum;
		}
		return;
	}
	extern __shared__ float s[];
	int lanes = blockDim.x / 32, lane = threadIdx.x / 32, tx = threadIdx.x % 32;
	for (int c0 = blockIdx.x * 32; c0 < cols; c0 += gridDim.x * 32) {
		int c = c0 + tx;
		float sum = 0.0f;
		if (c < cols)
			for (int r = lane; r < rows; r += lanes) sum += a[(size_t)r * cols + c];
		s[threadIdx.x] = sum;
		__syncthreads();
		if (lane == 0 && c < cols) {
			float total = s[tx];
			for (int l = 1; l < lanes; l++) total += s[l * 32 + tx];
			out[c] = total;
		}
		__syncthreads();
	}
}

// The losses and their gradients are computed in double, as package ops
// computes them on the CPU: rounding 1-ε or 1-p in float32 would move
// clipped probabilities across the clipping bounds. The batch is small
// (rows × classes values), so double's lower throughput does not show.
// Each formula is ops' rowLoss, rowGrad, sparseRowLoss or sparseRowGrad,
// with its operations in ops' order.
//
// The loss kernels take, after the predictions p and the targets y: w, a
// weight per sample (NULL: none; ops.WeightedLoss), which multiplies the
// sample's loss and its gradient's row; zero_one, the flag
// gk_zero_one_labels wrote for the batch (NULL but for the hinge kinds);
// ls, the label smoothing of kinds 0, 2, 3 and 5 (0: none); and delta,
// Huber's δ (launch.ForLoss resolves ops' default).

// Keras' epsilon in double, for the clipping.
#define EPSILON_D 1e-7
// math.Ln2, and tf.math.l2_normalize's floor under a sum of squares.
#define LN2_D 0.693147180559945309417232121458176568
#define NORM_EPSILON_D 1e-12

// gk_clip_to is ops' clip: v clipped to [lo, hi], *inside whether it was
// there already (NaN is, as in ops).
__device__ __forceinline__ double gk_clip_to(double v, double lo, double hi, bool *inside) {
	*inside = true;
	if (v < lo) { *inside = false; return lo; }
	if (v > hi) { *inside = false; return hi; }
	return v;
}

__device__ __forceinline__ double gk_clip(double v, bool *inside) { return gk_clip_to(v, EPSILON_D, 1.0 - EPSILON_D, inside); }

// gk_sign is the derivative TensorFlow gives |x| (ops' sign): -1, 0 or 1.
__device__ __forceinline__ double gk_sign(double x) {
	if (x > 0.0) return 1.0;
	if (x < 0.0) return -1.0;
	return 0.0;
}

__device__ __forceinline__ double gk_sigmoid_d(double v) {
	if (v >= 0.0) return 1.0 / (1.0 + exp(-v));
	double e = exp(v);
	return e / (1.0 + e);
}

// gk_class reads a sparse target: a whole number in [0, cols), else -1.
__device__ __forceinline__ int gk_class(float v, int cols) {
	if (v != truncf(v) || v < 0.0f || v >= (float)cols) return -1;
	return (int)v;
}

// gk_target is a target y as ops' targetRow reads it for kind: smoothed by
// ls (kinds 0 and 3 to y·(1-ls) + ls/cols, kinds 2 and 5 to
// y·(1-ls) + ls/2), or a 0/1 label read as 2y-1 when zero_one (the hinge
// kinds, when every label of the batch is 0 or 1). The _rn intrinsics
// keep nvcc from fusing the smoothing into a multiply-add that ops does
// not do.
__device__ __forceinline__ double gk_target(int kind, float y, int cols, double ls, bool zero_one) {
	double f = y;
	if (ls != 0.0) {
		switch (kind) {
		case LOSS_SOFTMAX_CE:
		case LOSS_CATEGORICAL_CE: return __dadd_rn(__dmul_rn(f, 1.0 - ls), ls / cols);
		case LOSS_SIGMOID_CE:
		case LOSS_BINARY_CE: return __dadd_rn(__dmul_rn(f, 1.0 - ls), 0.5 * ls);
		}
	}
	if (zero_one) return 2.0 * f - 1.0;
	return f;
}

// TGT(j) is target j of the row yr, as gk_row_loss and gk_row_grad read it.
#define TGT(j) gk_target(kind, yr[j], cols, ls, zo)

// gk_row_loss is the loss of sample r (ops' sparseRowLoss or rowLoss), or
// NaN with *bad set for a sparse target that is not a class index.
__device__ double gk_row_loss(int kind, const float *p, const float *y, int r, int cols, double ls, double delta, bool zo,
		bool *bad) {
	const float *pr = p + (size_t)r * cols;
	const float *yr = y + (size_t)r * cols;
	double l = 0.0;
	switch (kind) {
	case LOSS_SOFTMAX_CE:
	case LOSS_SPARSE_SOFTMAX_CE: {
		double m = -INFINITY;
		for (int j = 0; j < cols; j++) m = fmax(m, (double)pr[j]);
		double s = 0.0;
		for (int j = 0; j < cols; j++) s += exp((double)pr[j] - m);
		double lse = m + log(s);
		if (kind == LOSS_SOFTMAX_CE) {
			for (int j = 0; j < cols; j++) l += TGT(j) * (lse - (double)pr[j]);
		} else {
			int id = gk_class(y[r], cols);
			if (id < 0) { *bad = true; return NAN; }
			l = lse - (double)pr[id];
		}
		break;
	}
	case LOSS_SIGMOID_CE:
		for (int j = 0; j < cols; j++) {
			double z = pr[j];
			l += fmax(z, 0.0) - z * TGT(j) + log1p(exp(-fabs(z)));
		}
		l /= cols;
		break;
	case LOSS_CATEGORICAL_CE: {
		double s = 0.0;
		for (int j = 0; j < cols; j++) s += pr[j];
		bool in;
		for (int j = 0; j < cols; j++) l -= TGT(j) * log(gk_clip((double)pr[j] / s, &in));
		break;
	}
	case LOSS_SPARSE_CATEGORICAL_CE: {
		int id = gk_class(y[r], cols);
		if (id < 0) { *bad = true; return NAN; }
		double s = 0.0;
		bool in;
		for (int j = 0; j < cols; j++) s += gk_clip(pr[j], &in);
		l = log(s) - log(gk_clip(pr[id], &in));
		break;
	}
	case LOSS_BINARY_CE: {
		bool in;
		for (int j = 0; j < cols; j++) {
			double c = gk_clip(pr[j], &in);
			double t = TGT(j);
			l -= t * log(c + EPSILON_D) + (1.0 - t) * log(1.0 - c + EPSILON_D);
		}
		l /= cols;
		break;
	}
	case LOSS_MSE:
		for (int j = 0; j < cols; j++) {
			double d = (double)pr[j] - TGT(j);
			l += d * d;
		}
		l /= cols;
		break;
	case LOSS_MAE:
		for (int j = 0; j < cols; j++) l += fabs((double)pr[j] - TGT(j));
		l /= cols;
		break;
	case LOSS_MAPE:
		for (int j = 0; j < cols; j++) {
			double t = TGT(j);
			l += fabs((t - (double)pr[j]) / gk_max_go(fabs(t), EPSILON_D));
		}
		l = 100.0 * l / cols;
		break;
	case LOSS_MSLE:
		for (int j = 0; j < cols; j++) {
			double d = log(gk_max_go(pr[j], EPSILON_D) + 1.0) - log(gk_max_go(TGT(j), EPSILON_D) + 1.0);
			l += d * d;
		}
		l /= cols;
		break;
	case LOSS_HUBER:
		for (int j = 0; j < cols; j++) {
			double e = (double)pr[j] - TGT(j);
			if (fabs(e) <= delta) l += 0.5 * e * e;
			else l += delta * fabs(e) - 0.5 * delta * delta;
		}
		l /= cols;
		break;
	case LOSS_LOG_COSH:
		for (int j = 0; j < cols; j++) {
			double x = (double)pr[j] - TGT(j);
			l += x + gk_softplus(-2.0 * x) - LN2_D;
		}
		l /= cols;
		break;
	case LOSS_KLD:
		for (int j = 0; j < cols; j++) {
			bool in;
			double tc = gk_clip_to(TGT(j), EPSILON_D, 1.0, &in);
			double pc = gk_clip_to(pr[j], EPSILON_D, 1.0, &in);
			l += tc * log(tc / pc);
		}
		break;
	case LOSS_POISSON:
		for (int j = 0; j < cols; j++) l += (double)pr[j] - TGT(j) * log((double)pr[j] + EPSILON_D);
		l /= cols;
		break;
	case LOSS_HINGE:
		for (int j = 0; j < cols; j++) l += gk_max_go(1.0 - TGT(j) * (double)pr[j], 0.0);
		l /= cols;
		break;
	case LOSS_SQUARED_HINGE:
		for (int j = 0; j < cols; j++) {
			double m = gk_max_go(1.0 - TGT(j) * (double)pr[j], 0.0);
			l += m * m;
		}
		l /= cols;
		break;
	case LOSS_CATEGORICAL_HINGE: {
		double pos = 0.0, neg = -INFINITY;
		for (int j = 0; j < cols; j++) {
			double t = TGT(j);
			pos += t * (double)pr[j];
			neg = gk_max_go(neg, (1.0 - t) * (double)pr[j]);
		}
		l = gk_max_go(neg - pos + 1.0, 0.0);
		break;
	}
	case LOSS_COSINE: {
		double dot = 0.0, st = 0.0, sp = 0.0;
		for (int j = 0; j < cols; j++) {
			double t = TGT(j), v = pr[j];
			dot += t * v;
			st += t * t;
			sp += v * v;
		}
		double invT = 1.0 / sqrt(gk_max_go(st, NORM_EPSILON_D)), invP = 1.0 / sqrt(gk_max_go(sp, NORM_EPSILON_D));
		l = -dot * invT * invP;
		break;
	}
	default:
		l = NAN; // launch.ForLoss refuses the kinds no case computes
	}
	return l;
}

// gk_elem_grad is sc·∂loss/∂p of one value v with target t for the
// elementwise kinds (a row's cols values each count 1/cols of its loss,
// but KLD's): what gk_row_grad writes for them, one value at a time.
__device__ float gk_elem_grad(int kind, float v, double t, double sc, int cols, double delta) {
	switch (kind) {
	case LOSS_SIGMOID_CE:
		return (float)(sc * (gk_sigmoid_d(v) - t) / cols);
	case LOSS_BINARY_CE: {
		bool in;
		double c = gk_clip(v, &in);
		double g = 0.0;
		if (in) g = -t / (c + EPSILON_D) + (1.0 - t) / (1.0 - c + EPSILON_D);
		return (float)(sc * g / cols);
	}
	case LOSS_MSE:
		return (float)(sc * 2.0 * ((double)v - t) / cols);
	case LOSS_MAE:
		return (float)(sc * gk_sign((double)v - t) / cols);
	case LOSS_MAPE:
		return (float)(sc * 100.0 * gk_sign((double)v - t) / gk_max_go(fabs(t), EPSILON_D) / cols);
	case LOSS_MSLE: {
		double g = 0.0, x = v;
		if (x >= EPSILON_D) g = 2.0 * (log(x + 1.0) - log(gk_max_go(t, EPSILON_D) + 1.0)) / (x + 1.0);
		return (float)(sc * g / cols);
	}
	case LOSS_HUBER: {
		double e = (double)v - t, g = e;
		if (fabs(e) > delta) g = delta * gk_sign(e);
		return (float)(sc * g / cols);
	}
	case LOSS_LOG_COSH:
		return (float)(sc * tanh((double)v - t) / cols);
	case LOSS_KLD: {
		double g = 0.0;
		bool in;
		double pc = gk_clip_to(v, EPSILON_D, 1.0, &in);
		if (in) {
			bool tin;
			g = -gk_clip_to(t, EPSILON_D, 1.0, &tin) / pc;
		}
		return (float)(sc * g);
	}
	case LOSS_POISSON:
		return (float)(sc * (1.0 - t / ((double)v + EPSILON_D)) / cols);
	case LOSS_HINGE: {
		double g = 0.0;
		if (1.0 - t * (double)v >= 0.0) g = -t;
		return (float)(sc * g / cols);
	}
	case LOSS_SQUARED_HINGE: {
		double m = gk_max_go(1.0 - t * (double)v, 0.0);
		return (float)(sc * -2.0 * m * t / cols);
	}
	}
	return NAN; // launch.ForLoss refuses the kinds no case computes
}

// gk_row_grad writes sc·∂loss/∂p of sample r into dp (ops' sparseRowGrad
// or rowGrad, sc = scale·weight) for the kinds gk_loss_grad computes a row
// at a time, and the elementwise ones: zero where a clip bites, and
// through the first argument of a maximum on a tie, as TensorFlow's
// gradient. A sparse target that is not a class index sets *bad and
// writes NaNs.
__device__ void gk_row_grad(int kind, const float *p, const float *y, int r, int cols, double ls, double delta, bool zo,
		double sc, float *dp, bool *bad) {
	const float *pr = p + (size_t)r * cols;
	const float *yr = y + (size_t)r * cols;
	float *dr = dp + (size_t)r * cols;
	switch (kind) {
	case LOSS_CATEGORICAL_CE: {
		// g_j = ∂loss/∂q_j, then the chain rule through q = p / Σp.
		double s = 0.0;
		for (int j = 0; j < cols; j++) s += pr[j];
		double gq = 0.0;
		for (int j = 0; j < cols; j++) {
			double q = pr[j] / s;
			bool in;
			double c = gk_clip(q, &in);
			gq += (in ? -TGT(j) / c : 0.0) * q;
		}
		for (int j = 0; j < cols; j++) {
			bool in;
			double c = gk_clip(pr[j] / s, &in);
			double g = in ? -TGT(j) / c : 0.0;
			dr[j] = (float)(sc * (g - gq) / s);
		}
		break;
	}
	case LOSS_SPARSE_CATEGORICAL_CE: {
		int id = gk_class(y[r], cols);
		if (id < 0) {
			*bad = true;
			for (int j = 0; j < cols; j++) dr[j] = NAN;
			break;
		}
		double s = 0.0;
		bool in;
		for (int j = 0; j < cols; j++) s += gk_clip(pr[j], &in);
		for (int j = 0; j < cols; j++) {
			double c = gk_clip(pr[j], &in);
			double g = 0.0;
			if (in) {
				g = 1.0 / s;
				if (j == id) g -= 1.0 / c;
			}
			dr[j] = (float)(sc * g);
		}
		break;
	}
	case LOSS_CATEGORICAL_HINGE: {
		double pos = 0.0, neg = -INFINITY;
		for (int j = 0; j < cols; j++) {
			double t = TGT(j);
			pos += t * (double)pr[j];
			neg = gk_max_go(neg, (1.0 - t) * (double)pr[j]);
		}
		if (neg - pos + 1.0 < 0.0) {
			for (int j = 0; j < cols; j++) dr[j] = 0.0f;
			break;
		}
		// The max's gradient is shared among the classes that reach it,
		// as TensorFlow shares a reduce_max's.
		int ties = 0;
		for (int j = 0; j < cols; j++) ties += (1.0 - TGT(j)) * (double)pr[j] == neg;
		for (int j = 0; j < cols; j++) {
			double t = TGT(j), g = -t;
			if ((1.0 - t) * (double)pr[j] == neg) g += (1.0 - t) / (double)ties;
			dr[j] = (float)(sc * g);
		}
		break;
	}
	case LOSS_COSINE: {
		double dot = 0.0, st = 0.0, sp = 0.0;
		for (int j = 0; j < cols; j++) {
			double t = TGT(j), v = pr[j];
			dot += t * v;
			st += t * t;
			sp += v * v;
		}
		double invT = 1.0 / sqrt(gk_max_go(st, NORM_EPSILON_D)), invP = 1.0 / sqrt(gk_max_go(sp, NORM_EPSILON_D));
		bool normed = sp >= NORM_EPSILON_D; // Σp² has a gradient: the floor was not taken
		for (int j = 0; j < cols; j++) {
			double v = pr[j], g = -TGT(j) * invT * invP;
			if (normed) g = __dadd_rn(g, dot * invT * v * invP * invP * invP);
			dr[j] = (float)(sc * g);
		}
		break;
	}
	default: // the elementwise kinds
		for (int j = 0; j < cols; j++) dr[j] = gk_elem_grad(kind, pr[j], TGT(j), sc, cols, delta);
	}
}
#undef TGT

// gk_zero_one_labels: *flag = 1 when every one of the n targets y is 0 or
// 1, else 0 (ops' zeroOneLabels), the batch-wide test after which the hinge
// losses read 0/1 labels as -1/1; their loss kernels read *flag. Launched
// as ONE block (launch.LabelsBlock threads).
extern "C" __global__ void gk_zero_one_labels(const float *y, int n, int *flag) {
	if (threadIdx.x == 0) *flag = 1;
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x) {
		float v = y[i];
		if (v != 0.0f && v != 1.0f) {
			atomicMin(flag, 0);
			break;
		}
	}
}

// gk_loss: out[0] = Σ_r w[r]·loss_r / rows, the batch mean of the
// per-sample loss of kind (ops.LossValueWith; w NULL: weights of 1).
// Launched as ONE block (a power of two threads, shared memory blockDim.x
// doubles). *bad receives the smallest row whose sparse target is not a
// class index (the caller sets it to INT_MAX first).
extern "C" __global__ void gk_loss(const float *p, const float *y, const float *w, const int *zero_one, int rows, int cols,
		int kind, double ls, double delta, float *out, int *bad) {
	extern __shared__ double sd[];
	bool zo = zero_one && *zero_one;
	double sum = 0.0;
	for (int r = threadIdx.x; r < rows; r += blockDim.x) {
		bool b = false;
		double l = gk_row_loss(kind, p, y, r, cols, ls, delta, zo, &b);
		if (b) atomicMin(bad, r);
		sum += w ? (double)w[r] * l : l;
	}
	sd[threadIdx.x] = sum;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k) sd[threadIdx.x] += sd[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0) out[0] = (float)(sd[0] / rows);
}

// How gk_loss_grad spreads a kind's work (lossGradShape launches it so):
// the elementwise kinds one thread per value; the softmax cross-entropies,
// whose sums are not ops' to the bit anyway (exp), one block per row with
// block-wide sums; the other kinds that sum over a row, one thread per row,
// summing in ops' order so that their gradients are ops' to the bit.
__device__ double gk_block_sum_d(double v, double *s); // below, with the norms

#define GRAD_BY_VALUE 0
#define GRAD_BY_BLOCK 1
#define GRAD_BY_ROW 2

__device__ __forceinline__ int gk_grad_mode(int kind) {
	switch (kind) {
	case LOSS_SOFTMAX_CE:
	case LOSS_SPARSE_SOFTMAX_CE:
		return GRAD_BY_BLOCK;
	case LOSS_CATEGORICAL_CE:
	case LOSS_SPARSE_CATEGORICAL_CE:
	case LOSS_CATEGORICAL_HINGE:
	case LOSS_COSINE:
		return GRAD_BY_ROW;
	}
	return GRAD_BY_VALUE;
}

// gk_loss_grad: dp = seed[0]/rows · w[r] · ∂loss_r/∂p
// (ops.LossGradientWith; w NULL: weights of 1), spread by gk_grad_mode;
// any grid works, blocks of a power of two threads, shared memory
// blockDim.x doubles. *bad as for gk_loss.
extern "C" __global__ void gk_loss_grad(const float *p, const float *y, const float *w, const int *zero_one,
		const float *seed, int rows, int cols, int kind, double ls, double delta, float *dp, int *bad) {
	extern __shared__ float s[];
	extern __shared__ double sd[];
	double scale = (double)seed[0] / rows;
	bool zo = zero_one && *zero_one;
	switch (gk_grad_mode(kind)) {
	case GRAD_BY_VALUE: {
		size_t n = (size_t)rows * cols;
		for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
			int r = (int)(i / cols);
			double sc = w ? scale * (double)w[r] : scale;
			dp[i] = gk_elem_grad(kind, p[i], gk_target(kind, y[i], cols, ls, zo), sc, cols, delta);
		}
		break;
	}
	case GRAD_BY_BLOCK:
		// ops' softmax gradient, soft·Σt - t (sparse: soft - [j = id]), with
		// soft = exp(p - max) / Σexp(p - max): the max over the block in
		// float (exact), the sums in double over the block's threads.
		for (int r = blockIdx.x; r < rows; r += gridDim.x) {
			const float *pr = p + (size_t)r * cols;
			const float *yr = y + (size_t)r * cols;
			float *dr = dp + (size_t)r * cols;
			double sc = w ? scale * (double)w[r] : scale;
			int id = -1;
			if (kind == LOSS_SPARSE_SOFTMAX_CE) {
				id = gk_class(y[r], cols); // the same on every thread
				if (id < 0) {
					for (int j = threadIdx.x; j < cols; j += blockDim.x) dr[j] = NAN;
					if (threadIdx.x == 0) atomicMin(bad, r);
					continue;
				}
			}
			float mf = -INFINITY;
			for (int j = threadIdx.x; j < cols; j += blockDim.x) mf = fmaxf(mf, pr[j]);
			double m = gk_block_max(mf, s);
			double part = 0.0;
			for (int j = threadIdx.x; j < cols; j += blockDim.x) part += exp((double)pr[j] - m);
			double sum = gk_block_sum_d(part, sd);
			double sy = 1.0;
			if (kind == LOSS_SOFTMAX_CE) {
				part = 0.0;
				for (int j = threadIdx.x; j < cols; j += blockDim.x) part += gk_target(kind, yr[j], cols, ls, zo);
				sy = gk_block_sum_d(part, sd);
			}
			for (int j = threadIdx.x; j < cols; j += blockDim.x) {
				double soft = exp((double)pr[j] - m) / sum;
				if (kind == LOSS_SOFTMAX_CE) {
					dr[j] = (float)(sc * (soft * sy - gk_target(kind, yr[j], cols, ls, zo)));
				} else {
					if (j == id) soft--;
					dr[j] = (float)(sc * soft);
				}
			}
		}
		break;
	default:
		GRID_STRIDE(r, rows) {
			bool b = false;
			gk_row_grad(kind, p, y, r, cols, ls, delta, zo, w ? scale * (double)w[r] : scale, dp, &b);
			if (b) atomicMin(bad, r);
		}
	}
}

// The optimizer updates compute optim.Update.Apply's arithmetic (see the
// optim.Rule constants) in float32 with the _rn intrinsics, which nvcc
// never contracts into fused multiply-adds: each product, quotient and
// square root is rounded on its own, as optim rounds it (its Go converts
// every product to float32 before adding), so each weight and slot is
// optim's to the bit. The host computes the per-step scalars
// (launch.ForUpdate) in float64 as optim does.
//
// Every update kernel ends with the options, GK_UPDATE_OPTIONS, which it
// applies before its rule as optim.Update's prepare does: the gradient
// times *gscale when gscale is not NULL and *gscale is not 0 (clipping by
// norm, gk_clip_scale writes it; or by global norm, gk_global_scale writes
// it: optim skips its factors 0 and 1, and a product by 1 changes no value
// but a NaN's payload, while a NaN gradient makes the global factor NaN),
// then clipped to [-clipvalue, clipvalue] when clipvalue > 0; the weight, when decays, w -= w·decay (decoupled
// weight decay, decay = WeightDecay·lr).
#define GK_UPDATE_OPTIONS const float *gscale, float clipvalue, int decays, float decay

// gk_grad_scale is the factor of clipping by norm: 0 for none.
__device__ __forceinline__ float gk_grad_scale(const float *gscale) { return gscale ? gscale[0] : 0.0f; }

// gk_prepare_grad is gradient g scaled and clipped as optim's prepare
// does it: min(max(g, -cv), cv) keeps a NaN, as Go's min and max do.
__device__ __forceinline__ float gk_prepare_grad(float g, float scale, float clipvalue) {
	if (scale != 0.0f) g = __fmul_rn(g, scale);
	if (clipvalue > 0.0f) {
		if (g < -clipvalue) g = -clipvalue;
		if (g > clipvalue) g = clipvalue;
	}
	return g;
}

// gk_decay is weight w after the weight decay, when decays.
__device__ __forceinline__ float gk_decay(float w, int decays, float decay) {
	return decays ? __fsub_rn(w, __fmul_rn(w, decay)) : w;
}

// gk_max is Go's max of two float32s: NaN if either is NaN, +0 over -0.
__device__ __forceinline__ float gk_max(float a, float b) {
	if (a != a || b != b) return a + b;
	if (a == b) return signbit(a) ? b : a;
	return a > b ? a : b;
}

// gk_sgd: w -= lr·g (optim.RuleSGD).
extern "C" __global__ void gk_sgd(float *w, const float *g, int n, float lr, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		w[i] = __fsub_rn(gk_decay(w[i], decays, decay), __fmul_rn(lr, gi));
	}
}

// gk_momentum: v = momentum·v - lr·g; w += v, or with Nesterov
// w += momentum·v - lr·g (optim.RuleMomentum, optim.RuleNesterov).
extern "C" __global__ void gk_momentum(float *w, float *v, const float *g, int n, int nesterov, float lr, float momentum,
		GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float step = __fmul_rn(lr, gi);
		float vi = __fsub_rn(__fmul_rn(momentum, v[i]), step);
		v[i] = vi;
		w[i] = __fadd_rn(wi, nesterov ? __fsub_rn(__fmul_rn(momentum, vi), step) : vi);
	}
}

// gk_adam: m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g·g; with AMSGrad (vhat
// not NULL) vhat = max(vhat, v), used for v; w -= lrT·m / (√v + ε), the
// host folding the bias corrections into lrT = lr·√(1-β2^t)/(1-β1^t)
// (optim.RuleAdam, optim.Update.AdamRate).
extern "C" __global__ void gk_adam(float *w, float *m, float *v, float *vhat, const float *g, int n, float lrT, float b1,
		float c1, float b2, float c2, float eps, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(c1, gi));
		float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(c2, gi), gi));
		m[i] = mi;
		v[i] = vi;
		if (vhat) {
			vi = gk_max(vhat[i], vi);
			vhat[i] = vi;
		}
		w[i] = __fsub_rn(wi, __fdiv_rn(__fmul_rn(lrT, mi), __fadd_rn(__fsqrt_rn(vi), eps)));
	}
}

// gk_rmsprop: r = ρ·r + (1-ρ)·g·g; centered (avg not NULL): avg = ρ·avg +
// (1-ρ)·g, d = r - avg·avg, else d = r; Δ = lr·g/√(d + ε); with momentum
// (mom not NULL) mom = momentum·mom + Δ, w -= mom, else w -= Δ
// (optim.RuleRMSprop).
extern "C" __global__ void gk_rmsprop(float *w, float *r, float *mom, float *avg, const float *g, int n, float lr, float rho,
		float c, float momentum, float eps, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float ri = __fadd_rn(__fmul_rn(rho, r[i]), __fmul_rn(__fmul_rn(c, gi), gi));
		r[i] = ri;
		float d = ri;
		if (avg) {
			float ai = __fadd_rn(__fmul_rn(rho, avg[i]), __fmul_rn(c, gi));
			avg[i] = ai;
			d = __fsub_rn(d, __fmul_rn(ai, ai));
		}
		float step = __fdiv_rn(__fmul_rn(lr, gi), __fsqrt_rn(__fadd_rn(d, eps)));
		if (mom) {
			step = __fadd_rn(__fmul_rn(momentum, mom[i]), step);
			mom[i] = step;
		}
		w[i] = __fsub_rn(wi, step);
	}
}

// gk_adagrad: a += g·g; w -= lr·g/√(a + ε) (optim.RuleAdagrad; a starts at
// the initial accumulator value).
extern "C" __global__ void gk_adagrad(float *w, float *a, const float *g, int n, float lr, float eps, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float ai = __fadd_rn(a[i], __fmul_rn(gi, gi));
		a[i] = ai;
		w[i] = __fsub_rn(wi, __fdiv_rn(__fmul_rn(lr, gi), __fsqrt_rn(__fadd_rn(ai, eps))));
	}
}

// gk_adadelta: a = ρ·a + (1-ρ)·g·g; δ = -(√(d + ε)·g)/√(a + ε);
// d = ρ·d + (1-ρ)·δ·δ; w += lr·δ (optim.RuleAdadelta).
extern "C" __global__ void gk_adadelta(float *w, float *a, float *d, const float *g, int n, float lr, float rho, float c,
		float eps, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float ai = __fadd_rn(__fmul_rn(rho, a[i]), __fmul_rn(__fmul_rn(c, gi), gi));
		a[i] = ai;
		float di = d[i];
		float delta = __fdiv_rn(-__fmul_rn(__fsqrt_rn(__fadd_rn(di, eps)), gi), __fsqrt_rn(__fadd_rn(ai, eps)));
		d[i] = __fadd_rn(__fmul_rn(rho, di), __fmul_rn(__fmul_rn(c, delta), delta));
		w[i] = __fadd_rn(wi, __fmul_rn(lr, delta));
	}
}

// gk_adamax: m += (g - m)·(1-β1); u = max(β2·u, |g|);
// w -= lr·m/((1-β1^t)·(u + ε)) (optim.RuleAdamax; corr = 1-β1^t).
extern "C" __global__ void gk_adamax(float *w, float *m, float *u, const float *g, int n, float lr, float c1, float b2,
		float corr, float eps, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float mi = m[i];
		mi = __fadd_rn(mi, __fmul_rn(__fsub_rn(gi, mi), c1));
		m[i] = mi;
		float ui = gk_max(__fmul_rn(b2, u[i]), fabsf(gi));
		u[i] = ui;
		w[i] = __fsub_rn(wi, __fdiv_rn(__fmul_rn(lr, mi), __fmul_rn(corr, __fadd_rn(ui, eps))));
	}
}

// gk_nadam: m += (g - m)·(1-β1); v += (g·g - v)·(1-β2);
// m̂ = mCoef·m + gCoef·g; v̂ = v/vCorr; w -= lr·m̂/(√v̂ + ε), with
// mCoef = μ_{t+1}/(1-Π_{t+1}), gCoef = (1-μ_t)/(1-Π_t) and vCorr = 1-β2^t
// from the host (optim.RuleNadam, optim.Update.NadamFactors).
extern "C" __global__ void gk_nadam(float *w, float *m, float *v, const float *g, int n, float lr, float c1, float c2,
		float mCoef, float gCoef, float vCorr, float eps, GK_UPDATE_OPTIONS) {
	float scale = gk_grad_scale(gscale);
	GRID_STRIDE(i, n) {
		float gi = gk_prepare_grad(g[i], scale, clipvalue);
		float wi = gk_decay(w[i], decays, decay);
		float mi = m[i], vi = v[i];
		mi = __fadd_rn(mi, __fmul_rn(__fsub_rn(gi, mi), c1));
		vi = __fadd_rn(vi, __fmul_rn(__fsub_rn(__fmul_rn(gi, gi), vi), c2));
		m[i] = mi;
		v[i] = vi;
		float mh = __fadd_rn(__fmul_rn(mCoef, mi), __fmul_rn(gCoef, gi));
		float vh = __fdiv_rn(vi, vCorr);
		w[i] = __fsub_rn(wi, __fdiv_rn(__fmul_rn(lr, mh), __fadd_rn(__fsqrt_rn(vh), eps)));
	}
}

// gk_block_sum_d is a block-wide sum in double over blockDim.x threads (a
// power of two), through shared memory s of blockDim.x doubles.
__device__ double gk_block_sum_d(double v, double *s) {
	s[threadIdx.x] = v;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	double r = s[0];
	__syncthreads();
	return r;
}

// gk_abs_sq_sums: the sums of |x| and of x² over the n values of x that
// each block's threads take (grid-stride), in double, at part[2·block]
// and part[2·block + 1]: the norm of a gradient for clipping by norm, and
// a regularization penalty's sums. Blocks of a power of two threads,
// shared memory blockDim.x doubles. The shape is launch.SumGrid's, which
// depends on n only, so the sums are the same on every GPU.
extern "C" __global__ void gk_abs_sq_sums(const float *x, int n, double *part) {
	extern __shared__ double sd[];
	double a = 0.0, q = 0.0;
	GRID_STRIDE(i, n) {
		double v = x[i];
		a += fabs(v);
		q += v * v; // exact: a float's square fits in a double
	}
	a = gk_block_sum_d(a, sd);
	q = gk_block_sum_d(q, sd);
	if (threadIdx.x == 0) {
		part[2 * blockIdx.x] = a;
		part[2 * blockIdx.x + 1] = q;
	}
}

// gk_sum_parts is, in every thread of a block, the sum of part[2j + k]
// over j < parts (gk_abs_sq_sums' blocks), in an order that depends on
// parts and blockDim.x only.
__device__ double gk_sum_parts(const double *part, int parts, int k, double *sd) {
	double v = 0.0;
	for (int j = threadIdx.x; j < parts; j += blockDim.x) v += part[2 * j + k];
	return gk_block_sum_d(v, sd);
}

// gk_clip_scale: scale[0] = the factor clipping by norm multiplies the
// gradient by, clipnorm/‖g‖ rounded to float when the norm ‖g‖ (the
// square root of the sum of the parts' x²) exceeds clipnorm, else 0 (no
// scaling), as optim.Update.Apply computes it. One block, as
// gk_abs_sq_sums.
extern "C" __global__ void gk_clip_scale(const double *part, int parts, double clipnorm, float *scale) {
	extern __shared__ double sd[];
	double ss = gk_sum_parts(part, parts, 1, sd);
	if (threadIdx.x == 0) {
		double norm = __dsqrt_rn(ss);
		scale[0] = norm > clipnorm ? (float)__ddiv_rn(clipnorm, norm) : 0.0f;
	}
}

// gk_global_scale: scale[0] = the factor clipping by global norm
// multiplies every gradient of a step by, clipnorm/max(‖g‖, clipnorm)
// rounded to float, ‖g‖ the square root of the sum of the parts' x² (the
// parts of gk_abs_sq_sums over each gradient in turn, launch.GlobalParts),
// as optim.GlobalScale computes it: 1 when the norm is at most clipnorm,
// NaN when it is NaN (Go's math.Max). One block, as gk_abs_sq_sums.
extern "C" __global__ void gk_global_scale(const double *part, int parts, double clipnorm, float *scale) {
	extern __shared__ double sd[];
	double ss = gk_sum_parts(part, parts, 1, sd);
	if (threadIdx.x == 0) {
		double norm = __dsqrt_rn(ss);
		double m = (norm != norm || norm > clipnorm) ? norm : clipnorm;
		scale[0] = (float)__ddiv_rn(clipnorm, m);
	}
}

// gk_penalty: out[0] = scale·(l1·Σ|x| + l2·Σx²), the sums those of the
// parts (ops.PenaltyValue). One block, as gk_abs_sq_sums.
extern "C" __global__ void gk_penalty(const double *part, int parts, double l1, double l2, double scale, float *out) {
	extern __shared__ double sd[];
	double a = gk_sum_parts(part, parts, 0, sd);
	double q = gk_sum_parts(part, parts, 1, sd);
	if (threadIdx.x == 0) out[0] = (float)__dmul_rn(scale, __dadd_rn(__dmul_rn(l1, a), __dmul_rn(l2, q)));
}

// gk_penalty_grad: out = seed[0]·scale·(l1·sign(x) + l2x2·x), l2x2 = 2·l2,
// in double and rounded to float (ops.PenaltyGradient; the CPU's bits).
extern "C" __global__ void gk_penalty_grad(const float *x, const float *seed, float *out, int n, double l1, double l2x2,
		double scale) {
	double s = __dmul_rn((double)seed[0], scale);
	GRID_STRIDE(i, n) {
		float v = x[i];
		double sign = v > 0.0f ? 1.0 : (v < 0.0f ? -1.0 : 0.0);
		out[i] = (float)__dmul_rn(s, __dadd_rn(__dmul_rn(l1, sign), __dmul_rn(l2x2, (double)v)));
	}
}

// gk_add: out = a + b, n values (the sum of the gradients a node gets
// along two paths).
extern "C" __global__ void gk_add(const float *a, const float *b, float *out, int n) {
	GRID_STRIDE(i, n) out[i] = __fadd_rn(a[i], b[i]);
}

// gk_scale: x = x · s, n values in place (a replica's gradients scaled by
// its share of the global batch before they are summed over the replicas).
extern "C" __global__ void gk_scale(float *x, int n, float s) {
	GRID_STRIDE(i, n) x[i] = __fmul_rn(x[i], s);
}

// gk_moving_average: moving = m·moving + (1-m)·stat·bessel, n values in
// place, in double and rounded to float (ops.MovingUpdate; the CPU's
// bits): the update of BatchNormalization's moving mean or variance from
// the batch's, after the forward pass of a training step.
extern "C" __global__ void gk_moving_average(float *moving, const float *stat, int n, double m, double bessel) {
	double rest = __dsub_rn(1.0, m);
	GRID_STRIDE(i, n) {
		double keep = __dmul_rn(m, (double)moving[i]);
		moving[i] = (float)__dadd_rn(keep, __dmul_rn(__dmul_rn(rest, (double)stat[i]), bessel));
	}
}

// gk_u8_to_f32: out = in · scale, for uint8 images copied to the device as
// bytes (a quarter of the float32 traffic) and scaled there (1/255).
extern "C" __global__ void gk_u8_to_f32(const unsigned char *in, float *out, int n, float scale) {
	GRID_STRIDE(i, n) out[i] = (float)in[i] * scale;
}

// Pooling kinds, numbered as ops.PoolKind.
#define POOL_MAX 1
#define POOL_AVG 2

// The image kernels take an ops.Window as its fourteen ints, in its field
// order: images (batch, h, w, c), channels last; the window kh × kw, its
// strides sh, sw and dilation dh, dw; the zero padding before the first
// row and column pt, pl; the output's height and width oh, ow.
#define GK_WINDOW_PARAMS \
	int batch, int h, int w, int c, int kh, int kw, int sh, int sw, int dh, int dw, int pt, int pl, int oh, int ow

// gk_patches: cols = the window's patches of the images x, one row of
// kh·kw·c values per output position (b, oy, ox), ordered (ky, kx, ch),
// zero where the window reads padding (ops.PatchesForward). One thread per
// value of cols: consecutive threads read consecutive channels.
extern "C" __global__ void gk_patches(const float *x, float *cols, GK_WINDOW_PARAMS) {
	GRID_STRIDE(i, batch * oh * ow * kh * kw * c) {
		int t = i;
		int ch = t % c;
		t /= c;
		int kx = t % kw;
		t /= kw;
		int ky = t % kh;
		t /= kh;
		int ox = t % ow;
		t /= ow;
		int oy = t % oh;
		int b = t / oh;
		int iy = oy * sh + ky * dh - pt;
		int ix = ox * sw + kx * dw - pl;
		cols[i] = iy < 0 || iy >= h || ix < 0 || ix >= w ? 0.0f : x[((b * h + iy) * w + ix) * c + ch];
	}
}

// gk_patches_grad: dx = the gradient of gk_patches given dcols, the
// gradient of its output: each pixel sums the patch values read from it
// (ops.PatchesBackward). One thread per value of dx; it visits the window
// offsets from the last to the first, so that it adds the output positions
// in the ascending order the CPU does.
extern "C" __global__ void gk_patches_grad(const float *dcols, float *dx, GK_WINDOW_PARAMS) {
	int row = kh * kw * c;
	GRID_STRIDE(i, batch * h * w * c) {
		int t = i;
		int ch = t % c;
		t /= c;
		int ix = t % w;
		t /= w;
		int iy = t % h;
		int b = t / h;
		float sum = 0.0f;
		for (int ky = kh - 1; ky >= 0; ky--) {
			int ty = iy + pt - ky * dh; // oy · sh, if the offset ky reads row iy
			if (ty < 0 || ty % sh != 0 || ty / sh >= oh) continue;
			int oy = ty / sh;
			for (int kx = kw - 1; kx >= 0; kx--) {
				int tx = ix + pl - kx * dw;
				if (tx < 0 || tx % sw != 0 || tx / sw >= ow) continue;
				int ox = tx / sw;
				sum += dcols[((b * oh + oy) * ow + ox) * row + (ky * kw + kx) * c + ch];
			}
		}
		dx[i] = sum;
	}
}

// gk_window_range is ops' windowRange: the rows (or columns) [*lo, *hi) of
// the image the window at output position o covers, clipped to the image.
__device__ __forceinline__ void gk_window_range(int o, int stride, int k, int pad, int size, int *lo, int *hi) {
	int start = o * stride - pad;
	*lo = max(start, 0);
	*hi = min(start + k, size);
}

// gk_pool: y = max or average pooling of the images x (ops.PoolForward),
// dilation 1; averages divide by the number of positions inside the image,
// padding left out. One thread per value of y, reading its window in the
// CPU's order (row by row, from the first position), so the results are
// the CPU's to the bit.
extern "C" __global__ void gk_pool(const float *x, float *y, int kind, GK_WINDOW_PARAMS) {
	GRID_STRIDE(i, batch * oh * ow * c) {
		int t = i;
		int ch = t % c;
		t /= c;
		int ox = t % ow;
		t /= ow;
		int oy = t % oh;
		int b = t / oh;
		int row0, row1, col0, col1;
		gk_window_range(oy, sh, kh, pt, h, &row0, &row1);
		gk_window_range(ox, sw, kw, pl, w, &col0, &col1);
		if (row0 >= row1 || col0 >= col1) { // ops places no empty window; never read outside x
			y[i] = 0.0f;
			continue;
		}
		const float *img = x + (size_t)b * h * w * c + ch;
		float acc = img[(row0 * w + col0) * c];
		for (int iy = row0; iy < row1; iy++) {
			for (int ix = col0; ix < col1; ix++) {
				if (iy == row0 && ix == col0) continue;
				float v = img[(iy * w + ix) * c];
				if (kind == POOL_MAX) {
					if (v > acc) acc = v;
				} else {
					acc += v;
				}
			}
		}
		if (kind == POOL_AVG) acc /= (float)((row1 - row0) * (col1 - col0));
		y[i] = acc;
	}
}

// gk_pool_grad: dx = the gradient of gk_pool given x, y and dy
// (ops.PoolBackward). One thread per value of dx, which sums over the
// windows that cover it, in ascending output order as the CPU adds them:
// for average pooling each window's dy divided by its number of positions;
// for max pooling the dy of each window whose maximum it holds and for
// which it is the first position, in reading order, that holds it.
extern "C" __global__ void gk_pool_grad(const float *x, const float *y, const float *dy, float *dx, int kind,
		GK_WINDOW_PARAMS) {
	GRID_STRIDE(i, batch * h * w * c) {
		int t = i;
		int ch = t % c;
		t /= c;
		int ix = t % w;
		t /= w;
		int iy = t % h;
		int b = t / h;
		const float *img = x + (size_t)b * h * w * c + ch;
		float v = x[i];
		// The windows that cover row iy: oy·sh - pt <= iy < oy·sh - pt + kh.
		int oyLo = max(0, (iy + pt - kh + sh) / sh), oyHi = min(oh - 1, (iy + pt) / sh);
		int oxLo = max(0, (ix + pl - kw + sw) / sw), oxHi = min(ow - 1, (ix + pl) / sw);
		float sum = 0.0f;
		for (int oy = oyLo; oy <= oyHi; oy++) {
			int row0, row1;
			gk_window_range(oy, sh, kh, pt, h, &row0, &row1);
			for (int ox = oxLo; ox <= oxHi; ox++) {
				int col0, col1;
				gk_window_range(ox, sw, kw, pl, w, &col0, &col1);
				int o = ((b * oh + oy) * ow + ox) * c + ch;
				if (kind == POOL_AVG) {
					sum += dy[o] / (float)((row1 - row0) * (col1 - col0));
					continue;
				}
				float m = y[o];
				if (v != m) continue;
				// The first position of the window, in reading order, that
				// holds m: is it this one?
				bool first = true;
				for (int py = row0; py <= iy && first; py++) {
					int pxEnd = py < iy ? col1 : ix;
					for (int px = col0; px < pxEnd; px++) {
						if (img[(py * w + px) * c] == m) {
							first = false;
							break;
						}
					}
				}
				if (first) sum += dy[o];
			}
		}
		dx[i] = sum;
	}
}

// gk_philox4x32 is Philox4x32-10 (Salmon et al., Random123), as
// ops.Philox4x32: four random words from counter ctr and key (k0, k1).
__device__ __forceinline__ void gk_philox4x32(unsigned int ctr[4], unsigned int k0, unsigned int k1) {
	for (int r = 0; r < 10; r++) {
		unsigned int hi0 = __umulhi(0xD2511F53u, ctr[0]), lo0 = 0xD2511F53u * ctr[0];
		unsigned int hi1 = __umulhi(0xCD9E8D57u, ctr[2]), lo1 = 0xCD9E8D57u * ctr[2];
		unsigned int c1 = ctr[1], c3 = ctr[3];
		ctr[0] = hi1 ^ c1 ^ k0;
		ctr[1] = lo1;
		ctr[2] = hi0 ^ c3 ^ k1;
		ctr[3] = lo0;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
}

// gk_dropout: y = x with the dropped units zeroed and the others times
// scale (ops.DropoutForward; also the dropout's gradient). step holds the
// training step and the first row of x in the step's global batch as
// ops.StepValues writes them, four floats: each one's low 24 bits and the
// rest. x's units are units first.. of the global batch, first = that row
// times per_row. Global unit u keeps when word u%4 of Philox4x32-10 with
// counter (u/4 low and high 32 bits, step low and high 32 bits) and key
// (keyLo, keyHi) is at least threshold: the mask of ops.DropoutMask. One
// thread per four global units, one Philox call each.
extern "C" __global__ void gk_dropout(const float *x, float *y, int n, int per_row, const float *step,
		unsigned int keyLo, unsigned int keyHi, unsigned int threshold, float scale) {
	unsigned long long st = (unsigned long long)step[1] << 24 | (unsigned long long)step[0];
	unsigned long long first = ((unsigned long long)step[3] << 24 | (unsigned long long)step[2]) * per_row;
	unsigned long long g0 = first / 4, groups = (first + n + 3) / 4 - g0;
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < groups;
			i += (unsigned long long)blockDim.x * gridDim.x) {
		unsigned long long g = g0 + i;
		unsigned int r[4] = {(unsigned int)g, (unsigned int)(g >> 32), (unsigned int)st, (unsigned int)(st >> 32)};
		gk_philox4x32(r, keyLo, keyHi);
		for (int j = 0; j < 4; j++) {
			unsigned long long u = 4 * g + j;
			if (u < first || u >= first + n) continue;
			int v = (int)(u - first);
			y[v] = r[j] >= threshold ? x[v] * scale : 0.0f;
		}
	}
}

// Image transforms, numbered as ops.TransformKind, ops.Interpolation and
// ops.FillMode.
#define TRANSFORM_FLIP 1
#define TRANSFORM_TRANSLATION 2
#define TRANSFORM_ZOOM 3
#define TRANSFORM_ROTATION 4
#define TRANSFORM_BRIGHTNESS 5
#define TRANSFORM_CONTRAST 6
#define TRANSFORM_CROP 7
#define INTERP_BILINEAR 1
#define INTERP_NEAREST 2
#define FILL_REFLECT 1
#define FILL_WRAP 2
#define FILL_CONSTANT 3
#define FILL_NEAREST 4

// gk_uniform24 is a random word's top 24 bits as a float in [0, 1), exact.
__device__ __forceinline__ float gk_uniform24(unsigned int w) { return __fmul_rn((float)(w >> 8), 1.0f / 16777216.0f); }

// gk_lerp is lo + u·(hi-lo), each operation rounded (ops' lerp).
__device__ __forceinline__ float gk_lerp(float lo, float hi, float u) { return __fadd_rn(lo, __fmul_rn(u, __fsub_rn(hi, lo))); }

// gk_sincos is sin x and cos x as ops.SinCos computes them: x reduced by
// whole turns, then 24 terms of each Taylor series, every operation
// rounded (the _rn intrinsics), for the CPU's bits.
__device__ void gk_sincos(double x, double *s, double *c) {
	const double twoPi = 6.283185307179586;
	double k = round(__ddiv_rn(x, twoPi));
	x = __dsub_rn(x, __dmul_rn(k, twoPi));
	double x2 = __dmul_rn(x, x);
	double st = x, ct = 1.0, sn = st, cs = ct;
	for (int n = 1; n <= 24; n++) {
		st = __ddiv_rn(__dmul_rn(st, -x2), (double)((2 * n) * (2 * n + 1)));
		ct = __ddiv_rn(__dmul_rn(ct, -x2), (double)((2 * n - 1) * (2 * n)));
		sn = __dadd_rn(sn, st);
		cs = __dadd_rn(cs, ct);
	}
	*s = sn;
	*c = cs;
}

// gk_map_coord maps a coordinate along an axis of n pixels into the image
// as the fill mode says (ops' mapCoord, operation for operation).
__device__ float gk_map_coord(float c, int n, int fill) {
	float last = (float)(n - 1);
	if (fill == FILL_CONSTANT) return c;
	if (fill == FILL_REFLECT) {
		if (n <= 1) return 0.0f;
		float sz2 = (float)(2 * n);
		if (c < 0.0f) {
			c = __fadd_rn(__fmul_rn(sz2, (float)(long long)__fdiv_rn(-c, sz2)), c);
			c = c < (float)(-n) ? __fadd_rn(c, sz2) : __fsub_rn(-c, 1.0f);
		} else if (c > last) {
			c = __fsub_rn(c, __fmul_rn(sz2, (float)(long long)__fdiv_rn(c, sz2)));
			if (c >= (float)n) c = __fsub_rn(__fsub_rn(sz2, c), 1.0f);
		}
	} else if (fill == FILL_WRAP) {
		if (n <= 1) return 0.0f;
		float nf = (float)n;
		if (c < 0.0f || c > last) c = __fsub_rn(c, __fmul_rn(nf, floorf(__fdiv_rn(c, nf))));
	}
	return fminf(fmaxf(c, 0.0f), last);
}

// gk_image_transform: y = each of the images x (batch×h×w×c, channels
// last) transformed by the affine map drawn for it (ops.TransformForward:
// ops.TransformParams.SampleTransform and ops.TransformImage, the same
// operations rounded the same way). step holds the training step and the
// first image's index in the step's global batch (ops.StepValues). One
// thread per output value, each drawing its sample's map: Philox4x32-10
// with counter (sample, step) and key (keyLo, keyHi). For
// TRANSFORM_BRIGHTNESS (ops.TransformParams.SampleDelta), wLo and wHi are
// the value range: y = x + delta clipped to it. For TRANSFORM_CONTRAST
// (ops' contrast), hLo and hHi are the factor's range (1-lower, 1+upper)
// and wLo and wHi the value range: each thread sums its channel of the
// image for the mean. For TRANSFORM_CROP, hLo and wLo are the counts of
// the offsets drawn, H-CropH+1 and W-CropW+1.
extern "C" __global__ void gk_image_transform(const float *x, float *y, int batch, int h, int w, int c, const float *step,
		unsigned int keyLo, unsigned int keyHi, int kind, int horizontal, int vertical, float hLo, float hHi, float wLo,
		float wHi, int keepAspect, int interp, int fill, float fillValue) {
	unsigned long long st = (unsigned long long)step[1] << 24 | (unsigned long long)step[0];
	unsigned long long first = (unsigned long long)step[3] << 24 | (unsigned long long)step[2];
	long long per = (long long)h * w * c;
	float hf = (float)h, wf = (float)w;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < per * batch;
			i += (long long)blockDim.x * gridDim.x) {
		long long b = i / per;
		int r = (int)(i % per);
		int ch = r % c, ox = (r / c) % w, oy = r / (c * w);
		unsigned long long sample = first + b;
		unsigned int wd[4] = {(unsigned int)sample, (unsigned int)(sample >> 32), (unsigned int)st, (unsigned int)(st >> 32)};
		gk_philox4x32(wd, keyLo, keyHi);
		if (kind == TRANSFORM_CONTRAST) {
			// The channel's mean over the image, summed in double in the
			// image's order (ops' contrast), then the factor about it.
			const float *img = x + b * per;
			double sum = 0.0;
			for (int p = 0; p < h * w; p++) sum = __dadd_rn(sum, (double)img[(long long)p * c + ch]);
			float mean = (float)__ddiv_rn(sum, (double)(h * w));
			float f = gk_lerp(hLo, hHi, gk_uniform24(wd[0]));
			float v = __fadd_rn(__fmul_rn(__fsub_rn(x[i], mean), f), mean);
			y[i] = fminf(fmaxf(v, wLo), wHi);
			continue;
		}
		if (kind == TRANSFORM_BRIGHTNESS) {
			float delta = __fmul_rn(gk_lerp(hLo, hHi, gk_uniform24(wd[0])), __fsub_rn(wHi, wLo));
			y[i] = fminf(fmaxf(__fadd_rn(x[i], delta), wLo), wHi);
			continue;
		}
		float a0 = 1.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 1.0f, a5 = 0.0f;
		if (kind == TRANSFORM_FLIP) {
			if (horizontal && (wd[0] >> 31)) { a0 = -1.0f; a2 = __fsub_rn(wf, 1.0f); }
			if (vertical && (wd[1] >> 31)) { a4 = -1.0f; a5 = __fsub_rn(hf, 1.0f); }
		} else if (kind == TRANSFORM_TRANSLATION) {
			a2 = -__fmul_rn(gk_lerp(wLo, wHi, gk_uniform24(wd[1])), wf);
			a5 = -__fmul_rn(gk_lerp(hLo, hHi, gk_uniform24(wd[0])), hf);
		} else if (kind == TRANSFORM_ZOOM) {
			float zy = gk_lerp(hLo, hHi, gk_uniform24(wd[0]));
			float zx = keepAspect ? zy : gk_lerp(wLo, wHi, gk_uniform24(wd[1]));
			a0 = zx; a4 = zy;
			a2 = __fmul_rn(__fdiv_rn(__fsub_rn(wf, 1.0f), 2.0f), __fsub_rn(1.0f, zx));
			a5 = __fmul_rn(__fdiv_rn(__fsub_rn(hf, 1.0f), 2.0f), __fsub_rn(1.0f, zy));
		} else if (kind == TRANSFORM_ROTATION) {
			float theta = gk_lerp(hLo, hHi, gk_uniform24(wd[0]));
			double s64, c64;
			gk_sincos((double)theta, &s64, &c64);
			float s = (float)s64, c = (float)c64, w1 = __fsub_rn(wf, 1.0f), h1 = __fsub_rn(hf, 1.0f);
			a0 = c; a1 = -s; a3 = s; a4 = c;
			a2 = __fdiv_rn(__fsub_rn(w1, __fsub_rn(__fmul_rn(c, w1), __fmul_rn(s, h1))), 2.0f);
			a5 = __fdiv_rn(__fsub_rn(h1, __fadd_rn(__fmul_rn(s, w1), __fmul_rn(c, h1))), 2.0f);
		} else if (kind == TRANSFORM_CROP) {
			// ops' cropOffset: floor(u·n), at most n-1; hLo and wLo hold n.
			a5 = fminf(floorf(__fmul_rn(gk_uniform24(wd[0]), hLo)), __fsub_rn(hLo, 1.0f));
			a2 = fminf(floorf(__fmul_rn(gk_uniform24(wd[1]), wLo)), __fsub_rn(wLo, 1.0f));
		}
		float fx = (float)ox, fy = (float)oy;
		float inX = __fadd_rn(__fadd_rn(__fmul_rn(a0, fx), __fmul_rn(a1, fy)), a2);
		float inY = __fadd_rn(__fadd_rn(__fmul_rn(a3, fx), __fmul_rn(a4, fy)), a5);
		float mx = gk_map_coord(inX, w, fill), my = gk_map_coord(inY, h, fill);
		const float *img = x + b * per;
#define GK_READ(yy, xx) (((yy) >= 0.0f && (yy) < hf && (xx) >= 0.0f && (xx) < wf) ? img[((int)(yy) * w + (int)(xx)) * c + ch] : fillValue)
		if (interp == INTERP_NEAREST) {
			y[i] = GK_READ(roundf(my), roundf(mx));
			continue;
		}
		float x0 = floorf(mx), y0 = floorf(my);
		float x1 = __fadd_rn(x0, 1.0f), y1 = __fadd_rn(y0, 1.0f);
		float wx0 = __fsub_rn(x1, mx), wx1 = __fsub_rn(mx, x0), wy0 = __fsub_rn(y1, my), wy1 = __fsub_rn(my, y0);
		float top = __fadd_rn(__fmul_rn(wx0, GK_READ(y0, x0)), __fmul_rn(wx1, GK_READ(y0, x1)));
		float bottom = __fadd_rn(__fmul_rn(wx0, GK_READ(y1, x0)), __fmul_rn(wx1, GK_READ(y1, x1)));
		y[i] = __fadd_rn(__fmul_rn(wy0, top), __fmul_rn(wy1, bottom));
#undef GK_READ
	}
}

// Normalization kinds, numbered as ops.NormKind.
#define NORM_COLUMN_MEAN 1
#define NORM_COLUMN_VARIANCE 2
#define NORM_BATCH 3
#define NORM_BATCH_GRAD 4
#define NORM_BATCH_GAMMA_GRAD 5
#define NORM_LAYER 6
#define NORM_LAYER_GRAD 7
#define NORM_LAYER_GAMMA_GRAD 8

// The normalization kernels compute as package ops does (ops' normalize and
// layerNorm): sums in double, results rounded to float. The elementwise
// formulas use the _rn intrinsics, which nvcc does not contract into fused
// multiply-adds, so that they round as the CPU's separate operations do;
// only the order of the sums differs from the CPU's.

// gk_rstd is 1/√(variance+ε), in double (ops' rstd).
__device__ __forceinline__ double gk_rstd(float variance, double eps) {
	return 1.0 / sqrt(__dadd_rn((double)variance, eps));
}

// gk_cols is a thread's place in a column-tiled launch (launch.Columns):
// tile tw columns wide, splits of rps rows. The thread takes column col
// and the rows r0 + lane, r0 + lane + lanes, ... below r1.
struct gk_cols {
	int col, lane, lanes, split, r0, r1;
};

__device__ __forceinline__ gk_cols gk_column_thread(int rows, int cols, int tw, int rps) {
	int tiles = (cols + tw - 1) / tw;
	gk_cols g;
	g.split = blockIdx.x / tiles;
	g.col = (blockIdx.x % tiles) * tw + threadIdx.x % tw;
	g.lane = threadIdx.x / tw;
	g.lanes = blockDim.x / tw;
	g.r0 = g.split * rps;
	g.r1 = min(rows, g.r0 + rps);
	return g;
}

// gk_norm_col_sums: for each column, the sums over the rows of its split
// that a per-column kind needs, in double, into part: sum a at
// part[(2·split)·cols + col], sum b at part[(2·split+1)·cols + col].
//
//	NORM_COLUMN_MEAN       (x):                a = Σ x
//	NORM_COLUMN_VARIANCE   (x, mean):          a = Σ (x-mean)²
//	NORM_BATCH_GAMMA_GRAD  (x, mean, var, dy): a = Σ dy·(x-mean)·r, r = 1/√(var+ε)
//	NORM_BATCH_GRAD        (x, mean, var, dy): a = Σ dy, b = Σ dy·x̂, x̂ = (x-mean)·r
//	NORM_LAYER_GAMMA_GRAD  (x, dy, rowStats):  a = Σ dy·(x-μ)·ρ, with each row's
//	                       mean μ and 1/√(variance+ε) ρ in rowStats (gk_layer_norm)
//
// Unused pointers may be NULL. Column-tiled (gk_column_thread); the lanes
// of a column add their sums in shared memory, blockDim.x·2 doubles.
extern "C" __global__ void gk_norm_col_sums(int kind, const float *x, const float *mean, const float *var, const float *dy,
		const double *rowStats, int rows, int cols, double eps, int tw, int rps, double *part) {
	extern __shared__ double sd[];
	gk_cols g = gk_column_thread(rows, cols, tw, rps);
	double a = 0.0, b = 0.0;
	if (g.col < cols) {
		double m = kind == NORM_COLUMN_VARIANCE || kind == NORM_BATCH_GRAD || kind == NORM_BATCH_GAMMA_GRAD ? (double)mean[g.col] : 0.0;
		double rs = kind == NORM_BATCH_GRAD || kind == NORM_BATCH_GAMMA_GRAD ? gk_rstd(var[g.col], eps) : 0.0;
		for (int r = g.r0 + g.lane; r < g.r1; r += g.lanes) {
			size_t i = (size_t)r * cols + g.col;
			double v = x[i];
			switch (kind) {
			case NORM_COLUMN_MEAN:
				a += v;
				break;
			case NORM_COLUMN_VARIANCE: {
				double d = v - m;
				a = __dadd_rn(a, __dmul_rn(d, d));
				break;
			}
			case NORM_BATCH_GAMMA_GRAD:
				a = __dadd_rn(a, __dmul_rn(__dmul_rn((double)dy[i], v - m), rs));
				break;
			case NORM_BATCH_GRAD: {
				double gy = dy[i];
				a += gy;
				b = __dadd_rn(b, __dmul_rn(gy, __dmul_rn(v - m, rs)));
				break;
			}
			case NORM_LAYER_GAMMA_GRAD:
				a = __dadd_rn(a, __dmul_rn(__dmul_rn((double)dy[i], v - rowStats[2 * r]), rowStats[2 * r + 1]));
				break;
			}
		}
	}
	int t = threadIdx.x, n = blockDim.x;
	sd[t] = a;
	sd[n + t] = b;
	__syncthreads();
	for (int k = g.lanes / 2; k > 0; k >>= 1) {
		if (g.lane < k) {
			sd[t] += sd[t + k * tw];
			sd[n + t] += sd[n + t + k * tw];
		}
		__syncthreads();
	}
	if (g.lane == 0 && g.col < cols) {
		part[(size_t)(2 * g.split) * cols + g.col] = sd[t];
		part[(size_t)(2 * g.split + 1) * cols + g.col] = sd[n + t];
	}
}

// gk_norm_col_finish adds, per column, the sums of gk_norm_col_sums over
// the splits, in split order, and finishes the kind: the mean or the
// variance (a / rows) or the gamma gradient (a) into out; for
// NORM_BATCH_GRAD it leaves the totals a and b at part[col] and
// part[cols + col] for gk_batch_norm_grad. One thread per column.
extern "C" __global__ void gk_norm_col_finish(int kind, double *part, int splits, int rows, int cols, float *out) {
	GRID_STRIDE(c, cols) {
		double a = 0.0, b = 0.0;
		for (int s = 0; s < splits; s++) {
			a += part[(size_t)(2 * s) * cols + c];
			b += part[(size_t)(2 * s + 1) * cols + c];
		}
		switch (kind) {
		case NORM_COLUMN_MEAN:
		case NORM_COLUMN_VARIANCE:
			out[c] = (float)(a / rows);
			break;
		case NORM_BATCH_GAMMA_GRAD:
		case NORM_LAYER_GAMMA_GRAD:
			out[c] = (float)a;
			break;
		default:
			part[c] = a;
			part[cols + c] = b;
		}
	}
}

// gk_batch_norm: y = x·scale + shift per column, scale = γ/√(var+ε) and
// shift = β - scale·mean computed in double and rounded to float, as the
// CPU does: the same bits as ops.NormForward(BatchNorm). Column-tiled:
// each thread computes its column's scale and shift once.
extern "C" __global__ void gk_batch_norm(const float *x, const float *mean, const float *var, const float *gamma,
		const float *beta, int rows, int cols, double eps, int tw, int rps, float *y) {
	gk_cols g = gk_column_thread(rows, cols, tw, rps);
	if (g.col >= cols) return;
	double s = __dmul_rn((double)gamma[g.col], gk_rstd(var[g.col], eps));
	float scale = (float)s, shift = (float)__dsub_rn((double)beta[g.col], __dmul_rn(s, (double)mean[g.col]));
	for (int r = g.r0 + g.lane; r < g.r1; r += g.lanes) {
		size_t i = (size_t)r * cols + g.col;
		y[i] = __fadd_rn(__fmul_rn(x[i], scale), shift);
	}
}

// gk_batch_norm_grad: dx = γ·r·dy with fixed statistics (sums NULL; the
// CPU's bits), or with the batch's own γ·r·(dy - [Σdy + x̂·Σdy·x̂]/rows),
// the column totals Σdy and Σdy·x̂ at sums[col] and sums[cols + col]
// (gk_norm_col_finish). Column-tiled.
extern "C" __global__ void gk_batch_norm_grad(const float *x, const float *mean, const float *var, const float *gamma,
		const float *dy, const double *sums, int rows, int cols, double eps, int tw, int rps, float *dx) {
	gk_cols g = gk_column_thread(rows, cols, tw, rps);
	if (g.col >= cols) return;
	double rs = gk_rstd(var[g.col], eps), m = mean[g.col], gr = __dmul_rn((double)gamma[g.col], rs);
	double sumDy = sums ? sums[g.col] : 0.0, sumDyXhat = sums ? sums[cols + g.col] : 0.0;
	for (int r = g.r0 + g.lane; r < g.r1; r += g.lanes) {
		size_t i = (size_t)r * cols + g.col;
		double v = dy[i];
		if (sums) {
			double xhat = __dmul_rn((double)x[i] - m, rs);
			v = __dsub_rn(v, __dadd_rn(sumDy, __dmul_rn(xhat, sumDyXhat)) / rows);
		}
		dx[i] = (float)__dmul_rn(gr, v);
	}
}

// gk_layer_norm: per row of x, its mean μ and ρ = 1/√(variance+ε) (biased,
// as ops' rowMoments), then
//
//	NORM_LAYER             (x, gamma, beta): out = γ·(x-μ)·ρ + β
//	NORM_LAYER_GRAD        (x, gamma, dy):   out = ρ·(g - [Σg + x̂·Σg·x̂]/cols), g = γ·dy
//	NORM_LAYER_GAMMA_GRAD  (x):              rowStats[2r] = μ, rowStats[2r+1] = ρ,
//	                       for gk_norm_col_sums; out is not written
//
// b is beta or dy. One block per row (a power of two threads, shared
// memory blockDim.x doubles), sums in double.
extern "C" __global__ void gk_layer_norm(int kind, const float *x, const float *gamma, const float *b, int rows, int cols,
		double eps, float *out, double *rowStats) {
	extern __shared__ double sd[];
	for (int r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *xr = x + (size_t)r * cols;
		double sum = 0.0;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += xr[j];
		double mu = gk_block_sum_d(sum, sd) / cols;
		double ss = 0.0;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) {
			double d = xr[j] - mu;
			ss = __dadd_rn(ss, __dmul_rn(d, d));
		}
		double rho = 1.0 / sqrt(__dadd_rn(gk_block_sum_d(ss, sd) / cols, eps));
		if (kind == NORM_LAYER_GAMMA_GRAD) {
			if (threadIdx.x == 0) {
				rowStats[2 * r] = mu;
				rowStats[2 * r + 1] = rho;
			}
			continue;
		}
		const float *br = b + (size_t)r * cols;
		float *o = out + (size_t)r * cols;
		if (kind == NORM_LAYER) {
			for (int j = threadIdx.x; j < cols; j += blockDim.x) {
				double v = __dmul_rn(__dmul_rn((double)gamma[j], xr[j] - mu), rho);
				o[j] = (float)__dadd_rn(v, (double)b[j]);
			}
			continue;
		}
		double sg = 0.0, sgx = 0.0;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) {
			double g = __dmul_rn((double)gamma[j], (double)br[j]);
			sg += g;
			sgx = __dadd_rn(sgx, __dmul_rn(__dmul_rn(g, xr[j] - mu), rho));
		}
		sg = gk_block_sum_d(sg, sd);
		sgx = gk_block_sum_d(sgx, sd);
		for (int j = threadIdx.x; j < cols; j += blockDim.x) {
			double g = __dmul_rn((double)gamma[j], (double)br[j]);
			double xhat = __dmul_rn(xr[j] - mu, rho);
			o[j] = (float)__dmul_rn(rho, __dsub_rn(g, __dadd_rn(sg, __dmul_rn(xhat, sgx)) / cols));
		}
	}
}

// gk_row_index reads an embedding index: a whole number in [0, rows)
// names that row of the table; anything else gives -1 (ops' rowIndex,
// compared in double as the CPU does).
__device__ __forceinline__ int gk_row_index(float v, int rows) {
	double d = v;
	if (d != trunc(d) || d < 0.0 || d >= (double)rows) return -1;
	return (int)d;
}

// gk_flag_index records that position i holds v, which is not an index,
// in *bad: the position in the high word and v's bits in the low one, so
// that atomicMin keeps the first position (the host sets *bad to all ones
// and decodes it: launch.IndexError).
__device__ __forceinline__ void gk_flag_index(unsigned long long *bad, int i, float v) {
	atomicMin(bad, (unsigned long long)(unsigned int)i << 32 | __float_as_uint(v));
}

// gk_gather: out (m × n) = the rows of table (rows × n) at the m indices
// idx (ops.GatherForward). A bad index is flagged in *bad (gk_flag_index)
// and its output row set to NaN; the table is never read outside it. One
// thread per value of out.
extern "C" __global__ void gk_gather(const float *table, const float *idx, float *out, int m, int n, int rows,
		unsigned long long *bad) {
	GRID_STRIDE(i, m * n) {
		int p = i / n, c = i % n;
		float v = idx[p];
		int r = gk_row_index(v, rows);
		if (r < 0) {
			if (c == 0) gk_flag_index(bad, p, v);
			out[i] = NAN;
			continue;
		}
		out[i] = table[(size_t)r * n + c];
	}
}

// gk_scatter_add: out (rows × n) = the gradient of gk_gather's table given
// dy (m × n), the gradient of its output: row r of out is the sum of the
// rows of dy whose index is r (ops.ScatterAddForward), added in index
// order from 0, as the CPU adds them, so the result is the CPU's to the
// bit. out must be zero beforehand (the host clears it): only the rows
// some index names are written. A gather, without atomics: one block per
// position p (grid-stride), which sums when p is the first position of its
// index, each thread over some of the n columns. Its work grows as m²
// (each block reads the indices before and after it), not with the table's
// rows: m, the number of indices (batch × sequence length), is small. A
// bad index is flagged in *bad (gk_flag_index) and left out.
extern "C" __global__ void gk_scatter_add(const float *idx, const float *dy, float *out, int m, int n, int rows,
		unsigned long long *bad) {
	for (int p = blockIdx.x; p < m; p += gridDim.x) {
		float v = idx[p];
		int r = gk_row_index(v, rows);
		if (r < 0) {
			if (threadIdx.x == 0) gk_flag_index(bad, p, v);
			continue;
		}
		bool first = true;
		for (int q = 0; q < p && first; q++) first = idx[q] != v;
		if (!first) continue;
		for (int c = threadIdx.x; c < n; c += blockDim.x) {
			float sum = 0.0f;
			for (int q = p; q < m; q++) {
				if (idx[q] == v) sum += dy[(size_t)q * n + c];
			}
			out[(size_t)r * n + c] = sum;
		}
	}
}

// gk_metric_score is one sample's score of ops.MetricScore for kind (ops'
// MetricKind numbering), in double as ops computes it: lr its labels
// (ycols), pr its outputs (cols). *bad is set for a sparse top-k label
// that is not a class index.
__device__ int gk_argmax(const float *v, int n) {
	int best = 0;
	for (int i = 1; i < n; i++)
		if (v[i] > v[best]) best = i;
	return best;
}
__device__ double gk_in_top_k(const float *row, int cols, int target, int k) {
	int larger = 0;
	for (int j = 0; j < cols; j++) {
		float v = row[j];
		if (isnan(v) || isinf(v)) return 0.0;
		if (v > row[target]) larger++;
	}
	return larger < k ? 1.0 : 0.0;
}
__device__ double gk_metric_score(int kind, const float *lr, const float *pr, int cols, int ycols, float threshold, int k,
		bool *bad) {
	switch (kind) {
	case 1: { // binary accuracy
		int hits = 0;
		for (int j = 0; j < cols; j++)
			if ((pr[j] > threshold) == (lr[j] > 0.5f)) hits++;
		return (double)hits / (double)cols;
	}
	case 2: // categorical accuracy
		return gk_argmax(lr, ycols) == gk_argmax(pr, cols) ? 1.0 : 0.0;
	case 3: { // sparse categorical accuracy: a whole class index
		float l = lr[0];
		if (!(l >= 0.0f && l < (float)cols)) return 0.0;
		int c = (int)l;
		return ((float)c == l && c == gk_argmax(pr, cols)) ? 1.0 : 0.0;
	}
	case 4: // top-k
		return gk_in_top_k(pr, cols, gk_argmax(lr, ycols), k);
	case 5: { // sparse top-k
		double t = trunc((double)lr[0]);
		if (!(t >= 0.0 && t < (double)cols)) {
			*bad = true;
			return 0.0;
		}
		return gk_in_top_k(pr, cols, (int)t, k);
	}
	case 6:
	case 7: { // mean absolute or squared error
		double sum = 0.0;
		for (int j = 0; j < cols; j++) {
			double d = (double)pr[j] - (double)lr[j];
			sum += kind == 6 ? fabs(d) : d * d;
		}
		return sum / (double)cols;
	}
	}
	return 0.0;
}

// gk_metric_sum: out[0] = the sum over the rows of p (cols each) of each
// sample's gk_metric_score against y (ycols each), out[1] = the number of
// rows whose sparse label is not a class index (ops.MetricBatch).
// Launched as ONE block (a power of two threads, shared memory
// 2·blockDim.x doubles).
extern "C" __global__ void gk_metric_sum(const float *p, const float *y, float *out, int rows, int cols, int ycols, int kind,
		float threshold, int k) {
	extern __shared__ double sd[];
	double *sb = sd + blockDim.x;
	double sum = 0.0, bads = 0.0;
	for (int r = threadIdx.x; r < rows; r += blockDim.x) {
		bool bad = false;
		sum += gk_metric_score(kind, y + (size_t)r * ycols, p + (size_t)r * cols, cols, ycols, threshold, k, &bad);
		if (bad) bads += 1.0;
	}
	sd[threadIdx.x] = sum;
	sb[threadIdx.x] = bads;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			sd[threadIdx.x] += sd[threadIdx.x + s];
			sb[threadIdx.x] += sb[threadIdx.x + s];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		out[0] = (float)sd[0];
		out[1] = (float)sb[0];
	}
}

// gk_top_k_rank is ops.TopKRank: row[j]'s place from the largest value
// down, ties in column order.
__device__ int gk_top_k_rank(const float *row, int cols, int j) {
	int rank = 0;
	for (int i = 0; i < cols; i++)
		if (row[i] > row[j] || (row[i] == row[j] && i < j)) rank++;
	return rank;
}

// gk_metric_pr: Keras' Precision and Recall counts (ops'
// MetricPrecisionRecall): out = tp, fp, fn and the outputs not in [0, 1],
// over columns [lo, hi) (topk 0: no top-k; threshold already resolved).
// Launched as ONE block (a power of two threads, shared memory
// 4·blockDim.x doubles).
extern "C" __global__ void gk_metric_pr(const float *p, const float *y, float *out, int rows, int cols, float threshold,
		int topk, int lo, int hi) {
	extern __shared__ double sd[];
	double c[4] = {0.0, 0.0, 0.0, 0.0};
	for (int r = threadIdx.x; r < rows; r += blockDim.x) {
		const float *pr = p + (size_t)r * cols, *lr = y + (size_t)r * cols;
		for (int j = 0; j < cols; j++)
			if (!(pr[j] >= 0.0f && pr[j] <= 1.0f)) c[3] += 1.0;
		for (int j = lo; j < hi; j++) {
			bool predicted = (topk == 0 || gk_top_k_rank(pr, cols, j) < topk) && (pr[j] > threshold || threshold == 0.0f);
			bool positive = lr[j] != 0.0f;
			if (positive && predicted) c[0] += 1.0;
			else if (predicted) c[1] += 1.0;
			else if (positive) c[2] += 1.0;
		}
	}
	for (int q = 0; q < 4; q++) sd[q * blockDim.x + threadIdx.x] = c[q];
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			for (int q = 0; q < 4; q++) sd[q * blockDim.x + threadIdx.x] += sd[q * blockDim.x + threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		for (int q = 0; q < 4; q++) out[q] = (float)sd[q * blockDim.x];
}

// gk_metric_auc: Keras' AUC histogram (ops' MetricAUC) of n buckets for c
// histograms (multi: one per column, else c = 1): out = tp[c][n],
// fp[c][n], positives[c], negatives[c], then the outputs not in [0, 1].
// Each thread owns whole cells of out and counts them over the batch (the
// cell's column only, with multi), so the counts need no atomics. Any
// grid-stride launch.
extern "C" __global__ void gk_metric_auc(const float *p, const float *y, float *out, int rows, int cols, int n, int multi,
		int logits) {
	int c = multi ? cols : 1, total = rows * cols;
	int cells = 2 * c * n + 2 * c + 1;
	float scale = (float)(n - 1);
	GRID_STRIDE(cell, cells) {
		// What the cell counts: a bucket of tp or fp, a column's labels,
		// or the bad outputs.
		int kind, col, bucket = 0;
		if (cell < 2 * c * n) {
			kind = cell < c * n ? 0 : 1; // tp, fp
			int k = cell % (c * n);
			col = k / n;
			bucket = k % n;
		} else if (cell < 2 * c * n + 2 * c) {
			int k = cell - 2 * c * n;
			kind = k < c ? 2 : 3; // positives, negatives
			col = k % c;
		} else {
			kind = 4;
			col = 0;
		}
		double count = 0.0;
		int start = 0, step = 1;
		if (multi && kind != 4) start = col, step = cols;
		for (int i = start; i < total; i += step) {
			float v = p[i];
			if (logits) v = (float)(1.0 / (1.0 + exp(-(double)v)));
			bool ok = v >= 0.0f && v <= 1.0f;
			if (kind == 4) {
				if (!ok) count += 1.0;
				continue;
			}
			if (!ok) continue;
			bool positive = y[i] != 0.0f;
			if (kind == 2) {
				if (positive) count += 1.0;
			} else if (kind == 3) {
				if (!positive) count += 1.0;
			} else if (positive == (kind == 0)) {
				int b = (int)ceil((double)(v * scale)) - 1;
				if (b < 0) b = 0;
				if (b == bucket) count += 1.0;
			}
		}
		out[cell] = (float)count;
	}
}

// gk_f1_predicted is ops.F1Predicted.
__device__ bool gk_f1_predicted(const float *row, int cols, int j, float threshold) {
	if (threshold != 0.0f) return row[j] > threshold;
	float top = row[0];
	for (int i = 0; i < cols; i++) top = isnan(top) || isnan(row[i]) ? NAN : fmaxf(top, row[i]);
	return row[j] >= top && fabs((double)row[j]) > 1e-12;
}

// gk_metric_f1: Keras' F1Score counts (ops' MetricF1): out = tp[cols],
// fp[cols], fn[cols], the labels' sums[cols], then 0. One thread a column,
// summing over the rows in order, in double as ops does. Any grid-stride
// launch.
extern "C" __global__ void gk_metric_f1(const float *p, const float *y, float *out, int rows, int cols, float threshold) {
	GRID_STRIDE(j, cols) {
		double tp = 0.0, fp = 0.0, fn = 0.0, s = 0.0;
		for (int r = 0; r < rows; r++) {
			double pred = gk_f1_predicted(p + (size_t)r * cols, cols, j, threshold) ? 1.0 : 0.0;
			double label = (double)y[(size_t)r * cols + j];
			tp += pred * label;
			fp += pred * (1.0 - label);
			fn += (1.0 - pred) * label;
			s += label;
		}
		out[j] = (float)tp;
		out[cols + j] = (float)fp;
		out[2 * cols + j] = (float)fn;
		out[3 * cols + j] = (float)s;
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) out[4 * cols] = 0.0f;
}

// The merge ops (Keras' merge layers: ops.Binary, ops.Scale).
//
// GK_BCAST_PARAMS are an ops.BroadcastLayout (launch.BroadcastArgs): nd
// merged axes of the output, row-major, their sizes d0..d5 and the strides
// of a (a0..a5) and of b (b0..b5) along them, 0 where that input is
// broadcast; the axes past nd are unused.
#define GK_MAX_BCAST 6
#define GK_BCAST_PARAMS                                                                                          \
	int nd, int d0, int d1, int d2, int d3, int d4, int d5, int a0, int a1, int a2, int a3, int a4, int a5, int b0, \
		int b1, int b2, int b3, int b4, int b5

struct gk_bcast {
	int nd;
	int d[GK_MAX_BCAST], sa[GK_MAX_BCAST], sb[GK_MAX_BCAST];
};

#define GK_BCAST_LOAD(l) \
	const gk_bcast l = {nd, {d0, d1, d2, d3, d4, d5}, {a0, a1, a2, a3, a4, a5}, {b0, b1, b2, b3, b4, b5}}

// gk_binary_value is ops' apply: kind is an ops.BinaryKind (add 1,
// subtract 2, multiply 3, maximum 4, minimum 5, divide 6); maximum and
// minimum give a NaN of either input.
__device__ __forceinline__ float gk_binary_value(int kind, float a, float b) {
	switch (kind) {
	case 1: return __fadd_rn(a, b);
	case 2: return __fsub_rn(a, b);
	case 3: return __fmul_rn(a, b);
	case 4: return (a != a || a >= b) ? a : b;
	case 5: return (a != a || a <= b) ? a : b;
	case 6: return __fdiv_rn(a, b);
	}
	return NAN;
}

// gk_binary_term is ops' gradTerm: one output value's share of the
// gradient of input wrt (0: a, 1: b). Maximum and minimum follow
// TensorFlow's _MaximumMinimumGrad: the mask a >= b (a <= b) gives dy to a
// where it holds, to b where it does not (a tie: all to a).
__device__ __forceinline__ float gk_binary_term(int kind, int wrt, float a, float b, float dy) {
	switch (kind) {
	case 1: return dy;
	case 2: return wrt ? -dy : dy;
	case 3: return __fmul_rn(dy, wrt ? a : b);
	case 4:
	case 5: {
		bool mask = kind == 4 ? a >= b : a <= b;
		return mask == (wrt == 0) ? dy : 0.0f;
	}
	case 6: return wrt ? __fmul_rn(dy, __fdiv_rn(__fdiv_rn(-a, b), b)) : __fdiv_rn(dy, b);
	}
	return NAN;
}

// gk_binary: out = kind(a, b), n output values, a and b broadcast as the
// layout maps them (ops.BinaryForward). Any grid-stride launch.
extern "C" __global__ void gk_binary(int kind, const float *a, const float *b, float *out, int n, GK_BCAST_PARAMS) {
	GK_BCAST_LOAD(l);
	GRID_STRIDE(i, n) {
		int ia = 0, ib = 0;
		for (int k = l.nd - 1, j = i; k >= 0; k--) {
			int c = j % l.d[k];
			j /= l.d[k];
			ia += c * l.sa[k];
			ib += c * l.sb[k];
		}
		out[i] = gk_binary_value(kind, a[ia], b[ib]);
	}
}

// gk_binary_grad: out = the gradient of input wrt, its n values, given a,
// b and the output's gradient dy (ops.BinaryBackward). A thread per value
// of out sums the terms of the output values it was broadcast to, in the
// output's order, in double from the first term, as ops does: the CPU's
// bits. Any grid-stride launch.
extern "C" __global__ void gk_binary_grad(int kind, int wrt, const float *a, const float *b, const float *dy, float *out,
		int n, GK_BCAST_PARAMS) {
	GK_BCAST_LOAD(l);
	const int *ts = wrt ? l.sb : l.sa;
	int os[GK_MAX_BCAST], kept[GK_MAX_BCAST], red[GK_MAX_BCAST];
	int nk = 0, nr = 0, rsize = 1;
	for (int k = l.nd - 1, s = 1; k >= 0; k--) {
		os[k] = s;
		s *= l.d[k];
	}
	for (int k = 0; k < l.nd; k++) {
		if (ts[k] != 0) {
			kept[nk++] = k;
		} else {
			red[nr++] = k;
			rsize *= l.d[k];
		}
	}
	GRID_STRIDE(e, n) {
		int base = 0, ba = 0, bb = 0;
		for (int i = nk - 1, j = e; i >= 0; i--) {
			int k = kept[i], c = j % l.d[k];
			j /= l.d[k];
			base += c * os[k];
			ba += c * l.sa[k];
			bb += c * l.sb[k];
		}
		double sum = 0.0;
		for (int r = 0; r < rsize; r++) {
			int o = base, ia = ba, ib = bb;
			for (int i = nr - 1, j = r; i >= 0; i--) {
				int k = red[i], c = j % l.d[k];
				j /= l.d[k];
				o += c * os[k];
				ia += c * l.sa[k];
				ib += c * l.sb[k];
			}
			double t = (double)gk_binary_term(kind, wrt, a[ia], b[ib], dy[o]);
			sum = r == 0 ? t : __dadd_rn(sum, t);
		}
		out[e] = (float)sum;
	}
}

// gk_scale_to: out = x·c, or x/c when divide (ops.ScaleForward: Keras'
// Average divides), plus offset when it is not 0 (Keras' Rescaling, the
// product rounded first), n values.
extern "C" __global__ void gk_scale_to(const float *x, float *out, int n, float c, int divide, float offset) {
	GRID_STRIDE(i, n) {
		float y = divide ? __fdiv_rn(x[i], c) : __fmul_rn(x[i], c);
		out[i] = offset != 0.0f ? __fadd_rn(y, offset) : y;
	}
}

// gk_copy_cols: the rows×cols block at column src_off of src, rows of
// src_ld values, copied to column dst_off of dst, rows of dst_ld: one input
// of a Concatenate into its place in the output (ops.ConcatForward), or
// one input's slice out of the output's gradient (ops.ConcatBackward).
// Any grid-stride launch.
extern "C" __global__ void gk_copy_cols(const float *src, int src_ld, int src_off, float *dst, int dst_ld, int dst_off,
		int rows, int cols) {
	GRID_STRIDE(i, rows * cols) {
		int r = i / cols, c = i % cols;
		dst[(size_t)r * dst_ld + dst_off + c] = src[(size_t)r * src_ld + src_off + c];
	}
}

// gk_pad2d: the images x, n×h×w×c (channels last), with top and bottom rows
// and left and right columns of zeros around, written whole into y,
// n×(top+h+bottom)×(left+w+right)×c: a ZeroPadding2D, or a Cropping2D's
// gradient (ops.Pad2DForward). Any grid-stride launch.
extern "C" __global__ void gk_pad2d(const float *x, float *y, int n, int h, int w, int c, int top, int bottom, int left,
		int right) {
	int lh = h + top + bottom, lw = w + left + right;
	GRID_STRIDE(o, n * lh * lw * c) {
		int k = o % c, j = (o / c) % lw, i = (o / c / lw) % lh, b = o / c / lw / lh;
		int si = i - top, sj = j - left;
		y[o] = (si >= 0 && si < h && sj >= 0 && sj < w) ? x[(((size_t)b * h + si) * w + sj) * c + k] : 0.0f;
	}
}

// gk_crop2d: the images x, n×(top+h+bottom)×(left+w+right)×c, cropped to
// y, n×h×w×c: a Cropping2D, or a ZeroPadding2D's gradient
// (ops.Crop2DForward). Any grid-stride launch.
extern "C" __global__ void gk_crop2d(const float *x, float *y, int n, int h, int w, int c, int top, int bottom, int left,
		int right) {
	int lh = h + top + bottom, lw = w + left + right;
	GRID_STRIDE(o, n * h * w * c) {
		int k = o % c, j = (o / c) % w, i = (o / c / w) % h, b = o / c / w / h;
		y[o] = x[(((size_t)b * lh + i + top) * lw + j + left) * c + k];
	}
}

// gk_transpose: each of the batch's rows×cols matrices of x transposed into
// y, cols×rows: a batch of transposes (ops.PermuteParams.Transposes), the
// values of ops.PermuteForward. 32×32 blocks of a matrix go through shared
// memory, read along the block's rows and written along its columns, so
// that both touch consecutive addresses; a shared row holds 33 floats, so
// that a block's column lies in 32 banks. Shared memory: 32·33 floats. Any
// launch: the blocks go over the tiles, a block's threads over a tile.
extern "C" __global__ void gk_transpose(const float *x, float *y, int batch, int rows, int cols) {
	extern __shared__ float s[];
	int tr = (rows + 31) / 32, tc = (cols + 31) / 32;
	for (int t = blockIdx.x; t < batch * tr * tc; t += gridDim.x) {
		int b = t / (tr * tc), r0 = t / tc % tr * 32, c0 = t % tc * 32;
		const float *xb = x + (size_t)b * rows * cols;
		float *yb = y + (size_t)b * rows * cols;
		for (int e = threadIdx.x; e < 32 * 32; e += blockDim.x) {
			int i = e / 32, j = e % 32;
			if (r0 + i < rows && c0 + j < cols) s[i * 33 + j] = xb[(size_t)(r0 + i) * cols + c0 + j];
		}
		__syncthreads();
		for (int e = threadIdx.x; e < 32 * 32; e += blockDim.x) {
			int j = e / 32, i = e % 32; // y's row c0+j, column r0+i
			if (r0 + i < rows && c0 + j < cols) yb[(size_t)(c0 + j) * rows + r0 + i] = s[i * 33 + j];
		}
		__syncthreads();
	}
}

// gk_permute: y, n values, is x with its axes reordered (ops.PermuteForward),
// any permutation of up to six axes in its merged form
// (ops.PermuteParams.Merged): y's axis a has d_a values and steps st_a values
// of x; the axes after rank have one value. Any grid-stride launch.
extern "C" __global__ void gk_permute(const float *x, float *y, int n, int d0, int d1, int d2, int d3, int d4, int d5,
		int st0, int st1, int st2, int st3, int st4, int st5) {
	int d[6] = {d0, d1, d2, d3, d4, d5}, st[6] = {st0, st1, st2, st3, st4, st5};
	GRID_STRIDE(o, n) {
		size_t src = 0;
		int r = o;
		for (int a = 5; a >= 0; a--) {
			src += (size_t)(r % d[a]) * st[a];
			r /= d[a];
		}
		y[o] = x[src];
	}
}

// gk_upsample2d: each pixel of the images x, n×h×w×c, repeated sh times
// down and sw times across into y, n×(h·sh)×(w·sw)×c: an UpSampling2D
// with interpolation "nearest" (ops.UpSampleForward). Any grid-stride
// launch.
extern "C" __global__ void gk_upsample2d(const float *x, float *y, int n, int h, int w, int c, int sh, int sw) {
	int oh = h * sh, ow = w * sw;
	GRID_STRIDE(o, n * oh * ow * c) {
		int k = o % c, j = (o / c) % ow, i = (o / c / ow) % oh, b = o / c / ow / oh;
		y[o] = x[(((size_t)b * h + i / sh) * w + j / sw) * c + k];
	}
}

// gk_upsample2d_grad: the gradient of gk_upsample2d's input, dx
// (n×h×w×c), given its output's, dy: each pixel's sh×sw block of dy
// summed in float, down the block's rows and across each, the order of
// ops.UpSampleBackward (the same bits). Any grid-stride launch.
extern "C" __global__ void gk_upsample2d_grad(const float *dy, float *dx, int n, int h, int w, int c, int sh, int sw) {
	int oh = h * sh, ow = w * sw;
	GRID_STRIDE(o, n * h * w * c) {
		int k = o % c, j = (o / c) % w, i = (o / c / w) % h, b = o / c / w / h;
		float s = 0.0f;
		for (int a = 0; a < sh; a++) {
			const float *row = dy + (((size_t)b * oh + (size_t)i * sh + a) * ow + (size_t)j * sw) * c + k;
			for (int e = 0; e < sw; e++) s = __fadd_rn(s, row[(size_t)e * c]);
		}
		dx[o] = s;
	}
}

// gk_resize_coord is ops.ResizeCoord: where output row (or column) i of
// out reads an axis of in pixels, TensorFlow's half-pixel scaler in
// float.
__device__ __forceinline__ void gk_resize_coord(int i, int in, int out, int nearest, int *lo, int *hi, float *frac) {
	float scale = __fdiv_rn((float)in, (float)out);
	float c = __fadd_rn((float)i, 0.5f);
	if (nearest) {
		*lo = max(min((int)floorf(__fmul_rn(c, scale)), in - 1), 0);
		*hi = *lo;
		*frac = 0.0f;
		return;
	}
	float v = __fsub_rn(__fmul_rn(c, scale), 0.5f);
	float fl = floorf(v);
	*lo = max((int)fl, 0);
	*hi = min((int)ceilf(v), in - 1);
	*frac = __fsub_rn(v, fl);
}

// gk_resize: the box of bh×bw pixels from row top and column left of each
// of the images x (n×h×w×c) resized to oh×ow into y, as tf.image.resize
// without antialiasing (ops.ResizeForward, the same operations rounded
// the same way): Keras' Resizing and CenterCrop. Any grid-stride launch.
extern "C" __global__ void gk_resize(const float *x, float *y, int n, int h, int w, int c, int top, int left, int bh, int bw,
		int oh, int ow, int nearest) {
	GRID_STRIDE(o, n * oh * ow * c) {
		int k = o % c, ox = (o / c) % ow, oy = (o / c / ow) % oh, b = o / c / ow / oh;
		int y0, y1, x0, x1;
		float fy, fx;
		gk_resize_coord(oy, bh, oh, nearest, &y0, &y1, &fy);
		gk_resize_coord(ox, bw, ow, nearest, &x0, &x1, &fx);
		const float *img = x + (size_t)b * h * w * c;
		const float *r0 = img + (size_t)(y0 + top) * w * c, *r1 = img + (size_t)(y1 + top) * w * c;
		size_t c0 = (size_t)(x0 + left) * c + k, c1 = (size_t)(x1 + left) * c + k;
		if (nearest) {
			y[o] = r0[c0];
			continue;
		}
		float t = __fadd_rn(r0[c0], __fmul_rn(__fsub_rn(r0[c1], r0[c0]), fx));
		float bt = __fadd_rn(r1[c0], __fmul_rn(__fsub_rn(r1[c1], r1[c0]), fx));
		y[o] = __fadd_rn(t, __fmul_rn(__fsub_rn(bt, t), fy));
	}
}

// gk_batch_matmul: for each of batch samples, c = op(a)·op(b), a sample's
// a m×k (stored k×m with trans_a), its b k×n (stored n×k with trans_b),
// its c m×n: a Dot layer's batch_dot and its gradients
// (ops.BatchMatMulForward). Each value of c sums its k products in
// double, in order, then rounds: the CPU's bits. Any grid-stride launch.
extern "C" __global__ void gk_batch_matmul(const float *a, const float *b, float *c, int batch, int m, int k, int n,
		int trans_a, int trans_b) {
	int ar = trans_a ? 1 : k, ac = trans_a ? m : 1;
	int br = trans_b ? 1 : n, bc = trans_b ? k : 1;
	GRID_STRIDE(o, batch * m * n) {
		int j = o % n, i = (o / n) % m, s = o / n / m;
		const float *as = a + (size_t)s * m * k + (size_t)i * ar;
		const float *bs = b + (size_t)s * k * n + (size_t)j * bc;
		double sum = 0.0;
		for (int t = 0; t < k; t++) sum = __dadd_rn(sum, __dmul_rn((double)as[(size_t)t * ac], (double)bs[(size_t)t * br]));
		c[o] = (float)sum;
	}
}

// gk_l2_norm is √max(Σx², 1e-12) of the len values of x, stride apart,
// the squares summed in double in order (ops' l2Norm); *normed says
// whether Σx² reached 1e-12, so that the norm has a gradient.
__device__ double gk_l2_norm(const float *x, int len, int stride, bool *normed) {
	double s = 0.0;
	for (int t = 0; t < len; t++) {
		double v = x[(size_t)t * stride];
		s = __dadd_rn(s, __dmul_rn(v, v));
	}
	*normed = s >= NORM_EPSILON_D;
	return sqrt(gk_max_go(s, NORM_EPSILON_D));
}

// gk_l2_normalize: x, outer runs of len values inner apart (a tensor
// normalized along an axis of size len, inner the product of the sizes
// after it), each run divided by its gk_l2_norm into y: Keras' Dot with
// normalize=True (ops.L2NormalizeForward, the same bits). A thread per
// run; any grid-stride launch.
extern "C" __global__ void gk_l2_normalize(const float *x, float *y, int outer, int len, int inner) {
	GRID_STRIDE(r, outer * inner) {
		size_t first = (size_t)(r / inner) * len * inner + r % inner;
		bool normed;
		double norm = gk_l2_norm(x + first, len, inner, &normed);
		for (int t = 0; t < len; t++) {
			size_t at = first + (size_t)t * inner;
			y[at] = (float)__ddiv_rn((double)x[at], norm);
		}
	}
}

// gk_l2_normalize_grad: the gradient dx of gk_l2_normalize's input x
// given its output's, dy: dy/ν - x·(Σ x·dy)/ν³ per run, ν its norm, or
// dy/ν where Σx² fell below 1e-12; in double, in ops.L2NormalizeBackward's
// order (the same bits). A thread per run; any grid-stride launch.
extern "C" __global__ void gk_l2_normalize_grad(const float *x, const float *dy, float *dx, int outer, int len,
		int inner) {
	GRID_STRIDE(r, outer * inner) {
		size_t first = (size_t)(r / inner) * len * inner + r % inner;
		bool normed;
		double norm = gk_l2_norm(x + first, len, inner, &normed);
		double c = 0.0;
		if (normed) {
			double d = 0.0;
			for (int t = 0; t < len; t++) {
				size_t at = first + (size_t)t * inner;
				d = __dadd_rn(d, __dmul_rn((double)x[at], (double)dy[at]));
			}
			c = __ddiv_rn(d, __dmul_rn(__dmul_rn(norm, norm), norm));
		}
		for (int t = 0; t < len; t++) {
			size_t at = first + (size_t)t * inner;
			dx[at] = (float)__dsub_rn(__ddiv_rn((double)dy[at], norm), __dmul_rn((double)x[at], c));
		}
	}
}

// gk_mask: the sequence mask of x, rows rows of width values (ops.Mask):
// out[r] is 1 when a value of row r differs from value, else 0. A thread
// per row; any grid-stride launch.
extern "C" __global__ void gk_mask(const float *x, float *out, int rows, int width, float value) {
	GRID_STRIDE(r, rows) {
		float m = 0.0f;
		for (int j = 0; j < width; j++) {
			if (x[(size_t)r * width + j] != value) {
				m = 1.0f;
				break;
			}
		}
		out[r] = m;
	}
}

// The recurrent layers' cells (ops.RecurrenceCell).
#define CELL_RNN 1
#define CELL_LSTM 2
#define CELL_GRU 3

// gk_act_call is gk_act as a call: the recurrent kernels apply several
// activations per thread, each inlined would multiply their code.
__device__ __noinline__ float gk_act_call(int act, float alpha, float v) { return gk_act(act, alpha, v); }

// gk_act_gradient is gk_act_grad for one value: act'(x)·g given y = act(x).
__device__ __noinline__ float gk_act_gradient(int act, float alpha, float x, float y, float g) {
	switch (act) {
	case ACT_LINEAR: return g;
	case ACT_RELU: return x > 0.0f ? g : 0.0f;
	case ACT_SIGMOID: return g * y * (1.0f - y);
	case ACT_TANH: return g * (1.0f - y * y);
	default: return g * gk_act_deriv(act, alpha, x, y);
	}
}

// gk_rec_planes is the number of planes a cell keeps per step
// (ops.RecurrenceParams.Planes); GK_PLANE(f, k) is plane f of step k.
__device__ __forceinline__ int gk_rec_planes(int cell) { return cell == CELL_LSTM ? 11 : (cell == CELL_GRU ? 8 : 2); }
__device__ __forceinline__ int gk_rec_gates(int cell) { return cell == CELL_LSTM ? 4 : (cell == CELL_GRU ? 3 : 1); }
#define GK_PLANE(f, k) (planes + ((size_t)(f) * T + (k)) * B * U)

// gk_rec_shown says whether sample b's output at its k-th step read is its
// state: whether the mask keeps a step up to k (always without a mask or
// initial states h0; before the first step kept the output is zero).
__device__ __forceinline__ bool gk_rec_shown(const float *mask, const float *h0, int b, int T, int k, int backwards) {
	if (!mask || !h0) return true;
	for (int i = 0; i <= k; i++) {
		if (mask[(size_t)b * T + (backwards ? T - 1 - i : i)] != 0.0f) return true;
	}
	return false;
}

// gk_rec_fwd: step k of a recurrence (ops.RecurrenceForward), reading
// position t of the projections proj (B, T, G·U); z (B, G·U) is the
// previous state times the recurrent kernel (NULL at the first step from
// a zero state), rb a GRU's recurrent bias (or NULL), h0 and c0 (B, U)
// the initial states (or NULL: zero), mask (B, T) the steps to skip (or
// NULL): a skipped step keeps the state, and outputs the output before it
// (zero with zero_masked and sequences). It writes the step's planes and,
// when y is not NULL, the output: every step's (sequences) or the last.
// A thread per (sample, unit); any grid-stride launch.
extern "C" __global__ void gk_rec_fwd(int cell, const float *proj, const float *z, const float *rb, float *planes, float *y,
		int B, int T, int U, int t, int k, int act, float alpha, int ract, float ralpha, int sequences,
		const float *h0, const float *c0, const float *mask, int backwards, int zero_masked) {
	int G = gk_rec_gates(cell), gu = G * U;
	GRID_STRIDE(e, B * U) {
		int b = e / U, j = e % U;
		const float *xp = proj + ((size_t)b * T + t) * gu;
		float zz[4];
		for (int g = 0; g < G; g++) {
			float v = z ? z[(size_t)b * gu + g * U + j] : 0.0f;
			if (rb) v += rb[g * U + j];
			zz[g] = v;
		}
		float h;
		if (cell == CELL_RNN) {
			float pre = xp[j] + zz[0];
			GK_PLANE(0, k)[e] = pre;
			h = gk_act_call(act, alpha, pre);
		} else if (cell == CELL_LSTM) {
			float post[4];
			for (int g = 0; g < 4; g++) {
				float pre = xp[g * U + j] + zz[g];
				GK_PLANE(g, k)[e] = pre;
				post[g] = g == 2 ? gk_act_call(act, alpha, pre) : gk_act_call(ract, ralpha, pre);
				GK_PLANE(4 + g, k)[e] = post[g];
			}
			float c = post[0] * post[2];
			if (k > 0) c += post[1] * GK_PLANE(8, k - 1)[e];
			else if (c0) c += post[1] * c0[e];
			float tc = gk_act_call(act, alpha, c);
			GK_PLANE(8, k)[e] = c;
			GK_PLANE(9, k)[e] = tc;
			h = post[3] * tc;
		} else {
			float pz = xp[j] + zz[0], pr = xp[U + j] + zz[1];
			float zg = gk_act_call(ract, ralpha, pz), r = gk_act_call(ract, ralpha, pr);
			float rh = zz[2];
			float ph = xp[2 * U + j] + r * rh;
			float cand = gk_act_call(act, alpha, ph);
			float prev = k > 0 ? GK_PLANE(7, k - 1)[e] : (h0 ? h0[e] : 0.0f);
			GK_PLANE(0, k)[e] = pz;
			GK_PLANE(1, k)[e] = pr;
			GK_PLANE(2, k)[e] = ph;
			GK_PLANE(3, k)[e] = zg;
			GK_PLANE(4, k)[e] = r;
			GK_PLANE(5, k)[e] = cand;
			GK_PLANE(6, k)[e] = rh;
			h = cand + zg * (prev - cand);
		}
		int hp = gk_rec_planes(cell) - 1;
		if (mask && mask[(size_t)b * T + t] == 0.0f) { // skipped: the state stays
			h = k > 0 ? GK_PLANE(hp, k - 1)[e] : (h0 ? h0[e] : 0.0f);
			if (cell == CELL_LSTM) GK_PLANE(8, k)[e] = k > 0 ? GK_PLANE(8, k - 1)[e] : (c0 ? c0[e] : 0.0f);
		}
		GK_PLANE(hp, k)[e] = h;
		if (y) {
			bool skip = mask && mask[(size_t)b * T + t] == 0.0f;
			float out = gk_rec_shown(mask, h0, b, T, k, backwards) && !(zero_masked && sequences && skip) ? h : 0.0f;
			if (sequences) y[((size_t)b * T + k) * U + j] = out;
			else if (k == T - 1) y[e] = out;
		}
	}
}

// gk_rec_bwd: step k of a recurrence's backward pass
// (ops.RecurrenceBackward), given the planes of the forward pass and dy,
// the output's gradient: it adds the step's part of dy to dh, the
// gradient carried to the step's state, writes the gradients of the
// gates' pre-activations into position t of dproj (B, T, G·U) and, on
// the recurrent side, into dz (B, G·U), and leaves in dh the gradient of
// the previous state but for its path through the recurrent kernel (a
// GRU's z·dh, else 0) and in dc the gradient of the previous cell state
// (LSTM). h0, c0 and mask are gk_rec_fwd's: a skipped step passes dh and
// dc on, its gradients zero. A thread per (sample, unit); any grid-stride
// launch.
extern "C" __global__ void gk_rec_bwd(int cell, const float *dy, const float *planes, float *dproj, float *dz, float *dh,
		float *dc, int B, int T, int U, int t, int k, int act, float alpha, int ract, float ralpha, int sequences,
		const float *h0, const float *c0, const float *mask, int backwards, int zero_masked) {
	int G = gk_rec_gates(cell), gu = G * U;
	GRID_STRIDE(e, B * U) {
		int b = e / U, j = e % U;
		float gh = dh[e];
		bool skip = mask && mask[(size_t)b * T + t] == 0.0f;
		if (gk_rec_shown(mask, h0, b, T, k, backwards) && !(zero_masked && sequences && skip)) {
			if (sequences) gh += dy[((size_t)b * T + k) * U + j];
			else if (k == T - 1) gh += dy[e];
		}
		if (mask && mask[(size_t)b * T + t] == 0.0f) {
			dh[e] = gh;
			for (int g = 0; g < G; g++) {
				dproj[((size_t)b * T + t) * gu + g * U + j] = 0.0f;
				dz[(size_t)b * gu + g * U + j] = 0.0f;
			}
			continue;
		}
		float d[4], dr = 0.0f;
		if (cell == CELL_RNN) {
			d[0] = gk_act_gradient(act, alpha, GK_PLANE(0, k)[e], GK_PLANE(1, k)[e], gh);
			dh[e] = 0.0f;
		} else if (cell == CELL_LSTM) {
			float i = GK_PLANE(4, k)[e], f = GK_PLANE(5, k)[e], cc = GK_PLANE(6, k)[e], o = GK_PLANE(7, k)[e];
			float c = GK_PLANE(8, k)[e], tc = GK_PLANE(9, k)[e];
			float dpo = gh * tc;
			float dcs = dc[e] + gk_act_gradient(act, alpha, c, tc, gh * o);
			float dpi = dcs * cc, dpg = dcs * i;
			float dpf = k > 0 ? dcs * GK_PLANE(8, k - 1)[e] : (c0 ? dcs * c0[e] : 0.0f);
			dc[e] = dcs * f;
			d[0] = gk_act_gradient(ract, ralpha, GK_PLANE(0, k)[e], i, dpi);
			d[1] = gk_act_gradient(ract, ralpha, GK_PLANE(1, k)[e], f, dpf);
			d[2] = gk_act_gradient(act, alpha, GK_PLANE(2, k)[e], cc, dpg);
			d[3] = gk_act_gradient(ract, ralpha, GK_PLANE(3, k)[e], o, dpo);
			dh[e] = 0.0f;
		} else {
			float zg = GK_PLANE(3, k)[e], r = GK_PLANE(4, k)[e], cand = GK_PLANE(5, k)[e], rh = GK_PLANE(6, k)[e];
			float prev = k > 0 ? GK_PLANE(7, k - 1)[e] : (h0 ? h0[e] : 0.0f);
			float dpz = gh * (prev - cand);
			d[2] = gk_act_gradient(act, alpha, GK_PLANE(2, k)[e], cand, gh * (1.0f - zg));
			dh[e] = gh * zg;
			d[0] = gk_act_gradient(ract, ralpha, GK_PLANE(0, k)[e], zg, dpz);
			d[1] = gk_act_gradient(ract, ralpha, GK_PLANE(1, k)[e], r, d[2] * rh);
			dr = r;
		}
		for (int g = 0; g < G; g++) {
			dproj[((size_t)b * T + t) * gu + g * U + j] = d[g];
			dz[(size_t)b * gu + g * U + j] = (cell == CELL_GRU && g == 2) ? d[2] * dr : d[g];
		}
	}
}
// The GRU of Keras' reset_after=False (ops.GRUBeforeCell), whose reset
// gate multiplies the state before its product with the recurrent
// kernel's h columns: each step is two kernels with that product between.

// gk_gru0_fwd: step k of such a GRU. Phase 0: the gates z and r from the
// projections at position t and zr (B, 2·U: the state times the z and r
// columns; NULL at the first step), and r·h. Phase 1: the candidate from
// q (B, U: (r·h) times the h columns; NULL at the first step), the state
// and, when y is not NULL, the output. A thread per (sample, unit).
extern "C" __global__ void gk_gru0_fwd(int phase, const float *proj, const float *zr, const float *q, float *planes, float *y,
		int B, int T, int U, int t, int k, int act, float alpha, int ract, float ralpha, int sequences) {
	int gu = 3 * U;
	GRID_STRIDE(e, B * U) {
		int b = e / U, j = e % U;
		const float *xp = proj + ((size_t)b * T + t) * gu;
		float prev = k > 0 ? GK_PLANE(7, k - 1)[e] : 0.0f;
		if (phase == 0) {
			for (int g = 0; g < 2; g++) {
				float pre = xp[g * U + j];
				if (zr) pre += zr[(size_t)b * 2 * U + g * U + j];
				GK_PLANE(g, k)[e] = pre;
				GK_PLANE(3 + g, k)[e] = gk_act_call(ract, ralpha, pre);
			}
			GK_PLANE(6, k)[e] = k > 0 ? GK_PLANE(4, k)[e] * prev : 0.0f;
		} else {
			float pre = xp[2 * U + j];
			if (q) pre += q[e];
			float cand = gk_act_call(act, alpha, pre);
			float zg = GK_PLANE(3, k)[e];
			float h = cand + zg * (prev - cand);
			GK_PLANE(2, k)[e] = pre;
			GK_PLANE(5, k)[e] = cand;
			GK_PLANE(7, k)[e] = h;
			if (y) {
				if (sequences) y[((size_t)b * T + k) * U + j] = h;
				else if (k == T - 1) y[e] = h;
			}
		}
	}
}

// gk_gru0_bwd: step k of such a GRU back. Phase 0 adds the step's part of
// dy to dh and writes the candidate's pre-activation gradient into dq
// (B, U) and dproj's h block, leaves z·dh in dh and z's gradient in dzr's
// z block (B, 2·U) for phase 1. Phase 1, given drh (B, U: dq times the h
// columns' transpose; NULL at the first step), adds drh·r to dh and
// writes the gates' pre-activation gradients into dproj and dzr.
extern "C" __global__ void gk_gru0_bwd(int phase, const float *dy, const float *planes, float *dproj, float *dzr, float *dq,
		const float *drh, float *dh, int B, int T, int U, int t, int k, int act, float alpha, int ract, float ralpha,
		int sequences) {
	int gu = 3 * U;
	GRID_STRIDE(e, B * U) {
		int b = e / U, j = e % U;
		float prev = k > 0 ? GK_PLANE(7, k - 1)[e] : 0.0f;
		float *dzrow = dzr + (size_t)b * 2 * U;
		float *dprow = dproj + ((size_t)b * T + t) * gu;
		if (phase == 0) {
			float gh = dh[e];
			if (sequences) gh += dy[((size_t)b * T + k) * U + j];
			else if (k == T - 1) gh += dy[e];
			float zg = GK_PLANE(3, k)[e], cand = GK_PLANE(5, k)[e];
			dzrow[j] = gh * (prev - cand);
			float d = gk_act_gradient(act, alpha, GK_PLANE(2, k)[e], cand, gh * (1.0f - zg));
			dq[e] = d;
			dprow[2 * U + j] = d;
			dh[e] = gh * zg;
		} else {
			float r = GK_PLANE(4, k)[e], dr = 0.0f;
			if (drh) {
				dr = drh[e] * prev;
				dh[e] += drh[e] * r;
			}
			float dz = gk_act_gradient(ract, ralpha, GK_PLANE(0, k)[e], GK_PLANE(3, k)[e], dzrow[j]);
			float drr = gk_act_gradient(ract, ralpha, GK_PLANE(1, k)[e], r, dr);
			dzrow[j] = dz;
			dzrow[U + j] = drr;
			dprow[j] = dz;
			dprow[U + j] = drr;
		}
	}
}
#undef GK_PLANE
