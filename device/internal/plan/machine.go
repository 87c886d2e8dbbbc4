package plan

import (
	"errors"
	"fmt"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Mem is a block of device memory, as a Device hands it out.
type Mem any

// Device is the memory of one device, which outlives the machines on it:
// the weights a model's machines share are allocated and freed through it.
// Alloc and Free are called inside Do.
type Device interface {
	// Do runs f with the device ready for calls (for CUDA: on a locked OS
	// thread with the GPU's context current).
	Do(f func() error) error
	// Alloc returns memory for n float32s, contents undefined.
	Alloc(n int) (Mem, error)
	// Free releases memory from Alloc.
	Free(m Mem) error
	// CopyOut copies n float32s of m into dst and returns when they are
	// there, after all work queued on the device before it.
	CopyOut(dst []float32, m Mem) error
}

// HostMemory is the optional interface of a Device that computes on host
// memory, such as the CPU: the machine then hands it the host slices of
// the inputs, the weights and the optimizer's slots themselves instead of
// copying them, and nothing ever needs copying back.
type HostMemory interface {
	// Host returns data as the device's memory, without copying.
	Host(data []float32) Mem
}

// DeviceReducer is the optional interface of a Backend that all-reduces
// gradients on its own device (a GPU, with NCCL on its stream): a Reduce
// step then queues ReduceOnDevice with the gradients' buffers and their
// sizes, and the host never sees them.
type DeviceReducer interface {
	ReduceOnDevice(grads []Mem, elems []int) error
}

// DeviceOverlapReducer is the optional interface of a DeviceReducer that
// overlaps the all-reduce with the backward pass (OverlappedTrainingSteps):
// a ReduceStart step queues StartReduceOnDevice with a bucket of
// gradients, to be summed while the next steps run, and the ReduceWait
// step WaitReduceOnDevice, after which the steps queued see the sums.
type DeviceOverlapReducer interface {
	StartReduceOnDevice(grads []Mem, elems []int) error
	WaitReduceOnDevice() error
}

// AsyncBackend is the optional interface of a Backend whose queued work
// runs while the host goes on (a GPU's stream), with the host side of two
// steps' work kept apart: Submit ends the work queued since the last
// Submit or Wait as one step and returns without waiting for it, and the
// host may then change the memory it handed to Upload and queue the next
// step; Await waits for the oldest submitted step and reports what went
// wrong in it, as Wait does, after which the memory handed to its
// Downloads holds their values. At most two steps are submitted and not
// awaited. Wait still waits for the work queued since the last Submit,
// leaving the steps submitted before it to Await.
type AsyncBackend interface {
	Submit() error
	Await() error
}

// InputUploader is the optional interface of an AsyncBackend that copies
// a started step's inputs apart from the steps' work (a GPU's second
// stream), so that the copy of one step's batch runs while the step
// before computes: UploadInput queues the copy of src into dst, and the
// step's work queued next waits for it. The machine then gives a started
// step's inputs buffers of their own, two sets taken in turn, so that the
// copy never overwrites what the step before still reads; src may change
// once UploadInput returns.
type InputUploader interface {
	UploadInput(dst Mem, src []float32) error
}

// HostView is the optional interface of a HostMemory device whose memory
// the host can read and write in place: a Reduce step then hands the
// reducer the gradients themselves, without copies.
type HostView interface {
	// View returns m's values, len n, as a host slice.
	View(m Mem, n int) []float32
}

// Backend runs steps on a Device for one machine. Every call but Close is
// made inside Device().Do. Upload, Download, Exec and Update may queue work
// and return before it is done; Wait waits for all of it, and host memory
// handed to Upload or Download must not be touched before.
type Backend interface {
	Device() Device
	// Capabilities are the fusions the backend offers the compiler.
	Capabilities() Capabilities
	// Upload copies src into m.
	Upload(dst Mem, src []float32) error
	// Download copies m into dst.
	Download(dst []float32, src Mem) error
	// Exec runs step i of the steps being run, s, on the plan's buffers
	// bufs (any kind but Update and GradUpdate).
	Exec(i int, s *Step, bufs []Mem) error
	// Update runs an Update or GradUpdate step: it applies u to the n
	// values of the weight (bufs[s.In[0]]) with the optimizer's slots for
	// it, in the order of u.SlotNames(), with optim.Update.Apply's
	// arithmetic.
	Update(s *Step, bufs []Mem, slots []Mem, n int, u optim.Update) error
	// Wait waits for the queued work and reports what went wrong in it; a
	// sparse target that is not a class index is a *TargetError.
	Wait() error
	// Close releases what the backend holds (not the memory from
	// Device().Alloc, which its owners free).
	Close() error
}

// TargetError is a sparse loss's target that is not a class index, found
// by the device while running Step.
type TargetError struct {
	Step int // index in the steps being run
	Row  int
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("step %d: the target of sample %d is not a class index", e.Step, e.Row)
}

// Machine runs a plan on a Backend, as a driver.Trainer.
//
// RunAll follows the protocol of gorgonia's machines: it copies the host
// values of the graph's inputs (the batch, its labels, and the weights) to
// the device, runs the graph, and copies back the gradients, into host
// tensors bound to the gradient nodes where node.Grad() finds them, and the
// values of the graph's gorgonia.Read statements. Train also updates the
// weights on the device with the optimizer's rule; the weights and the
// optimizer's slots live in device memory shared by all the machines of a
// model (through driver.State), so only the batch goes in and the loss and
// outputs come back. nn calls driver.State.Sync before it reads weights or
// slots on the host and drops the model's machines after it writes them.
type Machine struct {
	plan  *Plan
	be    Backend
	dev   Device
	host  HostMemory // nil unless the device computes on host memory
	store *store
	slots SlotSource
	// state is closed with the machine when New made it (no State given).
	state *driver.State
	// own holds the buffers this machine allocated; bufs the buffer of
	// every plan buffer, own or shared, for the current run.
	own   []Mem
	bufs  []Mem
	grads []*tensor.Dense // per learnable with a gradient: where it lands
	reads [][]float32     // per Read: where its values land
	// started are the steps StartTrain queued and FinishTrain has not
	// finished, oldest first; stepReads the two sets of places their
	// Reads land, taken in turn (nextReads the next).
	started   []*startedStep
	stepReads [2][][]float32
	nextReads int
	// inputs2 are second buffers for the inputs, by plan buffer (nil for
	// the others), which the started steps that use the second set of
	// reads use too, when the backend is an InputUploader.
	inputs2 []Mem
	// arena holds the Temp buffers that share memory, as layout places
	// them (lifetimes.go); layout is nil when none do, and unshared says
	// that a check gave them memory of their own again.
	arena    Mem
	layout   *layout
	unshared bool
	// train caches the training steps of each kind of update.
	train map[trainingKey][]Step
	// slotMems holds, per learnable, the current step's slots.
	slotMems [][]Mem
	// lastSteps are the steps of the latest run, for explain.
	lastSteps []Step
	closed    bool
	// reduce, when not nil, is the host's all-reduce of the gradients
	// (SetGradientReducer); reducing is the latest bucket handed to it in
	// the background (ReduceStart), nil when none is under way.
	reduce   func(grads [][]float32) error
	reducing chan error
	overlap  bool
	// onDevice, when not nil, all-reduces on the device instead
	// (SetDeviceReducer).
	onDevice DeviceReducer
}

// startedStep is a training step StartTrain queued: what FinishTrain
// needs to finish it.
type startedStep struct {
	steps []Step
	reads [][]float32
	// submitted says that the step was handed to the AsyncBackend's
	// Submit, for FinishTrain to Await; weights are then its learnables'
	// entries, and targets copies of the loss steps' targets, by buffer,
	// to explain a TargetError once the host has the next batch's.
	submitted bool
	weights   []*entry
	targets   map[int][]float32
	// err is the error of a step run at once (not submitted).
	err error
}

// trainingKey is what decides a training step's steps: the rule, and
// whether the update needs whole gradients or clips values and decays
// weights (which some fusions cannot do).
type trainingKey struct {
	rule          optim.Rule
	wholeGradient bool
	clipsOrDecays bool
	globalClip    bool
}

// SlotSource gives the host copy of an optimizer's slot of a variable
// (optim.Optimizer.Slot): the machine keeps its device copy in step with it.
type SlotSource func(variable, name string, size int) ([]float32, error)

var _ driver.Pipeliner = (*Machine)(nil)

// New binds p to be, allocating the plan's buffers, with state the model's
// driver.State (nil: a State of its own) and slots the optimizer's slots
// (nil: Train fails for rules that keep slots). A machine owns be and
// closes it.
func New(p *Plan, be Backend, state *driver.State, slots SlotSource) (*Machine, error) {
	var own *driver.State
	if state == nil {
		own = driver.NewState()
		state = own
	}
	dev := be.Device()
	st, err := storeFor(state, dev)
	if err != nil {
		err = errors.Join(err, be.Close())
		if own != nil {
			err = errors.Join(err, own.Close())
		}
		return nil, err
	}
	host, _ := dev.(HostMemory)
	m := &Machine{plan: p, be: be, dev: dev, host: host, store: st, state: own, slots: slots,
		train: map[trainingKey][]Step{}, slotMems: make([][]Mem, len(p.Learnables)),
		own: make([]Mem, len(p.Buffers)), bufs: make([]Mem, len(p.Buffers)),
		grads: make([]*tensor.Dense, len(p.Learnables)), reads: make([][]float32, len(p.Reads))}
	for i, l := range p.Learnables {
		if p.Grads[i] == None {
			continue
		}
		g := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(l.Shape()...))
		// nn reads a weight's gradient with node.Grad(), which returns the
		// value of the node's Deriv when no gorgonia machine bound a dual
		// value to it.
		if err := gorgonia.UnsafeLet(l.Deriv(), g); err != nil {
			return nil, errors.Join(fmt.Errorf("binding the gradient of %q: %w", l.Name(), err), m.Close())
		}
		m.grads[i] = g
	}
	for i, r := range p.Reads {
		m.reads[i] = make([]float32, max(r.Shape.TotalSize(), 1))
	}
	err = dev.Do(func() error {
		placed, err := m.share()
		if err != nil {
			return err
		}
		for b, buf := range p.Buffers {
			if buf.Role == Weight || buf.Role == State {
				continue // shared: bound at each run
			}
			if placed != nil && placed[b] {
				continue // in the arena
			}
			mem, err := dev.Alloc(buf.Elems)
			if err != nil {
				name := "scratch"
				if buf.Node != nil {
					name = buf.Node.Name()
				}
				return fmt.Errorf("allocating %s %q: %w", buf.Role, name, err)
			}
			m.own[b], m.bufs[b] = mem, mem
			if buf.Role == Const {
				if err := be.Upload(mem, buf.Data); err != nil {
					return fmt.Errorf("copying constant %q: %w", buf.Node.Name(), err)
				}
			}
		}
		return be.Wait()
	})
	if err != nil {
		return nil, errors.Join(err, m.Close())
	}
	if Observe != nil {
		Observe(m)
	}
	return m, nil
}

