package ops

import "gorgonia.org/gorgonia"

// OpKind names an op of this package, for machines that execute model
// graphs themselves instead of calling each op's Do.
type OpKind int

const (
	// OpAffine: inputs (x, w[, b]) → x·w (+ b). Info.Bias says whether b is there.
	OpAffine OpKind = iota + 1
	// OpMatMul: inputs (a, b) → op(a)·op(b), op transposing when
	// Info.TransA / Info.TransB say so. Appears in gradients only.
	OpMatMul
	// OpSumRows: input (batch, n) → (n), the sum over rows. Gradients only.
	OpSumRows
	// OpActivation: input x → Info.Activation(x).
	OpActivation
	// OpActivationGrad: inputs (x, y, dy) → dx for Info.Activation.
	OpActivationGrad
	// OpReshape: input of shape Info.From → the same values in shape Info.To.
	OpReshape
	// OpLoss: inputs (pred, target) → the scalar batch mean of Info.Loss;
	// with Info.Weighted, a third input holds a weight per sample.
	OpLoss
	// OpLossGrad: inputs (pred, target, seed) → seed·∂loss/∂pred; with
	// Info.Weighted, a fourth input holds the sample weights.
	OpLossGrad
	// OpPatches: images (batch, h, w, c) → their Info.Window patches, one
	// row per window position (see Patches).
	OpPatches
	// OpPatchesGrad: patch gradients → image gradients. Gradients only.
	OpPatchesGrad
	// OpPool: images → Info.Pool pooling over Info.Window.
	OpPool
	// OpPoolGrad: inputs (x, y, dy) → dx for OpPool. Gradients only.
	OpPoolGrad
	// OpDropout: inputs (x, step) → x with Info.Dropout's dropped units
	// zeroed, the rest scaled (see Dropout); also its own gradient.
	OpDropout
	// OpNorm: the normalization op Info.Norm (see NormKind for its
	// inputs), with Info.NormParams.
	OpNorm
	// OpGather: inputs (table, indices) → the table's rows at the indices.
	OpGather
	// OpScatterAdd: inputs (indices, dy) → the table's gradient, of
	// Info.Rows × Info.Width.
	OpScatterAdd
	// OpPenalty: input x → the scalar regularization penalty Info.Penalty
	// of x.
	OpPenalty
	// OpPenaltyGrad: inputs (x, seed) → seed·∂penalty/∂x. Gradients only.
	OpPenaltyGrad
	// OpMetricState: inputs (pred, labels) → two values, Info.Metric's sum
	// over the batch and its count of bad labels (see MetricState).
	OpMetricState
	// OpMovingAverage: inputs (moving, stat) → moving's next value,
	// Info.Moving.Momentum·moving + (1-Momentum)·stat·Bessel: an update
	// of the non-trainable weight moving that training machines write
	// into it (see MovingAverage).
	OpMovingAverage
	// OpBinary: inputs (a, b) → Info.Binary.Kind applied elementwise, a
	// and b broadcast along their axes of size 1 (see Binary).
	OpBinary
	// OpBinaryGrad: inputs (a, b, dy) → the gradient of input
	// Info.Binary.Wrt of OpBinary, summed over the axes it was broadcast
	// along. Gradients only.
	OpBinaryGrad
	// OpScale: input x → x·Info.Scale.Factor, or x/Factor with
	// Info.Scale.Divide, plus Info.Scale.Offset (see Scale, DivideBy,
	// Rescale); also its own gradient.
	OpScale
	// OpConcat: inputs x0..xn-1 → them joined along Info.Concat.Axis (see
	// Concatenate).
	OpConcat
	// OpConcatGrad: input dy → input Info.Concat.Piece's slice of it, the
	// gradient of OpConcat's input. Gradients only.
	OpConcatGrad
	// OpPad2D: images x → x with Info.Pad2D's rows and columns of zeros
	// around, Info.Pad2D.Small() to Large() (see Pad2D); also the
	// gradient of OpCrop2D.
	OpPad2D
	// OpCrop2D: images x → x cropped by Info.Pad2D, Info.Pad2D.Large() to
	// Small() (see Crop2D); also the gradient of OpPad2D.
	OpCrop2D
	// OpUpSample2D: images x → each pixel repeated Info.UpSample.SizeH
	// times down and SizeW times across (see UpSample2D).
	OpUpSample2D
	// OpUpSample2DGrad: input dy → the gradient of OpUpSample2D's input:
	// each pixel's block of dy summed. Gradients only.
	OpUpSample2DGrad
	// OpBatchMatMul: inputs (a, b) → each sample's product op(a)·op(b),
	// Info.BatchMatMul's (see BatchDot); also its own gradients.
	OpBatchMatMul
	// OpL2Normalize: input x → x divided by its L2 norm along
	// Info.L2Norm.Axis (see L2Normalize).
	OpL2Normalize
	// OpL2NormalizeGrad: inputs (x, dy) → the gradient of OpL2Normalize's
	// input. Gradients only.
	OpL2NormalizeGrad
	// OpImageTransform: inputs (images, step) → each image transformed by
	// the map Info.Transform draws for it at the step (see
	// ImageTransform). It has no gradient.
	OpImageTransform
	// OpResize: images x → a box of each resized (see Resize). It has no
	// gradient.
	OpResize
	// OpRecurrence: inputs (proj, rec[, recBias][, h0[, c0]][, mask]) → a
	// recurrent layer's output, Info.Recurrence's (see RecurrenceWith).
	OpRecurrence
	// OpRecurrenceGrad: the Recurrence's inputs and dy → (1, n): the
	// gradients of proj, rec, recBias, h0 and c0 one after another.
	// Gradients only.
	OpRecurrenceGrad
	// OpMask: x (batch, steps[, features]) → its sequence mask (batch,
	// steps), Info.Mask's (see Mask). No gradient.
	OpMask
	// OpPermute: input x → x with its axes reordered by Info.Permute (see
	// Permute); also its own gradient.
	OpPermute
)

