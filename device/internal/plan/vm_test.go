package plan

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// model is a small gokeras-shaped graph: x (batch, 2, 3) → Flatten →
// Affine(+bias) → hidden → Affine(no bias) → out, a loss, its gradients and
// reads of the output and the loss, built as nn builds its programs.
type model struct {
	g                 *gorgonia.ExprGraph
	x, y, w1, b1, w2  *gorgonia.Node
	out, loss         *gorgonia.Node
	outRead, lossRead gorgonia.Value
}

type modelSpec struct {
	hidden, out ops.Activation
	loss        ops.LossKind
	fromLogits  bool // the loss reads the last Affine, not the activation
	batch       int
}

// values are the host data of a model, shared by the graphs built from it.
type values struct {
	x, y, w1, b1, w2 []float32
}

const classes = 3

func newValues(spec modelSpec, seed uint64) values {
	rng := rand.New(rand.NewPCG(seed, 7))
	fill := func(n int, scale float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(scale * rng.NormFloat64())
		}
		return s
	}
	v := values{x: fill(spec.batch*6, 1), w1: fill(6*5, 0.5), b1: fill(5, 0.1), w2: fill(5*classes, 0.5)}
	if spec.loss.Sparse() {
		v.y = make([]float32, spec.batch)
		for i := range v.y {
			v.y[i] = float32(rng.IntN(classes))
		}
		return v
	}
	v.y = make([]float32, spec.batch*classes)
	for i := range v.y {
		v.y[i] = float32(rng.Float64())
	}
	if spec.loss == ops.SoftmaxCrossEntropy || spec.loss == ops.CategoricalCrossentropy {
		for r := 0; r < spec.batch; r++ { // one-hot rows
			row := v.y[r*classes : (r+1)*classes]
			clear(row)
			row[rng.IntN(classes)] = 1
		}
	}
	return v
}

func clone(s []float32) []float32 { return append([]float32(nil), s...) }

func buildModel(t *testing.T, spec modelSpec, v values, train bool) *model {
	t.Helper()
	g := gorgonia.NewGraph()
	m := &model{g: g}
	mk := func(name string, data []float32, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(clone(data)))))
	}
	m.x = mk("x", v.x, spec.batch, 2, 3)
	ycols := classes
	if spec.loss.Sparse() {
		ycols = 1
	}
	m.y = mk("y", v.y, spec.batch, ycols)
	m.w1 = mk("w1", v.w1, 6, 5)
	m.b1 = mk("b1", v.b1, 5)
	m.w2 = mk("w2", v.w2, 5, classes)
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	flat := must(ops.Flatten(m.x, false))
	z1 := must(ops.Affine(flat, m.w1, m.b1, false))
	h := must(ops.Activate(spec.hidden, z1))
	z2 := must(ops.Affine(h, m.w2, nil, true))
	m.out = must(ops.Activate(spec.out, z2))
	pred := m.out
	if spec.fromLogits {
		pred = z2
	}
	m.loss = must(ops.Loss(spec.loss, pred, m.y))
	gorgonia.Read(m.out, &m.outRead)
	gorgonia.Read(m.loss, &m.lossRead)
	if train {
		if _, err := gorgonia.Grad(m.loss, m.learnables()...); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func (m *model) learnables() []*gorgonia.Node { return []*gorgonia.Node{m.w1, m.b1, m.w2} }

func TestReadTarget(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("x"))
	var v gorgonia.Value
	r := gorgonia.Read(x, &v)
	into, ok := readTarget(r.Op())
	if !ok || into != &v {
		t.Fatalf("readTarget(%v) = %p, %t; want %p, true (did gorgonia's readOp change?)", r.Op(), into, ok, &v)
	}
	if _, ok := readTarget(x.Op()); ok {
		t.Error("readTarget accepted an input node's nil op")
	}
	y := must2(t)(ops.Activate(ops.ReLU, gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("m"))))
	if _, ok := readTarget(y.Op()); ok {
		t.Errorf("readTarget accepted %v", y.Op())
	}
}