// NewFromOptions is New with the state, slots and gradient reducer a
// driver's NewMachine was given: what every backend's driver does once it
// has compiled the plan.
func NewFromOptions(p *Plan, be Backend, opts driver.MachineOptions) (*Machine, error) {
	m, err := New(p, be, opts.State, opts.Slots)
	if err != nil {
		return nil, err
	}
	overlap := !opts.ReduceAfterBackward
	if opts.DeviceReduce != nil {
		err = m.SetDeviceReducer(overlap)
	} else {
		err = m.SetGradientReducer(opts.ReduceGradients, overlap)
	}
	if err != nil {
		return nil, errors.Join(err, m.Close())
	}
	return m, nil
}

// SetDeviceReducer makes Train a data-parallel step whose Reduce steps the
// backend runs on its device (DeviceReducer, given its all-reduce in the
// driver's options), queued like any other step: overlapped with the
// backward pass (OverlappedTrainingSteps) when the backend can
// (DeviceOverlapReducer) and overlap is true, else after it
// (ReducedTrainingSteps). The results are the same bit for bit.
func (m *Machine) SetDeviceReducer(overlap bool) error {
	r, ok := m.be.(DeviceReducer)
	if !ok {
		return fmt.Errorf("%w: the %T backend cannot all-reduce gradients on its device", errors.ErrUnsupported, m.be)
	}
	_, canOverlap := r.(DeviceOverlapReducer)
	m.reduce, m.onDevice, m.overlap = nil, r, canOverlap && overlap
	m.train = map[trainingKey][]Step{}
	return nil
}