// Info describes one op of this package.
type Info struct {
	Kind           OpKind
	Activation     Activation // OpActivation, OpActivationGrad
	Alpha          float64    // OpActivation, OpActivationGrad: ELU's or LeakyReLU's alpha, else 0
	Loss           LossKind   // OpLoss, OpLossGrad
	LossParams     LossParams // OpLoss, OpLossGrad
	Weighted       bool       // OpLoss, OpLossGrad: with sample weights
	TransA, TransB bool       // OpMatMul
	Bias           bool       // OpAffine
	InputGrad      bool       // OpAffine, OpReshape: whether the gradient flows into the input
	From, To       []int      // OpReshape
	Window         Window     // OpPatches, OpPatchesGrad, OpPool, OpPoolGrad
	Pool           PoolKind   // OpPool, OpPoolGrad
	Dropout        DropoutParams
	Norm           NormKind // OpNorm
	NormParams     NormParams
	Rows, Width    int            // OpGather, OpScatterAdd: the table's shape
	Penalty        PenaltyParams  // OpPenalty, OpPenaltyGrad
	Metric         MetricParams   // OpMetricState
	Moving         MovingParams   // OpMovingAverage
	Binary         BinaryParams   // OpBinary, OpBinaryGrad
	Scale          ScaleParams    // OpScale
	Concat         ConcatParams   // OpConcat, OpConcatGrad
	Pad2D          Pad2DParams    // OpPad2D, OpCrop2D
	UpSample       UpSampleParams // OpUpSample2D, OpUpSample2DGrad

	BatchMatMul BatchMatMulParams // OpBatchMatMul
	L2Norm      L2NormParams      // OpL2Normalize, OpL2NormalizeGrad
	Transform   TransformParams   // OpImageTransform
	Resize      ResizeParams      // OpResize
	Recurrence  RecurrenceParams  // OpRecurrence, OpRecurrenceGrad
	Mask        MaskParams        // OpMask
	Permute     PermuteParams     // OpPermute
}

