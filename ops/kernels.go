package ops

import kernels "github.com/gokeras/gokeras/internal/avx512"

// The arithmetic of the ops, on float32 slices, for machines that run model
// graphs themselves (see Inspect) and must compute exactly what Do computes.

// ActivationForward writes act(x) into y; cols is the row length softmax
// works on. It is what an Activate node's Do computes.
func ActivationForward(act Activation, cols int, x, y []float32) {
	if act == ReLU {
		kernels.MaskPositive(x, x, y)
		return
	}
	activate(act, cols, x, y)
}

// ActivationBackward writes dx given x, y = act(x) and the gradient dy of
// y, as the gradient op of Activate does. ReLU has no gradient where x ≤ 0.
func ActivationBackward(act Activation, cols int, x, y, dy, dx []float32) {
	if act == ReLU {
		kernels.MaskPositive(x, dy, dx)
		return
	}
	activateGrad(act, cols, x, y, dy, dx)
}

// LossValue returns the batch mean of the loss of rows×cols predictions
// against targets (rows×1 class indices for the sparse kinds), as a Loss
// node's Do computes it.
func LossValue(kind LossKind, rows, cols int, pred, target []float32) (float64, error) {
	sum, err := lossSum(kind, rows, cols, pred, target)
	if err != nil {
		return 0, err
	}
	return sum / float64(rows), nil
}

// LossGradient writes seed·∂LossValue/∂pred into dpred, as the gradient op
// of Loss does; seed is the gradient of whatever uses the loss (1 for the
// loss itself).
func LossGradient(kind LossKind, rows, cols int, pred, target []float32, seed float64, dpred []float32) error {
	return lossGrad(kind, rows, cols, pred, target, seed/float64(rows), dpred)
}

// SumRows adds the rows of the rows×cols matrix a into out, which holds
// cols values: the gradient of a bias. out is added to, not overwritten.
func SumRows(rows, cols int, a, out []float32) { sumRows(rows, cols, a, out) }
