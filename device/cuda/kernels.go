//go:build cudavm && cgo

package cuda

import (
	_ "embed"
	"fmt"
	"math"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// fatbin and ptx are kernels/kernels.cu compiled by kernels/gen.sh: machine
// code for sm_80 and sm_90 with PTX for compute_75 beside it, and that PTX
// alone.
var (
	//go:embed kernels/kernels.fatbin
	fatbin string
	//go:embed kernels/kernels.ptx
	ptx string
)

// kernels are the PTX kernels, loaded into one GPU's context.
type kernels struct{ mod gpuModule }

// loadKernels JIT-compiles the embedded PTX for the GPU of ctx; call it
// inside gpu.do.
func loadKernels(ctx gpuContext) (*kernels, error) {
	mod, err := ctx.loadModule(fatbin, kernelNames)
	if err != nil {
		var ptxErr error
		if mod, ptxErr = ctx.loadModule(ptx, kernelNames); ptxErr != nil {
			return nil, fmt.Errorf("loading the gokeras kernels: the fatbin (sm_80, sm_90 and PTX for compute_75): %w; the PTX alone (PTX ISA 7.8 for compute_75; the driver must support CUDA 11.8 or later and the GPU be Turing or newer): %w", err, ptxErr)
		}
	}
	return &kernels{mod: mod}, nil
}

// Kernel arguments travel in 8-byte slots (gpuModule.launch).
func ptrArg(p devicePtr) uint64 { return uint64(p) }
func intArg(n int) uint64       { return uint64(uint32(int32(n))) }
func floatArg(f float32) uint64 { return uint64(math.Float32bits(f)) }

// launch queues kernel name on stream s with a 1-D grid.
func (k *kernels) launch(s gpuStream, name string, grid, block, shared int, args ...uint64) error {
	if err := k.mod.launch(s, name, grid, block, shared, args); err != nil {
		return fmt.Errorf("launching %s (grid %d, block %d): %w", name, grid, block, err)
	}
	return nil
}

const (
	elemBlock = 256  // threads per block of the elementwise kernels
	maxGrid   = 4096 // blocks, beyond which grid-stride loops take over
)

// elemGrid is the grid of an elementwise kernel over n items.
func elemGrid(n int) int { return min((n+elemBlock-1)/elemBlock, maxGrid) }

// rowBlock is the block of a one-block-per-row kernel over rows of cols:
// a power of two from 32 to 256.
func rowBlock(cols int) int {
	b := 32
	for b < cols && b < 256 {
		b *= 2
	}
	return b
}

// biasAct: v = x + b (b may be 0: no bias); z = v and y = act(v) where
// given (non-zero); alpha is ELU's or LeakyReLU's (ops.Info.Alpha).
// Elementwise activations only.
func (k *kernels) biasAct(s gpuStream, x, b, z, y devicePtr, rows, cols int, act ops.Activation, alpha float64) error {
	n := rows * cols
	if n == 0 {
		return nil
	}
	return k.launch(s, kBiasAct, elemGrid(n), elemBlock, 0,
		ptrArg(x), ptrArg(b), ptrArg(z), ptrArg(y), intArg(rows), intArg(cols), intArg(int(act)), floatArg(float32(alpha)))
}

func (k *kernels) softmax(s gpuStream, x, y devicePtr, rows, cols int) error {
	if rows*cols == 0 {
		return nil
	}
	b := rowBlock(cols)
	return k.launch(s, kSoftmaxRows, min(rows, 65535), b, b*4, ptrArg(x), ptrArg(y), intArg(rows), intArg(cols))
}

func (k *kernels) actGrad(s gpuStream, x, y, dy, dx devicePtr, n int, act ops.Activation, alpha float64) error {
	if n == 0 {
		return nil
	}
	return k.launch(s, kActGrad, elemGrid(n), elemBlock, 0,
		ptrArg(x), ptrArg(y), ptrArg(dy), ptrArg(dx), intArg(n), intArg(int(act)), floatArg(float32(alpha)))
}

func (k *kernels) softmaxGrad(s gpuStream, y, dy, dx devicePtr, rows, cols int) error {
	if rows*cols == 0 {
		return nil
	}
	b := rowBlock(cols)
	return k.launch(s, kSoftmaxGradRows, min(rows, 65535), b, b*4, ptrArg(y), ptrArg(dy), ptrArg(dx), intArg(rows), intArg(cols))
}

func (k *kernels) sumRows(s gpuStream, a, out devicePtr, rows, cols int) error {
	if cols == 0 {
		return nil
	}
	// Blocks of 8 lanes of 32 threads, 32 columns a block (see gk_sum_rows).
	return k.launch(s, kSumRows, min((cols+31)/32, maxGrid), elemBlock, elemBlock*4, ptrArg(a), ptrArg(out), intArg(rows), intArg(cols))
}

// lossBlock is the one block of gk_loss: rows up to 256 threads.
func lossBlock(rows int) int { return rowBlock(rows) }

// lossArgs are the arguments of gk_loss and gk_loss_grad after p and y:
// the sample weights w (0: none) and the label flag, which they read when
// l.ZeroOne after gk_zero_one_labels has written it: queued here, over the
// rows×cols targets y (flag is then a device int; 0 otherwise).
func (k *kernels) lossArgs(s gpuStream, l launch.Loss, y, w, flag devicePtr, rows, cols int) ([]uint64, error) {
	if err := fits32(l.Kind.String()+" loss", rows*cols); err != nil {
		return nil, err
	}
	if !l.ZeroOne {
		flag = 0
	} else if err := k.launch(s, kZeroOneLabels, 1, launch.LabelsBlock, 0, ptrArg(y), intArg(rows*cols), ptrArg(flag)); err != nil {
		return nil, err
	}
	return []uint64{ptrArg(w), ptrArg(flag)}, nil
}

// loss writes the batch mean of l's loss of the rows×cols predictions p
// against the targets y to out (one float), each row's loss times its
// weight in w when w is not 0 (ops.LossValueWith). flag is a device int
// for the labels' pass (launch.Loss.ZeroOne). bad must hold math.MaxInt32
// beforehand; it receives the first row with an invalid sparse target.
func (k *kernels) loss(s gpuStream, l launch.Loss, p, y, w, flag devicePtr, rows, cols int, out, bad devicePtr) error {
	args, err := k.lossArgs(s, l, y, w, flag, rows, cols)
	if err != nil {
		return err
	}
	b := lossBlock(rows)
	args = append([]uint64{ptrArg(p), ptrArg(y)}, args...)
	args = append(args, intArg(rows), intArg(cols), intArg(int(l.Kind)), doubleArg(l.LabelSmoothing), doubleArg(l.Delta),
		ptrArg(out), ptrArg(bad))
	return k.launch(s, kLoss, 1, b, b*8, args...)
}

// metricState writes m's state for the batch (ops.MetricStateSize
// values; ops.MetricBatch) into out: the outputs p, rows × cols, against
// the labels y, rows × ycols.
func (k *kernels) metricState(s gpuStream, m ops.MetricParams, p, y, out devicePtr, rows, cols, ycols int) error {
	if err := fits32(m.Kind.String()+" metric", max(rows*cols, rows*ycols, ops.MetricStateSize(m, cols))); err != nil {
		return err
	}
	switch m.Kind {
	case ops.MetricPrecisionRecall:
		threshold, lo, hi := m.PrecisionRecallColumns(cols)
		b := lossBlock(rows)
		return k.launch(s, kMetricPR, 1, b, 4*b*8, ptrArg(p), ptrArg(y), ptrArg(out), intArg(rows), intArg(cols),
			floatArg(threshold), intArg(m.K), intArg(lo), intArg(hi))
	case ops.MetricAUC:
		cells := ops.MetricStateSize(m, cols)
		return k.launch(s, kMetricAUC, elemGrid(cells), elemBlock, 0, ptrArg(p), ptrArg(y), ptrArg(out), intArg(rows), intArg(cols),
			intArg(m.Thresholds), boolArg(m.MultiLabel), boolArg(m.FromLogits))
	case ops.MetricF1:
		return k.launch(s, kMetricF1, elemGrid(cols), elemBlock, 0, ptrArg(p), ptrArg(y), ptrArg(out), intArg(rows), intArg(cols),
			floatArg(m.Threshold))
	}
	b := lossBlock(rows)
	return k.launch(s, kMetricSum, 1, b, 2*b*8, ptrArg(p), ptrArg(y), ptrArg(out), intArg(rows), intArg(cols), intArg(ycols),
		intArg(int(m.Kind)), floatArg(m.Threshold), intArg(m.K))
}

// lossGrad writes seed[0]·∂loss/∂p to dp, loss as for loss
// (ops.LossGradientWith).
func (k *kernels) lossGrad(s gpuStream, l launch.Loss, p, y, w, flag, seed devicePtr, rows, cols int, dp, bad devicePtr) error {
	if rows == 0 {
		return nil
	}
	args, err := k.lossArgs(s, l, y, w, flag, rows, cols)
	if err != nil {
		return err
	}
	args = append([]uint64{ptrArg(p), ptrArg(y)}, args...)
	args = append(args, ptrArg(seed), intArg(rows), intArg(cols), intArg(int(l.Kind)), doubleArg(l.LabelSmoothing),
		doubleArg(l.Delta), ptrArg(dp), ptrArg(bad))
	grid, block := lossGradShape(l.Kind, rows, cols)
	return k.launch(s, kLossGrad, grid, block, block*8, args...)
}

// lossGradShape is gk_loss_grad's launch for kind, as its gk_grad_mode
// spreads the work: a block per row for the softmax cross-entropies, a
// thread per row for the other kinds that sum over a row, a thread per
// value for the elementwise kinds. (The kernel computes the same for any
// shape: this one is the fast one.)
func lossGradShape(kind ops.LossKind, rows, cols int) (grid, block int) {
	switch kind {
	case ops.SoftmaxCrossEntropy, ops.SparseSoftmaxCrossEntropy:
		return min(rows, 65535), rowBlock(cols)
	case ops.CategoricalCrossentropy, ops.SparseCategoricalCrossentropy, ops.CategoricalHinge, ops.CosineSimilarity:
		return elemGrid(rows), elemBlock
	}
	return elemGrid(rows * cols), elemBlock
}

// updateKernels are the update kernels by rule (launch.Update).
var updateKernels = map[optim.Rule]string{
	optim.RuleSGD: kSGD, optim.RuleMomentum: kMomentum, optim.RuleNesterov: kMomentum, optim.RuleAdam: kAdam,
	optim.RuleRMSprop: kRMSprop, optim.RuleAdagrad: kAdagrad, optim.RuleAdadelta: kAdadelta, optim.RuleAdamax: kAdamax,
	optim.RuleNadam: kNadam,
}

// update queues optimizer update u of the n values of weight w, given
// their gradient g and the update's slots (in the order of
// u.SlotNames()), with optim.Update.Apply's arithmetic: the rule's kernel
// with the options applied first (launch.ForUpdate). Clipping by norm
// first sums the gradient's squares (gk_abs_sq_sums, in sc) and writes the
// gradient's factor (gk_clip_scale) after them in sc. Clipping by global
// norm reads the factor at global, the device float of the step's
// GlobalNorm step (globalNorm); global is 0 for any other update. An
// update no kernel computes fails here, naming its rule, before anything
// is queued.
func (k *kernels) update(s gpuStream, sc *scratch, u optim.Update, w, g devicePtr, slots []devicePtr, n int, global devicePtr) error {
	l, err := launch.ForUpdate(u)
	if err != nil {
		return err
	}
	if l.Global != (global != 0) {
		if l.Global {
			return fmt.Errorf("%v update with global_clipnorm: the step has no factor of a GlobalNorm step to read", u.Rule)
		}
		return fmt.Errorf("%v update: the step reads a global clipping factor but the update has no global_clipnorm", u.Rule)
	}
	name, ok := updateKernels[u.Rule]
	if !ok {
		return fmt.Errorf("no CUDA kernel for update rule %v", u.Rule)
	}
	if want := len(u.SlotNames()); len(slots) != want {
		return fmt.Errorf("%v update: %d slots, the rule keeps %d (%q)", u.Rule, len(slots), want, u.SlotNames())
	}
	if err := fits32(u.Rule.String()+" update", n); err != nil || n == 0 {
		return err
	}
	gscale := global
	if l.ClipNorm > 0 {
		grid := launch.SumGrid(n)
		mem, err := sc.get(s, int64(grid)*16+4)
		if err != nil {
			return err
		}
		if err := k.launch(s, kAbsSqSums, grid, launch.SumBlock, launch.SumSharedBytes, ptrArg(g), intArg(n), ptrArg(mem)); err != nil {
			return err
		}
		gscale = mem + devicePtr(grid*16)
		if err := k.launch(s, kClipScale, 1, launch.SumBlock, launch.SumSharedBytes,
			ptrArg(mem), intArg(grid), doubleArg(l.ClipNorm), ptrArg(gscale)); err != nil {
			return err
		}
	}
	args := []uint64{ptrArg(w)}
	for _, j := range l.Slots {
		var p devicePtr // NULL: a slot the update does not keep
		if j >= 0 {
			p = slots[j]
		}
		args = append(args, ptrArg(p))
	}
	args = append(args, ptrArg(g), intArg(n))
	if name == kMomentum {
		args = append(args, boolArg(l.Nesterov))
	}
	for _, x := range l.Scalars {
		args = append(args, floatArg(x))
	}
	args = append(args, ptrArg(gscale), floatArg(l.ClipValue), boolArg(l.Decays), floatArg(l.Decay))
	return k.launch(s, name, elemGrid(n), elemBlock, 0, args...)
}

// globalNorm: out[0] = optim.GlobalScale(clipNorm, the gradients at
// grads, of ns values each), the factor of clipping by global norm, left
// on the device for the step's updates: gk_abs_sq_sums over each gradient
// in turn into its blocks of sc (launch.GlobalParts), then gk_global_scale
// adds them all in a fixed order.
func (k *kernels) globalNorm(s gpuStream, sc *scratch, clipNorm float64, grads []devicePtr, ns []int, out devicePtr) error {
	if len(grads) != len(ns) {
		return fmt.Errorf("global norm: %d gradients, %d sizes", len(grads), len(ns))
	}
	for _, n := range ns {
		if err := fits32("global norm", n); err != nil {
			return err
		}
	}
	offsets, parts := launch.GlobalParts(ns)
	part, err := sc.get(s, int64(max(parts, 1))*16)
	if err != nil {
		return err
	}
	for j, g := range grads {
		if err := k.launch(s, kAbsSqSums, launch.SumGrid(ns[j]), launch.SumBlock, launch.SumSharedBytes,
			ptrArg(g), intArg(ns[j]), ptrArg(part+devicePtr(offsets[j]*16))); err != nil {
			return err
		}
	}
	return k.launch(s, kGlobalScale, 1, launch.SumBlock, launch.SumSharedBytes,
		ptrArg(part), intArg(parts), doubleArg(clipNorm), ptrArg(out))
}

// boolArg is an int kernel parameter, 1 or 0.
func boolArg(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// add: out = a + b, n values (an Add step).
func (k *kernels) add(s gpuStream, a, b, out devicePtr, n int) error {
	if err := fits32("add", n); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kAdd, elemGrid(n), elemBlock, 0, ptrArg(a), ptrArg(b), ptrArg(out), intArg(n))
}

// penalty: out[0] = p's penalty of the n values of x (ops.PenaltyValue):
// gk_abs_sq_sums' per-block sums in double, in sc, then gk_penalty.
func (k *kernels) penalty(s gpuStream, sc *scratch, p ops.PenaltyParams, x, out devicePtr, n int) error {
	if err := fits32("penalty", n); err != nil {
		return err
	}
	grid := launch.SumGrid(n)
	part, err := sc.get(s, int64(grid)*16)
	if err != nil {
		return err
	}
	if err := k.launch(s, kAbsSqSums, grid, launch.SumBlock, launch.SumSharedBytes, ptrArg(x), intArg(n), ptrArg(part)); err != nil {
		return err
	}
	return k.launch(s, kPenalty, 1, launch.SumBlock, launch.SumSharedBytes, ptrArg(part), intArg(grid),
		doubleArg(p.L1), doubleArg(p.L2), doubleArg(p.Factor()), ptrArg(out))
}

// penaltyGrad: out = seed[0]·∂penalty/∂x over the n values of x
// (ops.PenaltyGradient).
func (k *kernels) penaltyGrad(s gpuStream, p ops.PenaltyParams, x, seed, out devicePtr, n int) error {
	if err := fits32("penalty gradient", n); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kPenaltyGrad, elemGrid(n), elemBlock, 0, ptrArg(x), ptrArg(seed), ptrArg(out), intArg(n),
		doubleArg(p.L1), doubleArg(2*p.L2), doubleArg(p.Factor()))
}

