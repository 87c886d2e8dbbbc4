package cpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/cpu"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mlp is a two-layer model graph built the way nn builds one.
type mlp struct {
	g            *gorgonia.ExprGraph
	x, y         *tensor.Dense
	params       []*gorgonia.Node
	names        []string
	out, loss    gorgonia.Value
	batch, feats int
}

// newMLP builds x (batch, 2, 3) → flatten → dense(5, relu) → dense(4,
// sigmoid), softmax cross-entropy from the logits, with the given weights.
func newMLP(t *testing.T, batch int, weights [][]float32) *mlp {
	t.Helper()
	m := &mlp{g: gorgonia.NewGraph(), batch: batch, feats: 6}
	m.x = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, 2, 3))
	m.y = tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, 4))
	x := gorgonia.NewTensor(m.g, tensor.Float32, 3, gorgonia.WithShape(batch, 2, 3), gorgonia.WithName("x"), gorgonia.WithValue(m.x))
	y := gorgonia.NewTensor(m.g, tensor.Float32, 2, gorgonia.WithShape(batch, 4), gorgonia.WithName("y"), gorgonia.WithValue(m.y))
	shapes := [][]int{{6, 5}, {5}, {5, 4}, {4}}
	for i, s := range shapes {
		name := fmt.Sprintf("w%d", i)
		v := tensor.New(tensor.WithShape(s...), tensor.WithBacking(weights[i]))
		n := gorgonia.NewTensor(m.g, tensor.Float32, len(s), gorgonia.WithShape(s...), gorgonia.WithName(name), gorgonia.WithValue(v))
		m.params = append(m.params, n)
		m.names = append(m.names, name)
	}
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	flat := must(ops.Flatten(x, false))
	h := must(ops.Activate(ops.ReLU, must(ops.Affine(flat, m.params[0], m.params[1], false))))
	z := must(ops.Affine(h, m.params[2], m.params[3], true))
	out := must(ops.Activate(ops.Sigmoid, z))
	loss := must(ops.Loss(ops.SoftmaxCrossEntropy, z, y))
	gorgonia.Read(out, &m.out)
	gorgonia.Read(loss, &m.loss)
	if _, err := gorgonia.Grad(loss, m.params...); err != nil {
		t.Fatal(err)
	}
	return m
}

func randomWeights(seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	var ws [][]float32
	for _, n := range []int{30, 5, 20, 4} {
		w := make([]float32, n)
		for i := range w {
			w[i] = rng.Float32() - 0.5
		}
		ws = append(ws, w)
	}
	return ws
}

func cloneWeights(ws [][]float32) [][]float32 {
	out := make([][]float32, len(ws))
	for i, w := range ws {
		out[i] = append([]float32(nil), w...)
	}
	return out
}

// fillBatch writes step's batch into the model's input tensors.
func (m *mlp) fillBatch(step int) {
	rng := rand.New(rand.NewPCG(uint64(step), 9))
	for i := range m.x.Data().([]float32) {
		m.x.Data().([]float32)[i] = rng.Float32()*2 - 1
	}
	y := m.y.Data().([]float32)
	clear(y)
	for r := 0; r < m.batch; r++ {
		y[r*4+rng.IntN(4)] = 1
	}
}

func (m *mlp) lossValue(t *testing.T) float64 {
	t.Helper()
	f, ok := m.loss.(*gorgonia.F32)
	if !ok {
		t.Fatalf("loss read back as %T", m.loss)
	}
	return float64(*f)
}