func must2(t *testing.T) func(*gorgonia.Node, error) *gorgonia.Node {
	return func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

func TestCompileTrainingGraph(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Sigmoid, loss: ops.SigmoidCrossEntropy, fromLogits: true, batch: 4}
	m := buildModel(t, spec, newValues(spec, 1), true)
	p, err := Compile(m.g, m.learnables(), Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[Kind]int{}
	for _, s := range p.Steps {
		count[s.Kind]++
	}
	// Forward: two products, one bias step with relu fused, one
	// standalone sigmoid (the second Affine has no bias), the loss.
	// Backward: loss gradient, three products (dW2, dH, dW1), the relu
	// gradient, the bias gradient.
	want := map[Kind]int{Gemm: 5, BiasAct: 2, Loss: 1, LossGrad: 1, ActGrad: 1, SumRows: 1}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d %v steps, want %d; steps:\n%s", count[k], k, n, stepList(p))
		}
	}
	if len(p.Steps) != 11 {
		t.Errorf("%d steps, want 11:\n%s", len(p.Steps), stepList(p))
	}
	var fused int
	for _, s := range p.Steps {
		if s.Kind == BiasAct && s.Fused != nil {
			fused++
			if s.Op.Activation != ops.ReLU || s.In[1] == None || s.Out[0] == None || s.Out[1] == None {
				t.Errorf("fused step %v: want relu with a bias, writing z and y", s)
			}
		}
	}
	if fused != 1 {
		t.Errorf("%d fused bias+activation steps, want 1", fused)
	}
	// Flatten makes no step: x and its flat view share a buffer.
	xb, _ := p.BufferOf(m.x)
	if b := p.Buffers[xb]; b.Role != Input || b.Elems != 4*6 {
		t.Errorf("x's buffer is %+v", b)
	}
	for i, l := range m.learnables() {
		if p.Grads[i] == None {
			t.Errorf("no gradient buffer for %s", l.Name())
			continue
		}
		if got, want := p.Buffers[p.Grads[i]].Elems, l.Shape().TotalSize(); got != want {
			t.Errorf("gradient of %s has %d values, want %d", l.Name(), got, want)
		}
	}
	if len(p.Reads) != 2 {
		t.Errorf("%d reads, want 2", len(p.Reads))
	}
	// A step only reads buffers that are inputs, weights, constants or
	// written by an earlier step.
	written := map[int]bool{}
	for b, buf := range p.Buffers {
		written[b] = buf.Role != Temp
	}
	for i, s := range p.Steps {
		for _, b := range s.In {
			if b != None && !written[b] {
				t.Errorf("step %d %v reads buffer %d before any step writes it", i, s, b)
			}
		}
		for _, b := range s.Out {
			if b != None {
				written[b] = true
			}
		}
	}
}

func stepList(p *Plan) string {
	var b strings.Builder
	for i, s := range p.Steps {
		b.WriteString("  ")
		b.WriteString(string(rune('0' + i%10)))
		b.WriteString(" ")
		b.WriteString(s.String())
		b.WriteString("\n")
	}
	return b.String()
}

func TestCompileRejects(t *testing.T) {
	t.Run("gorgonia op", func(t *testing.T) {
		g := gorgonia.NewGraph()
		a := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("a"))
		b := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("b"))
		if _, err := gorgonia.Sub(a, b); err != nil {
			t.Fatal(err)
		}
		_, err := Compile(g, nil, Capabilities{})
		if err == nil || !strings.Contains(err.Error(), "-") || !strings.Contains(err.Error(), "has no kernel") || !errors.Is(err, ErrUnsupported) {
			t.Errorf("Compile of a gorgonia Sub: %v; want an error naming the op", err)
		}
	})
	t.Run("float64", func(t *testing.T) {
		g := gorgonia.NewGraph()
		a := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("a"))
		if _, err := ops.Activate(ops.ReLU, a); err != nil {
			t.Fatal(err)
		}
		_, err := Compile(g, nil, Capabilities{})
		if err == nil || !strings.Contains(err.Error(), "float32 only") || !strings.Contains(err.Error(), `"a"`) {
			t.Errorf("Compile of a float64 graph: %v; want an error naming the node and float32", err)
		}
	})
	t.Run("learnable not in graph", func(t *testing.T) {
		g := gorgonia.NewGraph()
		gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("a"))
		other := gorgonia.NewMatrix(gorgonia.NewGraph(), tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("w"))
		if _, err := Compile(g, []*gorgonia.Node{other}, Capabilities{}); err == nil || !strings.Contains(err.Error(), `"w"`) {
			t.Errorf("Compile with a foreign learnable: %v", err)
		}
	})
}

// TestMachineMatchesTapeMachine runs each model on the plan machine (host
// backend) and on gorgonia's tape machine, and compares the loss, the
// output and every gradient.
func TestMachineMatchesTapeMachine(t *testing.T) {
	specs := []modelSpec{
		{hidden: ops.ReLU, out: ops.Sigmoid, loss: ops.SigmoidCrossEntropy, fromLogits: true, batch: 4},
		{hidden: ops.Tanh, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 5},
		{hidden: ops.Sigmoid, out: ops.Softmax, loss: ops.SparseSoftmaxCrossEntropy, fromLogits: true, batch: 3},
		{hidden: ops.ReLU, out: ops.Softmax, loss: ops.CategoricalCrossentropy, batch: 4},
		{hidden: ops.Linear, out: ops.Softmax, loss: ops.SparseCategoricalCrossentropy, batch: 4},
		{hidden: ops.ReLU, out: ops.Sigmoid, loss: ops.BinaryCrossentropy, batch: 2},
		{hidden: ops.Tanh, out: ops.Linear, loss: ops.MeanSquaredError, batch: 6},
		{hidden: ops.Softmax, out: ops.Tanh, loss: ops.MeanSquaredError, batch: 3},
	}
	for _, spec := range specs {
		name := spec.hidden.String() + "/" + spec.out.String() + "/" + spec.loss.String()
		t.Run(name, func(t *testing.T) {
			v := newValues(spec, 42)
			ref := buildModel(t, spec, v, true)
			tm := gorgonia.NewTapeMachine(ref.g, gorgonia.BindDualValues(ref.learnables()...))
			defer tm.Close()
			if err := tm.RunAll(); err != nil {
				t.Fatal(err)
			}
			got := buildModel(t, spec, v, true)
			m := hostMachine(t, got.g, got.learnables())
			for run := 0; run < 2; run++ { // a second run must not accumulate anything
				if err := m.RunAll(); err != nil {
					t.Fatal(err)
				}
				m.Reset()
			}
			compare(t, "loss", scalar(t, got.lossRead), scalar(t, ref.lossRead))
			compareSlices(t, "output", got.outRead.(*tensor.Dense).Data().([]float32), ref.outRead.(*tensor.Dense).Data().([]float32))
			for i, l := range got.learnables() {
				gg, err := l.Grad()
				if err != nil {
					t.Fatal(err)
				}
				rg, err := ref.learnables()[i].Grad()
				if err != nil {
					t.Fatal(err)
				}
				compareSlices(t, "gradient of "+l.Name(), gg.Data().([]float32), rg.Data().([]float32))
			}
		})
	}
}

