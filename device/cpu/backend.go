package cpu

import (
	"fmt"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
)

// buffer is the CPU's device memory: a host slice, allocated when a step
// first writes it (a gradient the fused update never materialises takes no
// memory), or the caller's own slice (plan.HostMemory).
type buffer struct {
	n    int
	data []float32
}

// values returns the buffer's slice, allocating it the first time.
func (b *buffer) values() []float32 {
	if b.data == nil {
		b.data = make([]float32, max(1, b.n))
	}
	return b.data
}

// host is the CPU as a plan.Device: memory is the process's.
type host struct{}

var (
	_ plan.Device     = host{}
	_ plan.HostMemory = host{}
	_ plan.HostView   = host{}
)

func (host) Do(f func() error) error { return f() }

func (host) Alloc(n int) (plan.Mem, error) { return &buffer{n: n}, nil }

func (host) Free(plan.Mem) error { return nil }

func (host) CopyOut(dst []float32, m plan.Mem) error {
	copy(dst, m.(*buffer).values())
	return nil
}

func (host) Host(data []float32) plan.Mem { return &buffer{n: len(data), data: data} }

func (host) View(m plan.Mem, n int) []float32 { return m.(*buffer).values()[:n] }

// backend runs a plan's steps on the host.
type backend struct {
	mul multiplier
	// ones is a column of ones: a bias gradient is onesᵀ·dz.
	ones []float32
	// strip holds one strip of a gradient the update consumes at once.
	strip []float32
}

// stripValues is the size of the gradient strips a folded update computes
// and applies at a time: small enough to stay in the caches between the
// product that writes it and the update that reads it, large enough that
// the products stay efficient.
const stripValues = 1 << 20

var _ plan.Backend = (*backend)(nil)

func newBackend(mul multiplier) *backend { return &backend{mul: mul} }

func (b *backend) Device() plan.Device { return host{} }

// Capabilities: the bias goes into the forward product (its output starts
// as the bias), plain SGD and momentum fold into the products that compute
// the weights' gradients, and where the multiplier can (the AVX-512
// kernels) convolutions without dilation are computed without their patches,
// a BatchNormalization's gamma gradient comes with its input's, a ReLU
// after a batch normalization, a merge or such a convolution runs in that
// step's pass, and a ReLU's gradient in the pass of such a convolution's
// input gradient, of a max pooling's gradient after it or of the sum of
// its output's gradients.
func (b *backend) Capabilities() plan.Capabilities {
	return plan.Capabilities{BiasInGemm: true, FusedUpdate: fusesUpdate, Conv: b.conv, GammaInNormGrad: true, BiasInNormGrad: true, AddInBatchNorm: true, MomentsInOneStep: true, FoldsReLU: foldsReLU,
		FoldsReLUGrad: foldsReLUGrad}
}

// foldsReLUGrad says whether the backend applies the gradient of a ReLU
// whose output is buffer y to step s's output (plan.Capabilities.
// FoldsReLUGrad): a convolution's input gradient (blas'
// ConvInputGradReLU, each part as it is computed; the convolution's
// images are y), a max pooling's gradient, the pooling of y
// (ops.PoolBackwardReLU), or the sum of two gradients (ops.AddValuesReLU).
func foldsReLUGrad(s *plan.Step, y int) bool {
	switch s.Kind {
	case plan.ConvInputGrad, plan.Add:
		return true
	case plan.PoolGrad:
		return s.Op.Pool == ops.MaxPool && s.In[0] == y
	}
	return false
}

// foldsReLU says whether the backend applies a ReLU at the end of step s
// (plan.Capabilities.FoldsReLU): a batch normalization's, a merge's or a
// convolution's (the products' kernels store each tile's ReLU).
func foldsReLU(s *plan.Step) bool {
	switch s.Kind {
	case plan.Norm:
		return s.Op.Norm == ops.BatchNorm
	case plan.Binary, plan.ConvForward:
		return true
	}
	return false
}

