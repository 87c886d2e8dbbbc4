package nn

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gokeras/gokeras/ops"

	"github.com/gokeras/gokeras/internal/formats/shapes"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CompileOption adjusts Compile.
type CompileOption func(*compileConfig) error

type compileConfig struct {
	device       *device.Spec
	soft         bool
	warn         io.Writer
	placementLog io.Writer
	strategy     Strategy
	// reduceAfterBackward: see OverlapReduce.
	reduceAfterBackward bool
}

// OnDevice places the model on a device, overriding the device scope
// (device.With, see CompileContext) and the default. It takes a
// device.Spec, or for convenience its string form in any TensorFlow
// spelling ("/CPU:0", "/GPU:0", "/device:GPU:0", ...), which it parses
// here, once: a bad string makes Compile fail with ParseSpec's error.
//
//	nn.OnDevice("/GPU:0")
//	nn.OnDevice(device.NewSpec(device.GPU, 1))
func OnDevice[S string | device.Spec](spec S) CompileOption {
	var s device.Spec
	var err error
	switch v := any(spec).(type) {
	case string:
		s, err = device.ParseSpec(v)
	case device.Spec:
		s = v
	}
	return func(c *compileConfig) error {
		if err != nil {
			return err
		}
		c.device = &s
		return nil
	}
}

// OverlapReduce sets whether a data-parallel step (WithStrategy) hands its
// gradients to the all-reduce bucket by bucket while the backward pass goes
// on (true, the default, as PyTorch's DistributedDataParallel does) or all
// at once after it (false: slower, for debugging and timing). The weights
// are the same bit for bit either way.
func OverlapReduce(on bool) CompileOption {
	return func(c *compileConfig) error {
		c.reduceAfterBackward = !on
		return nil
	}
}

// SoftPlacement lets a device that does not exist fall back to /CPU:0 with
// a one-line warning written to warn (nil: standard error), like
// tf.config.set_soft_device_placement(True).
func SoftPlacement(warn io.Writer) CompileOption {
	return func(c *compileConfig) error { c.soft, c.warn = true, warn; return nil }
}

// LogDevicePlacement writes where each variable and op of the model's
// graphs is placed, like tf.debugging.set_log_device_placement(True).
func LogDevicePlacement(w io.Writer) CompileOption {
	return func(c *compileConfig) error { c.placementLog = w; return nil }
}

// compiled is what Compile fixes: how to train, and where.
type compiled struct {
	optimizer    optim.Optimizer
	loss         losses.Loss
	metrics      []metrics.Metric
	device       device.Spec
	placementLog io.Writer
	programs     map[programKey]*program
	// state is shared by the machines of all programs (driver.State).
	state *driver.State
	// reference binds programs to the device's reference machine (tests).
	reference bool
	// reduceAfterBackward: see OverlapReduce.
	reduceAfterBackward bool
	// strategy, when not nil, trains data-parallel (WithStrategy):
	// gradScale is this replica's share of the step's global batch, by
	// which reduceGradients scales its gradients.
	strategy  Strategy
	gradScale float32
	// stopWanted is this replica's wish to stop Fit (its context was
	// cancelled), sent with each step's results (reduceResults);
	// stopAgreed is true once any replica sent it: every replica then
	// stops after the same step.
	stopWanted, stopAgreed bool
}

// Compile configures the model for training, like Keras' compile. It is
// CompileContext with context.Background(), so no device scope applies:
// the device is OnDevice if given, else /GPU:0 when a GPU is usable, else
// /CPU:0.
//
// Optimizers, losses and metrics can also be found by their Keras names
// with optim.Get, losses.Get and metrics.Get.
func (m *Sequential) Compile(opt optim.Optimizer, loss losses.Loss, ms []metrics.Metric, opts ...CompileOption) error {
	return m.CompileContext(context.Background(), opt, loss, ms, opts...)
}

