//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// These tests run each kernel, and the cuBLAS product, on small inputs and
// compare with the CPU ops of package ops (and optim's updates) on the
// same inputs. Without a GPU each of them skips (see internal/cuinit).

// harness is GPU 0 with the kernels loaded and a stream.
type harness struct {
	t    *testing.T
	g    *gpu
	k    *kernels
	s    gpuStream
	bufs []devicePtr
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	n, err := cudaAPI.numDevices()
	if err != nil || n == 0 {
		t.Skipf("no CUDA GPU (%d devices, %v)", n, err)
	}
	g, err := gpuDriver.open(0)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, g: g}
	h.do(func() error {
		var err error
		if h.k, err = g.kernels(); err != nil {
			return err
		}
		h.s, err = g.ctx.newStream()
		return err
	})
	t.Cleanup(func() {
		h.do(func() error {
			for _, p := range h.bufs {
				if err := g.free(p); err != nil {
					return err
				}
			}
			return h.s.destroy()
		})
	})
	return h
}

func (h *harness) do(f func() error) {
	h.t.Helper()
	if err := h.g.do(f); err != nil {
		h.t.Fatal(err)
	}
}

// upload copies data to a new device buffer.
func (h *harness) upload(data []float32) devicePtr {
	h.t.Helper()
	var p devicePtr
	h.do(func() error {
		var err error
		if p, err = h.g.alloc(int64(len(data)) * 4); err != nil {
			return err
		}
		h.bufs = append(h.bufs, p)
		if len(data) == 0 {
			return nil
		}
		return h.g.ctx.copyHtoD(p, unsafe.Pointer(&data[0]), int64(len(data))*4)
	})
	return p
}

func (h *harness) zeros(n int) devicePtr { return h.upload(make([]float32, n)) }

// download waits for the stream and copies n floats back.
func (h *harness) download(p devicePtr, n int) []float32 {
	h.t.Helper()
	out := make([]float32, n)
	h.do(func() error {
		if err := h.s.synchronize(); err != nil {
			return err
		}
		return h.g.ctx.copyDtoH(unsafe.Pointer(&out[0]), p, int64(n)*4)
	})
	return out
}

func randn(rng *rand.Rand, n int, scale float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(scale * rng.NormFloat64())
	}
	return s
}

func dense(data []float32, shape ...int) *tensor.Dense { return opstest.Dense(data, shape...) }

func sameValues(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if d := opstest.Diff(got, want, tol); d != "" {
		t.Errorf("%s on the GPU: %s", what, d)
	}
}

const kernelTol = 2e-6

// blas is a cuBLAS handle on the harness's stream, closed at the test's
// end.
func (h *harness) blas() gpuBLAS {
	h.t.Helper()
	var bl gpuBLAS
	h.do(func() error {
		var err error
		bl, err = h.g.ctx.newBLAS(h.s)
		return err
	})
	h.t.Cleanup(func() { h.do(bl.close) })
	return bl
}

func TestGemmMatchesCPU(t *testing.T) {
	h := newHarness(t)
	bl := h.blas()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ transA, transB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		m, k, n := 7, 13, 5
		ar, ac, br, bc := m, k, k, n
		if tc.transA {
			ar, ac = k, m
		}
		if tc.transB {
			br, bc = n, k
		}
		a, b := randn(rng, ar*ac, 1), randn(rng, br*bc, 1)
		c := h.zeros(m * n)
		h.do(func() error { return gemm(bl, tc.transA, tc.transB, m, n, k, 1, h.upload(a), h.upload(b), 0, c) })
		got := h.download(c, m*n)
		want := make([]float32, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for p := 0; p < k; p++ {
					av, bv := a[i*k+p], b[p*n+j]
					if tc.transA {
						av = a[p*m+i]
					}
					if tc.transB {
						bv = b[j*k+p]
					}
					s += float64(av) * float64(bv)
				}
				want[i*n+j] = float32(s)
			}
		}
		sameValues(t, "gemm", got, want, 1e-5)
	}
	// And against the CPU op for the products of the Affine gradient.
	o := opstest.MustBuild(t, ops.Linear, ops.MeanSquaredError, 6, 3)
	g, x := randn(rng, 6*3, 1), randn(rng, 6*4, 1)
	dw := h.zeros(4 * 3)
	h.do(func() error { return gemm(bl, true, false, 4, 3, 6, 1, h.upload(x), h.upload(g), 0, dw) })
	sameValues(t, "x^T·g", h.download(dw, 12), opstest.MustRun(t, o.MatMulTransA, dense(x, 6, 4), dense(g, 6, 3)), 1e-5)
}

func TestBiasActMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(2, 2))
	rows, cols := 9, 37
	for _, act := range opstest.ElementwiseActivations() {
		x, b := randn(rng, rows*cols, 3), randn(rng, cols, 1)
		x[0], x[1] = 80, -80 // the saturating activations saturate without overflow
		z, y := h.zeros(rows*cols), h.zeros(rows*cols)
		alpha := ops.DefaultAlpha(act)
		h.do(func() error { return h.k.biasAct(h.s, h.upload(x), h.upload(b), z, y, rows, cols, act, alpha) })
		wantZ := make([]float32, len(x))
		for i := range x {
			wantZ[i] = x[i] + b[i%cols]
		}
		sameValues(t, act.String()+" z", h.download(z, len(x)), wantZ, 0)
		op := opstest.MustBuild(t, act, ops.MeanSquaredError, rows, cols).Activation
		sameValues(t, act.String()+" y", h.download(y, len(x)), opstest.MustRun(t, op, dense(wantZ, rows, cols)), kernelTol)
		// No bias, y only: the standalone activation.
		y2 := h.zeros(rows * cols)
		h.do(func() error { return h.k.biasAct(h.s, h.upload(x), 0, 0, y2, rows, cols, act, alpha) })
		sameValues(t, act.String()+" alone", h.download(y2, len(x)), opstest.MustRun(t, op, dense(x, rows, cols)), kernelTol)
	}
}

func TestSoftmaxMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, shape := range [][2]int{{4, 10}, {3, 300}, {1, 1}, {70, 7}} {
		rows, cols := shape[0], shape[1]
		x := randn(rng, rows*cols, 5)
		x[0] = 1000 // shifted by the row maximum: no overflow
		o := opstest.MustBuild(t, ops.Softmax, ops.MeanSquaredError, rows, cols)
		y := h.zeros(rows * cols)
		h.do(func() error { return h.k.softmax(h.s, h.upload(x), y, rows, cols) })
		yCPU := opstest.MustRun(t, o.Activation, dense(x, rows, cols))
		sameValues(t, "softmax", h.download(y, len(x)), yCPU, kernelTol)

		dy := randn(rng, rows*cols, 1)
		dx := h.zeros(rows * cols)
		h.do(func() error { return h.k.softmaxGrad(h.s, h.upload(yCPU), h.upload(dy), dx, rows, cols) })
		want := opstest.MustRun(t, o.ActivationGrad, dense(x, rows, cols), dense(yCPU, rows, cols), dense(dy, rows, cols))
		sameValues(t, "softmax gradient", h.download(dx, len(x)), want, 1e-5)
	}
}

func TestActGradMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(4, 4))
	rows, cols := 5, 33
	for _, act := range opstest.ElementwiseActivations() {
		o := opstest.MustBuild(t, act, ops.MeanSquaredError, rows, cols)
		x, dy := randn(rng, rows*cols, 2), randn(rng, rows*cols, 1)
		x[3] = 0               // relu passes no gradient at 0
		x[4], x[5] = 2.5, -2.5 // hard_sigmoid's gradient passes at the bounds
		y := opstest.MustRun(t, o.Activation, dense(x, rows, cols))
		dx := h.zeros(rows * cols)
		alpha := ops.DefaultAlpha(act)
		h.do(func() error {
			return h.k.actGrad(h.s, h.upload(x), h.upload(y), h.upload(dy), dx, rows*cols, act, alpha)
		})
		want := opstest.MustRun(t, o.ActivationGrad, dense(x, rows, cols), dense(y, rows, cols), dense(dy, rows, cols))
		sameValues(t, act.String()+" gradient", h.download(dx, rows*cols), want, kernelTol)
	}
}

func TestSumRowsMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(5, 5))
	for _, shape := range [][2]int{{32, 3000}, {1, 5}, {600, 3}} {
		rows, cols := shape[0], shape[1]
		a := randn(rng, rows*cols, 1)
		out := h.zeros(cols)
		h.do(func() error { return h.k.sumRows(h.s, h.upload(a), out, rows, cols) })
		op := opstest.MustBuild(t, ops.Linear, ops.MeanSquaredError, rows, cols).SumRows
		sameValues(t, "column sums", h.download(out, cols), opstest.MustRun(t, op, dense(a, rows, cols)), 1e-5)
	}
}

// lossOnGPU runs a loss's kernels as the backend launches them
// (launch.ForLoss): the loss, and the gradient for each seed, and returns
// them with the bad-row word.
func lossOnGPU(h *harness, kind ops.LossKind, prm ops.LossParams, p, y, w []float32, rows, cols int, seeds []float32) (loss []float32, grads [][]float32, bad uint32) {
	h.t.Helper()
	l, err := launch.ForLoss(kind, prm)
	if err != nil {
		h.t.Fatal(err)
	}
	pd, yd, flag := h.upload(p), h.upload(y), h.zeros(1)
	var wd devicePtr
	if w != nil {
		wd = h.upload(w)
	}
	out, badd := h.zeros(1), h.upload([]float32{math.Float32frombits(math.MaxInt32)})
	h.do(func() error { return h.k.loss(h.s, l, pd, yd, wd, flag, rows, cols, out, badd) })
	loss = h.download(out, 1)
	for _, seed := range seeds {
		dp := h.zeros(rows * cols)
		h.do(func() error {
			return h.k.lossGrad(h.s, l, pd, yd, wd, flag, h.upload([]float32{seed}), rows, cols, dp, badd)
		})
		grads = append(grads, h.download(dp, rows*cols))
	}
	return loss, grads, math.Float32bits(h.download(badd, 1)[0])
}

