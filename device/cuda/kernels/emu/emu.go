//go:build kernelemu && cgo

// Package emu runs the CUDA kernels of device/cuda (kernels/kernels.cu) on
// the host, compiled by g++ against cuda_emu.h, so that their logic can be
// tested where there is no GPU:
//
//	go test -tags kernelemu ./device/cuda/kernels/emu
//
// The blocks of a grid run one after another; the CUDA threads of a block
// are coroutines on the calling thread that switch at __syncthreads, so
// block-wide reductions and grid-stride loops run as written (the kernels
// without a barrier run one CUDA thread after another). LaunchKernel
// launches any kernel by name, as the emulated GPU of package device/cuda
// does. It needs cgo and a C++20 compiler, hence the build tag. The
// kernels are compiled to contract a*b+c into fused multiply-adds, as nvcc
// does by default, but not in the _rn intrinsics (cuda_emu.h); on x86-64
// that needs a CPU with FMA instructions (package init panics without).
//
// # Race mode
//
// That fixed schedule hides races: a kernel whose thread 0 writes a word
// that the other threads then read, with no __syncthreads between, passes,
// because thread 0 always runs first. In race mode (SetRace with a seed
// other than 0, or the environment variable GOKERAS_EMU_RACE=<seed> when
// the package is initialized) every launch, LaunchKernel's and the typed
// launchers', runs a second copy of the kernels (internal/race) compiled
// with GCC's ThreadSanitizer instrumentation, which calls the emulator at
// every load, store and atomic operation of a kernel:
//
//   - every kernel runs a coroutine per CUDA thread, and at each access the
//     seeded generator may switch to another runnable thread of the block,
//     chosen at random; a thread waiting at __syncthreads stays there until
//     every thread of the block that has not returned arrives; the blocks
//     run in a random order. The seed, the kernel's name and the launch's
//     shape choose the schedule, so a seed reproduces a failure.
//   - two threads of a block that touch one 4-byte word in one barrier
//     interval (no __syncthreads between their accesses), one of them with
//     a plain write, race, as do a plain read and an atomic write; atomics
//     among themselves do not. Two blocks of a launch race on a word of
//     global memory one of them writes plainly (the blocks of a launch are
//     not ordered). Shared memory is each block's own.
//   - a race fails the launch: LaunchKernel returns a *RaceError naming the
//     kernel, the memory (shared or global, and where), the two threads or
//     blocks and what each did; the typed launchers (BiasAct, Loss...),
//     which return no error for it, panic with it.
//
// The detection does not depend on the schedule (it looks at barrier
// intervals, not at the order the accesses happened in); the random
// switching makes the results of a racy kernel vary too, and tests that
// compare them fail. Words are 4 bytes: two threads writing different
// bytes of one word would be reported (kernels.cu writes no bytes). Run
// the tests in race mode with several seeds:
//
//	for s in 1 2 3; do GOKERAS_EMU_RACE=$s go test -tags kernelemu ./device/cuda/kernels/emu; done
//
// scripts/race-controls.sh does, and checks that race mode fails a copy
// of kernels.cu without the barrier after gk_zero_one_labels' *flag = 1,
// which the fixed schedule passes. In race mode (and in
// LaunchKernelTraced) LaunchKernel also knows the test kernels of
// internal/race/test_kernels.h, named emu_test_*.
//
// LaunchKernelTraced runs the instrumented copy too (in race mode with its
// schedule and detection, else in the fixed schedule) and reports the
// global memory a launch read and wrote, for device/cuda's stream-level
// checks. Race mode is slower than the normal one, which is unchanged.
//
// # What the emulator cannot see
//
// The GPU tests of device/cuda check what no emulation here does: real
// cuBLAS (sgemm is computed by package blas); memory coalescing and shared
// memory bank conflicts; warp-level behaviour (warp shuffles and votes,
// the implicit synchronicity of a warp's threads, which race mode treats
// as unordered like any two threads); memory ordering beyond __syncthreads
// and atomics (__threadfence); fatbin and PTX loading and the driver's JIT;
// the exact results of CUDA's math library (expf, logf, tanhf... are the
// host's, and GCC may fuse other products than nvcc in an expression such
// as a*b + c*d); timing, occupancy and launch limits other than the block
// size.
package emu