// movingAverage: moving = m·moving + (1-m)·stat·bessel over n values, in
// place, with p's momentum and Bessel factor (ops.MovingUpdate).
func (k *kernels) movingAverage(s gpuStream, p ops.MovingParams, moving, stat devicePtr, n int) error {
	if err := fits32("moving average", n); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kMovingAverage, elemGrid(n), elemBlock, 0, ptrArg(moving), ptrArg(stat), intArg(n),
		doubleArg(p.Momentum), doubleArg(p.Factor()))
}

// scale: x = x·s, n values in place.
func (k *kernels) scale(s gpuStream, x devicePtr, n int, v float32) error {
	if n == 0 {
		return nil
	}
	return k.launch(s, kScale, elemGrid(n), elemBlock, 0, ptrArg(x), intArg(n), floatArg(v))
}

func (k *kernels) u8ToF32(s gpuStream, in, out devicePtr, n int, scale float32) error {
	if n == 0 {
		return nil
	}
	return k.launch(s, kU8ToF32, elemGrid(n), elemBlock, 0, ptrArg(in), ptrArg(out), intArg(n), floatArg(scale))
}

// Image kernels: one thread per value written, each kernel indexing with
// 32-bit ints, so the values an image step writes (and reads) must number
// at most math.MaxInt32.