func TestInferenceGraph(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 4}
	v := newValues(spec, 3)
	got := buildModel(t, spec, v, false)
	p, err := Compile(got.g, nil, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		if s.Kind == LossGrad || s.Kind == ActGrad || s.Kind == SumRows {
			t.Errorf("an inference graph has a %v step", s)
		}
	}
	m, err := New(p, newHostBackend(&hostDevice{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	ref := buildModel(t, spec, v, false)
	tm := gorgonia.NewTapeMachine(ref.g)
	defer tm.Close()
	if err := tm.RunAll(); err != nil {
		t.Fatal(err)
	}
	compareSlices(t, "output", got.outRead.(*tensor.Dense).Data().([]float32), ref.outRead.(*tensor.Dense).Data().([]float32))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.RunAll(); err == nil {
		t.Error("RunAll after Close succeeded")
	}
}

func TestTargetErrorNamesTheSample(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SparseSoftmaxCrossEntropy, fromLogits: true, batch: 4}
	v := newValues(spec, 5)
	v.y[2] = 1.5
	m := buildModel(t, spec, v, true)
	p, err := Compile(m.g, m.learnables(), Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	mc, err := New(p, newHostBackend(&hostDevice{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = mc.RunAll()
	want := "sparse_softmax_cross_entropy_with_logits: target of sample 2 is 1.5, but it must be a class index in [0, 3)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("RunAll with a bad label: %v; want %q", err, want)
	}
}

// failingDevice runs out of memory after a few allocations, to check New
// frees what it allocated and closes the backend.
type failingDevice struct {
	hostDevice
	left int
}

func (f *failingDevice) Alloc(n int) (Mem, error) {
	if f.left == 0 {
		return nil, errors.New("no memory")
	}
	f.left--
	return f.hostDevice.Alloc(n)
}

type failingBackend struct {
	*hostBackend
	dev *failingDevice
}

func (f failingBackend) Device() Device { return f.dev }

func TestNewClosesOnError(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 2}
	m := buildModel(t, spec, newValues(spec, 1), true)
	p, err := Compile(m.g, m.learnables(), Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	dev := &failingDevice{left: 3}
	be := failingBackend{hostBackend: newHostBackend(&dev.hostDevice), dev: dev}
	if _, err := New(p, be, nil, nil); err == nil || !strings.Contains(err.Error(), "no memory") {
		t.Errorf("New: %v", err)
	}
	if !be.closed {
		t.Error("New did not close the backend after failing")
	}
	if dev.live != 0 {
		t.Errorf("%d allocations left after New failed", dev.live)
	}
}

func scalar(t *testing.T, v gorgonia.Value) float64 {
	t.Helper()
	switch s := v.(type) {
	case *gorgonia.F32:
		return float64(*s)
	case *gorgonia.F64:
		return float64(*s)
	}
	t.Fatalf("%T is not a scalar", v)
	return 0
}

const tol = 1e-5

func close(a, b float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func compare(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !close(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func compareSlices(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !close(float64(got[i]), float64(want[i])) {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
			return
		}
	}
}

// TestAddIsRecognised checks that gorgonia's addition, which its
// differentiation inserts to sum gradients, is what isAdd recognises, and
// its other elementwise operations are not.
func TestAddIsRecognised(t *testing.T) {
	g := gorgonia.NewGraph()
	a := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("a"))
	b := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("b"))
	sum, err := gorgonia.Add(a, b)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := gorgonia.Sub(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !isAdd(sum.Op()) {
		t.Errorf("gorgonia.Add's op %v (%T) is not recognised", sum.Op(), sum.Op())
	}
	if isAdd(diff.Op()) {
		t.Errorf("gorgonia.Sub's op %v is taken for an addition", diff.Op())
	}
}

// hostMachine compiles g with learnables for the host backend, without
// fusions, and binds it to a machine that the test closes at its end.
func hostMachine(t *testing.T, g *gorgonia.ExprGraph, learnables []*gorgonia.Node) *Machine {
	t.Helper()
	p, err := Compile(g, learnables, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(p, newHostBackend(&hostDevice{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