// SetGradientReducer makes Train a data-parallel step: its steps are
// Plan.ReducedTrainingSteps, and at the Reduce step the machine waits for
// the gradients and hands them to reduce (in the order of the learnables),
// which replaces them in place before the updates. nil goes back to
// ordinary steps. With overlap, each bucket of gradients is handed over
// as soon as it is complete, while the backward pass goes on
// (OverlappedTrainingSteps); without, all at once after it. Only a device
// whose memory the host reads in place
// (HostView: the CPU) takes a host reducer; a GPU all-reduces on its own
// stream (SetDeviceReducer).
func (m *Machine) SetGradientReducer(reduce func(grads [][]float32) error, overlap bool) error {
	if _, ok := m.dev.(HostView); reduce != nil && (!ok || m.host == nil) {
		return fmt.Errorf("%w: a host all-reduce of the gradients needs a device that computes on host memory (the CPU); a GPU needs an all-reduce in device memory (driver.MachineOptions.DeviceReduce)", errors.ErrUnsupported)
	}
	m.reduce, m.overlap, m.onDevice = reduce, overlap, nil
	m.train = map[trainingKey][]Step{}
	return nil
}

// RunAll runs the graph once on the current host values of its inputs and
// weights.
func (m *Machine) RunAll() error { return m.run(nil, m.plan.Steps) }