// TestLossesMatchCPU compares every loss kind, with each of its
// parameters (opstest.LossParamsFor), unweighted and weighted, with
// ops.LossValueWith and ops.LossGradientWith (what the CPU backend runs):
// within 1e-5, the loss's rows added in another order and CUDA's math
// library for the CPU's.
func TestLossesMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(6, 6))
	seeds := []float32{1, 2.5}
	for _, kind := range opstest.LossKinds() {
		for _, shape := range [][2]int{{32, 10}, {300, 3}, {1, 1}} {
			rows, cols := shape[0], shape[1]
			if kind.Sparse() && cols == 1 {
				continue
			}
			p, y, _ := opstest.LossInputs(rng.Float64, rng.NormFloat64, rng.IntN, kind, rows, cols)
			for _, prm := range opstest.LossParamsFor(kind) {
				for _, w := range [][]float32{nil, opstest.SampleWeights(rng.Float64, rows)} {
					t.Run(fmt.Sprintf("%v%+v weighted=%v %d×%d", kind, prm, w != nil, rows, cols), func(t *testing.T) {
						defer func(parent *testing.T) { h.t = parent }(h.t)
						h.t = t
						loss, grads, bad := lossOnGPU(h, kind, prm, p, y, w, rows, cols, seeds)
						want, err := ops.LossValueWith(kind, prm, rows, cols, p, y, w)
						if err != nil {
							t.Fatal(err)
						}
						sameValues(t, "loss", loss, []float32{float32(want)}, 1e-5)
						for i, seed := range seeds {
							dp := make([]float32, rows*cols)
							if err := ops.LossGradientWith(kind, prm, rows, cols, p, y, w, float64(seed), dp); err != nil {
								t.Fatal(err)
							}
							sameValues(t, "loss gradient", grads[i], dp, 1e-5)
						}
						if bad != math.MaxInt32 {
							t.Errorf("valid targets flagged sample %d as bad", bad)
						}
					})
				}
			}
		}
	}
}

// TestHingeLabelsMatchCPU: the hinge losses read a batch's labels as -1/1
// only when they are all 0 or 1 (gk_zero_one_labels' pass first).
func TestHingeLabelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	p := []float32{1, -1, 0.5, 2, -0.25, 0}
	for _, kind := range []ops.LossKind{ops.Hinge, ops.SquaredHinge} {
		for _, y := range [][]float32{{1, 0, 1, 0, 0, 1}, {1, -1, 1, -1, -1, 1}, {1, 0, 1, 0, 0.5, 1}, {0, 0, 0, 0, 0, 0}} {
			loss, grads, _ := lossOnGPU(h, kind, ops.LossParams{}, p, y, nil, 2, 3, []float32{1})
			want, _ := ops.LossValueWith(kind, ops.LossParams{}, 2, 3, p, y, nil)
			sameValues(t, fmt.Sprintf("%v of %v", kind, y), loss, []float32{float32(want)}, 1e-6)
			dp := make([]float32, 6)
			if err := ops.LossGradientWith(kind, ops.LossParams{}, 2, 3, p, y, nil, 1, dp); err != nil {
				t.Fatal(err)
			}
			sameValues(t, fmt.Sprintf("%v gradient of %v", kind, y), grads[0], dp, 0)
		}
	}
}

func TestSparseTargetIsFlagged(t *testing.T) {
	h := newHarness(t)
	rows, cols := 6, 4
	p := make([]float32, rows*cols)
	y := []float32{0, 3, 1.5, 2, 4, 1} // samples 2 and 4 are not class indices
	for _, kind := range []ops.LossKind{ops.SparseSoftmaxCrossEntropy, ops.SparseCategoricalCrossentropy} {
		l, err := launch.ForLoss(kind, ops.LossParams{})
		if err != nil {
			t.Fatal(err)
		}
		bad := h.upload([]float32{math.Float32frombits(math.MaxInt32)})
		out := h.zeros(1)
		h.do(func() error { return h.k.loss(h.s, l, h.upload(p), h.upload(y), 0, 0, rows, cols, out, bad) })
		if got := math.Float32bits(h.download(bad, 1)[0]); got != 2 {
			t.Errorf("%v: flagged sample %d, want 2", kind, got)
		}
		bad = h.upload([]float32{math.Float32frombits(math.MaxInt32)})
		dp := h.zeros(rows * cols)
		h.do(func() error {
			return h.k.lossGrad(h.s, l, h.upload(p), h.upload(y), 0, 0, h.upload([]float32{1}), rows, cols, dp, bad)
		})
		if got := math.Float32bits(h.download(bad, 1)[0]); got != 2 {
			t.Errorf("%v gradient: flagged sample %d, want 2", kind, got)
		}
	}
}