// fits32 reports an error naming what when n values exceed the kernels'
// 32-bit indexing.
func fits32(what string, n int) error {
	if n > math.MaxInt32 {
		return fmt.Errorf("%s: %d values, more than the CUDA kernels' 32-bit indexing allows (%d): use a smaller batch", what, n, math.MaxInt32)
	}
	return nil
}

// windowArgs is w as the fourteen ints of GK_WINDOW_PARAMS, in the field
// order of ops.Window.
func windowArgs(w ops.Window) []uint64 {
	return []uint64{intArg(w.Batch), intArg(w.H), intArg(w.W), intArg(w.C), intArg(w.KH), intArg(w.KW),
		intArg(w.StrideH), intArg(w.StrideW), intArg(w.DilationH), intArg(w.DilationW), intArg(w.PadTop), intArg(w.PadLeft),
		intArg(w.OH), intArg(w.OW)}
}

// patches: cols = the patches of the images x over w (ops.PatchesForward).
func (k *kernels) patches(s gpuStream, x, cols devicePtr, w ops.Window) error {
	n := w.Positions() * w.PatchSize()
	if err := fits32("patches "+w.String(), max(n, w.InputSize())); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kPatches, elemGrid(n), elemBlock, 0, append([]uint64{ptrArg(x), ptrArg(cols)}, windowArgs(w)...)...)
}