// Inspect says which op of this package op is, and with what parameters.
// It returns false for ops defined elsewhere (gorgonia's own).
func Inspect(op gorgonia.Op) (Info, bool) {
	switch o := op.(type) {
	case affineOp:
		return Info{Kind: OpAffine, Bias: o.bias, InputGrad: o.inputGrad}, true
	case matMulOp:
		return Info{Kind: OpMatMul, TransA: o.transA, TransB: o.transB}, true
	case sumRowsOp:
		return Info{Kind: OpSumRows}, true
	case activationOp:
		return Info{Kind: OpActivation, Activation: o.act, Alpha: o.alpha}, true
	case activationGradOp:
		return Info{Kind: OpActivationGrad, Activation: o.act, Alpha: o.alpha}, true
	case reshapeOp:
		return Info{Kind: OpReshape, InputGrad: o.inputGrad, From: append([]int(nil), o.from...), To: append([]int(nil), o.to...)}, true
	case lossOp:
		return Info{Kind: OpLoss, Loss: o.kind, LossParams: o.p, Weighted: o.weighted}, true
	case lossGradOp:
		return Info{Kind: OpLossGrad, Loss: o.kind, LossParams: o.p, Weighted: o.weighted}, true
	case patchesOp:
		return Info{Kind: OpPatches, Window: o.win, InputGrad: o.inputGrad}, true
	case patchesGradOp:
		return Info{Kind: OpPatchesGrad, Window: o.win}, true
	case poolOp:
		return Info{Kind: OpPool, Pool: o.kind, Window: o.win, InputGrad: o.inputGrad}, true
	case poolGradOp:
		return Info{Kind: OpPoolGrad, Pool: o.kind, Window: o.win}, true
	case dropoutOp:
		return Info{Kind: OpDropout, Dropout: o.p}, true
	case normOp:
		return Info{Kind: OpNorm, Norm: o.kind, NormParams: o.p, InputGrad: o.inputGrad}, true
	case gatherOp:
		return Info{Kind: OpGather, Rows: o.rows, Width: o.width}, true
	case scatterAddOp:
		return Info{Kind: OpScatterAdd, Rows: o.rows, Width: o.width}, true
	case penaltyOp:
		return Info{Kind: OpPenalty, Penalty: o.p}, true
	case penaltyGradOp:
		return Info{Kind: OpPenaltyGrad, Penalty: o.p}, true
	case metricStateOp:
		return Info{Kind: OpMetricState, Metric: o.p}, true
	case movingOp:
		return Info{Kind: OpMovingAverage, Moving: o.p}, true
	case binaryOp:
		return Info{Kind: OpBinary, Binary: o.p.clone()}, true
	case binaryGradOp:
		return Info{Kind: OpBinaryGrad, Binary: o.p.clone()}, true
	case scaleOp:
		return Info{Kind: OpScale, Scale: o.p}, true
	case concatOp:
		return Info{Kind: OpConcat, Concat: o.p.clone()}, true
	case concatGradOp:
		return Info{Kind: OpConcatGrad, Concat: o.p.clone()}, true
	case padOp:
		if o.crop {
			return Info{Kind: OpCrop2D, Pad2D: o.p}, true
		}
		return Info{Kind: OpPad2D, Pad2D: o.p}, true
	case upSampleOp:
		if o.grad {
			return Info{Kind: OpUpSample2DGrad, UpSample: o.p}, true
		}
		return Info{Kind: OpUpSample2D, UpSample: o.p}, true
	case batchMatMulOp:
		return Info{Kind: OpBatchMatMul, BatchMatMul: o.p.clone()}, true
	case l2NormOp:
		if o.grad {
			return Info{Kind: OpL2NormalizeGrad, L2Norm: o.p.clone()}, true
		}
		return Info{Kind: OpL2Normalize, L2Norm: o.p.clone()}, true
	case transformOp:
		return Info{Kind: OpImageTransform, Transform: o.p}, true
	case resizeOp:
		return Info{Kind: OpResize, Resize: o.p}, true
	case recurrenceOp:
		return Info{Kind: OpRecurrence, Recurrence: o.p}, true
	case recurrenceGradOp:
		return Info{Kind: OpRecurrenceGrad, Recurrence: o.p}, true
	case maskOp:
		return Info{Kind: OpMask, Mask: o.p}, true
	case permuteOp:
		return Info{Kind: OpPermute, Permute: o.p.clone()}, true
	}
	return Info{}, false
}