// updateCases are an update of every rule and variant, and the options
// each is tested with (TestOptimizerKernelsMatchOptim).
var updateCases = []struct {
	name string
	u    optim.Update
}{
	{"sgd", optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1}},
	{"momentum", optim.Update{Rule: optim.RuleMomentum, LearningRate: 0.1, Momentum: 0.9}},
	{"nesterov", optim.Update{Rule: optim.RuleNesterov, LearningRate: 0.1, Momentum: 0.9}},
	{"adam", optim.Update{Rule: optim.RuleAdam, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}},
	{"adam amsgrad", optim.Update{Rule: optim.RuleAdam, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, AMSGrad: true}},
	{"rmsprop", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Epsilon: 1e-7}},
	{"rmsprop momentum", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Momentum: 0.8, Epsilon: 1e-7}},
	{"rmsprop centered", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Epsilon: 1e-7, Centered: true}},
	{"rmsprop centered momentum", optim.Update{Rule: optim.RuleRMSprop, LearningRate: 0.01, Rho: 0.9, Momentum: 0.8,
		Epsilon: 1e-7, Centered: true}},
	{"adagrad", optim.Update{Rule: optim.RuleAdagrad, LearningRate: 0.05, Epsilon: 1e-7, InitialAccumulator: 0.1}},
	{"adadelta", optim.Update{Rule: optim.RuleAdadelta, LearningRate: 1, Rho: 0.95, Epsilon: 1e-7}},
	{"adamax", optim.Update{Rule: optim.RuleAdamax, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}},
	{"nadam", optim.Update{Rule: optim.RuleNadam, LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}},
}

var updateOptions = []struct {
	name                       string
	clipNorm, clipValue, decay float64
}{
	{"plain", 0, 0, 0},
	{"clipvalue", 0, 0.02, 0},
	{"weight decay", 0, 0, 0.05},
	{"clipnorm", 5, 0, 0},
	{"all", 5, 0.02, 0.05},
}

