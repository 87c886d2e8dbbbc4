package nn

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gokeras/gokeras/internal/formats/shapes"

	"github.com/gokeras/gokeras/layers"
)

// Model is a model: a graph of layer calls, as Keras' Model. NewSequential
// makes a stack of layers (Keras' Sequential, the special case it is in
// Keras), NewModel any other graph, from the tensors of Keras' functional
// API (see NewModel). Compile, Fit, Evaluate, Predict, Summary, saving
// (whole models, weights, checkpoints), ONNX export and data-parallel
// training work on either kind.
//
// A model is used from one goroutine at a time. Fit, Evaluate and Predict
// check it: while one of them runs, another on the same model (from
// another goroutine, or from one of Fit's callbacks) returns an error
// that matches ErrBusy instead of sharing the model's machines.
//
// Every method may be called on a nil *Model: those that return an error
// return one (ErrNilModel), the others return zero values.
type Model struct {
	name       string
	layers     []layers.Layer
	inputShape []int // set by an Input layer or Build; nil until known
	// inputParts are the shapes of a model's inputs when it has several
	// (NewModel): then inputShape is one flat row of all their values, as
	// data.InputTuple gathers them. Nil for a model of one input.
	inputParts [][]int
	// outShape is the output's sample shape (set by Build), nil for a
	// model of several outputs; outShapes has every output's.
	outShape  []int
	outShapes [][]int
	layerOut  [][]int // each layer's output sample shape, set by Build
	// graph is a functional model's graph (NewModel); nil for a stack of
	// layers, whose graph is the chain of its layers (callGraph).
	graph    *graph
	built    bool
	seed     uint64
	seeded   bool
	fits     uint64         // Fit calls that drew their shuffling seed from seed
	names    map[string]int // per-type counters for automatic names
	compiled *compiled
	// stopTraining is Keras' model.stop_training: set by StopTraining
	// (callbacks, or another goroutine), read and cleared by Fit.
	stopTraining atomic.Bool
	// running is the call (fitting, evaluating, predicting) that has the
	// model, idle when none.
	running atomic.Int32
	// use is held by whatever reads or writes the model's weights and
	// machines: Fit, Evaluate and Predict for their whole run, except
	// while Fit's callbacks run (between steps, where they may save or set
	// the weights), and the methods that read or replace the weights
	// (claim). Such a method called from another goroutine during a run
	// is refused with ErrBusy rather than racing with the step.
	use sync.Mutex
	// inHooks is set while Fit's callbacks run with use released: a claim
	// then waits its turn instead of being refused.
	inHooks atomic.Bool
}

// Sequential is the type of a stack of layers, like keras.Sequential: a
// Model, whose graph is its layers one after another (NewSequential, Add).
type Sequential = Model

// ErrNilModel is returned by the methods of a nil *Model.
var ErrNilModel = errors.New("the model is a nil *Model: make one with nn.NewSequential or nn.NewModel")

// ErrBusy is matched (errors.Is) by the error Fit, Evaluate and Predict
// return when the model is already running one of them.
var ErrBusy = errors.New("the model is busy")

// activity is what a model is running.
type activity int32

const (
	idle activity = iota
	fitting
	evaluating
	predicting
)

func (a activity) String() string {
	return [...]string{"idle", "fitting", "evaluating", "predicting"}[a]
}

// busyError says that a call found the model running another.
type busyError struct {
	model   string
	call    string // "fit", "evaluate", "predict", "save weights", ...
	running activity
	// other: a method that reads or replaces the weights, called from
	// another goroutine while a run had them (claim); whole: one that
	// cannot run during a run at all.
	other, whole bool
}

func (e *busyError) Error() string {
	switch {
	case e.whole:
		return fmt.Sprintf("%s: model %q is %s: %s cannot run until that call returns (not even from one of Fit's callbacks); call it after Fit, Evaluate or Predict returns",
			e.call, e.model, e.running, e.call)
	case e.other:
		running := "in use"
		if e.running != idle {
			running = e.running.String()
		}
		return fmt.Sprintf("%s: model %q is %s on another goroutine, whose step would mix with this call: call it from one of Fit's callbacks (which run between steps), or after the running call returns",
			e.call, e.model, running)
	}
	return fmt.Sprintf("%s: model %q is already %s: Fit, Evaluate and Predict of one model run one at a time, as they share its machines (on another goroutine, or from one of Fit's callbacks); wait for the running call to return, or use a second model (NewSequential, then SetWeights or LoadWeights)",
		e.call, e.model, e.running)
}

