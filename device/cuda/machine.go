//go:build cudavm && cgo

package cuda

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
)

// newMachine compiles g into kernel launches and cuBLAS calls (plan.Compile:
// an op without a GPU kernel fails here, naming the op) and binds them to
// GPU g.
func newMachine(g *gpu, graph *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	be, err := newBackend(g)
	if err != nil {
		return nil, err
	}
	p, err := plan.Compile(graph, opts.Learnables, be.Capabilities())
	if err != nil {
		return nil, errors.Join(err, be.Close())
	}
	if err := checkSteps(p.Steps); err != nil {
		return nil, errors.Join(err, be.Close())
	}
	be.elems = make([]int, len(p.Buffers))
	for i, buf := range p.Buffers {
		be.elems[i] = buf.Elems
	}
	be.reducer, be.reduceScale = opts.DeviceReduce, opts.ReduceScale
	return plan.NewFromOptions(p, be, opts)
}

// checkSteps refuses, when the graph is bound, the steps the kernels
// cannot compute that plan.Compile accepts: a loss of a kind, or with a
// parameter, that gk_loss does not know (launch.ForLossStep), naming the
// node, the kind and the parameter.
func checkSteps(steps []plan.Step) error {
	for i := range steps {
		s := &steps[i]
		if s.Kind != plan.Loss && s.Kind != plan.LossGrad {
			continue
		}
		if _, err := launch.ForLossStep(s); err != nil {
			return fmt.Errorf("node %q: %w", stepName(s), err)
		}
	}
	return nil
}

// The GPU is a plan.Device: device memory is a devicePtr.
var _ plan.Device = (*gpu)(nil)

func (g *gpu) Do(f func() error) error { return g.do(f) }

func (g *gpu) Alloc(n int) (plan.Mem, error) { return g.alloc(int64(n) * 4) }

func (g *gpu) Free(m plan.Mem) error { return g.free(m.(devicePtr)) }

// CopyOut copies on the legacy default stream, which waits for the work of
// every machine's stream (they are created blocking) before it starts.
func (g *gpu) CopyOut(dst []float32, m plan.Mem) error {
	if len(dst) == 0 {
		return nil
	}
	return g.ctx.copyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), m.(devicePtr), int64(len(dst))*4)
}

// stageLimit is the largest copy that goes through pinned memory (the
// batch, its labels, outputs and the loss). Larger ones (the weights and
// their gradients) are copied straight from and to Go memory.
const stageLimit = 4 << 20

// inputStageLimit is the largest input of a started step that goes
// through pinned memory (UploadInput): a batch above stageLimit would
// otherwise be copied from Go memory and waited for, and the steps of a
// large batch would not overlap.
const inputStageLimit = 256 << 20

// backend is a plan.Backend on one GPU: steps as kernels and cuBLAS calls
// queued on the machine's own stream.
type backend struct {
	gpu    *gpu
	kern   *kernels
	blas   gpuBLAS
	stream gpuStream
	// frames are the host side of the steps queued and not yet waited
	// for: cur is the one being queued, and submitted those handed to
	// Submit, oldest first, which Await takes in order. Two frames let
	// one step run while the next is queued (plan.AsyncBackend).
	frames    [2]*frame
	cur       int
	submitted []int
	// copies is the stream on which UploadInput copies a started step's
	// inputs while the step before computes, made by the first.
	copies gpuStream
	// bad is a device int the loss kernels set to the first sample whose
	// sparse target is not a class index; each frame has its pinned copy.
	bad devicePtr
	// labels is the device int in which gk_zero_one_labels tells a hinge
	// loss's kernel whether the batch's labels are all 0 or 1.
	labels devicePtr
	// ones holds onesLen ones, for folding SGD into a bias's column sums
	// (gradUpdate).
	ones    scratch
	onesLen int
	// scratch is the memory the kernels of a step pass between launches
	// (normalization, penalties, clipping by norm and by global norm).
	scratch scratch
	// elems are the values of each of the plan's buffers (a GlobalNorm
	// step's gradients).
	elems []int
	// indexWords are the device words in which the Gather and ScatterAdd
	// steps of a run flag a bad index, the j-th such step the j-th word.
	indexWords []devicePtr
	// reducer and reduceScale are a data-parallel step's all-reduce and
	// this replica's share (driver.MachineOptions.DeviceReduce); nil for
	// none.
	reducer     driver.DeviceAllReducer
	reduceScale func() float32
	// comm is the stream the overlapped all-reduces run on, made by the
	// first (StartReduceOnDevice); gradsReady and reduced are the events
	// by which it and the machine's stream wait for each other.
	comm                gpuStream
	gradsReady, reduced gpuEvent
}

