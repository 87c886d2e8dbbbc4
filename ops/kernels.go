package ops

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// maskPositive is the ReLU's kernel: the AVX-512 one where the CPU has
// AVX-512, else the AVX2 one (which falls back to Go); they give the same
// bits.
var maskPositive = avx2.MaskPositive

// dropoutKernel computes whole groups of a dropout's units on the AVX-512
// kernel where there is one, and returns how many it did
// (avx512.Dropout).
var dropoutKernel = avx512.Dropout

func init() {
	if avx512.Available() {
		maskPositive = avx512.MaskPositive
	}
}

// The arithmetic of the ops, on float32 slices, for machines that run model
// graphs themselves (see Inspect) and must compute exactly what Do computes.

// ActivationForward writes act(x) into y; cols is the row length softmax
// works on, alpha ELU's or LeakyReLU's (Info.Alpha; ignored by the other
// activations). It is what an Activate node's Do computes.
func ActivationForward(act Activation, alpha float64, cols int, x, y []float32) {
	if act == ReLU {
		overValues(len(y), func(lo, hi int) { maskPositive(x[lo:hi], x[lo:hi], y[lo:hi]) })
		return
	}
	activate(act, alpha, cols, x, y)
}

// ActivationBackward writes dx given x, y = act(x) and the gradient dy of
// y, as the gradient op of Activate does. ReLU has no gradient where x ≤ 0.
func ActivationBackward(act Activation, alpha float64, cols int, x, y, dy, dx []float32) {
	if act == ReLU {
		overValues(len(dx), func(lo, hi int) { maskPositive(x[lo:hi], dy[lo:hi], dx[lo:hi]) })
		return
	}
	activateGrad(act, alpha, cols, x, y, dy, dx)
}

// LossValue returns the batch mean of the loss of rows×cols predictions
// against targets (rows×1 class indices for the sparse kinds), as a Loss
// node's Do computes it. It is LossValueWith with Keras' default parameters.
func LossValue(kind LossKind, rows, cols int, pred, target []float32) (float64, error) {
	return LossValueWith(kind, LossParams{}, rows, cols, pred, target, nil)
}

// LossValueWith is LossValue for a loss with the parameters p and, when
// weights is not nil, a weight per sample, as a LossWith or WeightedLoss
// node's Do computes it.
func LossValueWith(kind LossKind, p LossParams, rows, cols int, pred, target, weights []float32) (float64, error) {
	sum, err := lossSum(kind, p, rows, cols, pred, target, weights)
	if err != nil {
		return 0, err
	}
	return sum / float64(rows), nil
}

// LossGradient writes seed·∂LossValue/∂pred into dpred, as the gradient op
// of Loss does; seed is the gradient of whatever uses the loss (1 for the
// loss itself).
func LossGradient(kind LossKind, rows, cols int, pred, target []float32, seed float64, dpred []float32) error {
	return LossGradientWith(kind, LossParams{}, rows, cols, pred, target, nil, seed, dpred)
}

// LossGradientWith is LossGradient for a loss with the parameters p and,
// when weights is not nil, a weight per sample, as the gradient op of
// LossWith or WeightedLoss computes it.
func LossGradientWith(kind LossKind, p LossParams, rows, cols int, pred, target, weights []float32, seed float64, dpred []float32) error {
	return lossGrad(kind, p, rows, cols, pred, target, weights, seed/float64(rows), dpred)
}

// SumRows adds the rows of the rows×cols matrix a into out, which holds
// cols values: the gradient of a bias. out is added to, not overwritten.
func SumRows(rows, cols int, a, out []float32) { sumRows(rows, cols, a, out) }

// AddValues writes a[i] + b[i] into out[i] for every value of out: the
// plan's sums of a gradient's two paths and the Add merge without
// broadcasting, on every core for large ones, one rounding a value.
func AddValues(a, b, out []float32) {
	overValues(len(out), func(lo, hi int) { avx2.Add(out[lo:hi], a[lo:hi], b[lo:hi]) })
}

// AddValuesReLU is AddValues followed by the gradient of a ReLU whose
// output is y: out[i] = a[i]+b[i] where y[i] is above 0, else +0, each
// chunk masked while it is in the caches (the sum of a ReLU's output
// gradients along two paths, then its gradient).
func AddValuesReLU(a, b, y, out []float32) {
	overValues(len(out), func(lo, hi int) {
		avx2.Add(out[lo:hi], a[lo:hi], b[lo:hi])
		maskPositive(y[lo:hi], out[lo:hi], out[lo:hi])
	})
}

// overValues runs body over [0, n) in chunks of valueChunk values, on
// every core when n is large enough to pay for the goroutines: for
// passes that do a few operations a value, whose values are independent.
func overValues(n int, body func(lo, hi int)) {
	chunks := (n + valueChunk - 1) / valueChunk
	parallel(chunks, valueChunk, func(lo, hi int) { body(lo*valueChunk, min(n, hi*valueChunk)) })
}

// valueChunk is overValues' chunk: a multiple of the kernels' vectors,
// small enough to share a pass out evenly.
const valueChunk = 1 << 14

// PatchesForward writes every window position of the images x into a row
// of cols, as a Patches node's Do computes it.
func PatchesForward(w Window, x, cols []float32) { patches(w, x, cols) }

// PatchesBackward overwrites dx with the gradient of Patches given the
// gradient dcols of its output.
func PatchesBackward(w Window, dcols, dx []float32) { patchesBack(w, dcols, dx) }

// PoolForward writes the pooled images of x into y, as a Pool node's Do
// computes it.
func PoolForward(kind PoolKind, w Window, x, y []float32) { pool(kind, w, x, y) }

// PoolBackward overwrites dx with the gradient of Pool given x, its output
// y and the gradient dy of y.
func PoolBackward(kind PoolKind, w Window, x, y, dy, dx []float32) { poolBack(kind, w, x, y, dy, dx) }

// PoolBackwardReLU is PoolBackward of a max pooling whose input x is the
// output of a ReLU, followed by that ReLU's gradient (dx where x is above
// 0, else +0) in the same pass: each window's gradient goes to its
// maximum only where the maximum, the pooled value, is above 0 (dy masked
// by y in one pass over the pooled values, a quarter of the images' for
// 2×2 windows, then the pooling's gradient). Average pooling has no such
// shortcut: an error.
func PoolBackwardReLU(kind PoolKind, w Window, x, y, dy, dx []float32) error {
	if kind != MaxPool {
		return fmt.Errorf("ops: the gradient of a %v pooling through the ReLU before it: only max pooling folds the ReLU's gradient", kind)
	}
	n := w.Batch * w.OH * w.OW * w.C
	buf := normScratchT[float32](n)
	defer normScratchPoolT[float32]().Put(buf)
	masked := (*buf)[:n]
	overValues(n, func(lo, hi int) { maskPositive(y[lo:hi], dy[lo:hi], masked[lo:hi]) })
	poolBack(kind, w, x, y, masked, dx)
	return nil
}

// DropoutForward writes x with p's dropped units for the training step
// and first row held by stepValues (StepValues) zeroed into y, the rest
// scaled, as a Dropout node's Do computes it; unitsPerRow are the values of
// one sample of x. It is also the dropout's gradient.
func DropoutForward(p DropoutParams, stepValues []float32, unitsPerRow int, x, y []float32) {
	var v [4]float64
	for i := range v {
		v[i] = float64(stepValues[i])
	}
	step, first := stepOf(v, unitsPerRow)
	dropout(p, step, first, x, y)
}