// #cgo CXXFLAGS: -std=c++20 -O1 -Wno-sign-compare
// #cgo LDFLAGS: -lstdc++ -lpthread
// #include <stdint.h>
// #include <stdlib.h>
// int emu_cpu_ok(void);
// void emu_set_race(void *direct, uint64_t seed);
// int emu_take_race(char *buf, size_t n);
// void emu_bias_act(int g, int b, const float *x, const float *bias, float *z, float *y, int rows, int cols, int act, float alpha);
// void emu_softmax_rows(int g, int b, const float *x, float *y, int rows, int cols);
// void emu_act_grad(int g, int b, const float *x, const float *y, const float *dy, float *dx, int n, int act, float alpha);
// void emu_softmax_grad_rows(int g, int b, const float *y, const float *dy, float *dx, int rows, int cols);
// void emu_sum_rows(int g, int b, const float *a, float *out, int rows, int cols);
// void emu_zero_one_labels(int b, const float *y, int n, int *flag);
// void emu_loss(int b, const float *p, const float *y, const float *w, const int *zero_one, int rows, int cols, int kind, double ls, double delta, float *out, int *bad);
// void emu_loss_grad(int g, int b, const float *p, const float *y, const float *w, const int *zero_one, const float *seed, int rows, int cols, int kind, double ls, double delta, float *dp, int *bad);
// void emu_update(int g, int b, int rule, float *w, float *s0, float *s1, float *s2, const float *gr, int n, int nesterov, const float *p, const float *gscale, float cv, int decays, float decay);
// void emu_abs_sq_sums(int g, int b, const float *x, int n, double *part);
// void emu_clip_scale(int b, const double *part, int parts, double clipnorm, float *scale);
// void emu_global_scale(int b, const double *part, int parts, double clipnorm, float *scale);
// void emu_penalty(int b, const double *part, int parts, double l1, double l2, double scale, float *out);
// void emu_penalty_grad(int g, int b, const float *x, const float *seed, float *out, int n, double l1, double l2x2, double scale);
// void emu_add(int g, int b, const float *a, const float *bb, float *out, int n);
// void emu_metric_sum(int b, const float *p, const float *y, float *out, int rows, int cols, int ycols, int kind, float threshold, int k);
// void emu_metric_pr(int b, const float *p, const float *y, float *out, int rows, int cols, float threshold, int topk, int lo, int hi);
// void emu_metric_auc(int g, int b, const float *p, const float *y, float *out, int rows, int cols, int n, int multi, int logits);
// void emu_metric_f1(int g, int b, const float *p, const float *y, float *out, int rows, int cols, float threshold);
// void emu_u8_to_f32(int g, int b, const unsigned char *in, float *out, int n, float scale);
// void emu_patches(int g, int b, const float *x, float *cols, const int *win);
// void emu_patches_grad(int g, int b, const float *dcols, float *dx, const int *win);
// void emu_pool(int g, int b, const float *x, float *y, int kind, const int *win);
// void emu_pool_grad(int g, int b, const float *x, const float *y, const float *dy, float *dx, int kind, const int *win);
// void emu_dropout(int g, int b, const float *x, float *y, int n, int per_row, const float *step, unsigned int keyLo, unsigned int keyHi, unsigned int threshold, float scale);
// void emu_norm_col_sums(int g, int b, int kind, const float *x, const float *mean, const float *var, const float *dy, const double *rowStats, int rows, int cols, double eps, int tw, int rps, double *part);
// void emu_norm_col_finish(int g, int b, int kind, double *part, int splits, int rows, int cols, float *out);
// void emu_batch_norm(int g, int b, const float *x, const float *mean, const float *var, const float *gamma, const float *beta, int rows, int cols, double eps, int tw, int rps, float *y);
// void emu_batch_norm_grad(int g, int b, const float *x, const float *mean, const float *var, const float *gamma, const float *dy, const double *sums, int rows, int cols, double eps, int tw, int rps, float *dx);
// void emu_layer_norm(int g, int b, int kind, const float *x, const float *gamma, const float *bb, int rows, int cols, double eps, float *out, double *rowStats);
// void emu_gather(int g, int b, const float *table, const float *idx, float *out, int m, int n, int rows, unsigned long long *bad);
// void emu_scatter_add(int g, int b, const float *idx, const float *dy, float *out, int m, int n, int rows, unsigned long long *bad);
// int emu_launch(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args);
import "C"

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/device/cuda/kernels/emu/internal/race"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// RaceEnv is the environment variable that turns race mode on when the
// package is initialized: its value is the seed (decimal, or hexadecimal
// with 0x), 0 or empty for off.
const RaceEnv = "GOKERAS_EMU_RACE"