// conv says whether the multiplier computes the convolution over w
// without patches, and the memory it needs.
func (b *backend) conv(w ops.Window, filters int) (plan.ConvMemory, bool) {
	if w.StrideH != w.StrideW || w.DilationH != 1 || w.DilationW != 1 {
		return plan.ConvMemory{}, false
	}
	mem, ok := b.mul.Conv(convShape(w, filters))
	return plan.ConvMemory(mem), ok
}

// convShape is the convolution over window w (one stride on both axes,
// no dilation: see conv) with filters filters.
func convShape(w ops.Window, filters int) blas.ConvShape {
	return blas.ConvShape{Batch: w.Batch, H: w.H, W: w.W, C: w.C, Filters: filters, KH: w.KH, KW: w.KW,
		Stride: w.StrideH, PadTop: w.PadTop, PadLeft: w.PadLeft, OH: w.OH, OW: w.OW}
}

// fusesUpdate: every update that works value by value folds into a
// weight's gradient product (aᵀ·b) and into a bias's column sums.
func fusesUpdate(grad *plan.Step, u optim.Update) bool {
	switch grad.Kind {
	case plan.Gemm:
		return grad.Op.TransA && !grad.Op.TransB
	case plan.SumRows:
		return true
	}
	return false
}

func (b *backend) Upload(dst plan.Mem, src []float32) error {
	copy(dst.(*buffer).values(), src)
	return nil
}

func (b *backend) Download(dst []float32, src plan.Mem) error {
	copy(dst, src.(*buffer).values())
	return nil
}

func (b *backend) Wait() error  { return nil }
func (b *backend) Close() error { return nil }