func cpuSpec(t *testing.T) device.Spec {
	t.Helper()
	s, err := device.ParseSpec("/CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTrainAppliesOptimizersLikeOptim runs the same 50 steps twice: Train
// with the optimizer's update as data and its slots on the device, and
// RunAll on the tape machine with the optimizer applying the update on the
// host. The losses, the weights and every slot must agree after every step.
func TestTrainAppliesOptimizersLikeOptim(t *testing.T) {
	cases := []struct {
		name string
		opt  func() (optim.Optimizer, error)
	}{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1}) }},
		{"momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
		}},
		{"nesterov", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.8, Nesterov: true})
		}},
		{"adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := randomWeights(1)
			fused, host := newMLP(t, 8, cloneWeights(start)), newMLP(t, 8, cloneWeights(start))
			devOpt, err := tc.opt()
			if err != nil {
				t.Fatal(err)
			}
			hostOpt, err := tc.opt()
			if err != nil {
				t.Fatal(err)
			}
			st := driver.NewState()
			defer st.Close()
			fm, err := device.NewMachine(cpuSpec(t), fused.g, driver.MachineOptions{Learnables: fused.params, State: st, Slots: devOpt.Slot})
			if err != nil {
				t.Fatal(err)
			}
			defer fm.Close()
			tr, ok := fm.(driver.Trainer)
			if !ok {
				t.Fatalf("the CPU machine for a model graph is a %T, not a driver.Trainer", fm)
			}
			hm, err := device.NewMachine(cpuSpec(t), host.g, driver.MachineOptions{Learnables: host.params, Reference: true})
			if err != nil {
				t.Fatal(err)
			}
			defer hm.Close()
			close := func(a, b float32) bool {
				return math.Abs(float64(a-b)) <= 1e-6*(1+math.Abs(float64(b)))
			}
			for step := 1; step <= 50; step++ {
				fused.fillBatch(step)
				host.fillBatch(step)
				if err := tr.Train(devOpt.NextUpdate()); err != nil {
					t.Fatal(err)
				}
				devOpt.Advance()
				if err := hm.RunAll(); err != nil {
					t.Fatal(err)
				}
				var vars []optim.Variable
				for i, n := range host.params {
					g, err := n.Grad()
					if err != nil {
						t.Fatal(err)
					}
					vars = append(vars, optim.Variable{Name: host.names[i], Value: n.Value().Data().([]float32), Grad: g.Data().([]float32)})
				}
				if err := hostOpt.Apply(vars); err != nil {
					t.Fatal(err)
				}
				for _, v := range vars {
					clear(v.Grad)
				}
				fm.Reset()
				hm.Reset()
				if a, b := fused.lossValue(t), host.lossValue(t); math.Abs(a-b) > 1e-5*math.Abs(b) {
					t.Fatalf("step %d: loss %v with Train, %v on the tape machine", step, a, b)
				}
				for i := range fused.params {
					got := fused.params[i].Value().Data().([]float32)
					want := host.params[i].Value().Data().([]float32)
					for j := range want {
						if !close(got[j], want[j]) {
							t.Fatalf("step %d: %s[%d] = %v after Train, %v after optim", step, host.names[i], j, got[j], want[j])
						}
					}
					for _, slot := range optim.SlotNames(hostOpt) {
						got, err := devOpt.Slot(host.names[i], slot, len(want))
						if err != nil {
							t.Fatal(err)
						}
						want, err := hostOpt.Slot(host.names[i], slot, len(want))
						if err != nil {
							t.Fatal(err)
						}
						for j := range want {
							if !close(got[j], want[j]) {
								t.Fatalf("step %d: slot %s of %s[%d] = %v after Train, %v after optim", step, slot, host.names[i], j, got[j], want[j])
							}
						}
					}
				}
			}
			if devOpt.Iterations() != 50 {
				t.Errorf("the optimizer counted %d steps, want 50", devOpt.Iterations())
			}
		})
	}
}

// TestMachinesOfOneModelShareState: the graph for the last, smaller batch
// must continue the momentum the other built up, through the optimizer's
// slots.
func TestMachinesOfOneModelShareState(t *testing.T) {
	ws := randomWeights(2)
	big, small := newMLP(t, 8, ws), newMLP(t, 3, ws) // one set of weights, two graphs
	ref := newMLP(t, 8, cloneWeights(ws))
	refSmall := newMLP(t, 3, boundWeights(ref))
	mk := func() optim.Optimizer {
		o, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	shared := mk()
	st := driver.NewState()
	defer st.Close()
	run := func(m *mlp, state *driver.State, opt optim.Optimizer, step int) {
		t.Helper()
		mach, err := device.NewMachine(cpuSpec(t), m.g, driver.MachineOptions{Learnables: m.params, State: state, Slots: opt.Slot})
		if err != nil {
			t.Fatal(err)
		}
		defer mach.Close()
		m.fillBatch(step)
		if err := mach.(driver.Trainer).Train(opt.NextUpdate()); err != nil {
			t.Fatal(err)
		}
		opt.Advance()
	}
	// One optimizer: momentum carries from the batch-8 graph to the batch-3 one.
	run(big, st, shared, 1)
	run(small, st, shared, 2)
	// Two optimizers: the batch-3 graph starts from zero momentum.
	run(ref, nil, mk(), 1)
	run(refSmall, nil, mk(), 2)
	differ := false
	for i := range big.params {
		a := small.params[i].Value().Data().([]float32)
		b := refSmall.params[i].Value().Data().([]float32)
		for j := range a {
			if a[j] != b[j] {
				differ = true
			}
		}
	}
	if !differ {
		t.Fatal("the second graph's update ignored the momentum the first graph left in the optimizer")
	}
}

// boundWeights returns the weights bound to m's graph, so a second graph shares them.
func boundWeights(m *mlp) [][]float32 {
	var ws [][]float32
	for _, p := range m.params {
		ws = append(ws, p.Value().Data().([]float32))
	}
	return ws
}

func TestTrainRejectsWhatItCannotApply(t *testing.T) {
	m := newMLP(t, 4, randomWeights(3))
	mach, err := device.NewMachine(cpuSpec(t), m.g, driver.MachineOptions{Learnables: m.params})
	if err != nil {
		t.Fatal(err)
	}
	defer mach.Close()
	m.fillBatch(1)
	err = mach.(driver.Trainer).Train(optim.Update{Rule: optim.Rule(99), LearningRate: 0.1})
	if !errors.Is(err, optim.ErrUnknownRule) {
		t.Errorf("unknown rule: %v, want an error wrapping optim.ErrUnknownRule", err)
	}
	if err := mach.(driver.Trainer).Train(optim.Update{Rule: optim.RuleAdam, LearningRate: 0.1}); err == nil {
		t.Error("Adam at iteration 0 accepted: iterations count from 1")
	}
	if err := mach.(driver.Trainer).Train(optim.Update{Rule: optim.RuleMomentum, LearningRate: 0.1, Momentum: 0.9, Iteration: 1}); err == nil {
		t.Error("momentum accepted by a machine made without the optimizer's slots")
	}
	// An inference graph has no gradients to train with.
	inf := newMLP(t, 4, randomWeights(3))
	im, err := device.NewMachine(cpuSpec(t), inf.g, driver.MachineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if err := im.(driver.Trainer).Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: 1}); !errors.Is(err, driver.ErrUpdateUnsupported) {
		t.Errorf("Train on a graph without learnables: %v, want an error wrapping ErrUpdateUnsupported", err)
	}
}