// patchesGrad: dx = the images' gradient given dcols, the patches'
// (ops.PatchesBackward), gathered: one thread per value of dx.
func (k *kernels) patchesGrad(s gpuStream, dcols, dx devicePtr, w ops.Window) error {
	n := w.InputSize()
	if err := fits32("patches gradient "+w.String(), max(n, w.Positions()*w.PatchSize())); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kPatchesGrad, elemGrid(n), elemBlock, 0, append([]uint64{ptrArg(dcols), ptrArg(dx)}, windowArgs(w)...)...)
}

// checkPool checks kind is one gk_pool knows.
func checkPool(kind ops.PoolKind) error {
	if kind != ops.MaxPool && kind != ops.AvgPool {
		return fmt.Errorf("no CUDA kernel for %v pooling", kind)
	}
	return nil
}

// pool: y = kind pooling of the images x over w (ops.PoolForward).
func (k *kernels) pool(s gpuStream, x, y devicePtr, kind ops.PoolKind, w ops.Window) error {
	if err := checkPool(kind); err != nil {
		return err
	}
	n := w.Positions() * w.C
	if err := fits32(kind.String()+" pooling "+w.String(), w.InputSize()); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kPool, elemGrid(n), elemBlock, 0, append([]uint64{ptrArg(x), ptrArg(y), intArg(int(kind))}, windowArgs(w)...)...)
}

