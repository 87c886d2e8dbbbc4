package nn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gokeras/gokeras/ops"

	"github.com/gokeras/gokeras/internal/formats/shapes"

	"github.com/gokeras/gokeras/data"
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
	// The outputs' losses, weights and metrics (outputs.go).
	lossFor      map[string]losses.Loss
	outputLosses []losses.Loss
	lossWeights  []float64
	metricsFor   map[string][]metrics.Metric
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
	optimizer optim.Optimizer
	// heads are the model's outputs: each one's loss and weight.
	heads []head
	// metrics are the figures logged after the loss, in order: with
	// several outputs each output's loss (outputLoss), then each output's
	// metrics; metricOut is the output each reads, metricNames the name
	// each is logged under (the metric's, or with several outputs the
	// output's name, an underscore and the metric's).
	metrics      []metrics.Metric
	metricOut    []int
	metricNames  []string
	device       device.Spec
	placementLog io.Writer
	programs     map[programKey]*program
	// state is shared by the machines of all programs (driver.State).
	state *driver.State
	// reference binds programs to the device's reference machine (tests).
	reference bool
	// reduceAfterBackward: see OverlapReduce.
	reduceAfterBackward bool
	// maskedSteps: an output's loss leaves out the steps its mask
	// masks (see maskHint).
	maskedSteps bool
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
//
// A model of several outputs (NewModel) gives loss and ms to each output,
// as Keras does with one loss and a list of metrics, unless LossFor,
// OutputLosses or MetricsFor say otherwise; LossWeights weighs the
// outputs' losses in the total. An output's loss is its LossFor if given,
// else its OutputLosses entry, else loss; its metrics are its MetricsFor
// if given (Compile's ms then do not go to it), else ms.
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
	heads, all, of, names, err := resolveHeads(m.OutputNames(), loss, ms, &cfg)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
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
		heads:               heads,
		metrics:             all,
		metricOut:           of,
		metricNames:         names,
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
	batch  int
	labels labelLayout
	mode   mode
	// weighted: the loss weighs each sample (Fit's SampleWeight and
	// ClassWeight).
	weighted bool
}

// labelLayout is the layout of a batch's labels: cols values per sample,
// divided among the outputs as split says (labelSplit; empty for a model
// of one output).
type labelLayout struct {
	cols  int
	split string
}

// labelLayoutOf is the layout of ds's labels for the model.
func (m *Sequential) labelLayoutOf(ds data.Dataset) labelLayout {
	return labelLayout{cols: shapes.Size(ds.LabelShape()), split: labelSplit(data.LabelParts(ds), len(m.outShapes))}
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
	// weights hold, in a weighted training program, the weight of each
	// row of the outputs' losses: one input of batch·steps rows for the
	// outputs of each number of steps (1 for outputs of shape (None, n)).
	// weigh fills weighed, weighSteps values per sample, for the batch at
	// idx from its labels: each sample's weight (weighSteps 1), spread
	// over its steps in weights, or each step's (TemporalSampleWeight).
	weights    []stepWeights
	weighed    []float32
	weigh      func(idx []int, labels, dst []float32) error
	weighSteps int
	// outNodes are the model's outputs. outs are what the loss and the
	// metrics read: in a program with a loss, an output of several steps
	// (None, steps..., n) viewed as one row per step, (batch·steps, n);
	// the outputs themselves otherwise. outCols are the values of a row
	// of each, outSteps its rows per sample, labelCols the label columns
	// of each in a row of y (with one output, all of them): stepLabelCols
	// per row of outs.
	outNodes  []*gorgonia.Node
	outs      []*gorgonia.Node
	outCols   []int
	outSteps  []int
	labelCols []int
	// masks are, in a program with a loss, each output's mask over its
	// steps, one value per row of outs (nil: no mask); maskNodes the
	// masks as the model computes them, and maskReads their values when a
	// metric computed on the host reads them.
	masks     []*gorgonia.Node
	maskNodes []*gorgonia.Node
	maskReads []gorgonia.Value
	loss      *gorgonia.Node
	// outReads and lossRead receive copies of the outputs and loss each
	// run: the machine may reuse the memory of a node nobody else reads.
	outReads []gorgonia.Value
	lossRead gorgonia.Value
	// metricReads receive, for each metric the device computes
	// (metrics.OnDevice), its batch sum and bad-label count, and for each
	// output's loss (outputLoss) that loss; nil for the metrics computed
	// on the host from outReads, which are read only when one of them
	// needs them (or in a predict program).
	metricReads []gorgonia.Value
	onDevice    []bool
	// metricLens is the length of each device metric's state.
	metricLens []int
	params     []*gorgonia.Node
	paramNames []string
	machine    driver.Machine
}