// CompileContext is Compile inside a device scope. The device is fixed
// here: OnDevice if given, else the scope carried by ctx (device.With or
// device.NewContext), else /GPU:0 when a GPU is usable, else /CPU:0. A nil
// ctx carries no scope.
func (m *Sequential) CompileContext(ctx context.Context, opt optim.Optimizer, loss losses.Loss, ms []metrics.Metric, opts ...CompileOption) error {
	if m == nil {
		return fmt.Errorf("compile: %w", ErrNilModel)
	}
	release, err := m.claim("compile", true)
	if err != nil {
		return err
	}
	defer release()
	if opt == nil {
		return errors.New("compile: no optimizer given: pass one, e.g. optim.Get(\"sgd\")")
	}
	if loss == nil {
		return errors.New("compile: no loss given: pass one, e.g. losses.Get(\"categorical_crossentropy\")")
	}
	var cfg compileConfig
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return fmt.Errorf("compile: %w", err)
		}
	}
	// Wrong layer arguments fail here, not at the first Fit: the model is
	// built now when it declares its input, as Keras builds it.
	check := m.checkLayers
	if m.inputShape != nil {
		check = m.ensureBuilt
	}
	if err := check(); err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	spec, err := device.Resolve(ctx, cfg.device, device.PlaceOptions{Soft: cfg.soft, Warn: cfg.warn})
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if err := checkStrategy(cfg.strategy, spec); err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	seen := map[string]bool{"loss": true}
	for _, mt := range ms {
		if mt == nil {
			return errors.New("compile: nil metric")
		}
		if seen[mt.Name()] {
			return fmt.Errorf("compile: metric %q given twice", mt.Name())
		}
		seen[mt.Name()] = true
	}
	// The optimizer's slots belong to one model, and its State reads them
	// back from this model's device.
	type binder interface {
		Bind(owner any, name string, sync func() error) error
	}
	if b, ok := opt.(binder); ok {
		if err := b.Bind(m, m.name, m.syncWeights); err != nil {
			return fmt.Errorf("compile: %w", err)
		}
	}
	if m.compiled != nil && m.compiled.optimizer != opt {
		if b, ok := m.compiled.optimizer.(binder); ok {
			_ = b.Bind(nil, "", nil) // released: another model may use it now
		}
	}
	m.closePrograms()
	m.compiled = &compiled{
		optimizer:           opt,
		loss:                loss,
		metrics:             append([]metrics.Metric(nil), ms...),
		device:              spec,
		placementLog:        cfg.placementLog,
		programs:            map[programKey]*program{},
		state:               driver.NewState(),
		strategy:            cfg.strategy,
		reduceAfterBackward: cfg.reduceAfterBackward,
	}
	return nil
}

// Device is the device the model was compiled for.
func (m *Sequential) Device() (device.Spec, error) {
	if m == nil {
		return device.Spec{}, ErrNilModel
	}
	if m.compiled == nil {
		return device.Spec{}, m.notCompiled()
	}
	return m.compiled.device, nil
}

// Optimizer is the optimizer given to Compile, nil before.
func (m *Sequential) Optimizer() optim.Optimizer {
	if m == nil || m.compiled == nil {
		return nil
	}
	return m.compiled.optimizer
}

func (m *Sequential) notCompiled() error {
	return fmt.Errorf("model %q is not compiled: call Compile(optimizer, loss, metrics) first", m.name)
}

// Close releases the machines the model holds on its device. The model
// stays usable: later calls bind new ones.
func (m *Sequential) Close() error {
	if m == nil {
		return fmt.Errorf("close: %w", ErrNilModel)
	}
	release, err := m.claim("close", true)
	if err != nil {
		return err
	}
	defer release()
	return m.closePrograms()
}

func (m *Sequential) closePrograms() error {
	if m.compiled == nil {
		return nil
	}
	var errs []error
	for k, p := range m.compiled.programs {
		errs = append(errs, p.machine.Close())
		delete(m.compiled.programs, k)
	}
	if m.compiled.state != nil {
		errs = append(errs, m.compiled.state.Close())
	}
	m.compiled.state = driver.NewState()
	return errors.Join(errs...)
}

// mode is what a program computes.
type mode int

const (
	modePredict  mode = iota // outputs
	modeEvaluate             // outputs and loss
	modeTrain                // outputs, loss and gradients
)

type programKey struct {
	batch, labelCols int
	mode             mode
	// weighted: the loss weighs each sample (Fit's SampleWeight and
	// ClassWeight).
	weighted bool
}

// program is the model compiled into one gorgonia graph for one batch size
// and mode, bound to a machine on the model's device. Its weight nodes share
// their values with the layers', so every program sees every update.
type program struct {
	batch int
	x, y  *tensor.Dense // input buffers the step fills
	// step holds the training step (ops.StepValues) in a training
	// program, for Dropout; nil in the others.
	step *tensor.Dense
	// w holds each sample's weight in a weighted training program, and
	// weigh fills it for the batch at idx from its labels.
	w         *tensor.Dense
	weigh     func(idx []int, labels, dst []float32) error
	out, loss *gorgonia.Node
	// outRead and lossRead receive copies of the output and loss each run:
	// the machine may reuse the memory of a node nobody else reads.
	outRead, lossRead gorgonia.Value
	// metricReads receive, for each metric the device computes
	// (metrics.OnDevice), its batch sum and bad-label count; nil for the
	// metrics computed on the host from outRead, which is read only when
	// one of them needs it (or in a predict program).
	metricReads []gorgonia.Value
	onDevice    []bool
	// metricLens is the length of each device metric's state.
	metricLens []int
	params     []*gorgonia.Node
	paramNames []string
	outCols    int
	machine    driver.Machine
}