// poolGrad: dx given x, y = pool(x) and dy (ops.PoolBackward), gathered:
// one thread per value of dx.
func (k *kernels) poolGrad(s gpuStream, x, y, dy, dx devicePtr, kind ops.PoolKind, w ops.Window) error {
	if err := checkPool(kind); err != nil {
		return err
	}
	n := w.InputSize()
	if err := fits32(kind.String()+" pooling gradient "+w.String(), n); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kPoolGrad, elemGrid(n), elemBlock, 0,
		append([]uint64{ptrArg(x), ptrArg(y), ptrArg(dy), ptrArg(dx), intArg(int(kind))}, windowArgs(w)...)...)
}

// dropout: y = x (n values, perRow a row) with p's dropped units zeroed
// and the others scaled, for the step and first row held by the four
// floats at step (ops.StepValues), which the kernel decodes
// (ops.DropoutForward). One thread per four units of the global batch.
func (k *kernels) dropout(s gpuStream, x, step, y devicePtr, n, perRow int, p ops.DropoutParams) error {
	if err := fits32("dropout", n); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kDropout, elemGrid((n+3)/4+1), elemBlock, 0, ptrArg(x), ptrArg(y), intArg(n), intArg(perRow), ptrArg(step),
		uint64(uint32(p.Key)), uint64(uint32(p.Key>>32)), uint64(p.Threshold()), floatArg(p.Scale()))
}

// imageTransform: y = each of the batch images x transformed by the map
// p draws for it at the step and first row that step holds
// (ops.TransformForward). One thread per output value.
func (k *kernels) imageTransform(s gpuStream, x, step, y devicePtr, batch int, p ops.TransformParams) error {
	n := batch * p.H * p.W * p.C
	if err := fits32("image transform", n); err != nil || n == 0 {
		return err
	}
	lo, hi := p.Height, p.Width
	switch p.Kind {
	case ops.TransformZoom: // Keras draws zooms from (1+lower, 1+upper)
		lo, hi = [2]float64{1 + lo[0], 1 + lo[1]}, [2]float64{1 + hi[0], 1 + hi[1]}
	case ops.TransformRotation: // and angles from (2π·lower, 2π·upper)
		lo = [2]float64{2 * math.Pi * lo[0], 2 * math.Pi * lo[1]}
	case ops.TransformBrightness: // the width's slots carry the value range
		hi = p.ValueRange
	case ops.TransformContrast: // factors from (1-lower, 1+upper); the value range as brightness
		lo, hi = [2]float64{1 - lo[0], 1 + lo[1]}, p.ValueRange
	case ops.TransformCrop: // the offsets' counts, H-CropH+1 and W-CropW+1
		lo, hi = [2]float64{float64(p.H - p.CropH + 1), 0}, [2]float64{float64(p.W - p.CropW + 1), 0}
	}
	return k.launch(s, kImageTransform, elemGrid(n), elemBlock, 0, ptrArg(x), ptrArg(y), intArg(batch), intArg(p.H), intArg(p.W),
		intArg(p.C), ptrArg(step), uint64(uint32(p.Key)), uint64(uint32(p.Key>>32)), intArg(int(p.Kind)), boolArg(p.Horizontal),
		boolArg(p.Vertical), floatArg(float32(lo[0])), floatArg(float32(lo[1])), floatArg(float32(hi[0])), floatArg(float32(hi[1])),
		boolArg(p.KeepAspect), intArg(int(p.Interpolation)), intArg(int(p.Fill)), floatArg(float32(p.FillValue)))
}

// doubleArg is a double kernel parameter.
func doubleArg(f float64) uint64 { return math.Float64bits(f) }

// scratch is device memory that the kernels of one step pass between
// their launches (per-split column sums, rows' moments, the per-block sums
// of a penalty or of a gradient's norm and the factor clipping by norm
// gives), or that a step keeps for itself (the backend's vector of ones).
// The steps of a machine's stream run one after another, so they all
// share one, grown when a step needs more.
type scratch struct {
	g     *gpu
	p     devicePtr
	bytes int64
}

// get returns at least bytes of scratch; call it inside g.do. Growing it
// waits for stream s, whose queued kernels may still use the old memory,
// before freeing that.
func (sc *scratch) get(s gpuStream, bytes int64) (devicePtr, error) {
	if bytes <= sc.bytes {
		return sc.p, nil
	}
	if sc.p != 0 {
		if err := s.synchronize(); err != nil {
			return 0, fmt.Errorf("%s: waiting for the stream to grow the scratch memory: %w", sc.g.short(), err)
		}
		if err := sc.free(); err != nil {
			return 0, err
		}
	}
	p, err := sc.g.alloc(bytes)
	if err != nil {
		return 0, fmt.Errorf("scratch memory for the kernels: %w", err)
	}
	sc.p, sc.bytes = p, bytes
	return p, nil
}