func init() {
	if C.emu_cpu_ok() == 0 {
		panic("emu: the emulated kernels use fused multiply-adds, as nvcc's do, and this CPU has no FMA instructions")
	}
	if v := os.Getenv(RaceEnv); v != "" {
		seed, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			panic(fmt.Sprintf("emu: %s=%q is not a seed: %v", RaceEnv, v, err))
		}
		SetRace(seed)
	}
}

var raceSeed atomic.Uint64

// SetRace turns race mode on with seed, which chooses the schedules, or
// off with 0 (see the package documentation). Launches already running
// finish in the mode they started in.
func SetRace(seed uint64) {
	raceSeed.Store(seed)
	direct := race.Direct()
	if seed == 0 {
		direct = nil
	}
	C.emu_set_race(direct, C.uint64_t(seed))
}

// RaceSeed is race mode's seed, 0 when it is off.
func RaceSeed() uint64 { return raceSeed.Load() }

// RaceError is a race that race mode found in a launch: Report names the
// kernel, the memory, and the two threads (or blocks) and their accesses.
type RaceError struct{ Report string }

func (e *RaceError) Error() string { return "emu race mode: " + e.Report }

// typedMu serializes the typed launchers' calls in race mode, so that the
// race a call finds is the one it takes.
var typedMu sync.Mutex

// typed makes one of the typed launchers' calls into C. In race mode it
// panics with the *RaceError of the first race the call's launches found:
// those launchers are test helpers, and return no error for it.
func typed(call func()) {
	if raceSeed.Load() == 0 {
		call()
		return
	}
	typedMu.Lock()
	defer typedMu.Unlock()
	call()
	var buf [512]C.char
	if C.emu_take_race(&buf[0], C.size_t(len(buf))) != 0 {
		panic(&RaceError{Report: C.GoString(&buf[0])})
	}
}

// Launch is a grid of Grid blocks of Block threads.
type Launch struct{ Grid, Block int }