func (e *busyError) Is(target error) bool { return target == ErrBusy }

// begin claims the model for a call, or says what it is already running.
// The caller defers m.end().
func (m *Sequential) begin(call string, a activity) error {
	for {
		if m.running.CompareAndSwap(int32(idle), int32(a)) {
			m.use.Lock() // a method that reads the weights (claim) may hold it a moment
			return nil
		}
		if now := activity(m.running.Load()); now != idle {
			return &busyError{model: m.name, call: call, running: now}
		}
	}
}

// end releases the model claimed by begin.
func (m *Sequential) end() {
	m.use.Unlock()
	m.running.Store(int32(idle))
}

// claim takes the model's weights and machines for one of the methods
// that read or replace them (GetWeights, SetWeights, the saves and loads,
// ExportONNX), and returns what releases them. While Fit, Evaluate or
// Predict runs, they are Fit's, but for while Fit's callbacks run: a call
// from a callback goes ahead (between two steps), one from another
// goroutine gets an error matching ErrBusy instead of mixing two steps'
// weights or racing with the step. whole refuses during any run, callback
// or not, what cannot happen under Fit's feet at all (Close, Compile).
func (m *Sequential) claim(call string, whole bool) (func(), error) {
	now := activity(m.running.Load())
	if whole && now != idle {
		return nil, &busyError{model: m.name, call: call, running: now, whole: true}
	}
	if now == idle || m.inHooks.Load() {
		m.use.Lock() // no step runs now: wait for another such call, if any
		return m.use.Unlock, nil
	}
	if !m.use.TryLock() {
		return nil, &busyError{model: m.name, call: call, running: now, other: true}
	}
	return m.use.Unlock, nil
}

// NewSequential makes a model of the given layers. A leading layers.Input
// declares the sample shape, as keras.Input does; otherwise the shape comes
// from Build or from the data given to Fit.
func NewSequential(ls ...layers.Layer) *Sequential {
	m := &Sequential{name: "sequential", names: map[string]int{}}
	for _, l := range ls {
		m.add(l)
	}
	return m
}

// Name is the model's name, "sequential" unless changed with SetName.
func (m *Sequential) Name() string {
	if m == nil {
		return ""
	}
	return m.name
}

// SetName renames the model.
func (m *Sequential) SetName(name string) {
	if m != nil {
		m.name = name
	}
}

// SetSeed makes the model's runs reproducible, as Keras'
// keras.utils.set_random_seed does: the initial weights drawn when the
// model is built, the dropout masks, and the shuffles of each Fit that is
// not given a Seed of its own. Fit calls draw their shuffles one after
// another from it, so a program that fits twice gets two different orders,
// and the same two the next time it runs. Without SetSeed each seed is
// drawn from the clock, like an unseeded Keras run. Set it before the
// model is built: the weights are drawn then.
func (m *Sequential) SetSeed(seed uint64) {
	if m != nil {
		m.seed, m.seeded = seed, true
		m.fits = 0
	}
}

// nextFitSeed is the shuffling seed of the model's next Fit without a Seed
// option: the fits-th draw of a SplitMix64 stream from the model's seed.
func (m *Sequential) nextFitSeed() uint64 {
	m.fits++
	return splitmix64(m.seed + (m.fits-1)*0x9e3779b97f4a7c15) // splitmix64 adds the last step
}

// Add appends a layer. It fails once the model is built.
func (m *Sequential) Add(l layers.Layer) error {
	if m == nil {
		return fmt.Errorf("add: %w", ErrNilModel)
	}
	if m.graph != nil {
		return fmt.Errorf("model %q is a functional model (NewModel): apply the layer to its tensors with nn.Apply and make a new model", m.name)
	}
	if m.built {
		return fmt.Errorf("model %q is already built: add layers before Build, Compile or Fit", m.name)
	}
	if l == nil {
		return fmt.Errorf("model %q: Add called with a nil layer", m.name)
	}
	m.add(l)
	return nil
}