// program returns the program for a batch size and mode, compiling it the
// first time it is needed: a partial last batch gets a graph of its own, so
// no sample is dropped and the batch size is never frozen into the model.
func (m *Sequential) program(batch, labelCols int, md mode) (*program, error) {
	return m.programFor(programKey{batch: batch, labelCols: labelCols, mode: md})
}

// programFor returns the program for key, compiling it the first time.
func (m *Sequential) programFor(key programKey) (*program, error) {
	if p, ok := m.compiled.programs[key]; ok {
		return p, nil
	}
	p, err := m.newProgram(key)
	if err != nil {
		return nil, err
	}
	m.compiled.programs[key] = p
	return p, nil
}

func (m *Sequential) newProgram(key programKey) (*program, error) {
	batch, yCols, md := key.batch, key.labelCols, key.mode
	g := gorgonia.NewGraph()
	xShape := append([]int{batch}, m.inputShape...)
	p := &program{batch: batch, x: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(xShape...))}
	x := gorgonia.NewTensor(g, tensor.Float32, len(xShape), gorgonia.WithShape(xShape...), gorgonia.WithName("x"), gorgonia.WithValue(p.x))
	var step *gorgonia.Node
	var penalties []*gorgonia.Node // the layers' regularization losses
	usesStep := false
	for _, l := range m.layers {
		if u, ok := l.(layers.StepUser); ok && u.UsesStep() {
			usesStep = true
		}
	}
	if md == modeTrain && usesStep {
		p.step = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(ops.StepValueCount))
		step = gorgonia.NewTensor(g, tensor.Float32, 1, gorgonia.WithShape(ops.StepValueCount), gorgonia.WithName("step"), gorgonia.WithValue(p.step))
	}
	// The layers' calls in order, each on the flows of its inputs; a
	// layer's weights are one set of nodes, however many calls share them.
	input, calls := m.callGraph()
	flows := map[*Tensor]layers.Flow{input: {Node: x}}
	weightNodes := map[layers.Layer][]*gorgonia.Node{}
	for _, c := range calls {
		l := c.layer
		nodes, ok := weightNodes[l]
		if !ok {
			for _, prm := range l.Params() {
				name := l.Name() + "/" + prm.Name
				shape := prm.Value.Shape()
				n := gorgonia.NewTensor(g, tensor.Float32, shape.Dims(), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(prm.Value))
				nodes = append(nodes, n)
				if prm.NonTrainable {
					continue // an input of the graph, not a learnable
				}
				p.params = append(p.params, n)
				p.paramNames = append(p.paramNames, name)
			}
			weightNodes[l] = nodes
		}
		in := make([]layers.Flow, len(c.in))
		for i, t := range c.in {
			in[i] = flows[t]
			in[i].Training, in[i].Step = md == modeTrain, step
		}
		var out layers.Flow
		var err error
		if mi, ok := l.(layers.MultiInputLayer); ok {
			out, err = mi.CallInputs(in, nodes)
		} else {
			out, err = l.Call(in[0], nodes)
		}
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", m.name, err)
		}
		penalties = append(penalties, out.Losses...)
		out.Losses = nil
		flows[c.out] = out
	}
	flow := flows[calls[len(calls)-1].out] // the output: made by the last call
	p.out = flow.Node
	if p.out.Dims() != 2 {
		return nil, fmt.Errorf("model %q: the output has shape %s; gokeras models must output (None, n): end with a Dense layer or a Flatten",
			m.name, shapes.String(m.outShape))
	}
	p.outCols = p.out.Shape()[1]
	var opts driver.MachineOptions
	if md == modePredict {
		gorgonia.Read(p.out, &p.outRead)
	}
	if md != modePredict {
		p.y = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, yCols))
		y := gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(batch, yCols), gorgonia.WithName("y"), gorgonia.WithValue(p.y))
		if err := p.addMetrics(m.compiled.metrics, y, yCols, m.compiled.strategy != nil); err != nil {
			return nil, fmt.Errorf("model %q: %w", m.name, err)
		}
		loss, err := m.compiled.loss.Node(p.out, flow.Logits, y)
		if err != nil {
			return nil, fmt.Errorf("model %q: loss %s: %w", m.name, m.compiled.loss.Name(), err)
		}
		if key.weighted {
			p.w = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch))
			w := gorgonia.NewTensor(g, tensor.Float32, 1, gorgonia.WithShape(batch), gorgonia.WithName("sample_weight"), gorgonia.WithValue(p.w))
			if loss, err = ops.WithSampleWeights(loss, w); err != nil {
				return nil, fmt.Errorf("model %q: weighting the loss %s: %w", m.name, m.compiled.loss.Name(), err)
			}
		}
		// Keras trains on, and reports, the loss plus the layers' losses.
		for _, pen := range penalties {
			if loss, err = gorgonia.Add(loss, pen); err != nil {
				return nil, fmt.Errorf("model %q: adding a regularization loss: %w", m.name, err)
			}
		}
		p.loss = loss
		gorgonia.Read(loss, &p.lossRead)
		if md == modeTrain {
			if len(p.params) == 0 {
				return nil, fmt.Errorf("model %q has no weights to train", m.name)
			}
			if _, err := gorgonia.Grad(loss, p.params...); err != nil {
				return nil, fmt.Errorf("model %q: gradients: %w", m.name, err)
			}
			opts.Learnables = p.params
			if s := m.compiled.strategy; s != nil {
				opts.ReduceGradients = m.compiled.reduceGradients
				opts.ReduceAfterBackward = m.compiled.reduceAfterBackward
				if r, ok := s.(driver.DeviceAllReducer); ok && m.compiled.device.Kind == device.GPU {
					c := m.compiled
					opts.DeviceReduce, opts.ReduceScale = r, func() float32 { return c.gradScale }
				}
			}
		}
	}
	opts.PlacementLog = m.compiled.placementLog
	opts.State, opts.Reference = m.compiled.state, m.compiled.reference
	opts.Slots = m.compiled.optimizer.Slot
	machine, err := device.NewMachine(m.compiled.device, g, opts)
	if err != nil {
		return nil, fmt.Errorf("model %q: binding to %s: %w", m.name, m.compiled.device.Short(), err)
	}
	p.machine = machine
	return p, nil
}