func (b *backend) Exec(_ int, s *plan.Step, bufs []plan.Mem) error {
	in := func(j int) []float32 { return bufs[s.In[j]].(*buffer).values() }
	out := func(j int) []float32 { return bufs[s.Out[j]].(*buffer).values() }
	switch s.Kind {
	case plan.Gemm:
		return b.gemm(s, 1, 0, in, out(0))
	case plan.BiasAct:
		x := in(0)
		if s.In[1] != plan.None {
			if s.Out[0] == plan.None {
				return fmt.Errorf("a bias step without a buffer for its sum")
			}
			z, bias := out(0), in(1)
			for r := 0; r < s.M; r++ {
				row := z[r*s.N : (r+1)*s.N]
				for c, v := range x[r*s.N : (r+1)*s.N] {
					row[c] = v + bias[c]
				}
			}
			x = z
		} else if s.Out[0] != plan.None {
			copy(out(0), x)
		}
		if s.Out[1] != plan.None {
			ops.ActivationForward(s.Op.Activation, s.Op.Alpha, s.N, x[:s.M*s.N], out(1))
		}
	case plan.Softmax:
		ops.ActivationForward(ops.Softmax, 0, s.N, in(0)[:s.M*s.N], out(0))
	case plan.ActGrad:
		ops.ActivationBackward(s.Op.Activation, s.Op.Alpha, s.N, in(0)[:s.M*s.N], in(1), in(2), out(0))
	case plan.SoftmaxGrad:
		y := in(0)[:s.M*s.N]
		ops.ActivationBackward(ops.Softmax, 0, s.N, y, y, in(1), out(0))
	case plan.SumRows:
		o := out(0)
		clear(o)
		ops.SumRows(s.M, s.N, in(0), o)
	case plan.Loss, plan.LossGrad:
		// A loss's parameters beyond its kind (label smoothing, Huber's
		// delta) come with its op's Info.
		prm := s.Op.LossParams
		// Sample weights, when the loss has them, follow its other
		// operands (see plan's Loss and LossGrad).
		var weights []float32
		if w := 2; s.Kind == plan.LossGrad && len(s.In) > 3 || s.Kind == plan.Loss && len(s.In) > 2 {
			if s.Kind == plan.LossGrad {
				w = 3
			}
			weights = in(w)[:s.M]
		}
		if s.Kind == plan.LossGrad {
			return ops.LossGradientWith(s.Op.Loss, prm, s.M, s.N, in(0), in(1), weights, float64(in(2)[0]), out(0))
		}
		loss, err := ops.LossValueWith(s.Op.Loss, prm, s.M, s.N, in(0), in(1), weights)
		if err != nil {
			return err
		}
		out(0)[0] = float32(loss)
	case plan.Patches:
		ops.PatchesForward(s.Op.Window, in(0), out(0))
	case plan.PatchesGrad:
		ops.PatchesBackward(s.Op.Window, in(0), out(0))
	case plan.Pool:
		ops.PoolForward(s.Op.Pool, s.Op.Window, in(0), out(0))
	case plan.PoolGrad:
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLUGrad
			return ops.PoolBackwardReLU(s.Op.Pool, s.Op.Window, in(0), in(1), in(2), out(0))
		}
		ops.PoolBackward(s.Op.Pool, s.Op.Window, in(0), in(1), in(2), out(0))
	case plan.Dropout:
		ops.DropoutForward(s.Op.Dropout, in(1), s.N, in(0)[:s.M], out(0)[:s.M])
	case plan.ImageTransform:
		ops.TransformForward(s.Op.Transform, in(1), s.M, in(0)[:s.N], out(0)[:s.N])
	case plan.Norm:
		args := make([][]float32, len(s.In))
		for j := range args {
			args[j] = in(j)
		}
		if len(s.Out) == 2 && s.Op.Norm == ops.ColumnMean { // with the variance (Capabilities.MomentsInOneStep)
			ops.ColumnMeanVariance(s.M, s.N, args[0], out(0), out(1))
			return nil
		}
		if s.Op.Norm == ops.BatchNorm && len(s.In) == 6 { // with a residual connection's add (Capabilities.AddInBatchNorm)
			ops.BatchNormAdd(s.Op.NormParams, s.M, s.N, args[:5], args[5], out(0), s.Op.Activation == ops.ReLU)
			return nil
		}
		if len(s.Out) == 3 { // a BatchNormGrad with gamma's and a bias's gradients (Capabilities.BiasInNormGrad)
			ops.BatchNormGradWithBias(s.Op.NormParams, s.M, s.N, args, out(0), out(1), out(2))
			return nil
		}
		if len(s.Out) == 2 { // a BatchNormGrad with gamma's gradient (Capabilities.GammaInNormGrad)
			ops.BatchNormGradWithGamma(s.Op.NormParams, s.M, s.N, args, out(0), out(1))
			return nil
		}
		if s.Op.Norm == ops.BatchNorm && s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLU
			ops.BatchNormReLU(s.Op.NormParams, s.M, s.N, args, out(0))
			return nil
		}
		ops.NormForward(s.Op.Norm, s.Op.NormParams, s.M, s.N, args, out(0))
	case plan.GlobalNorm:
		grads := make([][]float32, len(s.In))
		for j := range grads {
			grads[j] = in(j)
		}
		out(0)[0] = optim.GlobalScale(s.ClipNorm, grads...)
	case plan.Add:
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLUGrad
			ops.AddValuesReLU(in(0), in(1), in(2), out(0)[:s.N])
			return nil
		}
		ops.AddValues(in(0), in(1), out(0)[:s.N])
	case plan.MetricState:
		ops.MetricBatch(s.Op.Metric, in(1)[:s.M*s.K], s.K, in(0)[:s.M*s.N], s.N, out(0)[:ops.MetricStateSize(s.Op.Metric, s.N)])
	case plan.Penalty:
		out(0)[0] = float32(ops.PenaltyValue(s.Op.Penalty, in(0)[:s.N]))
	case plan.PenaltyGrad:
		ops.PenaltyGradient(s.Op.Penalty, float64(in(1)[0]), in(0)[:s.N], out(0)[:s.N])
	case plan.Gather:
		return ops.GatherForward(s.K, s.N, in(0), in(1)[:s.M], out(0))
	case plan.ScatterAdd:
		return ops.ScatterAddForward(s.K, s.N, in(0)[:s.M], in(1), out(0))
	case plan.MovingAverage:
		// In place: Out[0] is the State buffer In[0].
		ops.MovingUpdate(s.Op.Moving, out(0)[:s.N], in(1)[:s.N])
	case plan.Binary:
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLU
			ops.BinaryReLUForward(s.Op.Binary, in(0), in(1), out(0)[:s.N])
			return nil
		}
		ops.BinaryForward(s.Op.Binary, in(0), in(1), out(0)[:s.N])
	case plan.BinaryGrad:
		ops.BinaryBackward(s.Op.Binary, in(0), in(1), in(2), out(0)[:s.N])
	case plan.Scale:
		ops.ScaleForward(s.Op.Scale, in(0), out(0)[:s.N])
	case plan.Concat:
		ins := make([][]float32, len(s.In))
		for j := range ins {
			ins[j] = in(j)
		}
		ops.ConcatForward(s.Op.Concat, ins, out(0))
	case plan.ConcatGrad:
		ops.ConcatBackward(s.Op.Concat, in(0), out(0))
	case plan.Pad2D:
		ops.Pad2DForward(s.Op.Pad2D, in(0), out(0)[:s.N])
	case plan.Crop2D:
		ops.Crop2DForward(s.Op.Pad2D, in(0), out(0)[:s.N])
	case plan.UpSample:
		ops.UpSampleForward(s.Op.UpSample, in(0), out(0)[:s.N])
	case plan.UpSampleGrad:
		ops.UpSampleBackward(s.Op.UpSample, in(0), out(0)[:s.N])
	case plan.Resize:
		ops.ResizeForward(s.Op.Resize, in(0), out(0)[:s.N])
	case plan.Mask:
		ops.MaskForward(s.Op.Mask, in(0), out(0)[:s.M])
	case plan.Permute:
		permute(s.Op.Permute, in(0), out(0)[:s.N])
	case plan.Recurrence, plan.RecurrenceGrad:
		n := len(s.Op.Recurrence.InShapes())
		ins := make([][]float32, n)
		for i := range ins {
			ins[i] = in(i)
		}
		if s.Kind == plan.Recurrence {
			ops.RecurrenceForwardInputs(s.Op.Recurrence, ins, out(0)[:s.N], out(1))
		} else {
			ops.RecurrenceBackwardInputs(s.Op.Recurrence, ins, in(n), out(0)[:s.N], out(1))
		}
	case plan.ConvInputGrid:
		return b.mul.ConvInputGrid(convShape(s.Op.Window, s.K), in(0), out(0))
	case plan.ConvOutputGrid:
		return b.mul.ConvOutputGrid(convShape(s.Op.Window, s.K), in(0), out(0))
	case plan.ConvForward:
		var bias []float32
		if s.In[2] != plan.None {
			bias = in(2)
		}
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLU
			return b.mul.ConvForwardReLU(convShape(s.Op.Window, s.K), in(0), in(1), bias, out(0), out(1))
		}
		return b.mul.ConvForward(convShape(s.Op.Window, s.K), in(0), in(1), bias, out(0), out(1))
	case plan.ConvKernelGrad:
		return b.mul.ConvKernelGrad(convShape(s.Op.Window, s.K), in(0), in(1), out(0), out(1))
	case plan.ConvInputGrad:
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLUGrad: the images' ReLU
			return b.mul.ConvInputGradReLU(convShape(s.Op.Window, s.K), in(0), in(1), in(2), out(0), out(1))
		}
		return b.mul.ConvInputGrad(convShape(s.Op.Window, s.K), in(0), in(1), out(0), out(1))
	case plan.BatchMatMul:
		p := s.Op.BatchMatMul
		return b.mul.batchMatMul(p, in(0), in(1), out(0)[:p.Batch*p.M*p.N])
	case plan.L2Normalize:
		ops.L2NormalizeForward(s.Op.L2Norm, in(0), out(0)[:s.N])
	case plan.L2NormalizeGrad:
		ops.L2NormalizeBackward(s.Op.L2Norm, in(0), in(1), out(0)[:s.N])
	default:
		return fmt.Errorf("the CPU backend has no kernel for %v", s.Kind)
	}
	return nil
}