// frame is the host side of one step's work on the stream: what the
// host reads back once the stream has done it, in pinned memory of the
// frame's own, so that the host can queue the next step into the other
// frame while this one runs.
type frame struct {
	// stage is pinned host memory for the small copies to and from each
	// device buffer.
	stage map[devicePtr]pinned
	// after holds host copies from pinned memory to Go memory, made once
	// the stream has done the frame's work.
	after []func()
	// direct says that a copy from Go memory was queued (one too large
	// to stage): the caller may change that memory once Submit returns,
	// so Submit waits for it.
	direct bool
	// badHost is the pinned copy of the backend's bad word; lossStep the
	// first loss step queued in the frame, or -1.
	badHost  pinned
	lossStep int
	// indexHosts are the pinned copies (two float32s: the 8 bytes) of the
	// index words the frame's Gather and ScatterAdd steps used;
	// indexSteps those steps, in the order queued.
	indexHosts []pinned
	indexSteps []indexStep
	// done is recorded on the stream after the frame's work by Submit.
	done gpuEvent
	// inputsQueued says that UploadInput queued copies on the copies
	// stream that the frame's work has not yet been made to wait for;
	// inputsReady is recorded after them (joinInputs).
	inputsQueued bool
	inputsReady  gpuEvent
}

// indexStep is a Gather or ScatterAdd step queued in the current run: i
// its index among the steps being run.
type indexStep struct {
	i int
	s *plan.Step
}

var _ plan.Backend = (*backend)(nil)