// run executes the program on the batch already gathered into p.x and p.y.
// The caller reads what it needs, then calls p.machine.Reset.
func (p *program) run() error { return p.machine.RunAll() }

// addMetrics puts in the graph the batch sum of each metric the device
// computes (metrics.OnDevice), read back after each run, and reads the
// outputs back when a metric computes on the host.
func (p *program) addMetrics(ms []metrics.Metric, y *gorgonia.Node, yCols int, distributed bool) error {
	p.metricReads = make([]gorgonia.Value, len(ms))
	p.onDevice = make([]bool, len(ms))
	p.metricLens = make([]int, len(ms))
	host := false
	for i, mt := range ms {
		d, ok := mt.(metrics.OnDevice)
		var params ops.MetricParams
		if ok {
			params, ok = d.DeviceParams(yCols, p.outCols)
		}
		if !ok && distributed {
			return fmt.Errorf("metric %s cannot be computed on the device for labels of %d and outputs of %d columns, and data-parallel training (WithStrategy) sums only the metrics the device computes", mt.Name(), yCols, p.outCols)
		}
		if !ok {
			host = true // Update reports what does not fit
			continue
		}
		sum, err := ops.MetricState(p.out, y, params)
		if err != nil {
			return fmt.Errorf("metric %s: %w", mt.Name(), err)
		}
		gorgonia.Read(sum, &p.metricReads[i])
		p.onDevice[i] = true
		p.metricLens[i] = sum.Shape().TotalSize()
	}
	if host {
		gorgonia.Read(p.out, &p.outRead)
	}
	return nil
}

// lossValue reads the loss the last run computed.
func (p *program) lossValue() (float64, error) {
	switch v := p.lossRead.(type) {
	case *gorgonia.F32:
		return float64(*v), nil
	case *gorgonia.F64:
		return float64(*v), nil
	}
	return 0, fmt.Errorf("loss value is a %T, want a scalar", p.lossRead)
}

// outputs reads the predictions the last run computed.
func (p *program) outputs() ([]float32, error) {
	v, ok := p.outRead.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("output value is a %T, want a tensor", p.outRead)
	}
	return v.Data().([]float32), nil
}