// bitDiff describes the values of got that are not want's to the bit (any
// NaN matches any NaN), "" when there are none.
func bitDiff(got, want []float32) string {
	bad, first := 0, -1
	for i := range got {
		if math.Float32bits(got[i]) == math.Float32bits(want[i]) || got[i] != got[i] && want[i] != want[i] {
			continue
		}
		if bad++; first < 0 {
			first = i
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d values differ, the first [%d] %v, want %v", bad, len(got), first, got[first], want[first])
}

// TestOptimizerKernelsMatchOptim runs every update rule with every option
// on the GPU for four iterations, the slots carried over, over 70001
// values (several blocks of the norm's sums, not a multiple of any block),
// and requires the weights and slots to be optim.Update.Apply's to the
// bit after each iteration. Clipping by norm sums the squares in another
// order than the CPU, which could move the factor it gives by an ulp; the
// test checks it is the CPU's for these gradients.
func TestOptimizerKernelsMatchOptim(t *testing.T) {
	h := newHarness(t)
	sc := &scratch{g: h.g}
	t.Cleanup(func() { h.do(sc.free) })
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 70001
	w0 := randn(rng, n, 1)
	// Norms of about 2.6, 40 (the 40 at [5]), 0.03 and 13: clipping by
	// norm at 5 scales the second and the last.
	grads := [][]float32{randn(rng, n, 1e-2), randn(rng, n, 2e-2), randn(rng, n, 1e-4), randn(rng, n, 5e-2)}
	grads[0][3], grads[0][4] = 0, float32(math.Copysign(0, -1))
	grads[1][5] = 40
	for _, r := range updateCases {
		for _, o := range updateOptions {
			t.Run(r.name+"/"+o.name, func(t *testing.T) {
				u := r.u
				u.ClipNorm, u.ClipValue, u.WeightDecay = o.clipNorm, o.clipValue, o.decay
				names := u.SlotNames()
				host := append([]float32(nil), w0...)
				w := h.upload(w0)
				hostSlots, devSlots := make([][]float32, len(names)), make([]devicePtr, len(names))
				for i, name := range names {
					hostSlots[i] = make([]float32, n)
					for j := range hostSlots[i] {
						hostSlots[i][j] = u.SlotInit(name)
					}
					devSlots[i] = h.upload(hostSlots[i])
				}
				for it, g := range grads {
					u.Iteration = int64(it + 1)
					u.Apply(host, g, hostSlots)
					gd := h.upload(g)
					h.do(func() error { return h.k.update(h.s, sc, u, w, gd, devSlots, n, 0) })
					if d := bitDiff(h.download(w, n), host); d != "" {
						t.Fatalf("iteration %d: weights: %s", it+1, d)
					}
					for i, name := range names {
						if d := bitDiff(h.download(devSlots[i], n), hostSlots[i]); d != "" {
							t.Fatalf("iteration %d: slot %q: %s", it+1, name, d)
						}
					}
				}
			})
		}
	}
	t.Run("unknown rule", func(t *testing.T) {
		w := h.zeros(4)
		err := h.g.do(func() error {
			return h.k.update(h.s, sc, optim.Update{Rule: 42, LearningRate: 0.1, Iteration: 1}, w, w, nil, 4, 0)
		})
		if err == nil || !strings.Contains(err.Error(), "Rule(42)") {
			t.Errorf("an update with an unknown rule: %v, want an error naming it", err)
		}
	})
}

// TestGlobalNormMatchesOptim runs a step clipping by global norm as the
// machine does (globalNorm into a device float, then each weight's update
// reading it) for a few rules over gradients of 70001, 300 and 1 values,
// four iterations: the factor optim.GlobalScale's (the kernels sum the
// squares in another order: within an ulp in general, optim's bits on
// these data) and the weights and slots optim.Update.Apply's to the bit
// with GlobalScale set. The iterations clip, do not (factor 1), and see a
// NaN.
func TestGlobalNormMatchesOptim(t *testing.T) {
	h := newHarness(t)
	sc := &scratch{g: h.g}
	t.Cleanup(func() { h.do(sc.free) })
	rng := rand.New(rand.NewPCG(13, 13))
	sizes := []int{70001, 300, 1}
	iterations := [][][]float32{
		{randn(rng, 70001, 1e-2), randn(rng, 300, 0.1), {3}},
		{randn(rng, 70001, 1e-4), randn(rng, 300, 1e-3), {0}},
		{randn(rng, 70001, 5e-2), randn(rng, 300, 0.1), {-40}},
		{randn(rng, 70001, 1e-2), randn(rng, 300, 0.1), {float32(math.NaN())}},
	}
	for _, r := range updateCases {
		if r.u.Rule != optim.RuleSGD && r.u.Rule != optim.RuleAdam && r.u.Rule != optim.RuleNadam {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			u := r.u
			u.GlobalClipNorm, u.ClipValue, u.WeightDecay = 2, 0.02, 0.05
			names := u.SlotNames()
			host, w := make([][]float32, len(sizes)), make([]devicePtr, len(sizes))
			hostSlots, devSlots := make([][][]float32, len(sizes)), make([][]devicePtr, len(sizes))
			for k, n := range sizes {
				host[k] = randn(rng, n, 1)
				w[k] = h.upload(host[k])
				hostSlots[k], devSlots[k] = make([][]float32, len(names)), make([]devicePtr, len(names))
				for i, name := range names {
					hostSlots[k][i] = make([]float32, n)
					for j := range n {
						hostSlots[k][i][j] = u.SlotInit(name)
					}
					devSlots[k][i] = h.upload(hostSlots[k][i])
				}
			}
			factor := h.zeros(1)
			for it, grads := range iterations {
				u.Iteration = int64(it + 1)
				gd := make([]devicePtr, len(grads))
				for k, g := range grads {
					gd[k] = h.upload(g)
				}
				h.do(func() error { return h.k.globalNorm(h.s, sc, u.GlobalClipNorm, gd, sizes, factor) })
				want := optim.GlobalScale(u.GlobalClipNorm, grads...)
				if got := h.download(factor, 1)[0]; math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("iteration %d: factor %v, optim %v", it+1, got, want)
				}
				for k, g := range grads {
					hu := u
					hu.GlobalScale = want
					hu.Apply(host[k], g, hostSlots[k])
					h.do(func() error { return h.k.update(h.s, sc, u, w[k], gd[k], devSlots[k], sizes[k], factor) })
					if d := bitDiff(h.download(w[k], sizes[k]), host[k]); d != "" {
						t.Fatalf("iteration %d, weight %d: %s", it+1, k, d)
					}
					for i, name := range names {
						if d := bitDiff(h.download(devSlots[k][i], sizes[k]), hostSlots[k][i]); d != "" {
							t.Fatalf("iteration %d, weight %d, slot %q: %s", it+1, k, name, d)
						}
					}
				}
			}
			// The update refuses to run without the factor it needs.
			err := h.g.do(func() error { return h.k.update(h.s, sc, u, w[0], w[0], devSlots[0], sizes[0], 0) })
			if err == nil || !strings.Contains(err.Error(), "GlobalNorm") {
				t.Errorf("a global update without its factor: %v, want an error", err)
			}
		})
	}
}