func f(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

func BiasAct(l Launch, x, b, z, y []float32, rows, cols, act int, alpha float32) {
	typed(func() {
		C.emu_bias_act(C.int(l.Grid), C.int(l.Block), f(x), f(b), f(z), f(y), C.int(rows), C.int(cols), C.int(act), C.float(alpha))
	})
}

func SoftmaxRows(l Launch, x, y []float32, rows, cols int) {
	typed(func() { C.emu_softmax_rows(C.int(l.Grid), C.int(l.Block), f(x), f(y), C.int(rows), C.int(cols)) })
}

func ActGrad(l Launch, x, y, dy, dx []float32, act int, alpha float32) {
	typed(func() {
		C.emu_act_grad(C.int(l.Grid), C.int(l.Block), f(x), f(y), f(dy), f(dx), C.int(len(dx)), C.int(act), C.float(alpha))
	})
}

func SoftmaxGradRows(l Launch, y, dy, dx []float32, rows, cols int) {
	typed(func() {
		C.emu_softmax_grad_rows(C.int(l.Grid), C.int(l.Block), f(y), f(dy), f(dx), C.int(rows), C.int(cols))
	})
}

func SumRows(l Launch, a, out []float32, rows, cols int) {
	typed(func() { C.emu_sum_rows(C.int(l.Grid), C.int(l.Block), f(a), f(out), C.int(rows), C.int(cols)) })
}

// LossCase is a Loss or LossGrad step's data: rows×cols predictions P,
// the targets Y (rows×cols, or rows class indices for the sparse kinds),
// and the sample weights W (nil: none).
type LossCase struct {
	Kind       ops.LossKind
	Params     ops.LossParams
	Rows, Cols int
	P, Y, W    []float32
}

// zeroOne runs the launch's label pass, as device/cuda does before its
// loss kernels when l.ZeroOne: gk_zero_one_labels over the targets in one
// block of launch.LabelsBlock. It returns the flag's address, nil without.
func (c LossCase) zeroOne(l launch.Loss) *C.int {
	if !l.ZeroOne {
		return nil
	}
	flag := new(C.int)
	*flag = 7 // the kernel must write it
	typed(func() { C.emu_zero_one_labels(C.int(launch.LabelsBlock), f(c.Y), C.int(len(c.Y)), flag) })
	return flag
}

// Loss runs a Loss step's kernels as device/cuda launches them
// (launch.ForLoss): the label pass when the kind needs it, then gk_loss as
// one block of block threads. bad starts at MaxInt32; it is the first row
// whose sparse target is not a class index.
func Loss(block int, c LossCase) (loss float32, bad int32, err error) {
	l, err := launch.ForLoss(c.Kind, c.Params)
	if err != nil {
		return 0, 0, err
	}
	flag := c.zeroOne(l)
	var out C.float
	b := C.int(1<<31 - 1)
	typed(func() {
		C.emu_loss(C.int(block), f(c.P), f(c.Y), f(c.W), flag, C.int(c.Rows), C.int(c.Cols), C.int(c.Kind),
			C.double(l.LabelSmoothing), C.double(l.Delta), &out, &b)
	})
	return float32(out), int32(b), nil
}

// LossGrad runs a LossGrad step's kernels as device/cuda launches them:
// the label pass when the kind needs it, then gk_loss_grad in l, writing
// seed·∂loss/∂p into dp. bad as for Loss.
func LossGrad(l Launch, c LossCase, seed float32, dp []float32) (bad int32, err error) {
	ll, err := launch.ForLoss(c.Kind, c.Params)
	if err != nil {
		return 0, err
	}
	flag := c.zeroOne(ll)
	b := C.int(1<<31 - 1)
	s := C.float(seed)
	typed(func() {
		C.emu_loss_grad(C.int(l.Grid), C.int(l.Block), f(c.P), f(c.Y), f(c.W), flag, &s, C.int(c.Rows), C.int(c.Cols),
			C.int(c.Kind), C.double(ll.LabelSmoothing), C.double(ll.Delta), f(dp), &b)
	})
	return int32(b), nil
}

// ZeroOneLabels runs gk_zero_one_labels over y in one block of block
// threads and returns the flag it wrote.
func ZeroOneLabels(block int, y []float32) int {
	flag := C.int(7)
	typed(func() { C.emu_zero_one_labels(C.int(block), f(y), C.int(len(y)), &flag) })
	return int(flag)
}

// Update runs optimizer update u of the weights w given their gradient g
// as device/cuda launches it (launch.ForUpdate): with ClipNorm,
// gk_abs_sq_sums over g in sums.Grid blocks of sums.Block threads and
// gk_clip_scale in one block of sums.Block, then the rule's kernel in l.
// slots are u's, in the order of u.SlotNames(), updated in place. It
// returns the factor gk_clip_scale wrote (0: none, or no ClipNorm). An
// update with GlobalClipNorm needs its step's factor: UpdateGlobal.
func Update(l, sums Launch, u optim.Update, w, g []float32, slots [][]float32) (scale float32, err error) {
	return update(l, sums, u, w, g, slots, nil)
}

// UpdateGlobal runs update u, which clips by global norm, as device/cuda
// launches it: the rule's kernel in l, reading the factor at global (the
// GlobalNorm step's float, GlobalScale) as the kernels read it from device
// memory.
func UpdateGlobal(l Launch, u optim.Update, w, g []float32, slots [][]float32, global *float32) error {
	if global == nil {
		return fmt.Errorf("emu: UpdateGlobal without a factor")
	}
	_, err := update(l, Launch{}, u, w, g, slots, global)
	return err
}

// GlobalScale runs a GlobalNorm step's kernels as device/cuda launches
// them (launch.GlobalParts): gk_abs_sq_sums over each gradient in
// launch.SumGrid blocks of block threads, one after another, then
// gk_global_scale in one block of block threads. It returns the factor
// optim.GlobalScale(clipNorm, grads...) computes.
func GlobalScale(block int, clipNorm float64, grads ...[]float32) float32 {
	ns := make([]int, len(grads))
	for j, g := range grads {
		ns[j] = len(g)
	}
	offsets, parts := launch.GlobalParts(ns)
	part := make([]float64, 2*max(parts, 1))
	for j, g := range grads {
		typed(func() {
			C.emu_abs_sq_sums(C.int(launch.SumGrid(len(g))), C.int(block), f(g), C.int(len(g)), d(part[2*offsets[j]:]))
		})
	}
	var out C.float
	typed(func() { C.emu_global_scale(C.int(block), d(part), C.int(parts), C.double(clipNorm), &out) })
	return float32(out)
}

func update(l, sums Launch, u optim.Update, w, g []float32, slots [][]float32, global *float32) (scale float32, err error) {
	ul, err := launch.ForUpdate(u)
	if err != nil {
		return 0, err
	}
	if err := u.CheckSlots(w, g, slots); err != nil {
		return 0, err
	}
	if ul.Global != (global != nil) {
		return 0, fmt.Errorf("emu: %v update: Global %t, a factor given %t", u.Rule, ul.Global, global != nil)
	}
	gscale := (*C.float)(unsafe.Pointer(global))
	if ul.ClipNorm > 0 {
		part := make([]float64, 2*sums.Grid)
		typed(func() { C.emu_abs_sq_sums(C.int(sums.Grid), C.int(sums.Block), f(g), C.int(len(g)), d(part)) })
		gscale = (*C.float)(unsafe.Pointer(&scale))
		typed(func() { C.emu_clip_scale(C.int(sums.Block), d(part), C.int(sums.Grid), C.double(ul.ClipNorm), gscale) })
	}
	var sl [3][]float32
	for i, j := range ul.Slots {
		if j >= 0 {
			sl[i] = slots[j]
		}
	}
	nesterov, decays := 0, 0
	if ul.Nesterov {
		nesterov = 1
	}
	if ul.Decays {
		decays = 1
	}
	typed(func() {
		C.emu_update(C.int(l.Grid), C.int(l.Block), C.int(u.Rule), f(w), f(sl[0]), f(sl[1]), f(sl[2]), f(g), C.int(len(w)),
			C.int(nesterov), f(ul.Scalars), gscale, C.float(ul.ClipValue), C.int(decays), C.float(ul.Decay))
	})
	return scale, nil
}

// Penalty runs a Penalty step's kernels as device/cuda launches them:
// gk_abs_sq_sums over x in sums.Grid blocks of sums.Block threads, then
// gk_penalty in one block of sums.Block: p's penalty of x
// (ops.PenaltyValue).
func Penalty(sums Launch, p ops.PenaltyParams, x []float32) float32 {
	part := make([]float64, 2*sums.Grid)
	typed(func() { C.emu_abs_sq_sums(C.int(sums.Grid), C.int(sums.Block), f(x), C.int(len(x)), d(part)) })
	var out C.float
	typed(func() {
		C.emu_penalty(C.int(sums.Block), d(part), C.int(sums.Grid), C.double(p.L1), C.double(p.L2), C.double(p.Factor()), &out)
	})
	return float32(out)
}

// PenaltyGrad runs gk_penalty_grad: out = seed·∂penalty/∂x
// (ops.PenaltyGradient).
func PenaltyGrad(l Launch, p ops.PenaltyParams, seed float32, x, out []float32) {
	s := C.float(seed)
	typed(func() {
		C.emu_penalty_grad(C.int(l.Grid), C.int(l.Block), f(x), &s, f(out), C.int(len(x)), C.double(p.L1), C.double(2*p.L2),
			C.double(p.Factor()))
	})
}

// MetricSum runs gk_metric_sum as one block of block threads: the sum of
// m's score over the rows of p (cols each) against y (ycols each) and the
// number of bad labels (ops.MetricBatch).
func MetricSum(block int, m ops.MetricParams, p, y []float32, rows, cols, ycols int) [2]float32 {
	var out [2]float32
	typed(func() {
		C.emu_metric_sum(C.int(block), f(p), f(y), f(out[:]), C.int(rows), C.int(cols), C.int(ycols), C.int(m.Kind),
			C.float(m.Threshold), C.int(m.K))
	})
	return out
}

// MetricCounts runs the confusion-count kernel of m's kind as
// device/cuda launches it (gk_metric_pr in one block of block threads,
// gk_metric_auc and gk_metric_f1 in l's grid): m's state for the batch
// (ops.MetricBatch), of ops.MetricStateSize values.
func MetricCounts(block int, l Launch, m ops.MetricParams, p, y []float32, rows, cols int) []float32 {
	out := make([]float32, ops.MetricStateSize(m, cols))
	for i := range out {
		out[i] = float32(math.NaN()) // every value must be written
	}
	switch m.Kind {
	case ops.MetricPrecisionRecall:
		threshold, lo, hi := m.PrecisionRecallColumns(cols)
		typed(func() {
			C.emu_metric_pr(C.int(block), f(p), f(y), f(out), C.int(rows), C.int(cols), C.float(threshold), C.int(m.K), C.int(lo), C.int(hi))
		})
	case ops.MetricAUC:
		typed(func() {
			C.emu_metric_auc(C.int(l.Grid), C.int(l.Block), f(p), f(y), f(out), C.int(rows), C.int(cols), C.int(m.Thresholds),
				cbool(m.MultiLabel), cbool(m.FromLogits))
		})
	case ops.MetricF1:
		typed(func() {
			C.emu_metric_f1(C.int(l.Grid), C.int(l.Block), f(p), f(y), f(out), C.int(rows), C.int(cols), C.float(m.Threshold))
		})
	}
	return out
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Add runs gk_add: out = a + b.
func Add(l Launch, a, b, out []float32) {
	typed(func() { C.emu_add(C.int(l.Grid), C.int(l.Block), f(a), f(b), f(out), C.int(len(out))) })
}

func U8ToF32(l Launch, in []byte, out []float32, scale float32) {
	typed(func() {
		C.emu_u8_to_f32(C.int(l.Grid), C.int(l.Block), (*C.uchar)(unsafe.Pointer(&in[0])), f(out), C.int(len(out)), C.float(scale))
	})
}

// window is w as the fourteen ints the image kernels take, in the field
// order of ops.Window.
func window(w ops.Window) *C.int {
	v := [...]C.int{C.int(w.Batch), C.int(w.H), C.int(w.W), C.int(w.C), C.int(w.KH), C.int(w.KW),
		C.int(w.StrideH), C.int(w.StrideW), C.int(w.DilationH), C.int(w.DilationW), C.int(w.PadTop), C.int(w.PadLeft),
		C.int(w.OH), C.int(w.OW)}
	return &v[0]
}

// Patches runs gk_patches: cols (w.Positions() × w.PatchSize()) = the
// patches of the images x.
func Patches(l Launch, w ops.Window, x, cols []float32) {
	typed(func() { C.emu_patches(C.int(l.Grid), C.int(l.Block), f(x), f(cols), window(w)) })
}

// PatchesGrad runs gk_patches_grad: dx = the images' gradient given the
// patches' gradient dcols.
func PatchesGrad(l Launch, w ops.Window, dcols, dx []float32) {
	typed(func() { C.emu_patches_grad(C.int(l.Grid), C.int(l.Block), f(dcols), f(dx), window(w)) })
}

// Pool runs gk_pool: y = the kind pooling of the images x.
func Pool(l Launch, kind ops.PoolKind, w ops.Window, x, y []float32) {
	typed(func() { C.emu_pool(C.int(l.Grid), C.int(l.Block), f(x), f(y), C.int(kind), window(w)) })
}

// PoolGrad runs gk_pool_grad: dx given x, y = Pool(x) and dy.
func PoolGrad(l Launch, kind ops.PoolKind, w ops.Window, x, y, dy, dx []float32) {
	typed(func() {
		C.emu_pool_grad(C.int(l.Grid), C.int(l.Block), f(x), f(y), f(dy), f(dx), C.int(kind), window(w))
	})
}

// Dropout runs gk_dropout over len(x) units, perRow a row: y = x with p's
// dropped units zeroed and the rest scaled, for the step and first row
// held by stepValues (ops.StepValues).
func Dropout(l Launch, p ops.DropoutParams, stepValues [4]float32, perRow int, x, y []float32) {
	typed(func() {
		C.emu_dropout(C.int(l.Grid), C.int(l.Block), f(x), f(y), C.int(len(x)), C.int(perRow), f(stepValues[:]),
			C.uint(uint32(p.Key)), C.uint(uint32(p.Key>>32)), C.uint(p.Threshold()), C.float(p.Scale()))
	})
}

func d(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s[0]))
}