func newBackend(g *gpu) (*backend, error) {
	b := &backend{gpu: g, scratch: scratch{g: g}, ones: scratch{g: g}}
	for i := range b.frames {
		b.frames[i] = &frame{stage: map[devicePtr]pinned{}, lossStep: -1}
	}
	err := g.do(func() error {
		var err error
		if b.kern, err = g.kernels(); err != nil {
			return err
		}
		if b.stream, err = g.ctx.newStream(); err != nil {
			return fmt.Errorf("%s: creating a stream: %w", g.short(), err)
		}
		if b.blas, err = g.ctx.newBLAS(b.stream); err != nil {
			return fmt.Errorf("%s: %w", g.short(), err)
		}
		if b.bad, err = g.alloc(4); err != nil {
			return err
		}
		if b.labels, err = g.alloc(4); err != nil {
			return err
		}
		for _, f := range b.frames {
			if f.badHost, err = g.allocPinned(1); err != nil {
				return err
			}
			if f.done, err = g.ctx.newEvent(); err != nil {
				return fmt.Errorf("%s: creating an event: %w", g.short(), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return b, nil
}

func (b *backend) Device() plan.Device { return b.gpu }

// Capabilities: the bias and the activation in one kernel (BiasAct);
// plain SGD folded into the product that computes a weight's gradient
// (foldsUpdate); the other updates are kernels after it.
func (b *backend) Capabilities() plan.Capabilities {
	return plan.Capabilities{FusedUpdate: foldsUpdate}
}

// foldsUpdate: plain SGD folds into a weight's gradient product (aᵀ·b)
// and a bias's column sums (onesᵀ·dz) over at most plan.FoldRows rows,
// the weights being the product's output with alpha -lr and beta 1, as on
// the CPU: the gradient never exists, and the update reads and writes the
// weights once, in the product.
func foldsUpdate(grad *plan.Step, u optim.Update) bool {
	if !u.PlainSGD() {
		return false
	}
	switch grad.Kind {
	case plan.Gemm:
		return grad.Op.TransA && !grad.Op.TransB && grad.K <= plan.FoldRows
	case plan.SumRows:
		return grad.M <= plan.FoldRows
	}
	return false
}

// frame is the frame being queued; an error when it is still submitted
// (two steps are: Await the older first).
func (b *backend) frame() (*frame, error) {
	for _, i := range b.submitted {
		if i == b.cur {
			return nil, errors.New("work queued for a third step while two are submitted: Await one first")
		}
	}
	return b.frames[b.cur], nil
}

// staging returns the current frame's pinned buffer for copies of n
// float32s to or from device buffer p, or false when the copy is larger
// than limit bytes.
func (b *backend) staging(p devicePtr, n, limit int) (pinned, bool, error) {
	if n*4 > limit {
		return pinned{}, false, nil
	}
	f, err := b.frame()
	if err != nil {
		return pinned{}, false, err
	}
	if s, ok := f.stage[p]; ok && s.n == n {
		return s, true, nil
	}
	s, err := b.gpu.allocPinned(n)
	if err != nil {
		return pinned{}, false, err
	}
	if old, ok := f.stage[p]; ok {
		// A copy queued earlier in the frame may still read or write it.
		if err := b.synchronize(); err != nil {
			return pinned{}, false, errors.Join(err, s.free())
		}
		if err := old.free(); err != nil {
			return pinned{}, false, errors.Join(err, s.free())
		}
	}
	f.stage[p] = s
	return s, true, nil
}

func (b *backend) Upload(dst plan.Mem, src []float32) error {
	_, err := b.upload(b.stream, stageLimit, dst, src)
	return err
}

// UploadInput implements plan.InputUploader: src is staged in the
// current frame's pinned memory and copied on the copies stream, which
// the frame's work waits for (joinInputs), so the copy overlaps the work
// of the step before. An input too large to stage is copied as Upload
// copies it.
func (b *backend) UploadInput(dst plan.Mem, src []float32) error {
	if b.copies == nil {
		if err := b.newCopies(); err != nil {
			return err
		}
	}
	staged, err := b.upload(b.copies, inputStageLimit, dst, src)
	if staged {
		b.frames[b.cur].inputsQueued = true
	}
	return err
}

// upload queues the copy of src into dst: through the current frame's
// pinned memory on stream s, or, larger than limit bytes, straight from
// Go memory on the step's stream (the driver stages pageable memory
// itself), which Submit then waits for. It says whether it staged.
func (b *backend) upload(s gpuStream, limit int, dst plan.Mem, src []float32) (bool, error) {
	if len(src) == 0 {
		return false, nil
	}
	p, bytes := dst.(devicePtr), int64(len(src))*4
	st, ok, err := b.staging(p, len(src), limit)
	if err != nil {
		return false, err
	}
	if ok {
		copy(st.floats(), src)
		return true, s.copyHtoD(p, st.p, bytes)
	}
	// src stays untouched until Wait returns, as the plan.Backend
	// contract requires of callers, or Submit, which waits for such a
	// copy.
	f, err := b.frame()
	if err != nil {
		return false, err
	}
	f.direct = true
	return false, b.stream.copyHtoD(p, unsafe.Pointer(unsafe.SliceData(src)), bytes)
}

// newCopies makes the copies stream and the frames' inputsReady events.
func (b *backend) newCopies() error {
	copies, err := b.gpu.ctx.newStream()
	if err != nil {
		return fmt.Errorf("%s: creating the stream for the inputs: %w", b.gpu.short(), err)
	}
	for i, f := range b.frames {
		if f.inputsReady, err = b.gpu.ctx.newEvent(); err != nil {
			errs := []error{fmt.Errorf("%s: creating an event: %w", b.gpu.short(), err), copies.destroy()}
			for _, g := range b.frames[:i] {
				errs = append(errs, g.inputsReady.destroy())
				g.inputsReady = nil
			}
			return errors.Join(errs...)
		}
	}
	b.copies = copies
	return nil
}

// joinInputs makes the stream wait for the inputs UploadInput queued for
// the current frame: called before any work of the frame that may read
// them.
func (b *backend) joinInputs() error {
	f, err := b.frame()
	if err != nil || !f.inputsQueued {
		return err
	}
	f.inputsQueued = false
	if err := b.copies.record(f.inputsReady); err != nil {
		return err
	}
	return b.stream.wait(f.inputsReady)
}

func (b *backend) Download(dst []float32, src plan.Mem) error {
	if len(dst) == 0 {
		return nil
	}
	if err := b.joinInputs(); err != nil {
		return err
	}
	p, bytes := src.(devicePtr), int64(len(dst))*4
	s, ok, err := b.staging(p, len(dst), stageLimit)
	if err != nil {
		return err
	}
	if ok {
		if err := b.stream.copyDtoH(s.p, p, bytes); err != nil {
			return err
		}
		f, err := b.frame()
		if err != nil {
			return err
		}
		f.after = append(f.after, func() { copy(dst, s.floats()) })
		return nil
	}
	return b.stream.copyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), p, bytes)
}

func (b *backend) Exec(i int, s *plan.Step, bufs []plan.Mem) error {
	if err := b.joinInputs(); err != nil {
		return err
	}
	k, st := b.kern, b.stream
	ptr := func(j int) devicePtr {
		if j == plan.None {
			return 0
		}
		return bufs[j].(devicePtr)
	}
	in := func(j int) devicePtr { return ptr(s.In[j]) }
	out := func(j int) devicePtr { return ptr(s.Out[j]) }
	switch s.Kind {
	case plan.Gemm:
		return gemm(b.blas, s.Op.TransA, s.Op.TransB, s.M, s.N, s.K, 1, in(0), in(1), 0, out(0))
	case plan.BiasAct:
		return k.biasAct(st, in(0), in(1), out(0), out(1), s.M, s.N, s.Op.Activation, s.Op.Alpha)
	case plan.Softmax:
		return k.softmax(st, in(0), out(0), s.M, s.N)
	case plan.ActGrad:
		return k.actGrad(st, in(0), in(1), in(2), out(0), s.M*s.N, s.Op.Activation, s.Op.Alpha)
	case plan.SoftmaxGrad:
		return k.softmaxGrad(st, in(0), in(1), out(0), s.M, s.N)
	case plan.SumRows:
		return k.sumRows(st, in(0), out(0), s.M, s.N)
	case plan.Loss, plan.LossGrad:
		l, err := launch.ForLossStep(s)
		if err != nil {
			return err
		}
		var w devicePtr
		if l.Weights >= 0 {
			w = in(l.Weights)
		}
		f, err := b.frame()
		if err != nil {
			return err
		}
		if f.lossStep < 0 {
			f.lossStep = i
			if err := st.memsetD32(b.bad, math.MaxInt32, 1); err != nil {
				return err
			}
		}
		if s.Kind == plan.Loss {
			return k.loss(st, l, in(0), in(1), w, b.labels, s.M, s.N, out(0), b.bad)
		}
		return k.lossGrad(st, l, in(0), in(1), w, b.labels, in(2), s.M, s.N, out(0), b.bad)
	case plan.Patches:
		return k.patches(st, in(0), out(0), s.Op.Window)
	case plan.PatchesGrad:
		return k.patchesGrad(st, in(0), out(0), s.Op.Window)
	case plan.Pool:
		return k.pool(st, in(0), out(0), s.Op.Pool, s.Op.Window)
	case plan.PoolGrad:
		return k.poolGrad(st, in(0), in(1), in(2), out(0), s.Op.Pool, s.Op.Window)
	case plan.Dropout:
		return k.dropout(st, in(0), in(1), out(0), s.M, s.N, s.Op.Dropout)
	case plan.ImageTransform:
		return k.imageTransform(st, in(0), in(1), out(0), s.M, s.Op.Transform)
	case plan.Norm:
		args := make([]devicePtr, len(s.In))
		for j := range args {
			args[j] = in(j)
		}
		return k.norm(st, &b.scratch, s.Op.Norm, s.Op.NormParams, s.M, s.N, args, out(0))
	case plan.Add:
		return k.add(st, in(0), in(1), out(0), s.N)
	case plan.Penalty:
		return k.penalty(st, &b.scratch, s.Op.Penalty, in(0), out(0), s.N)
	case plan.PenaltyGrad:
		return k.penaltyGrad(st, s.Op.Penalty, in(0), in(1), out(0), s.N)
	case plan.MetricState:
		return k.metricState(st, s.Op.Metric, in(0), in(1), out(0), s.M, s.N, s.K)
	case plan.GlobalNorm:
		grads, ns := make([]devicePtr, len(s.In)), make([]int, len(s.In))
		for j, bi := range s.In {
			if bi < 0 || bi >= len(b.elems) {
				return fmt.Errorf("global norm: gradient buffer %d of a plan of %d buffers", bi, len(b.elems))
			}
			grads[j], ns[j] = in(j), b.elems[bi]
		}
		return k.globalNorm(st, &b.scratch, s.ClipNorm, grads, ns, out(0))
	case plan.Gather, plan.ScatterAdd:
		bad, err := b.indexWord(i, s)
		if err != nil {
			return err
		}
		if s.Kind == plan.Gather {
			return k.gather(st, in(0), in(1), out(0), s.M, s.K, s.N, bad)
		}
		return k.scatterAdd(st, in(0), in(1), out(0), s.M, s.K, s.N, bad)
	case plan.MovingAverage: // Out[0] is In[0], the State buffer
		return k.movingAverage(st, s.Op.Moving, out(0), in(1), s.N)
	case plan.Binary:
		return k.binary(st, s.Op.Binary, in(0), in(1), out(0), s.N)
	case plan.BinaryGrad:
		return k.binaryGrad(st, s.Op.Binary, in(0), in(1), in(2), out(0), s.N)
	case plan.Scale:
		return k.scaleTo(st, s.Op.Scale, in(0), out(0), s.N)
	case plan.Concat:
		p := s.Op.Concat
		for j := range s.In {
			if err := k.copyCols(st, in(j), p.Cols(j), 0, out(0), s.N, p.Offset(j), s.M, p.Cols(j)); err != nil {
				return err
			}
		}
		return nil
	case plan.ConcatGrad:
		p := s.Op.Concat
		return k.copyCols(st, in(0), p.OutCols(), p.Offset(p.Piece), out(0), s.N, 0, s.M, s.N)
	case plan.Pad2D, plan.Crop2D:
		return k.pad2d(st, s.Op.Pad2D, s.Kind == plan.Crop2D, in(0), out(0))
	case plan.UpSample, plan.UpSampleGrad:
		return k.upSample(st, s.Op.UpSample, s.Kind == plan.UpSampleGrad, in(0), out(0))
	case plan.Permute:
		return k.permute(st, s.Op.Permute, in(0), out(0))
	case plan.Resize:
		return k.resize(st, s.Op.Resize, in(0), out(0))
	case plan.BatchMatMul:
		return k.batchMatMul(st, s.Op.BatchMatMul, in(0), in(1), out(0))
	case plan.L2Normalize:
		return k.l2Normalize(st, s.Op.L2Norm, in(0), 0, out(0))
	case plan.L2NormalizeGrad:
		return k.l2Normalize(st, s.Op.L2Norm, in(0), in(1), out(0))
	case plan.Recurrence, plan.RecurrenceGrad:
		return b.recurrence(s, ptr)
	case plan.Mask:
		return b.kern.launch(b.stream, kMask, elemGrid(s.M), elemBlock, 0, ptrArg(ptr(s.In[0])), ptrArg(ptr(s.Out[0])),
			intArg(s.M), intArg(s.N), floatArg(float32(s.Op.Mask.Value)))
	}
	return fmt.Errorf("no GPU implementation of %v", s.Kind)
}

// gemm queues c = alpha·op(a)·op(b) + beta·c for row-major float32
// matrices on h's stream, with the shapes of package ops' gemm: op(a) is
// m×k, op(b) is k×n, c is m×n; a is stored k×m when transA, b is n×k when
// transB. rowMajorGemm maps the call to column-major cuBLAS.
func gemm(h gpuBLAS, transA, transB bool, m, n, k int, alpha float32, a, b devicePtr, beta float32, c devicePtr) error {
	if m == 0 || n == 0 {
		return nil
	}
	if m > math.MaxInt32 || n > math.MaxInt32 || k > math.MaxInt32 {
		return fmt.Errorf("cublasSgemm takes 32-bit sizes, but the product is %d×%d by %d×%d", m, k, k, n)
	}
	g := rowMajorGemm(transA, transB, m, n, k)
	A, B := a, b
	if g.SwapAB {
		A, B = b, a
	}
	if err := h.sgemm(g.TransA, g.TransB, g.M, g.N, g.K, alpha, A, g.Lda, B, g.Ldb, beta, c, g.Ldc); err != nil {
		return fmt.Errorf("cublasSgemm (m=%d n=%d k=%d transA=%t transB=%t): %w", m, n, k, transA, transB, err)
	}
	return nil
}

// ReduceOnDevice implements plan.DeviceReducer: each gradient scaled by
// this replica's share of the global batch (gk_scale), then summed over
// the replicas in place by the reducer (NCCL), both queued on the stream.
func (b *backend) ReduceOnDevice(grads []plan.Mem, elems []int) error {
	return b.reduceOn(b.stream, grads, elems)
}

func (b *backend) reduceOn(s gpuStream, grads []plan.Mem, elems []int) error {
	if b.reducer == nil {
		return errors.New("a Reduce step in a machine without an all-reduce")
	}
	scale := float32(1)
	if b.reduceScale != nil {
		scale = b.reduceScale()
	}
	for i, g := range grads {
		p := g.(devicePtr)
		if scale != 1 {
			if err := b.kern.scale(s, p, elems[i], scale); err != nil {
				return err
			}
		}
		if err := s.allReduce(b.reducer, p, elems[i]); err != nil {
			return fmt.Errorf("all-reducing %d gradient values: %w", elems[i], err)
		}
	}
	return nil
}

// StartReduceOnDevice implements plan.DeviceOverlapReducer: a bucket of
// gradients, once the machine's stream has computed them, scaled and
// all-reduced on a second stream (comm) while the machine's stream goes
// on with the backward pass, as PyTorch DDP overlaps its buckets. The
// buckets queue on comm in the order they come, the same on every
// replica.
func (b *backend) StartReduceOnDevice(grads []plan.Mem, elems []int) error {
	if b.comm == nil {
		comm, err := b.gpu.ctx.newStream()
		if err != nil {
			return fmt.Errorf("%s: creating the all-reduce's stream: %w", b.gpu.short(), err)
		}
		ready, err := b.gpu.ctx.newEvent()
		if err != nil {
			return errors.Join(fmt.Errorf("%s: creating an event: %w", b.gpu.short(), err), comm.destroy())
		}
		reduced, err := b.gpu.ctx.newEvent()
		if err != nil {
			return errors.Join(fmt.Errorf("%s: creating an event: %w", b.gpu.short(), err), ready.destroy(), comm.destroy())
		}
		b.comm, b.gradsReady, b.reduced = comm, ready, reduced
	}
	if err := b.stream.record(b.gradsReady); err != nil {
		return err
	}
	if err := b.comm.wait(b.gradsReady); err != nil {
		return err
	}
	return b.reduceOn(b.comm, grads, elems)
}

// WaitReduceOnDevice implements plan.DeviceOverlapReducer: the machine's
// stream waits for the all-reduces started so far before it goes on (to
// the updates).
func (b *backend) WaitReduceOnDevice() error {
	if b.comm == nil {
		return nil
	}
	if err := b.comm.record(b.reduced); err != nil {
		return err
	}
	return b.stream.wait(b.reduced)
}

// indexWord returns the device word for Gather or ScatterAdd step i, s,
// the next of the run, set to launch.NoBadIndex on the stream.
func (b *backend) indexWord(i int, s *plan.Step) (devicePtr, error) {
	f, err := b.frame()
	if err != nil {
		return 0, err
	}
	j := len(f.indexSteps)
	if j == len(b.indexWords) {
		dev, err := b.gpu.alloc(8)
		if err != nil {
			return 0, err
		}
		b.indexWords = append(b.indexWords, dev)
	}
	if j == len(f.indexHosts) {
		host, err := b.gpu.allocPinned(2)
		if err != nil {
			return 0, err
		}
		f.indexHosts = append(f.indexHosts, host)
	}
	w := b.indexWords[j]
	if err := b.stream.memsetD32(w, math.MaxUint32, 2); err != nil {
		return 0, err
	}
	f.indexSteps = append(f.indexSteps, indexStep{i: i, s: s})
	return w, nil
}

// Update applies one optimizer step with the kernels of kernels.cu, which
// compute optim.Update.Apply's arithmetic for every rule and option
// (kernels.update); an update they cannot compute fails, naming its rule,
// before anything is queued.
func (b *backend) Update(s *plan.Step, bufs []plan.Mem, slots []plan.Mem, n int, u optim.Update) error {
	if err := b.joinInputs(); err != nil {
		return err
	}
	if s.Kind == plan.GradUpdate {
		return b.gradUpdate(s, bufs, u)
	}
	if s.Kind != plan.Update {
		return fmt.Errorf("the CUDA backend has no update step %v", s.Kind)
	}
	w, g := bufs[s.In[0]].(devicePtr), bufs[s.In[1]].(devicePtr)
	var global devicePtr // the factor of the GlobalNorm step, on the device
	if len(s.In) > 2 {
		global = bufs[s.In[2]].(devicePtr)
	}
	ptrs := make([]devicePtr, len(slots))
	for i, m := range slots {
		ptrs[i] = m.(devicePtr)
	}
	return b.kern.update(b.stream, &b.scratch, u, w, g, ptrs, n, global)
}

// gradUpdate runs a GradUpdate step (foldsUpdate): plain SGD as the
// product of the gradient, w = -lr·aᵀ·b + w, or for a bias
// w = -lr·onesᵀ·dz + w.
func (b *backend) gradUpdate(s *plan.Step, bufs []plan.Mem, u optim.Update) error {
	of := s.Of
	if of == nil || !foldsUpdate(of, u) {
		return fmt.Errorf("the CUDA backend does not fold %v into %v", u.Rule, of)
	}
	w := bufs[s.In[0]].(devicePtr)
	in := func(j int) devicePtr { return bufs[of.In[j]].(devicePtr) }
	lr := -float32(u.LearningRate)
	if of.Kind == plan.Gemm {
		return gemm(b.blas, of.Op.TransA, of.Op.TransB, of.M, of.N, of.K, lr, in(0), in(1), 1, w)
	}
	ones, err := b.onesVector(of.M)
	if err != nil {
		return err
	}
	return gemm(b.blas, false, false, 1, of.N, of.M, lr, ones, in(0), 1, w)
}

// onesVector returns a device vector of at least n ones, set on the
// stream when the scratch holding it grows.
func (b *backend) onesVector(n int) (devicePtr, error) {
	p, err := b.ones.get(b.stream, int64(n)*4)
	if err != nil || n <= b.onesLen {
		return p, err
	}
	if err := b.stream.memsetD32(p, math.Float32bits(1), int64(n)); err != nil {
		return 0, err
	}
	b.onesLen = n
	return p, nil
}

// Wait waits for the stream, finishes the current frame's staged
// downloads and reports what the kernels found wrong in the data, in the
// first step that found something: a sparse target that is not a class
// index (a *plan.TargetError), or an index that names no row of an
// embedding's table (an *ops.IndexError, wrapped with the step and its
// node as the CPU backend's error is). Frames submitted before stay for
// Await.
func (b *backend) Wait() error {
	f, err := b.frame()
	if err != nil {
		return errors.Join(err, b.synchronize())
	}
	if err := b.readBack(f); err != nil {
		return errors.Join(err, b.finish(f, b.synchronize()))
	}
	return b.finish(f, b.synchronize())
}

// synchronize waits for the stream and the copies stream.
func (b *backend) synchronize() error {
	err := b.stream.synchronize()
	if b.copies != nil {
		err = errors.Join(err, b.copies.synchronize())
	}
	return err
}

// Submit implements plan.AsyncBackend: it ends the current frame with its
// read-backs and an event, and makes the other frame current, so that the
// next step is queued while this one runs. A frame that copies from Go
// memory is waited for here, since the caller may change that memory
// next.
func (b *backend) Submit() error {
	f, err := b.frame()
	if err != nil {
		return err
	}
	if err := b.readBack(f); err != nil {
		return errors.Join(err, b.finish(f, b.synchronize()))
	}
	if err := b.stream.record(f.done); err != nil {
		return errors.Join(err, b.finish(f, b.synchronize()))
	}
	if f.direct {
		if err := b.stream.synchronize(); err != nil {
			return b.finish(f, err)
		}
	}
	b.submitted = append(b.submitted, b.cur)
	b.cur = 1 - b.cur
	return nil
}

// Await implements plan.AsyncBackend: it waits for the oldest submitted
// frame's work and reports what went wrong in it, as Wait does.
func (b *backend) Await() error {
	if len(b.submitted) == 0 {
		return errors.New("no submitted step to wait for")
	}
	f := b.frames[b.submitted[0]]
	b.submitted = b.submitted[1:]
	return b.finish(f, f.done.synchronize())
}

// readBack queues the copies of the error words f's steps used to f's
// pinned memory, after the frame's inputs.
func (b *backend) readBack(f *frame) error {
	if err := b.joinInputs(); err != nil {
		return err
	}
	if f.lossStep >= 0 {
		if err := b.stream.copyDtoH(f.badHost.p, b.bad, 4); err != nil {
			return err
		}
	}
	for j := range f.indexSteps {
		if err := b.stream.copyDtoH(f.indexHosts[j].p, b.indexWords[j], 8); err != nil {
			return err
		}
	}
	return nil
}

// finish ends frame f once its work is done (synced: the error of waiting
// for it): the staged downloads are copied out and the error words read.
// f is then empty, ready for another step.
func (b *backend) finish(f *frame, synced error) error {
	lossStep, after, indexSteps := f.lossStep, f.after, f.indexSteps
	f.lossStep, f.after, f.indexSteps, f.direct, f.inputsQueued = -1, nil, f.indexSteps[:0], false, false
	if synced != nil {
		return fmt.Errorf("%s: running the step: %w", b.gpu.short(), synced)
	}
	if b.comm != nil { // all-reduces a failed step left behind
		if err := b.comm.synchronize(); err != nil {
			return fmt.Errorf("%s: all-reducing the gradients: %w", b.gpu.short(), err)
		}
	}
	for _, copyOut := range after {
		copyOut()
	}
	var indexErr error
	indexAt := -1
	for j, is := range indexSteps {
		if e := launch.IndexError(*(*uint64)(f.indexHosts[j].p), is.s.K); e != nil {
			indexErr, indexAt = stepError(is.s, e), is.i
			break
		}
	}
	if lossStep >= 0 && (indexAt < 0 || lossStep < indexAt) {
		if row := *(*int32)(f.badHost.p); row != math.MaxInt32 {
			return &plan.TargetError{Step: lossStep, Row: int(row)}
		}
	}
	return indexErr
}

// stepError is err, found by step s, with the step and its node, as
// plan.Machine reports the errors of the steps the CPU runs.
func stepError(s *plan.Step, err *ops.IndexError) error {
	return fmt.Errorf("%v for node %q: %w", *s, stepName(s), err)
}

// stepName is the name of the node s computes, "?" for a step made
// without one.
func stepName(s *plan.Step) string {
	if s.Name == "" {
		return "?"
	}
	return s.Name
}

// Close frees what the backend holds: its stream, cuBLAS handle and
// pinned buffers (the machine frees the device buffers).
func (b *backend) Close() error {
	return b.gpu.do(func() error {
		var errs []error
		if b.stream != nil {
			errs = append(errs, b.stream.synchronize())
		}
		if b.comm != nil {
			errs = append(errs, b.comm.synchronize(), b.comm.destroy(), b.gradsReady.destroy(), b.reduced.destroy())
			b.comm = nil
		}
		if b.copies != nil {
			errs = append(errs, b.copies.synchronize(), b.copies.destroy())
			b.copies = nil
		}
		for _, f := range b.frames {
			for _, p := range f.stage {
				errs = append(errs, p.free())
			}
			clear(f.stage)
			errs = append(errs, f.badHost.free())
			f.badHost = pinned{}
			for _, h := range f.indexHosts {
				errs = append(errs, h.free())
			}
			f.indexHosts, f.indexSteps = nil, nil
			if f.done != nil {
				errs = append(errs, f.done.destroy())
				f.done = nil
			}
			if f.inputsReady != nil {
				errs = append(errs, f.inputsReady.destroy())
				f.inputsReady = nil
			}
		}
		b.submitted = nil
		errs = append(errs, b.gpu.free(b.bad), b.gpu.free(b.labels), b.ones.free())
		b.bad, b.labels, b.onesLen = 0, 0, 0
		for _, w := range b.indexWords {
			errs = append(errs, b.gpu.free(w))
		}
		b.indexWords = nil
		errs = append(errs, b.scratch.free())
		if b.blas != nil {
			errs = append(errs, b.blas.close())
			b.blas = nil
		}
		if b.stream != nil {
			errs = append(errs, b.stream.destroy())
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%s: releasing a machine: %w", b.gpu.short(), err)
		}
		return nil
	})
}
