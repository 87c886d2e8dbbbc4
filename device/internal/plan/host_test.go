package plan

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// hostDevice is host memory standing in for a device's: Mem is a
// []float32. It counts allocations so tests can check they are freed.
type hostDevice struct{ live, updates int }

func (d *hostDevice) Do(f func() error) error { return f() }

func (d *hostDevice) Alloc(n int) (Mem, error) {
	d.live++
	return make([]float32, n), nil
}

func (d *hostDevice) Free(Mem) error { d.live--; return nil }

func (d *hostDevice) CopyOut(dst []float32, m Mem) error {
	copy(dst, m.([]float32))
	return nil
}

// hostBackend runs steps on the host: the products with a plain triple
// loop, everything else with the Do of the ops the steps came from, so the
// tests compare the plan's wiring (buffers, order, fusion, reads,
// gradients) against gorgonia's tape machine running the same ops; and the
// updates with optim.Update.Apply, the one definition of each rule.
type hostBackend struct {
	dev    *hostDevice
	bufs   [][]float32 // of the current Exec
	closed bool
	// targetErr is what a device reports when a sparse loss meets a
	// target that is not a class index; Wait returns it.
	targetErr *TargetError
	// uploads counts the copies in, by the host slice copied.
	uploads map[*float32]int
}

func newHostBackend(dev *hostDevice) *hostBackend {
	return &hostBackend{dev: dev, uploads: map[*float32]int{}}
}

func (h *hostBackend) Device() Device { return h.dev }

// Capabilities: none, so the tests run the plan's unfused path (every
// gradient materialised, then an Update step).
func (h *hostBackend) Capabilities() Capabilities { return Capabilities{} }

func (h *hostBackend) Upload(dst Mem, src []float32) error {
	d := dst.([]float32)
	if len(src) != len(d) {
		return fmt.Errorf("upload of %d values into %d", len(src), len(d))
	}
	copy(d, src)
	if len(src) > 0 {
		h.uploads[&src[0]]++
	}
	return nil
}

func (h *hostBackend) Download(dst []float32, src Mem) error {
	s := src.([]float32)
	if len(dst) != len(s) {
		return fmt.Errorf("download of %d values into %d", len(s), len(dst))
	}
	copy(dst, s)
	return nil
}

func (h *hostBackend) Wait() error {
	if h.targetErr != nil {
		err := h.targetErr
		h.targetErr = nil
		return err
	}
	return nil
}

func (h *hostBackend) Close() error { h.closed = true; return nil }

func (h *hostBackend) Update(s *Step, bufs []Mem, slots []Mem, n int, u optim.Update) error {
	if s.Kind != Update {
		return fmt.Errorf("host backend: %v offered no fusion", s.Kind)
	}
	h.dev.updates++
	host := make([][]float32, len(slots))
	for i, m := range slots {
		host[i] = m.([]float32)[:n]
	}
	w, g := bufs[s.In[0]].([]float32)[:n], bufs[s.In[1]].([]float32)[:n]
	if err := u.CheckSlots(w, g, host); err != nil {
		return err
	}
	u.Apply(w, g, host)
	return nil
}

func (h *hostBackend) dense(b int, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(h.bufs[b]))
}

// do runs op on tensors and copies the result into buffer out.
func (h *hostBackend) do(op gorgonia.Op, out int, args ...gorgonia.Value) error {
	v, err := op.Do(args...)
	if err != nil {
		return err
	}
	switch r := v.(type) {
	case *tensor.Dense:
		copy(h.bufs[out], r.Data().([]float32))
	case *gorgonia.F32:
		h.bufs[out][0] = float32(*r)
	default:
		return fmt.Errorf("%v returned a %T", op, v)
	}
	return nil
}