// Train runs one training step and applies u to every weight on the
// device. It fails with an error wrapping driver.ErrUpdateUnsupported for
// a graph without gradients.
func (m *Machine) Train(u optim.Update) error {
	steps, err := m.trainingSteps(u)
	if err != nil {
		return err
	}
	return m.run(&u, steps)
}

// trainingSteps returns the steps of a training step with u, compiling
// them the first time.
func (m *Machine) trainingSteps(u optim.Update) ([]Step, error) {
	if err := u.Check(); err != nil {
		return nil, err
	}
	key := trainingKey{u.Rule, u.NeedsWholeGradient(), u.ClipValue > 0 || u.WeightDecay > 0, u.GlobalClipNorm > 0}
	steps, ok := m.train[key]
	if !ok {
		var err error
		trainingSteps := m.plan.TrainingSteps
		if m.reduce != nil || m.onDevice != nil {
			trainingSteps = m.plan.ReducedTrainingSteps
			if m.overlap {
				trainingSteps = func(u optim.Update) ([]Step, error) {
					return m.plan.OverlappedTrainingSteps(u, FirstBucketBytes, BucketBytes)
				}
			}
		}
		if steps, err = trainingSteps(u); err != nil {
			if errors.Is(err, ErrNoGradients) {
				err = fmt.Errorf("%w: %w", err, driver.ErrUpdateUnsupported)
			}
			return nil, err
		}
		if err := m.shareAgainst(steps); err != nil {
			return nil, err
		}
		m.train[key] = steps
	}
	if len(u.SlotNames()) > 0 && m.slots == nil {
		return nil, fmt.Errorf("%v keeps slots, but the machine was made without the optimizer's slots", u.Rule)
	}
	return steps, nil
}

// Pipelines says whether StartTrain returns before the step has run: the
// backend runs asynchronously (AsyncBackend) and no all-reduce needs the
// host in the step.
func (m *Machine) Pipelines() bool {
	_, ok := m.be.(AsyncBackend)
	return ok && m.reduce == nil && m.onDevice == nil
}