func (m *Sequential) add(l layers.Layer) {
	if l == nil {
		return
	}
	if in, ok := l.(*layers.InputLayer); ok && len(m.layers) == 0 {
		m.inputShape = in.Shape()
		return
	}
	if l.Name() == "" {
		l.SetName(m.autoName(l.Type()))
	}
	m.layers = append(m.layers, l)
}

// autoName gives the names Keras gives in a fresh session: dense, dense_1, ...
func (m *Sequential) autoName(typ string) string {
	base := snakeCase(typ)
	if m.names == nil { // a Sequential{} not made by NewSequential
		m.names = map[string]int{}
	}
	n := m.names[base]
	m.names[base] = n + 1
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s_%d", base, n)
}

// snakeCase turns a Keras class name into the base of its layers' names
// as Keras does: a capital followed by lower-case letters starts a new
// word, and so does a capital after a lower-case letter, so "Dense" is
// dense, "MaxPooling2D" max_pooling2d and "Conv2D" conv2d.
func snakeCase(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if upper && i > 0 {
			lowerBefore := r[i-1] >= 'a' && r[i-1] <= 'z'
			lowerAfter := i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z'
			if lowerBefore || lowerAfter {
				b.WriteByte('_')
			}
		}
		if upper {
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Layers returns the model's layers in order.
func (m *Sequential) Layers() []layers.Layer {
	if m == nil {
		return nil
	}
	return append([]layers.Layer(nil), m.layers...)
}

// Built reports whether the weights exist.
func (m *Sequential) Built() bool { return m != nil && m.built }

// InputShape is the sample shape the model takes, nil before it is known.
// For a model of several inputs it is one flat row holding all their
// values, as data.InputTuple gathers them: InputShapes has each input's.
func (m *Sequential) InputShape() []int {
	if m == nil {
		return nil
	}
	return append([]int(nil), m.inputShape...)
}

// InputShapes are the sample shapes of the model's inputs, in order, nil
// before they are known: one for a Sequential, one per nn.Input for a
// functional model.
func (m *Sequential) InputShapes() [][]int {
	if m == nil || m.inputShape == nil {
		return nil
	}
	if m.inputParts != nil {
		return cloneShapes(m.inputParts)
	}
	return [][]int{slices.Clone(m.inputShape)}
}

// OutputShape is the sample shape the model produces, nil before Build
// and for a model of several outputs (see OutputShapes).
func (m *Sequential) OutputShape() []int {
	if m == nil {
		return nil
	}
	return append([]int(nil), m.outShape...)
}

// OutputShapes are the sample shapes of the model's outputs, in order,
// nil before Build.
func (m *Sequential) OutputShapes() [][]int {
	if m == nil {
		return nil
	}
	return cloneShapes(m.outShapes)
}

// OutputNames are the names of the model's outputs, in order, as Keras'
// model.output_names: the name of the layer each comes from, made unique
// as Keras 2 does when a layer gives several (lstm, lstm_1). A model of
// several outputs names its logs after them (dense_1_loss). Nil before
// the layers are named (a Sequential's last layer is named when added).
func (m *Sequential) OutputNames() []string {
	if m == nil || len(m.layers) == 0 {
		return nil
	}
	if m.graph == nil {
		return []string{m.layers[len(m.layers)-1].Name()}
	}
	names := make([]string, len(m.graph.outputs))
	taken, count := map[string]bool{}, map[string]int{}
	for i, t := range m.graph.outputs {
		base := t.from.layer.Name()
		name := base
		for taken[name] {
			n := max(count[base], 1)
			name = fmt.Sprintf("%s_%d", base, n)
			count[base] = n + 1
		}
		taken[name] = true
		names[i] = name
	}
	return names
}

func cloneShapes(list [][]int) [][]int {
	if list == nil {
		return nil
	}
	out := make([][]int, len(list))
	for i, s := range list {
		out[i] = slices.Clone(s)
	}
	return out
}

// hasWeights reports whether l has all its weights already: a layer that
// another model built.
func hasWeights(l layers.Layer) bool {
	ps := l.Params()
	for _, p := range ps {
		if p == nil || p.Value == nil {
			return false
		}
	}
	return len(ps) > 0
}

// planBuilt is the output shape of a layer that another model built, for
// samples of shape in: an error where the weights it has are not those
// that shape needs.
func planBuilt(l layers.Layer, in []int) ([]int, error) {
	out, want, err := layers.PlanBuild(l, in)
	if err != nil {
		return nil, err
	}
	var have []layers.WeightShape
	for _, p := range l.Params() {
		have = append(have, layers.WeightShape{Name: p.Name, Shape: p.Value.Shape()})
	}
	if !sameWeights(have, want) {
		return nil, fmt.Errorf("it has the weights %s, built by another model, and input shape %s needs %s",
			weightsText(have), shapes.String(in), weightsText(want))
	}
	return out, nil
}

// Build creates the weights for samples of the given shape (no batch axis),
// e.g. Build(32, 32, 3). Building an already built model for the same shape
// does nothing; for another shape it is an error.
func (m *Sequential) Build(inputShape ...int) error {
	if m == nil {
		return fmt.Errorf("build: %w", ErrNilModel)
	}
	if len(inputShape) == 0 {
		return fmt.Errorf("model %q: Build needs the shape of one sample, e.g. Build(32, 32, 3)", m.name)
	}
	for _, d := range inputShape {
		if d <= 0 {
			return fmt.Errorf("model %q: input shape %v has a non-positive dimension", m.name, inputShape)
		}
	}
	if m.built {
		if !shapes.Equal(m.inputShape, inputShape) {
			return fmt.Errorf("model %q was built for input shape %s, not %s", m.name, shapes.String(m.inputShape), shapes.String(inputShape))
		}
		return nil
	}
	if m.inputShape != nil && !shapes.Equal(m.inputShape, inputShape) {
		return fmt.Errorf("model %q declares input shape %s but Build was given %s", m.name, shapes.String(m.inputShape), shapes.String(inputShape))
	}
	if err := m.checkLayers(); err != nil {
		return err
	}
	seed := m.seed
	if !m.seeded {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b657261732d696e)) // stream "keras-in"
	inputs, calls := m.callGraph()
	shapeOf := map[*Tensor][]int{}
	if len(inputs) == 1 {
		shapeOf[inputs[0]] = slices.Clone(inputShape)
	} else {
		for i, t := range inputs {
			shapeOf[t] = slices.Clone(m.inputParts[i])
		}
	}
	built := map[layers.Layer]bool{}
	layerOut := make([][]int, 0, len(m.layers))
	for _, c := range calls {
		in := make([][]int, len(c.in))
		for i, t := range c.in {
			in[i] = shapeOf[t]
		}
		var out []int
		var err error
		mi, multi := c.layer.(layers.MultiInputLayer)
		// A layer another model built keeps its weights, as in Keras (a
		// model of some of a trained model's layers computes with their
		// trained weights): it is planned, not built again.
		before := !built[c.layer] && hasWeights(c.layer)
		switch {
		case (built[c.layer] || before) && multi: // a shared layer's later call
			out, err = mi.PlanInputs(in)
		case before:
			out, err = planBuilt(c.layer, in[0])
		case built[c.layer]:
			out, _, err = layers.PlanBuild(c.layer, in[0])
		case multi:
			out, err = mi.BuildInputs(in, rng)
		default:
			out, err = c.layer.Build(in[0], rng)
		}
		if err != nil {
			return fmt.Errorf("model %q: building layer %q: %w", m.name, c.layer.Name(), err)
		}
		if !built[c.layer] {
			layerOut = append(layerOut, out)
		}
		built[c.layer] = true
		shapeOf[c.out] = out
		for _, t := range c.extra {
			shapeOf[t] = t.shape
		}
	}
	m.layerOut = layerOut
	m.inputShape = append([]int(nil), inputShape...)
	outputs := []*Tensor{calls[len(calls)-1].out} // a stack's: its last call's
	if m.graph != nil {
		outputs = m.graph.outputs
	}
	m.outShapes = make([][]int, len(outputs))
	for i, t := range outputs {
		m.outShapes[i] = shapeOf[t]
	}
	m.outShape = nil
	if len(outputs) == 1 {
		m.outShape = m.outShapes[0]
	}
	m.built = true
	return nil
}

// checkLayers checks what can be checked of the layers before the input's
// shape is known: that there are some, their names, and their arguments.
func (m *Sequential) checkLayers() error {
	if len(m.layers) == 0 {
		return fmt.Errorf("model %q has no layers: add some before building it", m.name)
	}
	if err := layers.CheckNames(m.layers); err != nil {
		return fmt.Errorf("model %q: %w", m.name, err)
	}
	for i, l := range m.layers {
		if c, ok := l.(layers.ConfigChecker); ok {
			if err := c.CheckConfig(); err != nil {
				return fmt.Errorf("model %q: layer %d: %w", m.name, i+1, err)
			}
		}
	}
	return nil
}

// callGraph returns the model's graph: its input tensors and its layer
// calls, each after the calls it takes its inputs from. A Sequential's is
// the chain of its layers, made afresh at each call, from one input.
func (m *Sequential) callGraph() ([]*Tensor, []*layerCall) {
	if m.graph != nil {
		return m.graph.inputs, m.graph.calls
	}
	input := &Tensor{shape: slices.Clone(m.inputShape)}
	t := input
	calls := make([]*layerCall, len(m.layers))
	for i, l := range m.layers {
		out := &Tensor{}
		if i < len(m.layerOut) {
			out.shape = m.layerOut[i]
		}
		calls[i] = &layerCall{layer: l, in: []*Tensor{t}, out: out}
		out.from = calls[i]
		t = out
	}
	return []*Tensor{input}, calls
}

// ensureBuilt builds the model from its declared input shape, if any.
func (m *Sequential) ensureBuilt() error {
	if m.built {
		return nil
	}
	if m.inputShape == nil {
		return fmt.Errorf("model %q is not built: start it with layers.Input(...), call Build(shape...), or call Fit", m.name)
	}
	return m.Build(m.inputShape...)
}

// CountParams is the number of weights in the model.
func (m *Sequential) CountParams() int {
	if m == nil {
		return 0
	}
	n := 0
	for _, l := range m.layers {
		for _, p := range l.Params() {
			n += p.Size()
		}
	}
	return n
}

// Summary writes a table of the layers, their output shapes and their
// parameter counts, in Keras' format. A nil w is an error.
func (m *Sequential) Summary(w io.Writer) error {
	if m == nil {
		return fmt.Errorf("summary: %w", ErrNilModel)
	}
	if w == nil {
		return errors.New("summary: no writer given: pass os.Stdout, or a strings.Builder to keep the table")
	}
	if err := m.ensureBuilt(); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	var b strings.Builder
	if m.graph != nil {
		m.functionalSummary(&b)
	} else {
		const width = 65
		cols := []int{29, 55, 65} // Keras' positions .45, .85 and 1 of 65
		fmt.Fprintf(&b, "Model: %q\n", m.name)
		b.WriteString(strings.Repeat("_", width) + "\n")
		summaryRow(&b, cols, "Layer (type)", "Output Shape", "Param #")
		b.WriteString(strings.Repeat("=", width) + "\n")
		for i, l := range m.layers {
			summaryRow(&b, cols, fmt.Sprintf("%s (%s)", l.Name(), l.Type()), shapes.String(m.layerOut[i]), fmt.Sprint(countParams(l)))
			summaryRow(&b, cols, "", "", "")
		}
		b.WriteString(strings.Repeat("=", width) + "\n")
	}
	total, frozen := 0, 0
	for _, l := range m.layers {
		for _, p := range l.Params() {
			total += p.Size()
			if p.NonTrainable {
				frozen += p.Size()
			}
		}
	}
	width := 65
	if m.graph != nil {
		width = 98
	}
	fmt.Fprintf(&b, "Total params: %s\n", commas(total))
	fmt.Fprintf(&b, "Trainable params: %s\n", commas(total-frozen))
	fmt.Fprintf(&b, "Non-trainable params: %s\n", commas(frozen))
	b.WriteString(strings.Repeat("_", width) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// functionalSummary writes the rows of a functional model's summary as
// Keras 2 does: 98 characters wide, a row for the input and for each
// layer, and a "Connected to" column naming the tensors each layer's
// calls take, as layer[call][0] (a shared layer's second call is
// dense[1][0]).
func (m *Sequential) functionalSummary(b *strings.Builder) {
	const width = 98
	cols := []int{32, 53, 65, 98} // Keras' positions .33, .55, .67 and 1 of 98
	fmt.Fprintf(b, "Model: %q\n", m.name)
	b.WriteString(strings.Repeat("_", width) + "\n")
	summaryRow(b, cols, "Layer (type)", "Output Shape", "Param #", "Connected to")
	b.WriteString(strings.Repeat("=", width) + "\n")
	g := m.graph
	// Each tensor's name in the column: its layer, the layer's call that
	// made it, and 0, the only output of a call.
	names := map[*Tensor]string{}
	for _, in := range g.inputs {
		names[in] = in.input.Name() + "[0][0]"
	}
	callsOf := map[layers.Layer][]*layerCall{}
	for _, c := range g.calls {
		for i, t := range c.outputs() {
			names[t] = fmt.Sprintf("%s[%d][%d]", c.layer.Name(), len(callsOf[c.layer]), i)
		}
		callsOf[c.layer] = append(callsOf[c.layer], c)
	}
	for _, in := range g.inputs {
		summaryRow(b, cols, fmt.Sprintf("%s (InputLayer)", in.input.Name()), "["+shapes.String(in.shape)+"]", "0", "[]")
		summaryRow(b, cols, "", "", "", "")
	}
	for i, l := range m.layers {
		var from []string
		shape := shapes.String(m.layerOut[i])
		for _, c := range callsOf[l] {
			for _, t := range c.in {
				from = append(from, "'"+names[t]+"'")
			}
			if !shapes.Equal(c.out.shape, m.layerOut[i]) {
				shape = "multiple"
			}
		}
		if cs := callsOf[l]; len(cs) == 1 && len(cs[0].extra) > 0 {
			var list []string // a call of several outputs: each one's shape, as Keras lists them
			for _, t := range cs[0].outputs() {
				list = append(list, shapes.String(t.shape))
			}
			shape = "[" + strings.Join(list, ", ") + "]"
		}
		summaryRow(b, cols, fmt.Sprintf("%s (%s)", l.Name(), l.Type()), shape, fmt.Sprint(countParams(l)), "["+strings.Join(from, ", ")+"]")
		summaryRow(b, cols, "", "", "", "")
	}
	b.WriteString(strings.Repeat("=", width) + "\n")
}

// countParams is the number of scalars in a layer's weights.
func countParams(l layers.Layer) int {
	n := 0
	for _, p := range l.Params() {
		n += p.Size()
	}
	return n
}

// summaryRow writes one row of a summary's table as Keras' print_row does:
// a field too long for its column is cut at the column's width, or just
// after a "),", "},", "]," or "'," within it, and goes on in the same column
// of the next line ("max_pooling2d (MaxPooling2D" then ")").
func summaryRow(b *strings.Builder, cols []int, fields ...string) {
	left := append([]string(nil), fields...)
	for first := true; first || slices.ContainsFunc(left, func(f string) bool { return f != "" }); first = false {
		line := ""
		start := 0
		for i, f := range left {
			space := 2
			if i == len(cols)-1 {
				space = 0
			}
			cut := min(len(f), cols[i]-start-space)
			fit := f[:cut]
			best := -1
			for _, brk := range []string{"),", "},", "],", "',"} {
				if at := strings.Index(fit, brk); at >= 0 && (best < 0 || at+len(brk) < best) {
					best = at + len(brk)
				}
			}
			if best >= 0 {
				cut = best
			}
			if i == 0 {
				line += " "
			}
			line += f[:cut] + strings.Repeat(" ", space)
			left[i] = f[cut:]
			if pad := cols[i] - len(line); pad > 0 {
				line += strings.Repeat(" ", pad)
			}
			start = cols[i]
		}
		b.WriteString(line + "\n")
	}
}

// commas formats n with thousands separators, as Keras' summary does.
func commas(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