func (h *hostBackend) Exec(i int, s *Step, mems []Mem) error {
	h.bufs = make([][]float32, len(mems))
	for j, m := range mems {
		if m != nil {
			h.bufs[j] = m.([]float32)
		}
	}
	m, n := s.M, s.N
	switch s.Kind {
	case Gemm:
		a, b, c := h.bufs[s.In[0]], h.bufs[s.In[1]], h.bufs[s.Out[0]]
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var sum float64
				for p := 0; p < s.K; p++ {
					av := a[i*s.K+p] // a is m×k
					if s.Op.TransA {
						av = a[p*m+i] // a is k×m
					}
					bv := b[p*n+j] // b is k×n
					if s.Op.TransB {
						bv = b[j*s.K+p] // b is n×k
					}
					sum += float64(av) * float64(bv)
				}
				c[i*n+j] = float32(sum)
			}
		}
	case BiasAct:
		x := h.bufs[s.In[0]]
		v := make([]float32, len(x))
		for i := range x {
			v[i] = x[i]
			if s.In[1] != None {
				v[i] += h.bufs[s.In[1]][i%n]
			}
		}
		if s.Out[0] != None {
			copy(h.bufs[s.Out[0]], v)
		}
		if s.Out[1] != None {
			act := s.Node
			if s.Fused != nil {
				act = s.Fused
			}
			return h.do(act.Op(), s.Out[1], tensor.New(tensor.WithShape(m, n), tensor.WithBacking(v)))
		}
	case Softmax:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n))
	case ActGrad:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n), h.dense(s.In[1], m, n), h.dense(s.In[2], m, n))
	case SoftmaxGrad: // the CPU op ignores x for softmax: pass y in its place
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n), h.dense(s.In[0], m, n), h.dense(s.In[1], m, n))
	case SumRows:
		a, out := h.bufs[s.In[0]], h.bufs[s.Out[0]]
		for c := 0; c < n; c++ {
			var sum float32
			for r := 0; r < m; r++ {
				sum += a[r*n+c]
			}
			out[c] = sum
		}
	case Loss, LossGrad:
		tcols := n
		if s.Op.Loss.Sparse() {
			tcols = 1
		}
		args := []gorgonia.Value{h.dense(s.In[0], m, n), h.dense(s.In[1], m, tcols)}
		if s.Kind == LossGrad {
			args = append(args, gorgonia.NewF32(h.bufs[s.In[2]][0]))
		}
		if err := h.do(s.Node.Op(), s.Out[0], args...); err != nil {
			if s.Op.Loss.Sparse() {
				// What the kernels do: flag the first bad row, fill NaN.
				for r := 0; r < m; r++ {
					v := h.bufs[s.In[1]][r]
					if v != float32(math.Trunc(float64(v))) || v < 0 || int(v) >= n {
						h.targetErr = &TargetError{Step: i, Row: r}
						break
					}
				}
				return nil
			}
			return err
		}
	case Patches, Pool:
		w := s.Op.Window
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], w.Batch, w.H, w.W, w.C))
	case PatchesGrad:
		w := s.Op.Window
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], w.Positions(), w.PatchSize()))
	case ConvInputGrid, ConvOutputGrid:
		// This backend's grids are the values themselves.
		copy(h.bufs[s.Out[0]], h.bufs[s.In[0]])
	case ConvForward, ConvKernelGrad, ConvInputGrad:
		h.conv(s)
		h.reluGrad(s)
	case PoolGrad:
		w := s.Op.Window
		if err := h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], w.Batch, w.H, w.W, w.C),
			h.dense(s.In[1], w.Batch, w.OH, w.OW, w.C), h.dense(s.In[2], w.Batch, w.OH, w.OW, w.C)); err != nil {
			return err
		}
		h.reluGrad(s)
	case Dropout:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Node.Shape()...), h.dense(s.In[1], 2))
	case ImageTransform:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Node.Shape()...), h.dense(s.In[1], 4))
	case Norm:
		vals := make([][]float32, len(s.In)) // the operands, for the fused steps' kernels
		for j, b := range s.In {
			vals[j] = h.bufs[b]
		}
		if len(s.Out) == 2 && s.Op.Norm == ops.ColumnMean { // with the variance (Capabilities.MomentsInOneStep)
			ops.ColumnMeanVariance(m, n, h.bufs[s.In[0]], h.bufs[s.Out[0]], h.bufs[s.Out[1]])
			return nil
		}
		if len(s.Out) >= 2 { // with gamma's gradient (Capabilities.GammaInNormGrad), and a bias's (BiasInNormGrad)
			if len(s.Out) == 3 {
				ops.BatchNormGradWithBias(s.Op.NormParams, m, n, vals, h.bufs[s.Out[0]], h.bufs[s.Out[1]], h.bufs[s.Out[2]])
				return nil
			}
			ops.BatchNormGradWithGamma(s.Op.NormParams, m, n, vals, h.bufs[s.Out[0]], h.bufs[s.Out[1]])
			return nil
		}
		if s.Op.Norm == ops.BatchNorm && len(s.In) == 6 { // with a residual add (Capabilities.AddInBatchNorm)
			ops.BatchNormAdd(s.Op.NormParams, m, n, vals[:5], vals[5], h.bufs[s.Out[0]], s.Op.Activation == ops.ReLU)
			return nil
		}
		if s.Op.Norm == ops.BatchNorm && s.Op.Activation == ops.ReLU { // Capabilities.ReLUInNorm
			ops.BatchNormReLU(s.Op.NormParams, m, n, vals, h.bufs[s.Out[0]])
			return nil
		}
		// x and dy are M×N matrices, the rest vectors of N.
		args := make([]gorgonia.Value, len(s.In))
		for j, b := range s.In {
			if len(h.bufs[b]) == m*n && m != 1 {
				args[j] = h.dense(b, m, n)
			} else {
				args[j] = h.dense(b, n)
			}
		}
		return h.do(s.Node.Op(), s.Out[0], args...)
	case Gather:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.K, n), h.dense(s.In[1], m))
	case Add:
		a, b, o := h.bufs[s.In[0]], h.bufs[s.In[1]], h.bufs[s.Out[0]]
		for i := range o[:n] {
			o[i] = a[i] + b[i]
		}
		h.reluGrad(s)
	case Penalty:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], n))
	case PenaltyGrad:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], n), gorgonia.NewF32(h.bufs[s.In[1]][0]))
	case ScatterAdd:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m), h.dense(s.In[1], m, n))
	case MetricState:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], m, n), h.dense(s.In[1], m, s.K))
	case MovingAverage:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], n), h.dense(s.In[1], n))
	case Binary:
		p := s.Op.Binary
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLU
			ops.BinaryReLUForward(p, h.bufs[s.In[0]], h.bufs[s.In[1]], h.bufs[s.Out[0]])
			return nil
		}
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], p.A...), h.dense(s.In[1], p.B...))
	case BinaryGrad:
		p := s.Op.Binary
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], p.A...), h.dense(s.In[1], p.B...), h.dense(s.In[2], p.Out()...))
	case Scale:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Node.Shape()...))
	case Concat:
		args := make([]gorgonia.Value, len(s.In))
		for j, b := range s.In {
			args[j] = h.dense(b, s.Op.Concat.Shapes[j]...)
		}
		return h.do(s.Node.Op(), s.Out[0], args...)
	case ConcatGrad:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.Concat.Out()...))
	case Pad2D:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.Pad2D.Small()...))
	case Crop2D:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.Pad2D.Large()...))
	case UpSample:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.UpSample.In()...))
	case UpSampleGrad:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.UpSample.Out()...))
	case Resize:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.Resize.In()...))
	case Permute:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.Permute.In()...))
	case Recurrence, RecurrenceGrad:
		shapes := append(s.Op.Recurrence.InShapes(), s.Op.Recurrence.Out())
		args := make([]gorgonia.Value, len(s.In))
		for j, b := range s.In[:min(len(s.In), len(shapes))] { // not the Recurrence's scratch
			args[j] = h.dense(b, shapes[j]...)
		}
		args = args[:min(len(s.In), len(shapes))]
		return h.do(s.Node.Op(), s.Out[0], args...)
	case Mask:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.M, s.N))
	case BatchMatMul:
		p := s.Op.BatchMatMul
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], p.A...), h.dense(s.In[1], p.B...))
	case L2Normalize:
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], s.Op.L2Norm.Shape...))
	case L2NormalizeGrad:
		sh := s.Op.L2Norm.Shape
		return h.do(s.Node.Op(), s.Out[0], h.dense(s.In[0], sh...), h.dense(s.In[1], sh...))
	default:
		return fmt.Errorf("host backend: no %v", s.Kind)
	}
	return nil
}