// TestOtherGraphsRunOnTheTapeMachine: a graph with gorgonia's own ops still
// runs, on the tape machine, and the fallback is announced.
func TestOtherGraphsRunOnTheTapeMachine(t *testing.T) {
	var warnings strings.Builder
	defer cpu.SetFallbackWarnings(&warnings)()
	g := gorgonia.NewGraph()
	a := gorgonia.NewTensor(g, tensor.Float32, 1, gorgonia.WithShape(3), gorgonia.WithName("a"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{1, 2, 3}))))
	sq := gorgonia.Must(gorgonia.HadamardProd(a, a))
	var v gorgonia.Value
	gorgonia.Read(sq, &v)
	mach, err := device.NewMachine(cpuSpec(t), g, driver.MachineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mach.Close()
	if err := mach.RunAll(); err != nil {
		t.Fatal(err)
	}
	if got := v.Data().([]float32); got[0] != 1 || got[1] != 4 || got[2] != 9 {
		t.Errorf("a⊙a = %v, want [1 4 9]", got)
	}
	if w := warnings.String(); !strings.Contains(w, "tape machine") || !strings.Contains(w, "⊙") {
		t.Errorf("fallback warning %q does not say the graph runs on the tape machine, naming the op", w)
	}
}

// TestGraphMachineForwardByHand checks one forward pass against values
// computed by hand, and that rebinding the input is seen.
func TestGraphMachineForwardByHand(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(2, 2), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))))
	w := gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(2, 3), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 0, -1, 0, 1, 1}))))
	b := gorgonia.NewTensor(g, tensor.Float32, 1, gorgonia.WithShape(3), gorgonia.WithName("b"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{0.5, 0, -10}))))
	z, err := ops.Affine(x, w, b, false)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ops.Activate(ops.ReLU, z)
	if err != nil {
		t.Fatal(err)
	}
	var out gorgonia.Value
	gorgonia.Read(h, &out)
	mach, err := device.NewMachine(cpuSpec(t), g, driver.MachineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mach.Close()
	if err := mach.RunAll(); err != nil {
		t.Fatal(err)
	}
	// x·w + b = [[1.5, 2, -9], [3.5, 4, -9]], relu → [[1.5, 2, 0], [3.5, 4, 0]].
	want := []float32{1.5, 2, 0, 3.5, 4, 0}
	if got := out.Data().([]float32); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("relu(x·w+b) = %v, want %v", got, want)
	}
	first := out
	if err := gorgonia.Let(x, tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{0, 0, 1, 1}))); err != nil {
		t.Fatal(err)
	}
	mach.Reset()
	if err := mach.RunAll(); err != nil {
		t.Fatal(err)
	}
	// [[0.5, 0, -10], [1.5, 1, -10]] → relu [[0.5, 0, 0], [1.5, 1, 0]], written into the same value.
	want = []float32{0.5, 0, 0, 1.5, 1, 0}
	if got := out.Data().([]float32); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after Let: %v, want %v", got, want)
	}
	if out != first {
		t.Error("the Read value was replaced, not refilled: the tape machine refills it")
	}
}