// NormLaunch is how Norm launches a Norm step's kernels: the column-tiled
// ones (gk_norm_col_sums, gk_batch_norm, gk_batch_norm_grad) as Columns,
// gk_layer_norm as Rows (one block per row; Block a power of two), and
// gk_norm_col_finish as Finish (one thread per column).
type NormLaunch struct {
	Columns      launch.Columns
	Rows, Finish Launch
}

// Norm runs the kernels of a Norm step in the order device/cuda launches
// them: out = ops.NormForward(kind, p, rows, cols, in). The scratch the
// GPU keeps on the device is host memory here.
func Norm(l NormLaunch, kind ops.NormKind, p ops.NormParams, rows, cols int, in [][]float32, out []float32) error {
	o, err := launch.NormInputs(kind, in)
	if err != nil {
		return err
	}
	c := l.Columns
	if c.Rows != rows || c.Cols != cols {
		return fmt.Errorf("column launch for %d×%d, the step is %d×%d", c.Rows, c.Cols, rows, cols)
	}
	eps, k := C.double(p.Epsilon), C.int(kind)
	cg, cb, tw, rps := C.int(c.Grid()), C.int(c.Block), C.int(c.Tile), C.int(c.RowsPerSplit)
	part := make([]float64, c.SumDoubles())
	sums := func(rowStats []float64) {
		typed(func() {
			C.emu_norm_col_sums(cg, cb, k, f(o.X), f(o.Mean), f(o.Variance), f(o.DY), d(rowStats), C.int(rows), C.int(cols), eps, tw, rps, d(part))
		})
		typed(func() {
			C.emu_norm_col_finish(C.int(l.Finish.Grid), C.int(l.Finish.Block), k, d(part), C.int(c.Splits), C.int(rows), C.int(cols), f(out))
		})
	}
	layer := func(b []float32, rowStats []float64) {
		typed(func() {
			C.emu_layer_norm(C.int(l.Rows.Grid), C.int(l.Rows.Block), k, f(o.X), f(o.Gamma), f(b), C.int(rows), C.int(cols), eps, f(out), d(rowStats))
		})
	}
	switch kind {
	case ops.ColumnMean, ops.ColumnVariance, ops.BatchNormGammaGrad:
		sums(nil)
	case ops.BatchNorm:
		typed(func() {
			C.emu_batch_norm(cg, cb, f(o.X), f(o.Mean), f(o.Variance), f(o.Gamma), f(o.Beta), C.int(rows), C.int(cols), eps, tw, rps, f(out))
		})
	case ops.BatchNormGrad:
		var totals []float64
		if p.BatchStats {
			sums(nil)
			totals = part
		}
		typed(func() {
			C.emu_batch_norm_grad(cg, cb, f(o.X), f(o.Mean), f(o.Variance), f(o.Gamma), f(o.DY), d(totals), C.int(rows), C.int(cols), eps, tw, rps, f(out))
		})
	case ops.LayerNorm:
		layer(o.Beta, nil)
	case ops.LayerNormGrad:
		layer(o.DY, nil)
	case ops.LayerNormGammaGrad:
		rowStats := make([]float64, 2*rows)
		layer(nil, rowStats)
		sums(rowStats)
	}
	return nil
}