// gemm computes c = alpha·op(a)·op(b) + beta·c for a Gemm step, with the
// step's bias, when it has one, as c's starting value (beta 1).
func (b *backend) gemm(s *plan.Step, alpha, beta float32, in func(int) []float32, c []float32) error {
	lda, ldb := s.K, s.N
	if s.Op.TransA {
		lda = s.M
	}
	if s.Op.TransB {
		ldb = s.K
	}
	if len(s.In) > 2 && s.In[2] != plan.None {
		bias := in(2)
		for r := 0; r < s.M; r++ {
			copy(c[r*s.N:(r+1)*s.N], bias)
		}
		beta = 1
	}
	return b.mul.sgemm(s.Op.TransA, s.Op.TransB, s.M, s.N, s.K, alpha, in(0), lda, in(1), ldb, beta, c, s.N)
}

// Update applies u to a weight. An Update step applies optim.Update.Apply
// to the gradient an earlier step computed. A GradUpdate folds the update
// into the product computing the gradient: plain SGD makes the weights the
// product's output (alpha = -lr, beta = 1); the other rules compute the
// gradient a strip of rows at a time and apply optim.Update.Apply to each
// strip while it is in the caches, so the whole gradient never exists.
func (b *backend) Update(s *plan.Step, bufs []plan.Mem, slots []plan.Mem, n int, u optim.Update) error {
	w := bufs[s.In[0]].(*buffer).values()[:n]
	host := make([][]float32, len(slots))
	for i, m := range slots {
		host[i] = m.(*buffer).values()[:n]
	}
	if s.Kind == plan.Update {
		if len(s.In) > 2 { // the step's global clipping factor
			u.GlobalScale = bufs[s.In[2]].(*buffer).values()[0]
		}
		u.Apply(w, bufs[s.In[1]].(*buffer).values()[:n], host)
		return nil
	}
	of := s.Of
	in := func(j int) []float32 { return bufs[of.In[j]].(*buffer).values() }
	lr := float32(u.LearningRate)
	switch {
	case of.Kind == plan.SumRows && u.PlainSGD() && of.M <= plan.FoldRows:
		// b -= lr·Σ_rows dz, as the product onesᵀ·dz.
		for len(b.ones) < of.M {
			b.ones = append(b.ones, 1)
		}
		return b.mul.sgemm(true, false, 1, of.N, of.M, -lr, b.ones[:of.M], 1, in(0), of.N, 1, w, of.N)
	case of.Kind == plan.SumRows:
		g := b.stripBuffer(of.N)
		clear(g)
		ops.SumRows(of.M, of.N, in(0), g)
		u.Apply(w, g, host)
		return nil
	case of.Kind == plan.Gemm && u.PlainSGD() && of.K <= plan.FoldRows:
		// w += -lr·aᵀ·b, the weights themselves as the product's output.
		return b.gemm(of, -lr, 1, in, w)
	case of.Kind == plan.Gemm && of.Op.TransA && !of.Op.TransB:
		// The gradient aᵀ·b a strip of rows at a time (a's columns), each
		// applied while it is still in the caches.
		a, bb := in(0), in(1)
		rows := max(1, min(of.M, stripValues/max(1, of.N)))
		for r0 := 0; r0 < of.M; r0 += rows {
			r := min(rows, of.M-r0)
			g := b.stripBuffer(r * of.N)
			if err := b.mul.sgemm(true, false, r, of.N, of.K, 1, a[r0:], of.M, bb, of.N, 0, g, of.N); err != nil {
				return err
			}
			lo, hi := r0*of.N, (r0+r)*of.N
			u.Apply(w[lo:hi], g, sub(host, lo, hi))
		}
		return nil
	}
	return fmt.Errorf("the CPU backend does not fold %v into %v", u.Rule, of)
}

// stripBuffer returns n values of scratch memory.
func (b *backend) stripBuffer(n int) []float32 {
	if cap(b.strip) < n {
		b.strip = make([]float32, n)
	}
	return b.strip[:n]
}

// sub returns s[lo:hi] of every slot.
func sub(slots [][]float32, lo, hi int) [][]float32 {
	out := make([][]float32, len(slots))
	for i, s := range slots {
		out[i] = s[lo:hi]
	}
	return out
}