// free releases the scratch; call it inside g.do.
func (sc *scratch) free() error {
	err := sc.g.free(sc.p)
	sc.p, sc.bytes = 0, 0
	return err
}

// norm runs a Norm step (ops.NormForward): out = the normalization kind
// of the rows × cols matrix in[0], its other inputs in[1:] in the order
// ops.NormKind lists them. Per-column results (the column moments, the
// gamma gradients) are column-tiled sums (gk_norm_col_sums over the
// launch.ForColumns splits, in sc, then gk_norm_col_finish); batch
// normalization and its gradient are column-tiled elementwise kernels;
// layer normalization, its gradient and the rows' moments for its gamma
// gradient are one block per row (gk_layer_norm).
func (k *kernels) norm(s gpuStream, sc *scratch, kind ops.NormKind, p ops.NormParams, rows, cols int, in []devicePtr, out devicePtr) error {
	o, err := launch.NormInputs(kind, in)
	if err != nil {
		return err
	}
	if err := fits32(kind.String()+" normalization", max(rows*cols, 2*rows)); err != nil || rows == 0 || cols == 0 {
		return err
	}
	c := launch.ForColumns(rows, cols)
	eps := doubleArg(p.Epsilon)
	// shape is the trailing arguments of the column-tiled kernels but the
	// output: rows, cols, eps, the tile and the rows per split.
	shape := []uint64{intArg(rows), intArg(cols), eps, intArg(c.Tile), intArg(c.RowsPerSplit)}
	sums := func(part, rowStats devicePtr) error {
		args := append([]uint64{intArg(int(kind)), ptrArg(o.X), ptrArg(o.Mean), ptrArg(o.Variance), ptrArg(o.DY), ptrArg(rowStats)}, shape...)
		if err := k.launch(s, kNormColSums, c.Grid(), c.Block, c.SharedBytes(), append(args, ptrArg(part))...); err != nil {
			return err
		}
		return k.launch(s, kNormColFinish, elemGrid(cols), elemBlock, 0,
			intArg(int(kind)), ptrArg(part), intArg(c.Splits), intArg(rows), intArg(cols), ptrArg(out))
	}
	layer := func(b, rowStats devicePtr) error {
		block := rowBlock(cols)
		return k.launch(s, kLayerNorm, min(rows, 65535), block, block*8, intArg(int(kind)), ptrArg(o.X), ptrArg(o.Gamma), ptrArg(b),
			intArg(rows), intArg(cols), eps, ptrArg(out), ptrArg(rowStats))
	}
	sumBytes := int64(c.SumDoubles()) * 8
	switch kind {
	case ops.ColumnMean, ops.ColumnVariance, ops.BatchNormGammaGrad:
		part, err := sc.get(s, sumBytes)
		if err != nil {
			return err
		}
		return sums(part, 0)
	case ops.BatchNorm:
		args := append([]uint64{ptrArg(o.X), ptrArg(o.Mean), ptrArg(o.Variance), ptrArg(o.Gamma), ptrArg(o.Beta)}, shape...)
		return k.launch(s, kBatchNorm, c.Grid(), c.Block, 0, append(args, ptrArg(out))...)
	case ops.BatchNormGrad:
		var totals devicePtr // none with fixed statistics
		if p.BatchStats {
			if totals, err = sc.get(s, sumBytes); err != nil {
				return err
			}
			if err := sums(totals, 0); err != nil {
				return err
			}
		}
		args := append([]uint64{ptrArg(o.X), ptrArg(o.Mean), ptrArg(o.Variance), ptrArg(o.Gamma), ptrArg(o.DY), ptrArg(totals)}, shape...)
		return k.launch(s, kBatchNormGrad, c.Grid(), c.Block, 0, append(args, ptrArg(out))...)
	case ops.LayerNorm:
		return layer(o.Beta, 0)
	case ops.LayerNormGrad:
		return layer(o.DY, 0)
	case ops.LayerNormGammaGrad:
		// The rows' moments, two doubles a row, then the column sums.
		mem, err := sc.get(s, int64(rows)*16+sumBytes)
		if err != nil {
			return err
		}
		if err := layer(0, mem); err != nil {
			return err
		}
		return sums(mem+devicePtr(rows*16), mem)
	}
	return fmt.Errorf("no CUDA kernel for the normalization %v", kind)
}

// gather: out (m × n) = the rows of table (rows × n) at the m indices
// idx (ops.GatherForward). The first bad index is flagged in the word at
// bad (launch.IndexError), which must hold launch.NoBadIndex beforehand.
func (k *kernels) gather(s gpuStream, table, idx, out devicePtr, m, rows, n int, bad devicePtr) error {
	if err := fits32("gather", max(m*n, rows*n)); err != nil || m*n == 0 {
		return err
	}
	return k.launch(s, kGather, elemGrid(m*n), elemBlock, 0,
		ptrArg(table), ptrArg(idx), ptrArg(out), intArg(m), intArg(n), intArg(rows), ptrArg(bad))
}