// TestAddAndPenaltyMatchCPU compares the Add, Penalty and PenaltyGrad
// kernels with the CPU: the sum and the penalty's gradient to the bit
// (where Go does not fuse the gradient's multiply-add), the penalty,
// whose sums are in another order, within 1e-6.
func TestAddAndPenaltyMatchCPU(t *testing.T) {
	h := newHarness(t)
	sc := &scratch{g: h.g}
	t.Cleanup(func() { h.do(sc.free) })
	rng := rand.New(rand.NewPCG(12, 12))
	params := []ops.PenaltyParams{{L1: 0.01}, {L2: 0.01}, {L1: 0.001, L2: 0.01}, {L1: 0.3, L2: 0.7, Scale: 1.0 / 32}}
	for _, n := range []int{1, 7, 1000, 70001, 1 << 20} {
		x, y := randn(rng, n, 1), randn(rng, n, 1e-3)
		xd, yd, out := h.upload(x), h.upload(y), h.zeros(n)
		sum := make([]float32, n)
		for i := range sum {
			sum[i] = x[i] + y[i]
		}
		h.do(func() error { return h.k.add(h.s, xd, yd, out, n) })
		if d := bitDiff(h.download(out, n), sum); d != "" {
			t.Errorf("add of %d values: %s", n, d)
		}
		seed := h.upload([]float32{0.37})
		for _, p := range params {
			h.do(func() error { return h.k.penalty(h.s, sc, p, xd, out, n) })
			want := float32(ops.PenaltyValue(p, x))
			if got := h.download(out, 1)[0]; math.Abs(float64(got-want)) > 1e-6*math.Abs(float64(want)) {
				t.Errorf("penalty %+v of %d values: %v, want %v", p, n, got, want)
			}
			grad := make([]float32, n)
			ops.PenaltyGradient(p, float64(float32(0.37)), x, grad)
			h.do(func() error { return h.k.penaltyGrad(h.s, p, xd, seed, out, n) })
			if goFusesMultiplyAdds {
				sameValues(t, "penalty gradient", h.download(out, n), grad, 1e-6)
			} else if d := bitDiff(h.download(out, n), grad); d != "" {
				t.Errorf("penalty gradient %+v of %d values: %s", p, n, d)
			}
		}
	}
}

func TestU8ToF32(t *testing.T) {
	h := newHarness(t)
	in := make([]byte, 1000)
	for i := range in {
		in[i] = byte(i * 7)
	}
	// Upload the bytes through a float32 buffer of a quarter the length.
	words := make([]float32, len(in)/4)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(in)), in)
	src := h.upload(words)
	out := h.zeros(len(in))
	h.do(func() error { return h.k.u8ToF32(h.s, src, out, len(in), 1.0/255) })
	got := h.download(out, len(in))
	for i, b := range in {
		if want := float32(b) * (1.0 / 255); got[i] != want {
			t.Fatalf("byte %d (%d) -> %v, want %v", i, b, got[i], want)
		}
	}
}

// bitIdentical requires got and want to hold the same float32s to the bit.
func bitIdentical(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("%s on the GPU: [%d] = %v, the CPU gives %v", what, i, got[i], want[i])
			return
		}
	}
}

func TestImageKernelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(8, 8))
	k3, s2 := [2]int{3, 3}, [2]int{2, 2}
	cases := []struct {
		name          string
		batch, hh, ww int
		c             int
		spec          ops.WindowSpec
		pool          bool // a pooling window: no dilation
	}{
		{"3x3 same, odd", 2, 7, 5, 3, ops.WindowSpec{Kernel: k3, Same: true}, true},
		{"3x3 same, even", 2, 8, 6, 4, ops.WindowSpec{Kernel: k3, Same: true}, true},
		{"3x3 stride 2 (overlapping pools)", 2, 9, 9, 3, ops.WindowSpec{Kernel: k3, Strides: s2}, true},
		{"2x2 stride 2 same, odd", 3, 7, 9, 2, ops.WindowSpec{Kernel: [2]int{2, 2}, Strides: s2, Same: true}, true},
		{"3x3 dilation 2 stride 2 same", 2, 11, 10, 3, ops.WindowSpec{Kernel: k3, Strides: s2, Dilation: s2, Same: true}, false},
	}
	for _, tc := range cases {
		w, err := tc.spec.On(tc.batch, tc.hh, tc.ww, tc.c)
		if err != nil {
			t.Fatal(err)
		}
		x := randn(rng, w.InputSize(), 1)
		xd := h.upload(x)

		want := make([]float32, w.Positions()*w.PatchSize())
		ops.PatchesForward(w, x, want)
		cols := h.zeros(len(want))
		h.do(func() error { return h.k.patches(h.s, xd, cols, w) })
		bitIdentical(t, tc.name+": patches", h.download(cols, len(want)), want)

		dcols := randn(rng, len(want), 1)
		wantDx := make([]float32, len(x))
		ops.PatchesBackward(w, dcols, wantDx)
		dx := h.zeros(len(x))
		h.do(func() error { return h.k.patchesGrad(h.s, h.upload(dcols), dx, w) })
		sameValues(t, tc.name+": patches gradient", h.download(dx, len(x)), wantDx, 1e-5)

		if !tc.pool {
			continue
		}
		// Values from {-1, 0, 1} too: windows whose maximum is not unique.
		ties := make([]float32, len(x))
		for i := range ties {
			ties[i] = float32(rng.IntN(3) - 1)
		}
		for _, kind := range []ops.PoolKind{ops.MaxPool, ops.AvgPool} {
			for _, in := range [][]float32{x, ties} {
				what := tc.name + ", " + kind.String()
				wantY := make([]float32, w.Positions()*w.C)
				ops.PoolForward(kind, w, in, wantY)
				ind, y := h.upload(in), h.zeros(len(wantY))
				h.do(func() error { return h.k.pool(h.s, ind, y, kind, w) })
				bitIdentical(t, what+" pooling", h.download(y, len(wantY)), wantY)

				dy := randn(rng, len(wantY), 1)
				wantDx := make([]float32, len(in))
				ops.PoolBackward(kind, w, in, wantY, dy, wantDx)
				dx := h.zeros(len(in))
				h.do(func() error { return h.k.poolGrad(h.s, ind, h.upload(wantY), h.upload(dy), dx, kind, w) })
				sameValues(t, what+" pooling gradient", h.download(dx, len(in)), wantDx, 1e-5)
			}
		}
	}
}

func TestDropoutMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 100_003
	x := randn(rng, n, 1)
	xd := h.upload(x)
	for _, tc := range []struct {
		p             ops.DropoutParams
		step          uint64
		first, perRow int
	}{
		{ops.DropoutParams{Rate: 0.25, Key: 0x0123456789abcdef}, 3<<24 + 12345, 0, 1},
		{ops.DropoutParams{Rate: 0.5, Key: 0xfedcba9876543210}, 5<<32 + 7, 0, 1},
		{ops.DropoutParams{Rate: 0.1, Key: 42}, 0, 0, 1},
		{ops.DropoutParams{Rate: 0.3, Key: 11}, 8, 5, 7}, // a replica's shard from row 5, 7 units a row
	} {
		sv := ops.StepValues(tc.step, tc.first)
		want := make([]float32, n)
		ops.DropoutForward(tc.p, sv[:], tc.perRow, x, want)
		y := h.zeros(n)
		h.do(func() error { return h.k.dropout(h.s, xd, h.upload(sv[:]), y, n, tc.perRow, tc.p) })
		bitIdentical(t, fmt.Sprintf("dropout %v at step %d", tc.p.Rate, tc.step), h.download(y, n), want)
	}
}

// normInputs makes the inputs of kind for rows × cols: x off centre,
// positive variances, and with batch statistics x's own column mean and
// variance, as in training.
func normInputs(rng *rand.Rand, kind ops.NormKind, p ops.NormParams, rows, cols int) [][]float32 {
	x := randn(rng, rows*cols, 2)
	for i := range x {
		x[i] += 3
	}
	mean, variance := randn(rng, cols, 1), randn(rng, cols, 1)
	for i := range variance {
		variance[i] = variance[i]*variance[i] + 0.1
	}
	if p.BatchStats {
		ops.NormForward(ops.ColumnMean, p, rows, cols, [][]float32{x}, mean)
		ops.NormForward(ops.ColumnVariance, p, rows, cols, [][]float32{x, mean}, variance)
	}
	gamma, beta, dy := randn(rng, cols, 1), randn(rng, cols, 1), randn(rng, rows*cols, 1)
	switch kind {
	case ops.ColumnMean:
		return [][]float32{x}
	case ops.ColumnVariance:
		return [][]float32{x, mean}
	case ops.BatchNorm:
		return [][]float32{x, mean, variance, gamma, beta}
	case ops.BatchNormGrad:
		return [][]float32{x, mean, variance, gamma, dy}
	case ops.BatchNormGammaGrad:
		return [][]float32{x, mean, variance, dy}
	case ops.LayerNorm:
		return [][]float32{x, gamma, beta}
	case ops.LayerNormGrad:
		return [][]float32{x, gamma, dy}
	case ops.LayerNormGammaGrad:
		return [][]float32{x, dy}
	}
	panic(fmt.Sprintf("no inputs for %v", kind))
}

// TestNormKernelsMatchCPU runs every normalization kind on the GPU over
// small, odd and large shapes (the largest splits the rows over 256
// blocks and grows the scratch) and compares with ops.NormForward:
// within 1e-6 for the forward ops, 1e-5 for the gradients, and to the
// bit where the kernels round as the CPU does.
func TestNormKernelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	sc := &scratch{g: h.g}
	t.Cleanup(func() { h.do(sc.free) })
	rng := rand.New(rand.NewPCG(10, 10))
	shapes := [][2]int{{1, 1}, {1, 7}, {9, 1}, {33, 17}, {300, 20}, {40, 300}, {32768, 32}, {8192, 64}}
	cases := []struct {
		kind  ops.NormKind
		p     ops.NormParams
		tol   float64
		exact bool
	}{
		{ops.ColumnMean, ops.NormParams{}, 1e-6, false},
		{ops.ColumnVariance, ops.NormParams{}, 1e-6, false},
		{ops.BatchNorm, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, 1e-6, true},
		{ops.BatchNormGrad, ops.NormParams{Epsilon: 1e-3}, 1e-5, true},
		{ops.BatchNormGrad, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, 1e-5, false},
		{ops.BatchNormGammaGrad, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, 1e-5, false},
		{ops.LayerNorm, ops.NormParams{Epsilon: 1e-3}, 1e-6, false},
		{ops.LayerNormGrad, ops.NormParams{Epsilon: 1e-3}, 1e-5, false},
		{ops.LayerNormGammaGrad, ops.NormParams{Epsilon: 1e-5}, 1e-5, false},
	}
	for _, tc := range cases {
		for _, shape := range shapes {
			rows, cols := shape[0], shape[1]
			what := fmt.Sprintf("%v (batch statistics %t) on %d×%d", tc.kind, tc.p.BatchStats, rows, cols)
			in := normInputs(rng, tc.kind, tc.p, rows, cols)
			n := rows * cols
			if tc.kind == ops.ColumnMean || tc.kind == ops.ColumnVariance || tc.kind == ops.BatchNormGammaGrad || tc.kind == ops.LayerNormGammaGrad {
				n = cols
			}
			want := make([]float32, n)
			ops.NormForward(tc.kind, tc.p, rows, cols, in, want)
			args := make([]devicePtr, len(in))
			for i, v := range in {
				args[i] = h.upload(v)
			}
			nan := make([]float32, n)
			for i := range nan {
				nan[i] = float32(math.NaN()) // every value must be written
			}
			out := h.upload(nan)
			h.do(func() error { return h.k.norm(h.s, sc, tc.kind, tc.p, rows, cols, args, out) })
			got := h.download(out, n)
			if tc.exact && !goFusesMultiplyAdds {
				bitIdentical(t, what, got, want)
			} else {
				sameValues(t, what, got, want, tc.tol)
			}
		}
	}
}