// StartTrain queues a training step with u, as Train runs one, and, when
// the machine Pipelines, returns before it has run: the host may then
// fill the inputs with the next batch and start that step too, while
// this one runs. FinishTrain finishes the steps started, in order: it
// waits for the oldest, writes its Reads and reports its errors. At most
// two steps are started and not finished; RunAll and Train refuse to run
// while any is. On a machine that does not pipeline, StartTrain runs the
// step, and FinishTrain reports its error and writes its Reads.
func (m *Machine) StartTrain(u optim.Update) error {
	if m.closed {
		return errors.New("the machine was closed")
	}
	if len(m.started) >= 2 {
		return errors.New("two training steps are started already: finish one (FinishTrain) first")
	}
	steps, err := m.trainingSteps(u)
	if err != nil {
		return err
	}
	set := m.nextReads
	reads := m.stepReads[set]
	if reads == nil {
		reads = make([][]float32, len(m.reads))
		for i := range reads {
			reads[i] = make([]float32, len(m.reads[i]))
		}
		m.stepReads[m.nextReads] = reads
	}
	m.nextReads ^= 1
	m.lastSteps = steps
	st := &startedStep{steps: steps, reads: reads}
	async, ok := m.be.(AsyncBackend)
	if !ok || !m.Pipelines() {
		st.err = m.dev.Do(func() error { return m.runNow(&u, steps, reads) })
		m.started = append(m.started, st)
		return nil
	}
	st.submitted, st.targets = true, m.targets(steps)
	err = m.dev.Do(func() error {
		if err := m.allocInputs2(); err != nil {
			return err
		}
		var err error
		st.weights, err = m.queue(&u, steps, reads, set)
		if err == nil {
			if err = async.Submit(); err == nil {
				m.settle(st.weights, &u, nil)
				return nil
			}
		}
		// Nothing of a step that failed to queue stays behind.
		err = errors.Join(err, m.be.Wait())
		m.settle(st.weights, &u, err)
		return err
	})
	if err != nil {
		return err
	}
	m.started = append(m.started, st)
	return nil
}

