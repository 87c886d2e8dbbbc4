package plan

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// countDevice is a hostDevice that counts the float32s it allocated.
type countDevice struct {
	hostDevice
	floats int
}

func (d *countDevice) Alloc(n int) (Mem, error) {
	d.floats += n
	return d.hostDevice.Alloc(n)
}

// subDevice is a countDevice that hands out parts of its memory
// (SubMemory), so that machines on it share activations.
type subDevice struct{ countDevice }

func (d *subDevice) Sub(m Mem, off, n int) Mem { return m.([]float32)[off : off+n : off+n] }

// onDevice is a hostBackend on another device, whose steps first fill
// their results with NaN, as a kernel may write its output before it has
// read all its operands: a step whose output shares memory with an
// operand then computes NaN, whatever order the host kernel reads and
// writes in. (An output that is also an operand, a BiasAct's, is kept.)
type onDevice struct {
	*hostBackend
	dev Device
}

func (b onDevice) Device() Device { return b.dev }

func (b onDevice) Exec(i int, s *Step, mems []Mem) error {
	for _, o := range s.Out {
		if o >= 0 && !slices.Contains(s.In, o) {
			for j := range mems[o].([]float32) {
				mems[o].([]float32)[j] = float32(math.NaN())
			}
		}
	}
	return b.hostBackend.Exec(i, s, mems)
}

// hostBackendOn is a hostBackend on d, a *countDevice or a *subDevice.
func hostBackendOn(d Device) Backend {
	switch d := d.(type) {
	case *subDevice:
		return onDevice{newHostBackend(&d.hostDevice), d}
	case *countDevice:
		return onDevice{newHostBackend(&d.hostDevice), d}
	}
	panic("hostBackendOn: not a counting device")
}

// convNet is a small convolutional network built as nn builds one: two
// convolutions (Patches, then Affine with the kernel) with ReLU, a max
// pooling between them, a dense layer and softmax cross-entropy, with
// its gradients.
type convNet struct {
	g        *gorgonia.ExprGraph
	params   []*gorgonia.Node
	loss     *gorgonia.Node
	lossRead gorgonia.Value
	x, y     *tensor.Dense
	weights  [][]float32
}

func newConvNet(t *testing.T, seed uint64) *convNet {
	t.Helper()
	const batch, hw, c, f1, f2, classes = 4, 8, 2, 4, 3, 3
	rng := rand.New(rand.NewPCG(seed, 3))
	fill := func(n int, scale float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(scale * rng.NormFloat64())
		}
		return s
	}
	n := &convNet{g: gorgonia.NewGraph()}
	mk := func(name string, data []float32, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(n.g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))))
	}
	must := func(x *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := mk("x", fill(batch*hw*hw*c, 1), batch, hw, hw, c)
	labels := make([]float32, batch*classes)
	for r := range batch {
		labels[r*classes+rng.IntN(classes)] = 1
	}
	y := mk("y", labels, batch, classes)
	k1, b1 := mk("k1", fill(9*c*f1, 0.3), 9*c, f1), mk("b1", fill(f1, 0.1), f1)
	k2, b2 := mk("k2", fill(9*f1*f2, 0.3), 9*f1, f2), mk("b2", fill(f2, 0.1), f2)
	w3 := mk("w3", fill(4*4*f2*classes, 0.3), 4*4*f2, classes)
	same := ops.WindowSpec{Kernel: [2]int{3, 3}, Same: true}
	h := must(ops.Patches(x, same, false))
	h = must(ops.Activate(ops.ReLU, must(ops.Affine(h, k1, b1, true))))
	h = must(ops.Reshape(h, []int{batch, hw, hw, f1}, true))
	h = must(ops.Pool(h, ops.MaxPool, ops.WindowSpec{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}}, true))
	h = must(ops.Patches(h, same, true))
	h = must(ops.Activate(ops.ReLU, must(ops.Affine(h, k2, b2, true))))
	h = must(ops.Reshape(h, []int{batch, 4 * 4 * f2}, true))
	z := must(ops.Affine(h, w3, nil, true))
	n.loss = must(ops.Loss(ops.SoftmaxCrossEntropy, z, y))
	gorgonia.Read(n.loss, &n.lossRead)
	n.params = []*gorgonia.Node{k1, b1, k2, b2, w3}
	if _, err := gorgonia.Grad(n.loss, n.params...); err != nil {
		t.Fatal(err)
	}
	for _, p := range n.params {
		n.weights = append(n.weights, p.Value().Data().([]float32))
	}
	return n
}