// program returns the program for a batch size, label layout and mode,
// compiling it the first time it is needed: a partial last batch gets a
// graph of its own, so no sample is dropped and the batch size is never
// frozen into the model.
func (m *Sequential) program(batch int, labels labelLayout, md mode) (*program, error) {
	return m.programFor(programKey{batch: batch, labels: labels, mode: md})
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

// pieces splits node, of rows of the values of parts one after another
// (a batch of several inputs' or outputs' samples), into one node per
// part, of the part's shape with node's batch axis: the node itself when
// there is one part.
func pieces(node *gorgonia.Node, parts [][]int) ([]*gorgonia.Node, error) {
	if len(parts) < 2 {
		return []*gorgonia.Node{node}, nil
	}
	batch := node.Shape()[0]
	cols := make([]int, len(parts))
	for i, p := range parts {
		cols[i] = shapes.Size(p)
	}
	out := make([]*gorgonia.Node, len(parts))
	for i, p := range parts {
		piece, err := ops.ColumnsOf(node, cols, i)
		if err != nil {
			return nil, err
		}
		if len(p) != 1 {
			if piece, err = ops.Reshape(piece, append([]int{batch}, p...), false); err != nil {
				return nil, err
			}
		}
		out[i] = piece
	}
	return out, nil
}

func (m *Sequential) newProgram(key programKey) (*program, error) {
	batch, yCols, md := key.batch, key.labels.cols, key.mode
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
	inputs, calls := m.callGraph()
	xs, err := pieces(x, m.inputParts)
	if err != nil {
		return nil, fmt.Errorf("model %q: splitting the inputs: %w", m.name, err)
	}
	flows := map[*Tensor]layers.Flow{}
	for i, t := range inputs {
		flows[t] = layers.Flow{Node: xs[i]}
	}
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
		mo, several := l.(layers.MultiOutputLayer)
		switch mi, multi := l.(layers.MultiInputLayer); {
		case several && (len(c.extra) > 0 || len(c.in) > 1):
			var outs []layers.Flow
			if outs, err = mo.CallOutputs(in, nodes); err == nil && len(outs) != 1+len(c.extra) {
				err = fmt.Errorf("layer %q: %d outputs, want %d", l.Name(), len(outs), 1+len(c.extra))
			}
			if err == nil {
				out = outs[0]
				for i, t := range c.extra {
					flows[t] = outs[i+1]
				}
			}
		case multi:
			out, err = mi.CallInputs(in, nodes)
		default:
			out, err = l.Call(in[0], nodes)
		}
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", m.name, err)
		}
		penalties = append(penalties, out.Losses...)
		out.Losses = nil
		// The mask that comes with the output, as Keras propagates it.
		if out.Mask, err = layers.OutputMask(l, in, out); err != nil {
			return nil, fmt.Errorf("model %q: %w", m.name, err)
		}
		flows[c.out] = out
	}
	outputs := []*Tensor{calls[len(calls)-1].out} // a stack's: its last call's
	if m.graph != nil {
		outputs = m.graph.outputs
	}
	outFlows := make([]layers.Flow, len(outputs))
	p.outs = make([]*gorgonia.Node, len(outputs))
	p.outNodes = make([]*gorgonia.Node, len(outputs))
	p.outCols = make([]int, len(outputs))
	p.outSteps = make([]int, len(outputs))
	p.masks = make([]*gorgonia.Node, len(outputs))
	p.maskNodes = make([]*gorgonia.Node, len(outputs))
	p.maskReads = make([]gorgonia.Value, len(outputs))
	p.outReads = make([]gorgonia.Value, len(outputs))
	for i, t := range outputs {
		outFlows[i] = flows[t]
		what := "the output"
		if len(outputs) > 1 {
			what = fmt.Sprintf("output %q", t.from.layer.Name())
		}
		out := flows[t].Node
		if out.Dims() < 2 {
			return nil, fmt.Errorf("model %q: %s has shape %s; gokeras models must output at least one value per sample, (None, n) or a sequence (None, steps, n): end with a Dense layer",
				m.name, what, shapes.String(m.outShapes[i]))
		}
		p.outNodes[i] = out
		if md != modePredict {
			// The loss and metrics read an output of several steps as
			// one row per step, (batch·steps, n): the same values.
			mask := outFlows[i].Mask
			if outFlows[i], p.masks[i], err = stepRows(outFlows[i]); err != nil {
				return nil, fmt.Errorf("model %q: %s of shape %s: %w", m.name, what, shapes.String(m.outShapes[i]), err)
			}
			if p.masks[i] != nil {
				p.maskNodes[i] = mask
				m.compiled.maskedSteps = true
			}
			out = outFlows[i].Node
		}
		p.outs[i] = out
		p.outCols[i] = out.Shape()[out.Dims()-1]
		p.outSteps[i] = out.Shape().TotalSize() / (batch * p.outCols[i])
	}
	var opts driver.MachineOptions
	if md == modePredict {
		for i, out := range p.outNodes {
			gorgonia.Read(out, &p.outReads[i])
		}
	}
	if md != modePredict {
		p.y = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, yCols))
		y := gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(batch, yCols), gorgonia.WithName("y"), gorgonia.WithValue(p.y))
		ys := []*gorgonia.Node{y}
		p.labelCols = []int{yCols}
		if cols := splitCols(key.labels.split); cols != nil {
			if len(cols) != len(p.outs) {
				return nil, fmt.Errorf("model %q: the labels have %d parts for %d outputs", m.name, len(cols), len(p.outs))
			}
			parts := make([][]int, len(cols))
			for i, n := range cols {
				parts[i] = []int{n}
			}
			if ys, err = pieces(y, parts); err != nil {
				return nil, fmt.Errorf("model %q: splitting the labels: %w", m.name, err)
			}
			p.labelCols = cols
		}
		// An output of several steps reads its labels one row per step,
		// as its values.
		for i, steps := range p.outSteps {
			if steps == 1 {
				continue
			}
			cols := p.labelCols[i]
			if cols%steps != 0 {
				return nil, fmt.Errorf("model %q: %slabels of %d values per sample do not divide among the %d steps of the output", m.name, headWhat(m.compiled.heads, i), cols, steps)
			}
			if ys[i], err = ops.Reshape(ys[i], []int{batch * steps, cols / steps}, false); err != nil {
				return nil, fmt.Errorf("model %q: %sthe labels of each step: %w", m.name, headWhat(m.compiled.heads, i), err)
			}
		}
		if err := p.addMetrics(m.compiled, ys, m.compiled.strategy != nil); err != nil {
			return nil, fmt.Errorf("model %q: %w", m.name, err)
		}
		// With sample weights, each output's rows' weights: a sample's
		// weight weighs each step of an output of several steps.
		ws := make([]*gorgonia.Node, len(p.outs))
		if key.weighted {
			bySteps := map[int]*gorgonia.Node{}
			for i, steps := range p.outSteps {
				if bySteps[steps] == nil {
					buf := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch*steps))
					name := "sample_weight"
					if len(p.weights) > 0 {
						name = fmt.Sprintf("sample_weight_%d", len(p.weights))
					}
					bySteps[steps] = gorgonia.NewTensor(g, tensor.Float32, 1, gorgonia.WithShape(batch*steps), gorgonia.WithName(name), gorgonia.WithValue(buf))
					p.weights = append(p.weights, stepWeights{steps: steps, buf: buf})
					if len(p.weighed) < batch*steps {
						p.weighed = make([]float32, batch*steps)
					}
				}
				ws[i] = bySteps[steps]
			}
		}
		// Each output's loss, weighted; the model trains on their sum, as
		// Keras does.
		var loss *gorgonia.Node
		headLoss := make([]*gorgonia.Node, len(p.outs))
		for i, h := range m.compiled.heads {
			l, err := h.loss.Node(p.outs[i], outFlows[i].Logits, ys[i])
			if err != nil {
				return nil, fmt.Errorf("model %q: %sloss %s: %w", m.name, headWhat(m.compiled.heads, i), h.loss.Name(), err)
			}
			hw := ws[i]
			if p.masks[i] != nil {
				if hw, err = maskWeights(p.masks[i], ws[i]); err != nil {
					return nil, fmt.Errorf("model %q: %smasking the loss %s: %w", m.name, headWhat(m.compiled.heads, i), h.loss.Name(), err)
				}
			}
			if hw != nil {
				if l, err = ops.WithSampleWeights(l, hw); err != nil {
					return nil, fmt.Errorf("model %q: %sweighting the loss %s: %w", m.name, headWhat(m.compiled.heads, i), h.loss.Name(), err)
				}
			}
			headLoss[i] = l
			if h.weight != 1 {
				if l, err = ops.Scale(l, h.weight); err != nil {
					return nil, fmt.Errorf("model %q: %sweighting the loss by %g: %w", m.name, headWhat(m.compiled.heads, i), h.weight, err)
				}
			}
			if loss == nil {
				loss = l
			} else if loss, err = gorgonia.Add(loss, l); err != nil {
				return nil, fmt.Errorf("model %q: adding the outputs' losses: %w", m.name, err)
			}
		}
		for i, mt := range m.compiled.metrics {
			if _, ok := mt.(*outputLoss); ok {
				gorgonia.Read(headLoss[m.compiled.metricOut[i]], &p.metricReads[i])
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

// stepWeights is the input of the weights of the rows of the outputs of
// steps steps, one row per step of each sample.
type stepWeights struct {
	steps int
	buf   *tensor.Dense
}

// fillWeights fills the weights of the rows of the outputs' losses for
// the batch at idx with labels, from weigh's.
func (p *program) fillWeights(idx []int, labels []float32) error {
	if p.weigh == nil {
		return fmt.Errorf("a weighted training program got no sample weights")
	}
	n := len(idx) * p.weighSteps
	if err := p.weigh(idx, labels, p.weighed[:n]); err != nil {
		return err
	}
	for _, w := range p.weights {
		dst := w.buf.Data().([]float32)
		switch {
		case p.weighSteps == w.steps:
			copy(dst, p.weighed[:n])
		case p.weighSteps == 1:
			copy(dst, p.weighed[:len(idx)])
			spreadWeights(dst, len(idx), w.steps)
		default:
			return fmt.Errorf("weights of %d steps per sample for an output of %d steps", p.weighSteps, w.steps)
		}
	}
	return nil
}

// stepRows views an output of several steps, (batch, steps..., n), and
// its logits as one row per step, (batch·steps, n), for the loss and the
// metrics, which read rows, as Keras computes them over the last axis. The
// view shares the output's values. An output of shape (batch, n) is
// returned as it is. A mask over the steps comes back as one value per
// row, (batch·steps), else nil.
func stepRows(f layers.Flow) (_ layers.Flow, mask *gorgonia.Node, err error) {
	s := f.Node.Shape()
	if len(s) <= 2 {
		return f, nil, nil
	}
	n := s[len(s)-1]
	rows := s.TotalSize() / n
	view := []int{rows, n}
	if f.Node, err = ops.Reshape(f.Node, view, true); err != nil {
		return f, nil, err
	}
	if f.Logits != nil {
		if f.Logits, err = ops.Reshape(f.Logits, view, true); err != nil {
			return f, nil, fmt.Errorf("its logits: %w", err)
		}
	}
	if f.Mask != nil {
		if f.Mask.Shape().TotalSize() != rows {
			return f, nil, fmt.Errorf("its mask has shape %v, not one value per step", f.Mask.Shape())
		}
		if mask, err = ops.Reshape(f.Mask, []int{rows}, false); err != nil {
			return f, nil, fmt.Errorf("its mask: %w", err)
		}
	}
	return f, mask, nil
}

// maskWeights is the weight of each row of a loss over steps masked by
// mask (batch·steps), 1 for a step kept and 0 for one left out, times
// rows/Σmask so that the loss, Σ weight·loss / rows, is Σ mask·loss / Σmask,
// the mean over the steps kept, as Keras 2 (tf.keras 2.13 and later,
// apply_valid_mask) reduces a masked loss. sw, when not nil, holds each
// row's sample weight: the loss is then Σ mask·sw·loss / Σmask.
func maskWeights(mask, sw *gorgonia.Node) (*gorgonia.Node, error) {
	rows := mask.Shape()[0]
	// Σmask, of shape (1, 1): the row of the mask times a column of ones.
	row, err := ops.Reshape(mask, []int{1, rows}, false)
	if err != nil {
		return nil, err
	}
	ones := tensor.New(tensor.WithShape(rows, 1), tensor.WithBacking(slices.Repeat([]float32{1}, rows)))
	col := gorgonia.NewTensor(mask.Graph(), tensor.Float32, 2, gorgonia.WithShape(rows, 1), gorgonia.WithName(mask.Name()+"_ones"), gorgonia.WithValue(ones))
	kept, err := ops.Affine(row, col, nil, false)
	if err != nil {
		return nil, err
	}
	if kept, err = ops.Reshape(kept, []int{1}, false); err != nil {
		return nil, err
	}
	w, err := ops.Scale(mask, float64(rows))
	if err != nil {
		return nil, err
	}
	if w, err = ops.Divide(w, kept); err != nil {
		return nil, err
	}
	if sw != nil {
		if w, err = ops.Multiply(w, sw); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// maskHint is what a loss that is not a finite number may also mean with
// a mask over an output's steps.
func (c *compiled) maskHint() string {
	if !c.maskedSteps {
		return ""
	}
	return "; with a mask over an output's steps, a batch whose every step is masked (all padding) has no step to average over, as in Keras: leave such samples out of the data"
}

// headWhat names output i in an error, when there are several.
func headWhat(heads []head, i int) string {
	if len(heads) < 2 {
		return ""
	}
	return fmt.Sprintf("output %q: ", heads[i].name)
}

// run executes the program on the batch already gathered into p.x and p.y.
// The caller reads what it needs, then calls p.machine.Reset.
func (p *program) run() error { return p.machine.RunAll() }

// addMetrics puts in the graph the batch sum of each metric the device
// computes (metrics.OnDevice) and each output's loss (outputLoss), read
// back after each run, and reads the outputs back when a metric computes
// on the host. ys are the outputs' labels. The outputs' losses are read
// by newProgram, once made.
func (p *program) addMetrics(c *compiled, ys []*gorgonia.Node, distributed bool) error {
	ms := c.metrics
	p.metricReads = make([]gorgonia.Value, len(ms))
	p.onDevice = make([]bool, len(ms))
	p.metricLens = make([]int, len(ms))
	host := make([]bool, len(p.outs))
	for i, mt := range ms {
		h := c.metricOut[i]
		if _, ok := mt.(*outputLoss); ok {
			p.onDevice[i], p.metricLens[i] = true, 1
			continue
		}
		if p.masks[h] != nil {
			// The steps a mask keeps are picked on the host.
			if distributed {
				return fmt.Errorf("metric %s of an output masked over its steps is computed on the host, and data-parallel training (WithStrategy) sums only the metrics the device computes: train without the mask or without the metric", c.metricNames[i])
			}
			host[h] = true
			continue
		}
		d, ok := mt.(metrics.OnDevice)
		var params ops.MetricParams
		if ok {
			params, ok = d.DeviceParams(p.stepLabelCols(h), p.outCols[h])
		}
		if !ok && distributed {
			return fmt.Errorf("metric %s cannot be computed on the device for labels of %d and outputs of %d columns, and data-parallel training (WithStrategy) sums only the metrics the device computes", c.metricNames[i], p.stepLabelCols(h), p.outCols[h])
		}
		if !ok {
			host[h] = true // Update reports what does not fit
			continue
		}
		sum, err := ops.MetricState(p.outs[h], ys[h], params)
		if err != nil {
			return fmt.Errorf("metric %s: %w", c.metricNames[i], err)
		}
		gorgonia.Read(sum, &p.metricReads[i])
		p.onDevice[i] = true
		p.metricLens[i] = sum.Shape().TotalSize()
	}
	for h, on := range host {
		if on {
			gorgonia.Read(p.outNodes[h], &p.outReads[h])
			if p.maskNodes[h] != nil {
				gorgonia.Read(p.maskNodes[h], &p.maskReads[h])
			}
		}
	}
	return nil
}

// stepLabelCols is the label columns of a row of output h's outs: of a
// step, for an output of several steps.
func (p *program) stepLabelCols(h int) int { return p.labelCols[h] / p.outSteps[h] }

// lossValue reads the loss the last run computed.
func (p *program) lossValue() (float64, error) {
	v, err := scalarValue(p.lossRead)
	if err != nil {
		return 0, fmt.Errorf("loss: %w", err)
	}
	return v, nil
}

// outputs reads output h's values the last run computed.
func (p *program) outputs(h int) ([]float32, error) {
	v, ok := p.outReads[h].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("output value is a %T, want a tensor", p.outReads[h])
	}
	return v.Data().([]float32), nil
}

// scalarValue reads a scalar node's value.
func scalarValue(v gorgonia.Value) (float64, error) {
	switch v := v.(type) {
	case *gorgonia.F32:
		return float64(*v), nil
	case *gorgonia.F64:
		return float64(*v), nil
	}
	return 0, fmt.Errorf("value is a %T, want a scalar", v)
}