// Gather runs gk_gather: out (len(idx) × n) = the rows of table (rows × n,
// n = len(table)/rows) at idx, or the *ops.IndexError of the first bad
// index it flagged.
func Gather(l Launch, rows int, table, idx, out []float32) error {
	n := len(table) / rows
	bad := C.ulonglong(launch.NoBadIndex)
	typed(func() {
		C.emu_gather(C.int(l.Grid), C.int(l.Block), f(table), f(idx), f(out), C.int(len(idx)), C.int(n), C.int(rows), &bad)
	})
	return indexError(uint64(bad), rows)
}

// ScatterAdd clears out (rows × n), as device/cuda does before the launch,
// and runs gk_scatter_add: out = the gradient of Gather's table given dy
// (len(idx) × n), or the *ops.IndexError of the first bad index it flagged.
func ScatterAdd(l Launch, rows int, idx, dy, out []float32) error {
	n := len(out) / rows
	clear(out)
	bad := C.ulonglong(launch.NoBadIndex)
	typed(func() {
		C.emu_scatter_add(C.int(l.Grid), C.int(l.Block), f(idx), f(dy), f(out), C.int(len(idx)), C.int(n), C.int(rows), &bad)
	})
	return indexError(uint64(bad), rows)
}

// indexError is launch.IndexError as an error: nil, not a nil
// *ops.IndexError, when there is none.
func indexError(word uint64, rows int) error {
	if e := launch.IndexError(word, rows); e != nil {
		return e
	}
	return nil
}