// trainConv trains a fresh convNet for a few SGD steps on dev and returns
// the losses and the final weights, with the machine's memory.
func trainConv(t *testing.T, dev Device) ([]float32, [][]float32, Memory, *Machine) {
	return trainConvWith(t, hostBackendOn(dev), Capabilities{})
}

// trainConvWith is trainConv on backend b, compiled with caps.
func trainConvWith(t *testing.T, b Backend, caps Capabilities) ([]float32, [][]float32, Memory, *Machine) {
	t.Helper()
	n := newConvNet(t, 1)
	p, err := Compile(n.g, n.params, caps)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(p, b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	var losses []float32
	for it := range 3 {
		if err := m.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: int64(it + 1)}); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, float32(scalar(t, n.lossRead)))
	}
	if err := m.RunAll(); err != nil { // the forward-only list, with the gradients copied out
		t.Fatal(err)
	}
	losses = append(losses, float32(scalar(t, n.lossRead)))
	for _, l := range n.params {
		losses = append(losses, l.Deriv().Value().(*tensor.Dense).Data().([]float32)...)
	}
	var w [][]float32
	for _, d := range n.weights {
		w = append(w, slices.Clone(d))
	}
	return losses, w, m.Memory(), m
}

// TestConvSharesActivations trains a convolutional network with its
// activations shared and apart: the losses, the gradients RunAll copies
// out and the weights are the same bit for bit, and the shared machine
// allocates less.
func TestConvSharesActivations(t *testing.T) {
	apart, shared := &countDevice{}, &subDevice{}
	want, wantW, memApart, _ := trainConv(t, apart)
	got, gotW, mem, m := trainConv(t, shared)
	if m.layout == nil || m.unshared || mem.Shared == 0 {
		t.Fatalf("nothing shared: layout %v, unshared %v, %d buffers shared", m.layout != nil, m.unshared, mem.Shared)
	}
	if !slices.Equal(got, want) {
		t.Errorf("losses and gradients differ with sharing:\n%v\nwant %v", got, want)
	}
	for i := range wantW {
		if !slices.Equal(gotW[i], wantW[i]) {
			t.Errorf("weight %d differs with sharing", i)
		}
	}
	// Both allocate the weights too, which Memory does not count.
	if shared.floats >= apart.floats || 4*int64(apart.floats-shared.floats) != memApart.Allocated-mem.Allocated || memApart.Allocated != mem.Unshared {
		t.Errorf("allocated %d float32s shared (Memory: %d bytes), %d apart (Memory: %d bytes): want fewer shared", shared.floats, mem.Allocated, apart.floats, memApart.Allocated)
	}
	t.Logf("%d buffers, %d shared in an arena of %d bytes; the machine allocated %d bytes shared, %d apart",
		mem.Buffers, mem.Shared, mem.Arena, 4*shared.floats, 4*apart.floats)
}