// indexWord uploads a bad-index word holding launch.NoBadIndex.
func (h *harness) indexWord() devicePtr {
	none := math.Float32frombits(math.MaxUint32)
	return h.upload([]float32{none, none})
}

// indexError downloads a bad-index word as the error it encodes.
func (h *harness) indexError(word devicePtr, rows int) *ops.IndexError {
	w := h.download(word, 2)
	return launch.IndexError(uint64(math.Float32bits(w[1]))<<32|uint64(math.Float32bits(w[0])), rows)
}

func TestGatherAndScatterAddMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(11, 11))
	for _, tc := range []struct{ m, rows, n int }{
		{1, 1, 1},
		{12, 20, 8},       // Embedding(20, 8) on 2 samples of 6
		{50, 7, 33},       // many repeats, odd widths
		{3200, 20000, 64}, // batch × sequence length into a vocabulary
	} {
		what := fmt.Sprintf("%d indices into %d×%d", tc.m, tc.rows, tc.n)
		table, dy := randn(rng, tc.rows*tc.n, 1), randn(rng, tc.m*tc.n, 1)
		idx := make([]float32, tc.m)
		for i := range idx {
			idx[i] = float32(rng.IntN(min(tc.rows, 2*tc.m))) // repeats even in a large table
		}
		idx[0] = float32(tc.rows - 1)
		want := make([]float32, tc.m*tc.n)
		if err := ops.GatherForward(tc.rows, tc.n, table, idx, want); err != nil {
			t.Fatal(err)
		}
		wantDt := make([]float32, tc.rows*tc.n)
		if err := ops.ScatterAddForward(tc.rows, tc.n, idx, dy, wantDt); err != nil {
			t.Fatal(err)
		}
		idxd, bad := h.upload(idx), h.indexWord()
		out := h.zeros(len(want))
		h.do(func() error { return h.k.gather(h.s, h.upload(table), idxd, out, tc.m, tc.rows, tc.n, bad) })
		bitIdentical(t, what+": gather", h.download(out, len(want)), want)
		nan := make([]float32, len(wantDt))
		for i := range nan {
			nan[i] = float32(math.NaN()) // rows no index names must be cleared
		}
		dt := h.upload(nan)
		h.do(func() error { return h.k.scatterAdd(h.s, idxd, h.upload(dy), dt, tc.m, tc.rows, tc.n, bad) })
		bitIdentical(t, what+": scatter-add", h.download(dt, len(wantDt)), wantDt)
		if e := h.indexError(bad, tc.rows); e != nil {
			t.Errorf("%s: valid indices flagged: %v", what, e)
		}
	}
}

func TestBadIndexIsFlagged(t *testing.T) {
	h := newHarness(t)
	const rows, n = 4, 3
	table, dy := h.zeros(rows*n), h.zeros(6*n)
	for _, idx := range [][]float32{
		{0, 1, -1, 3, 2, 1},
		{0, 1, 2, 3, 4, 1},
		{0, 2.5, 1, 3, 2, 1},
		{float32(math.NaN()), 1, 2, 3, 0, 1},
		{0, 1, 2, 7, -3, 1}, // the first is reported
	} {
		want := ops.GatherForward(rows, n, make([]float32, rows*n), idx, make([]float32, len(idx)*n))
		idxd := h.upload(idx)
		bad := h.indexWord()
		h.do(func() error { return h.k.gather(h.s, table, idxd, h.zeros(len(idx)*n), len(idx), rows, n, bad) })
		if got := h.indexError(bad, rows); got == nil || got.Error() != want.Error() {
			t.Errorf("gather of %v: %v, the CPU gives %v", idx, got, want)
		}
		bad = h.indexWord()
		h.do(func() error { return h.k.scatterAdd(h.s, idxd, dy, h.zeros(rows*n), len(idx), rows, n, bad) })
		if got := h.indexError(bad, rows); got == nil || got.Error() != want.Error() {
			t.Errorf("scatter-add of %v: %v, the CPU gives %v", idx, got, want)
		}
	}
}