// scatterAdd: out (rows × n) = the table's gradient given the m indices
// idx and dy (m × n), the gradient of gather's output
// (ops.ScatterAddForward): out is cleared, then gk_scatter_add sums each
// index's rows of dy into its row, one block per position. bad as for
// gather.
func (k *kernels) scatterAdd(s gpuStream, idx, dy, out devicePtr, m, rows, n int, bad devicePtr) error {
	if err := fits32("scatter-add", max(m*n, rows*n)); err != nil || rows*n == 0 {
		return err
	}
	if err := s.memsetD32(out, 0, int64(rows*n)); err != nil {
		return fmt.Errorf("clearing the table's gradient: %w", err)
	}
	if m == 0 {
		return nil
	}
	return k.launch(s, kScatterAdd, min(m, 65535), rowBlock(n), 0,
		ptrArg(idx), ptrArg(dy), ptrArg(out), intArg(m), intArg(n), intArg(rows), ptrArg(bad))
}

// bcastArgs are p's layout as the kernels' GK_BCAST_PARAMS.
func bcastArgs(p ops.BinaryParams) ([]uint64, error) {
	ints, err := launch.BroadcastArgs(p.Layout())
	if err != nil {
		return nil, fmt.Errorf("%v of %v and %v: %w", p.Kind, p.A, p.B, err)
	}
	args := make([]uint64, len(ints))
	for i, v := range ints {
		args[i] = intArg(v)
	}
	return args, nil
}

// binary: out = p's op of a and b, n values (ops.BinaryForward).
func (k *kernels) binary(s gpuStream, p ops.BinaryParams, a, b, out devicePtr, n int) error {
	bc, err := bcastArgs(p)
	if err != nil || n == 0 {
		return err
	}
	return k.launch(s, kBinary, elemGrid(n), elemBlock, 0,
		append([]uint64{intArg(int(p.Kind)), ptrArg(a), ptrArg(b), ptrArg(out), intArg(n)}, bc...)...)
}

// binaryGrad: out = the gradient of input p.Wrt, its n values, given a, b
// and dy (ops.BinaryBackward).
func (k *kernels) binaryGrad(s gpuStream, p ops.BinaryParams, a, b, dy, out devicePtr, n int) error {
	bc, err := bcastArgs(p)
	if err != nil || n == 0 {
		return err
	}
	return k.launch(s, kBinaryGrad, elemGrid(n), elemBlock, 0,
		append([]uint64{intArg(int(p.Kind)), intArg(p.Wrt), ptrArg(a), ptrArg(b), ptrArg(dy), ptrArg(out), intArg(n)}, bc...)...)
}

// scaleTo: out = x·c, or x/c (ops.ScaleForward), n values.
func (k *kernels) scaleTo(s gpuStream, p ops.ScaleParams, x, out devicePtr, n int) error {
	if err := fits32("scale", n); err != nil || n == 0 {
		return err
	}
	return k.launch(s, kScaleTo, elemGrid(n), elemBlock, 0, ptrArg(x), ptrArg(out), intArg(n), floatArg(float32(p.Factor)), boolArg(p.Divide),
		floatArg(float32(p.Offset)))
}

// copyCols copies the rows×cols block at column srcOff of src (rows of
// srcLd values) to column dstOff of dst (rows of dstLd): an input of a
// Concat into its place, or a ConcatGrad's slice out of the gradient.
func (k *kernels) copyCols(s gpuStream, src devicePtr, srcLd, srcOff int, dst devicePtr, dstLd, dstOff, rows, cols int) error {
	if err := fits32("concatenate", max(rows*cols, rows*srcLd, rows*dstLd)); err != nil || rows*cols == 0 {
		return err
	}
	return k.launch(s, kCopyCols, elemGrid(rows*cols), elemBlock, 0, ptrArg(src), intArg(srcLd), intArg(srcOff),
		ptrArg(dst), intArg(dstLd), intArg(dstOff), intArg(rows), intArg(cols))
}

// pad2d writes the padding (crop false) or the crop (crop true) of the
// images x by p into out: gk_pad2d or gk_crop2d over the output's values.
func (k *kernels) pad2d(s gpuStream, p ops.Pad2DParams, crop bool, x, out devicePtr) error {
	large := p.Large()
	n := large[0] * large[1] * large[2] * large[3]
	if err := fits32("zero padding or cropping", n); err != nil {
		return err
	}
	name, m := kPad2d, n
	if crop {
		name, m = kCrop2d, p.Shape[0]*p.Shape[1]*p.Shape[2]*p.Shape[3]
	}
	sh := p.Shape
	return k.launch(s, name, elemGrid(m), elemBlock, 0, ptrArg(x), ptrArg(out), intArg(sh[0]), intArg(sh[1]), intArg(sh[2]), intArg(sh[3]),
		intArg(p.Top), intArg(p.Bottom), intArg(p.Left), intArg(p.Right))
}