// FinishTrain finishes the oldest step StartTrain started: it waits for
// it, writes its Reads and returns its error.
func (m *Machine) FinishTrain() error {
	if len(m.started) == 0 {
		return errors.New("no training step is started: call StartTrain first")
	}
	st := m.started[0]
	m.started = m.started[1:]
	err := st.err
	if st.submitted {
		err = m.dev.Do(func() error {
			if err := m.be.(AsyncBackend).Await(); err != nil {
				m.settle(st.weights, nil, err)
				return m.explain(err, st.steps, st.targets)
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	m.writeReads(st.reads)
	return nil
}

// writeReads stores the values of the Reads, landed in reads, where they
// point.
func (m *Machine) writeReads(reads [][]float32) {
	for i, r := range m.plan.Reads {
		writeRead(r.Into, r.Shape, reads[i])
	}
}

// targets copies the inputs that steps' losses take as targets, by
// buffer: what explain needs once the inputs hold another batch.
func (m *Machine) targets(steps []Step) map[int][]float32 {
	var t map[int][]float32
	for i := range steps {
		s := &steps[i]
		if (s.Kind != Loss && s.Kind != LossGrad) || len(s.In) < 2 || s.In[1] < 0 {
			continue
		}
		b := s.In[1]
		if m.plan.Buffers[b].Role != Input {
			continue
		}
		data, err := hostData(m.plan.Buffers[b].Node)
		if err != nil {
			continue // the step itself reports it
		}
		if t == nil {
			t = map[int][]float32{}
		}
		t[b] = append([]float32(nil), data...)
	}
	return t
}

// settle records what a run did to the device copies of the weights:
// after an error the device copy is in doubt; after a training step (u
// not nil) it is ahead of the host's; after a run that sent the gradients
// to the host, whose optimizer may update the host copy next, it must be
// uploaded again.
func (m *Machine) settle(weights []*entry, u *optim.Update, err error) {
	if m.host != nil {
		return
	}
	for _, w := range weights {
		switch {
		case err != nil:
			w.upload = true
		case u == nil:
			w.upload = true
		default:
			w.deviceAhead = true
		}
	}
}

func (m *Machine) run(u *optim.Update, steps []Step) error {
	if m.closed {
		return errors.New("the machine was closed")
	}
	if len(m.started) > 0 {
		return errors.New("a training step StartTrain started is not finished: call FinishTrain first")
	}
	m.lastSteps = steps
	return m.dev.Do(func() error {
		if err := m.runNow(u, steps, m.reads); err != nil {
			return err
		}
		m.writeReads(m.reads)
		return nil
	})
}

// runNow queues a run of steps (queue), its Reads landing in reads, waits
// for it and records what it did to the device copies of the weights
// (settle); inside Do.
func (m *Machine) runNow(u *optim.Update, steps []Step, reads [][]float32) error {
	weights, err := m.queue(u, steps, reads, -1)
	if m.reducing != nil { // a failed step left a bucket reducing
		err = errors.Join(err, m.waitReduce())
	}
	// Wait even after an error, so that nothing queued by a failed run is
	// left behind for the next one.
	if werr := m.be.Wait(); err == nil && werr != nil {
		err = m.explain(werr, steps, nil)
	}
	m.settle(weights, u, err)
	return err
}

// allocInputs2 allocates the second input buffers, the first time a step
// is started on an InputUploader; inside Do.
func (m *Machine) allocInputs2() error {
	if _, ok := m.be.(InputUploader); !ok || m.inputs2 != nil || m.host != nil {
		return nil
	}
	inputs2 := make([]Mem, len(m.plan.Buffers))
	for b, buf := range m.plan.Buffers {
		if buf.Role != Input {
			continue
		}
		mem, err := m.dev.Alloc(buf.Elems)
		if err != nil {
			for _, mem := range inputs2 {
				if mem != nil {
					err = errors.Join(err, m.dev.Free(mem))
				}
			}
			return fmt.Errorf("allocating a second buffer for input %q: %w", buf.Node.Name(), err)
		}
		inputs2[b] = mem
	}
	m.inputs2 = inputs2
	return nil
}

// queue queues one run: the copies in, the steps (with the updates when u
// is not nil, else the gradients' copies out), and the copies out, the
// Reads' into reads. set is a started step's set of buffers (0 or 1: its
// inputs are copied by the InputUploader, into the second buffers for 1),
// or -1 for a run waited for at once. It returns the learnables' shared
// entries, in order.
func (m *Machine) queue(u *optim.Update, steps []Step, reads [][]float32, set int) ([]*entry, error) {
	p := m.plan
	weights, err := m.bind(u != nil)
	if err != nil {
		return weights, err
	}
	for b, buf := range p.Buffers {
		if buf.Role != Input {
			continue
		}
		data, err := hostData(buf.Node)
		if err != nil {
			return weights, err
		}
		if m.host != nil {
			m.bufs[b] = m.host.Host(data)
			continue
		}
		// An inference graph's weights are inputs: when a training
		// machine of the model holds a current device copy (newer than
		// the host's, or equal to it since a Sync), use it rather than
		// copy the weight over again for every batch.
		if w := m.store.lookup(data); w != nil && !w.upload {
			m.bufs[b] = w.mem
			continue
		}
		m.bufs[b] = m.own[b]
		up, separate := m.be.(InputUploader)
		if set == 1 && separate {
			m.bufs[b] = m.inputs2[b]
		}
		if set >= 0 && separate {
			err = up.UploadInput(m.bufs[b], data)
		} else {
			err = m.be.Upload(m.bufs[b], data)
		}
		if err != nil {
			return weights, fmt.Errorf("copying %q to the device: %w", buf.Node.Name(), err)
		}
	}
	if u != nil {
		for i, w := range weights[:len(p.Learnables)] { // the State buffers have no slots
			slots, err := m.store.slots(m, w, p.Learnables[i].Name(), *u)
			if err != nil {
				return weights, fmt.Errorf("optimizer slots of %q: %w", p.Learnables[i].Name(), err)
			}
			m.slotMems[i] = slots
		}
	}
	defer runTimed()
	for i := range steps {
		s := &steps[i]
		var err error
		start := stepClock()
		if s.Kind == Update || s.Kind == GradUpdate {
			err = m.be.Update(s, m.bufs, m.slotMems[s.Learnable], weights[s.Learnable].elems, *u)
		} else if s.Kind == Reduce {
			err = m.reduceGradients(s)
		} else if s.Kind == ReduceStart {
			err = m.startReduce(s)
		} else if s.Kind == ReduceWait {
			err = m.waitReduce()
		} else {
			err = m.be.Exec(i, s, m.bufs)
		}
		stepTimed(s, start)
		if err != nil {
			return weights, fmt.Errorf("%v for node %q: %w", *s, s.Name, err)
		}
	}
	if u == nil {
		for i, g := range m.grads {
			if g == nil {
				continue
			}
			if err := m.be.Download(g.Data().([]float32), m.bufs[p.Grads[i]]); err != nil {
				return weights, fmt.Errorf("copying the gradient of %q to the host: %w", p.Learnables[i].Name(), err)
			}
		}
	}
	for i, r := range p.Reads {
		if err := m.be.Download(reads[i], m.bufs[r.Buf]); err != nil {
			return weights, fmt.Errorf("copying %q to the host: %w", r.Node.Name(), err)
		}
	}
	return weights, nil
}

// reduceGradients runs a Reduce step: the reducer replaces the gradients
// s.In in place, in the device's host memory (HostView).
func (m *Machine) reduceGradients(s *Step) error {
	if m.onDevice != nil {
		grads, elems := m.deviceGrads(s)
		return m.onDevice.ReduceOnDevice(grads, elems)
	}
	views, err := m.hostGrads(s)
	if err != nil {
		return err
	}
	if err := m.reduce(views); err != nil {
		return fmt.Errorf("reducing the gradients: %w", err)
	}
	return nil
}

// hostGrads waits for the steps queued so far and returns a reduce step's
// gradients as host slices (HostView), for the host reducer.
func (m *Machine) hostGrads(s *Step) ([][]float32, error) {
	v, ok := m.dev.(HostView)
	if m.reduce == nil || !ok {
		return nil, fmt.Errorf("a %v step in a machine without a gradient reducer", s.Kind)
	}
	if err := m.be.Wait(); err != nil {
		return nil, err
	}
	views := make([][]float32, len(s.In))
	for i, b := range s.In {
		views[i] = v.View(m.bufs[b], m.plan.Buffers[b].Elems)
	}
	return views, nil
}

// deviceGrads are the buffers of a reduce step's gradients, and their
// sizes.
func (m *Machine) deviceGrads(s *Step) ([]Mem, []int) {
	grads, elems := make([]Mem, len(s.In)), make([]int, len(s.In))
	for i, b := range s.In {
		grads[i], elems[i] = m.bufs[b], m.plan.Buffers[b].Elems
	}
	return grads, elems
}

// startReduce runs a ReduceStart step: the reducer replaces the
// gradients s.In in place in the background, after the buckets handed to
// it before (so that every replica makes the same calls in the same
// order), while the machine runs the next steps, none of which touches
// these gradients before the ReduceWait.
func (m *Machine) startReduce(s *Step) error {
	if o, ok := m.onDevice.(DeviceOverlapReducer); ok {
		grads, elems := m.deviceGrads(s)
		return o.StartReduceOnDevice(grads, elems)
	}
	views, err := m.hostGrads(s)
	if err != nil {
		return err
	}
	prev, done := m.reducing, make(chan error, 1)
	m.reducing = done
	reduce := m.reduce
	go func() {
		if prev != nil {
			if err := <-prev; err != nil {
				done <- err // the first error, passed on
				return
			}
		}
		done <- reduce(views)
	}()
	return nil
}

// waitReduce runs a ReduceWait step: it waits for the buckets handed to
// the reducer, and returns the first error.
func (m *Machine) waitReduce() error {
	if o, ok := m.onDevice.(DeviceOverlapReducer); ok {
		return o.WaitReduceOnDevice()
	}
	if m.reducing == nil {
		return nil
	}
	err := <-m.reducing
	m.reducing = nil
	if err != nil {
		return fmt.Errorf("reducing the gradients: %w", err)
	}
	return nil
}

// bind points the plan's weight buffers, and its State buffers, at the
// model's shared device copies, copying the host values over where the
// host may be ahead, and returns their entries: the learnables' in order,
// then the State buffers'. RunAll re-reads every weight from the host (the
// caller may have changed it) unless the device is ahead; Train trusts the
// device copy once it is there.
func (m *Machine) bind(training bool) ([]*entry, error) {
	p := m.plan
	// In the order of the learnables, which is the order of p.Grads; the
	// graph's order may differ.
	weights := make([]*entry, 0, len(p.Learnables)+len(p.Moving))
	shared := func(b int, n *gorgonia.Node) error {
		host, err := hostData(n)
		if err != nil {
			return err
		}
		w, err := m.store.weight(m, host)
		if err != nil {
			return fmt.Errorf("weight %q: %w", n.Name(), err)
		}
		weights = append(weights, w)
		if m.host == nil && (w.upload || (!training && !w.deviceAhead)) {
			if err := m.be.Upload(w.mem, host); err != nil {
				return fmt.Errorf("copying weight %q to the device: %w", n.Name(), err)
			}
			w.upload, w.deviceAhead = false, false
		}
		m.bufs[b] = w.mem
		return nil
	}
	for _, l := range p.Learnables {
		b, ok := p.BufferOf(l)
		if !ok || p.Buffers[b].Role != Weight {
			return weights, fmt.Errorf("learnable %q has no weight buffer", l.Name())
		}
		if err := shared(b, l); err != nil {
			return weights, err
		}
	}
	for b, buf := range p.Buffers {
		if buf.Role != State {
			continue
		}
		if err := shared(b, buf.Node); err != nil {
			return weights, err
		}
	}
	return weights, nil
}

// writeRead stores a Read's values where it points, as gorgonia's
// machines do: a scalar for a scalar node; for a tensor, into the tensor
// already there when it fits, else into a new one the caller then owns.
func writeRead(into *gorgonia.Value, shape tensor.Shape, data []float32) {
	if shape.IsScalar() {
		if f, ok := (*into).(*gorgonia.F32); ok && f != nil {
			*f = gorgonia.F32(data[0])
			return
		}
		*into = gorgonia.NewF32(data[0])
		return
	}
	if d, ok := (*into).(*tensor.Dense); ok && d != nil && d.Dtype() == tensor.Float32 && d.Shape().Eq(shape) && d.IsNativelyAccessible() {
		copy(d.Data().([]float32), data)
		return
	}
	*into = tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(append([]float32(nil), data...)))
}

// explain rewrites a TargetError of a run of steps with the step's node
// and the offending value: from targets, the copies StartTrain kept, or
// else from the input, which the host still has.
func (m *Machine) explain(err error, steps []Step, targets map[int][]float32) error {
	var te *TargetError
	if !errors.As(err, &te) || te.Step < 0 || te.Step >= len(steps) {
		return err
	}
	s := steps[te.Step]
	data, derr := targets[s.In[1]], error(nil)
	if data == nil {
		data, derr = hostData(m.plan.Buffers[s.In[1]].Node)
	}
	if derr != nil || te.Row >= len(data) {
		return fmt.Errorf("%v: target of sample %d is not a class index in [0, %d)", s.Op.Loss, te.Row, s.N)
	}
	return fmt.Errorf("%v: target of sample %d is %v, but it must be a class index in [0, %d)", s.Op.Loss, te.Row, data[te.Row], s.N)
}

// Reset does nothing: a run leaves nothing behind that the next one would see.
func (m *Machine) Reset() {}

// Close releases the machine's own device memory and its backend; the
// weights shared with the model's other machines stay until the model's
// driver.State is closed. Closing twice does nothing.
func (m *Machine) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	m.started = nil // the backend's Close waits for their work
	err := m.dev.Do(func() error {
		var errs []error
		for _, mem := range append(append(m.own, m.inputs2...), m.arena) {
			if mem != nil {
				errs = append(errs, m.dev.Free(mem))
			}
		}
		return errors.Join(errs...)
	})
	err = errors.Join(err, m.be.Close())
	if m.state != nil {
		err = errors.Join(err, m.state.Close())
	}
	return err
}

// hostData returns the float32 values bound to an input node.
func hostData(n *gorgonia.Node) ([]float32, error) {
	switch v := n.Value().(type) {
	case *tensor.Dense:
		if d, ok := v.Data().([]float32); ok {
			return d, nil
		}
		return nil, fmt.Errorf("node %q holds %v values: gokeras machines compute in float32 only", n.Name(), v.Dtype())
	case *gorgonia.F32:
		return []float32{float32(*v)}, nil
	case nil:
		return nil, fmt.Errorf("node %q has no value: bind one (gorgonia.WithValue or gorgonia.Let) before running", n.Name())
	default:
		return nil, fmt.Errorf("node %q holds a %T: gokeras machines compute on float32 tensors", n.Name(), v)
	}
}