// LaunchKernel runs kernel name of kernels.cu over a grid of grid blocks
// of block threads, its arguments in the 8-byte slots the CUDA driver
// takes (a pointer's address, an int's or a float's bits in the low
// bytes, a double's eight bytes), each decoded to the kernel's parameter
// type: the emulated GPU of package device/cuda launches through it.
// Pointers are addresses in C memory, where the kernel reads and writes
// as a GPU kernel does in device memory. It fails for a kernel it does not
// know and for a count of arguments that is not the kernel's. The kernel
// has shared bytes of dynamic shared memory, as on a GPU: its s[] and
// sd[] are the same memory, which starts as NaNs, so reading past those
// bytes gives NaNs, and writing past them fails the launch. The kernels
// that meet at __syncthreads run a thread per CUDA thread; the others,
// one CUDA thread after another on the calling thread. In race mode it
// runs the race copy of the kernels, and returns a *RaceError for a race.
func LaunchKernel(name string, grid, block, shared int, args []uint64) error {
	if err := checkShape(name, grid, block); err != nil {
		return err
	}
	if seed := raceSeed.Load(); seed != 0 {
		r := race.Launch(name, grid, block, shared, args, seed, true, false)
		return launchError(name, shared, len(args), r.Code, r.Report)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var a *C.uint64_t
	if len(args) > 0 {
		a = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	code := C.emu_launch(cname, C.int(grid), C.int(block), C.int(shared), C.int(len(args)), a)
	return launchError(name, shared, len(args), int(code), "")
}

// Range is a half-open range [Lo, Hi) of host addresses.
type Range struct{ Lo, Hi uintptr }

// Access is the global memory a launch read and wrote (shared memory
// excluded), as sorted, merged ranges. An atomic read-modify-write is
// both a read and a write.
type Access struct{ Reads, Writes []Range }

// LaunchKernelTraced is LaunchKernel that also reports what global memory
// the launch read and wrote. It runs the instrumented race copy of the
// kernels: in race mode with race mode's schedules and race detection
// (and the access of a launch that raced comes with its *RaceError), else
// in LaunchKernel's fixed schedule, without detection. Slower than
// LaunchKernel.
func LaunchKernelTraced(name string, grid, block, shared int, args []uint64) (Access, error) {
	if err := checkShape(name, grid, block); err != nil {
		return Access{}, err
	}
	seed := raceSeed.Load()
	r := race.Launch(name, grid, block, shared, args, seed, seed != 0, true)
	return Access{Reads: ranges(r.Reads), Writes: ranges(r.Writes)}, launchError(name, shared, len(args), r.Code, r.Report)
}

func ranges(rs []race.Range) []Range {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Range, len(rs))
	for i, r := range rs {
		out[i] = Range{r.Lo, r.Hi}
	}
	return out
}

func checkShape(name string, grid, block int) error {
	if grid < 1 || block < 1 || block > 1024 {
		return fmt.Errorf("kernel %s: a grid of %d blocks of %d threads (CUDA takes 1 or more blocks of 1 to 1024)", name, grid, block)
	}
	return nil
}

// launchError is the error of a launch that returned code (emu_launch's,
// or -4 for a race, which report describes).
func launchError(name string, shared, nargs, code int, report string) error {
	switch code {
	case 0:
		return nil
	case -1:
		return fmt.Errorf("kernels.cu has no kernel %s", name)
	case -2:
		return fmt.Errorf("kernel %s: %d arguments are not its count", name, nargs)
	case -3:
		return fmt.Errorf("kernel %s wrote past the %d bytes of dynamic shared memory it was launched with (up to 64 KiB here)", name, shared)
	case -4:
		return &RaceError{Report: report}
	}
	return fmt.Errorf("kernel %s: the emulator failed", name)
}