// reluGrad applies the gradient of the ReLU folded into a ConvInputGrad,
// PoolGrad or Add step (Capabilities.FoldsReLUGrad) after the step: +0 where the
// ReLU's output, the step's last input, is not above 0.
func (h *hostBackend) reluGrad(s *Step) {
	if (s.Kind != ConvInputGrad && s.Kind != PoolGrad && s.Kind != Add) || s.Op.Activation != ops.ReLU {
		return
	}
	out, y := h.bufs[s.Out[0]], h.bufs[s.In[len(s.In)-1]]
	for i := range min(len(out), len(y)) {
		if !(y[i] > 0) {
			out[i] = 0
		}
	}
}

// conv computes a Conv step as the products and patches it stands for, on
// this backend's grids (the images and the output's gradient as they are):
// each product in float64, as its Gemm.
func (h *hostBackend) conv(s *Step) {
	w := s.Op.Window
	product := func(transA, transB bool, m, n, k int, a, b, c []float32) {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var sum float64
				for p := 0; p < k; p++ {
					av, bv := a[i*k+p], b[p*n+j]
					if transA {
						av = a[p*m+i]
					}
					if transB {
						bv = b[j*k+p]
					}
					sum += float64(av) * float64(bv)
				}
				c[i*n+j] += float32(sum)
			}
		}
	}
	patches := func(x []float32) []float32 {
		cols := make([]float32, w.Positions()*w.PatchSize())
		ops.PatchesForward(w, x, cols)
		return cols
	}
	in := func(j int) []float32 { return h.bufs[s.In[j]] }
	out := h.bufs[s.Out[0]]
	switch s.Kind {
	case ConvForward:
		for r := 0; r < s.M; r++ {
			for f := 0; f < s.K; f++ {
				out[r*s.K+f] = 0
				if s.In[2] != None {
					out[r*s.K+f] = in(2)[f]
				}
			}
		}
		product(false, false, s.M, s.K, s.N, patches(in(0)), in(1), out)
		if s.Op.Activation == ops.ReLU { // Capabilities.FoldsReLU
			ops.ActivationForward(ops.ReLU, 0, s.K, out[:s.M*s.K], out[:s.M*s.K])
		}
	case ConvKernelGrad:
		clear(out[:s.N*s.K])
		product(true, false, s.N, s.K, s.M, patches(in(0)), in(1), out)
	case ConvInputGrad:
		dcols := make([]float32, s.M*s.N)
		product(false, true, s.M, s.N, s.K, in(0), in(1), dcols)
		ops.PatchesBackward(w, dcols, out)
	}
}