// TestLayoutHoldsForEveryList checks the layout of a convolutional
// network compiled with the CPU's fusions against every list of steps a
// machine runs: RunAll's, and the training lists with fused updates (a
// GradUpdate placed after the steps that read its weight), without, with
// a global clipnorm, reduced and overlapped.
func TestLayoutHoldsForEveryList(t *testing.T) {
	n := newConvNet(t, 1)
	fuses := func(s *Step, u optim.Update) bool {
		return (s.Kind == Gemm && s.Op.TransA && !s.Op.TransB) || s.Kind == SumRows
	}
	p, err := Compile(n.g, n.params, Capabilities{BiasInGemm: true, FusedUpdate: fuses})
	if err != nil {
		t.Fatal(err)
	}
	l := shareLayout(p)
	if l.size >= l.unshared {
		t.Fatalf("arena of %d values for %d: nothing shared", l.size, l.unshared)
	}
	sgd := optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1}
	adam := optim.Update{Rule: optim.RuleAdam, LearningRate: 0.1, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}
	clip := sgd
	clip.GlobalClipNorm = 1
	lists := map[string]func() ([]Step, error){
		"RunAll":             func() ([]Step, error) { return p.Steps, nil },
		"sgd, fused":         func() ([]Step, error) { return p.TrainingSteps(sgd) },
		"adam":               func() ([]Step, error) { return p.TrainingSteps(adam) },
		"global clipnorm":    func() ([]Step, error) { return p.TrainingSteps(clip) },
		"reduced":            func() ([]Step, error) { return p.ReducedTrainingSteps(sgd) },
		"overlapped, 1-byte": func() ([]Step, error) { return p.OverlappedTrainingSteps(sgd, 1, 1) },
	}
	fused := false
	for name, list := range lists {
		steps, err := list()
		if err != nil {
			t.Fatal(name, err)
		}
		for _, s := range steps {
			fused = fused || s.Kind == GradUpdate
		}
		if err := l.check(p, steps); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !fused {
		t.Error("no list folded an update into its gradient's step: the test lost its point")
	}
}

// TestLayoutOneStepShortFails is the control of the lifetimes: with every
// lifetime computed one step too short, the layout's check refuses it for
// RunAll's steps and the training steps, and a machine made to run it
// anyway (checks off) trains differently from one whose buffers are all
// apart, where the right layout trains the same bit for bit
// (TestConvSharesActivations).
func TestLayoutOneStepShortFails(t *testing.T) {
	n := newConvNet(t, 1)
	p, err := Compile(n.g, n.params, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	short := func(p *Plan) *layout {
		life := p.lifetimes()
		for b := range life {
			if life[b].last > life[b].first {
				life[b].last--
			}
		}
		return p.pack(life)
	}
	train, err := p.TrainingSteps(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	for name, steps := range map[string][]Step{"RunAll": p.Steps, "training": train} {
		if err := shareLayout(p).check(p, steps); err != nil {
			t.Fatalf("%s: the right layout fails its check: %v", name, err)
		}
		err := short(p).check(p, steps)
		if err == nil {
			t.Fatalf("%s: the layout of lifetimes one step short passes its check", name)
		}
		t.Logf("%s, lifetimes one step short: %v", name, err)
	}

	want, _, _, _ := trainConv(t, &countDevice{})
	defer func(f func(*Plan) *layout, c bool) { shareLayout, checkLayouts = f, c }(shareLayout, checkLayouts)
	shareLayout, checkLayouts = short, false
	got, _, _, m := trainConv(t, &subDevice{})
	if m.layout == nil {
		t.Fatal("the machine shares nothing")
	}
	if slices.Equal(got, want) {
		t.Error("lifetimes one step short train like buffers apart: the test cannot tell a wrong layout")
	}
}

// TestShareAgainstFallsBack checks the machine's guard: when its layout
// does not hold for a list of steps it is about to run (here RunAll's
// steps backwards, which read every buffer before writing it), every
// shared buffer gets memory of its own, and the machine then trains as
// one whose buffers were always apart.
func TestShareAgainstFallsBack(t *testing.T) {
	want, _, _, _ := trainConv(t, &countDevice{})
	dev := &subDevice{}
	n := newConvNet(t, 1)
	p, err := Compile(n.g, n.params, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(p, hostBackendOn(dev), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.layout == nil {
		t.Fatal("nothing shared")
	}
	before := dev.floats
	backwards := slices.Clone(p.Steps)
	slices.Reverse(backwards)
	if err := m.shareAgainst(backwards); err != nil {
		t.Fatal(err)
	}
	if m.layout != nil || !m.unshared {
		t.Fatal("the machine still shares after a failed check")
	}
	if mem := m.Memory(); mem.Shared != 0 || dev.floats <= before {
		t.Fatalf("%d buffers still shared; %d float32s allocated by the fallback", mem.Shared, dev.floats-before)
	}
	var got []float32
	for it := range 3 {
		if err := m.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: int64(it + 1)}); err != nil {
			t.Fatal(err)
		}
		got = append(got, float32(scalar(t, n.lossRead)))
	}
	if !slices.Equal(got, want[:3]) {
		t.Errorf("losses %v after the fallback, want %v", got, want[:3])
	}
}