// permute writes x with its axes reordered by p into out: gk_transpose
// over 32×32 tiles for a batch of transposes (p.Transposes), gk_permute
// over the output's values for any other permutation of up to six axes in
// its merged form.
func (k *kernels) permute(s gpuStream, p ops.PermuteParams, x, out devicePtr) error {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	if err := fits32("permute", n); err != nil || n == 0 {
		return err
	}
	if batch, rows, cols, ok := p.Transposes(); ok {
		tiles := batch * ((rows + 31) / 32) * ((cols + 31) / 32)
		return k.launch(s, kTranspose, min(tiles, maxGrid), elemBlock, 32*33*4, ptrArg(x), ptrArg(out),
			intArg(batch), intArg(rows), intArg(cols))
	}
	dims, perm := p.Merged()
	const axes = 6
	if len(dims) > axes {
		return fmt.Errorf("permute %v: %d axes that move apart, more than the CUDA kernel's %d", p, len(dims), axes)
	}
	// The output's sizes and the input's strides, the last axis last,
	// axes of one value before them.
	size, stride := [axes]int{1, 1, 1, 1, 1, 1}, [axes]int{}
	inStride := make([]int, len(dims))
	st := 1
	for a := len(dims) - 1; a >= 0; a-- {
		inStride[a] = st
		st *= dims[a]
	}
	off := axes - len(dims)
	for i, a := range perm {
		size[off+i], stride[off+i] = dims[a], inStride[a]
	}
	args := []uint64{ptrArg(x), ptrArg(out), intArg(n)}
	for _, v := range size {
		args = append(args, intArg(v))
	}
	for _, v := range stride {
		args = append(args, intArg(v))
	}
	return k.launch(s, kPermute, elemGrid(n), elemBlock, 0, args...)
}

// upSample writes the upsampling of the images x by p (grad false), or
// the gradient of its input given x, its output's (grad true), into out:
// gk_upsample2d or gk_upsample2d_grad over the output's values.
func (k *kernels) upSample(s gpuStream, p ops.UpSampleParams, grad bool, x, out devicePtr) error {
	o := p.Out()
	big := o[0] * o[1] * o[2] * o[3]
	if err := fits32("upsampling", big); err != nil {
		return err
	}
	name, m := kUpsample2d, big
	if grad {
		name, m = kUpsample2dGrad, p.Shape[0]*p.Shape[1]*p.Shape[2]*p.Shape[3]
	}
	sh := p.Shape
	return k.launch(s, name, elemGrid(m), elemBlock, 0, ptrArg(x), ptrArg(out), intArg(sh[0]), intArg(sh[1]), intArg(sh[2]), intArg(sh[3]),
		intArg(p.SizeH), intArg(p.SizeW))
}

// resize writes the box p says of each of the images x, resized, into
// out: gk_resize over the output's values.
func (k *kernels) resize(s gpuStream, p ops.ResizeParams, x, out devicePtr) error {
	o := p.Out()
	n := max(o[0]*o[1]*o[2]*o[3], p.Shape[0]*p.Shape[1]*p.Shape[2]*p.Shape[3])
	if err := fits32("resizing", n); err != nil {
		return err
	}
	sh := p.Shape
	return k.launch(s, kResize, elemGrid(o[0]*o[1]*o[2]*o[3]), elemBlock, 0, ptrArg(x), ptrArg(out), intArg(sh[0]), intArg(sh[1]), intArg(sh[2]),
		intArg(sh[3]), intArg(p.Top), intArg(p.Left), intArg(p.BoxH), intArg(p.BoxW), intArg(p.OutH), intArg(p.OutW),
		boolArg(p.Interpolation == ops.InterpolationNearest))
}

// batchMatMul writes p's products of a and b into c: gk_batch_matmul over
// c's values.
func (k *kernels) batchMatMul(s gpuStream, p ops.BatchMatMulParams, a, b, c devicePtr) error {
	n := p.Batch * max(p.M*p.N, p.M*p.K, p.K*p.N)
	if err := fits32("a Dot layer's product", n); err != nil {
		return err
	}
	m := p.Batch * p.M * p.N
	return k.launch(s, kBatchMatmul, elemGrid(m), elemBlock, 0, ptrArg(a), ptrArg(b), ptrArg(c), intArg(p.Batch), intArg(p.M),
		intArg(p.K), intArg(p.N), boolArg(p.TransA), boolArg(p.TransB))
}

// l2Normalize writes x normalized by p into out (dy 0: gk_l2_normalize),
// or the gradient of x given dy, the output's (gk_l2_normalize_grad): a
// thread per run of values normalized together.
func (k *kernels) l2Normalize(s gpuStream, p ops.L2NormParams, x, dy, out devicePtr) error {
	if err := fits32("L2 normalization", p.Outer()*p.Len()*p.Inner()); err != nil {
		return err
	}
	runs := p.Outer() * p.Inner()
	if dy == 0 {
		return k.launch(s, kL2Normalize, elemGrid(runs), elemBlock, 0, ptrArg(x), ptrArg(out), intArg(p.Outer()), intArg(p.Len()), intArg(p.Inner()))
	}
	return k.launch(s, kL2NormalizeGrad, elemGrid(runs), elemBlock, 0, ptrArg(x), ptrArg(dy), ptrArg(out), intArg(p.Outer()), intArg(p.Len()),
		intArg(p.Inner()))
}
