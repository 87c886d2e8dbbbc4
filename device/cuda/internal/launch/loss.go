package launch

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/ops"
)

// Loss is how the CUDA backend launches a Loss or LossGrad step: with
// ZeroOne, gk_zero_one_labels over the step's targets in one block of
// LabelsBlock threads, writing the flag the loss kernel then reads; then
// gk_loss (one block) or gk_loss_grad (a thread per row), which take the
// predictions, the targets, the sample weights (NULL without), the flag
// (NULL without ZeroOne), the shape, Kind, LabelSmoothing and Delta.
type Loss struct {
	Kind ops.LossKind
	// LabelSmoothing is the kernels' ls: the targets of the categorical
	// cross-entropies (kinds 0 and 3) are read as y·(1-ls) + ls/classes,
	// those of the binary ones (2 and 5) as y·(1-ls) + ls/2, as ops'
	// targetRow reads them. 0 for the other kinds.
	LabelSmoothing float64
	// Delta is Huber's δ, ops' default 1 in place of 0; 0 for the other
	// kinds.
	Delta float64
	// ZeroOne says the kind reads 0/1 labels as -1/1 when every label of
	// the batch is 0 or 1 (Hinge, SquaredHinge), which gk_zero_one_labels
	// finds out before the loss kernel runs.
	ZeroOne bool
	// Weights is the index in the step's In of its sample weights, -1
	// when it has none (set by ForLossStep).
	Weights int
}

// LabelsBlock is the one block of gk_zero_one_labels.
const LabelsBlock = 256

// ForLoss is the launch of a loss of kind with the parameters p, or an
// error naming the kind or the parameter when no kernel computes it: a
// kind gk_loss does not know, or a parameter ops would not give the kind
// (label smoothing but for the cross-entropies that take it, a delta but
// for Huber, values out of range).
func ForLoss(kind ops.LossKind, p ops.LossParams) (Loss, error) {
	if kind < ops.SoftmaxCrossEntropy || kind > ops.CosineSimilarity {
		return Loss{}, fmt.Errorf("no CUDA kernel for the loss %v", kind)
	}
	l := Loss{Kind: kind, Weights: -1, ZeroOne: kind == ops.Hinge || kind == ops.SquaredHinge}
	if ls := p.LabelSmoothing; ls != 0 {
		switch kind {
		case ops.SoftmaxCrossEntropy, ops.CategoricalCrossentropy, ops.SigmoidCrossEntropy, ops.BinaryCrossentropy:
		default:
			return Loss{}, fmt.Errorf("no CUDA kernel for the loss %v with label smoothing %v: only the categorical and binary cross-entropies smooth their labels", kind, ls)
		}
		if !(ls >= 0 && ls <= 1) {
			return Loss{}, fmt.Errorf("no CUDA kernel for the loss %v with label smoothing %v: it must be in [0, 1]", kind, ls)
		}
		l.LabelSmoothing = ls
	}
	if d := p.Delta; d != 0 {
		if kind != ops.Huber {
			return Loss{}, fmt.Errorf("no CUDA kernel for the loss %v with delta %v: only the Huber loss takes a delta", kind, d)
		}
		if !(d > 0) || math.IsInf(d, 0) {
			return Loss{}, fmt.Errorf("no CUDA kernel for the loss %v with delta %v: it must be a finite number > 0", kind, d)
		}
	}
	if kind == ops.Huber {
		l.Delta = p.Delta
		if l.Delta == 0 {
			l.Delta = 1
		}
	}
	return l, nil
}

// ForLossStep is ForLoss for a Loss or LossGrad step: the kind and
// parameters of its op (the step's ops.Info, as the CPU backend reads
// them), and its sample weights, the operand after the targets (Loss) or
// after the gradient's seed (LossGrad) when the step has one.
func ForLossStep(s *plan.Step) (Loss, error) {
	if s.Kind != plan.Loss && s.Kind != plan.LossGrad {
		return Loss{}, fmt.Errorf("a %v step is not a loss", s.Kind)
	}
	l, err := ForLoss(s.Op.Loss, s.Op.LossParams)
	if err != nil {
		return Loss{}, err
	}
	w := 2
	if s.Kind == plan.LossGrad {
		w = 3
	}
	if len(s.In) > w {
		l.Weights = w
	}
	return l, nil
}
