package plan

import (
	"errors"
	"testing"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// weights are host tensors shared by several graphs, as nn's layers share
// theirs with every program of a model.
type weights struct{ w1, b1, w2 *tensor.Dense }

func newWeights(v values) weights {
	return weights{
		w1: tensor.New(tensor.WithShape(6, 5), tensor.WithBacking(clone(v.w1))),
		b1: tensor.New(tensor.WithShape(5), tensor.WithBacking(clone(v.b1))),
		w2: tensor.New(tensor.WithShape(5, classes), tensor.WithBacking(clone(v.w2))),
	}
}

func (w weights) data() [][]float32 {
	return [][]float32{w.w1.Data().([]float32), w.b1.Data().([]float32), w.w2.Data().([]float32)}
}

// sharedModel builds a graph like buildModel's whose weights are w, with
// its own batch of the given size; train adds the gradients.
func sharedModel(t *testing.T, spec modelSpec, w weights, batch int, seed uint64, train bool) *model {
	t.Helper()
	spec.batch = batch
	v := newValues(spec, seed)
	m := buildModel(t, spec, v, false)
	// Rebind the weights to the shared tensors before the gradients exist.
	for _, p := range []struct {
		n *gorgonia.Node
		t *tensor.Dense
	}{{m.w1, w.w1}, {m.b1, w.b1}, {m.w2, w.w2}} {
		if err := gorgonia.Let(p.n, p.t); err != nil {
			t.Fatal(err)
		}
	}
	if train {
		if _, err := gorgonia.Grad(m.loss, m.learnables()...); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestTrainMatchesHostOptimizer trains with Machine.Train, alternating two
// machines of different batch sizes that share the weights and the
// optimizer's slots through one driver.State, and compares every step with
// gorgonia's tape machine plus package optim on the host.
func TestTrainMatchesHostOptimizer(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true}
	rules := []struct {
		name string
		opt  func() (optim.Optimizer, error)
	}{
		{"sgd", func() (optim.Optimizer, error) { return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1}) }},
		{"momentum", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
		}},
		{"nesterov", func() (optim.Optimizer, error) {
			return optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9, Nesterov: true})
		}},
		{"adam", func() (optim.Optimizer, error) { return optim.NewAdam(optim.AdamConfig{LearningRate: 0.01}) }},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			v := newValues(modelSpec{loss: spec.loss, batch: 1}, 1)
			devW, refW := newWeights(v), newWeights(v)
			dev := &hostDevice{}
			state := driver.NewState()
			devOpt, err := r.opt()
			if err != nil {
				t.Fatal(err)
			}
			var machines []*Machine
			var gpuModels, refModels []*model
			var tapes []gorgonia.VM
			for i, batch := range []int{4, 3} {
				gm := sharedModel(t, spec, devW, batch, uint64(10+i), true)
				p, err := Compile(gm.g, gm.learnables(), Capabilities{})
				if err != nil {
					t.Fatal(err)
				}
				mc, err := New(p, newHostBackend(dev), state, devOpt.Slot)
				if err != nil {
					t.Fatal(err)
				}
				machines, gpuModels = append(machines, mc), append(gpuModels, gm)
				rm := sharedModel(t, spec, refW, batch, uint64(10+i), true)
				refModels = append(refModels, rm)
				tapes = append(tapes, gorgonia.NewTapeMachine(rm.g, gorgonia.BindDualValues(rm.learnables()...)))
			}
			opt, err := r.opt()
			if err != nil {
				t.Fatal(err)
			}
			names := []string{"w1", "b1", "w2"}
			for step := 0; step < 6; step++ {
				k := step % 2
				if err := machines[k].Train(devOpt.NextUpdate()); err != nil {
					t.Fatal(err)
				}
				devOpt.Advance()
				rm := refModels[k]
				if err := tapes[k].RunAll(); err != nil {
					t.Fatal(err)
				}
				vars := make([]optim.Variable, 3)
				for i, l := range rm.learnables() {
					g, err := l.Grad()
					if err != nil {
						t.Fatal(err)
					}
					vars[i] = optim.Variable{Name: names[i], Value: refW.data()[i], Grad: g.Data().([]float32)}
				}
				if err := opt.Apply(vars); err != nil {
					t.Fatal(err)
				}
				for _, vr := range vars {
					clear(vr.Grad)
				}
				tapes[k].Reset()
				compare(t, "loss", scalar(t, gpuModels[k].lossRead), scalar(t, rm.lossRead))
				// The weights stay on the device: bring them back, as nn does.
				if err := state.Sync(); err != nil {
					t.Fatal(err)
				}
				for i := range names {
					compareSlices(t, names[i]+" after step", devW.data()[i], refW.data()[i])
					for _, slot := range optim.SlotNames(opt) {
						n := len(refW.data()[i])
						got, err := devOpt.Slot(names[i], slot, n)
						if err != nil {
							t.Fatal(err)
						}
						want, err := opt.Slot(names[i], slot, n)
						if err != nil {
							t.Fatal(err)
						}
						compareSlices(t, names[i]+" slot "+slot, got, want)
					}
				}
				if t.Failed() {
					t.Fatalf("step %d", step)
				}
			}
			for _, tm := range tapes {
				tm.Close()
			}
			for _, mc := range machines {
				if err := mc.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if err := state.Close(); err != nil {
				t.Fatal(err)
			}
			if dev.live != 0 {
				t.Errorf("%d device allocations left after closing the machines and the state", dev.live)
			}
		})
	}
}

// TestWeightsStayOnDeviceUntilSync: Train leaves the host copies alone, an inference graph of the same model reads the
// device's weights, and State.Sync brings them back.
func TestWeightsStayOnDeviceUntilSync(t *testing.T) {
	spec := modelSpec{hidden: ops.Tanh, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true}
	v := newValues(modelSpec{loss: spec.loss, batch: 1}, 2)
	w := newWeights(v)
	before := clone(w.w1.Data().([]float32))
	dev := &hostDevice{}
	state := driver.NewState()
	defer state.Close()

	tm := sharedModel(t, spec, w, 4, 20, true)
	p, err := Compile(tm.g, tm.learnables(), Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	trainer, err := New(p, newHostBackend(dev), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer trainer.Close()
	for i := 0; i < 3; i++ {
		if err := trainer.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.5, Iteration: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.w1.Data().([]float32); got[0] != before[0] {
		t.Fatalf("Train wrote the host copy before any Sync: %v -> %v", before[0], got[0])
	}

	// An inference graph (no learnables: weights are inputs) sees the
	// trained weights, not the stale host copy.
	im := sharedModel(t, spec, w, 5, 21, false)
	ip, err := Compile(im.g, nil, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	be := newHostBackend(dev)
	infer, err := New(ip, be, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer infer.Close()
	if err := infer.RunAll(); err != nil {
		t.Fatal(err)
	}
	if n := be.uploads[&w.w1.Data().([]float32)[0]]; n != 0 {
		t.Errorf("the inference machine uploaded the stale w1 %d times", n)
	}
	onDevice := clone(im.outRead.(*tensor.Dense).Data().([]float32))

	if err := state.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := w.w1.Data().([]float32); got[0] == before[0] {
		t.Fatal("State.Sync did not bring the trained weights back")
	}
	// Synced, the device copy still is current: inference goes on using
	// it, with no copy of the weights for each batch.
	if err := infer.RunAll(); err != nil {
		t.Fatal(err)
	}
	if n := be.uploads[&w.w1.Data().([]float32)[0]]; n != 0 {
		t.Errorf("after a Sync the inference machine uploaded w1 %d times", n)
	}
	compareSlices(t, "outputs after the Sync", im.outRead.(*tensor.Dense).Data().([]float32), onDevice)
	// With the host copy current, a fresh inference graph on a state of
	// its own (so it uploads from the host) gives the same outputs.
	fresh := sharedModel(t, spec, w, 5, 21, false)
	fm := hostMachine(t, fresh.g, nil)
	if err := fm.RunAll(); err != nil {
		t.Fatal(err)
	}
	compareSlices(t, "outputs from the synced host weights", fresh.outRead.(*tensor.Dense).Data().([]float32), onDevice)
}

func TestTrainUnsupported(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 2}
	v := newValues(spec, 3)
	im := buildModel(t, spec, v, false)
	m := hostMachine(t, im.g, nil)
	if err := m.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: 1}); !errors.Is(err, driver.ErrUpdateUnsupported) {
		t.Errorf("Train on an inference graph: %v, want ErrUpdateUnsupported", err)
	}
	tm := buildModel(t, spec, v, true)
	m2 := hostMachine(t, tm.g, tm.learnables())
	if err := m2.Train(optim.Update{Rule: optim.Rule(42), LearningRate: 0.1}); !errors.Is(err, optim.ErrUnknownRule) {
		t.Errorf("Train with an unknown rule: %v, want ErrUpdateUnsupported", err)
	}
	if err := m2.Train(optim.Update{Rule: optim.RuleAdam, LearningRate: 0.1}); err == nil {
		t.Error("Train with Adam at step 0 succeeded")
	}

}

// TestTrainLearnablesInAnyOrder gives Compile the weights in an order of
// its own, not the graph's: every update must still pair each weight with
// its own gradient.
func TestTrainLearnablesInAnyOrder(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 4}
	v := newValues(spec, 4)
	got, ref := buildModel(t, spec, v, false), buildModel(t, spec, v, false)
	order := func(m *model) []*gorgonia.Node { return []*gorgonia.Node{m.w2, m.b1, m.w1} }
	for _, m := range []*model{got, ref} {
		if _, err := gorgonia.Grad(m.loss, order(m)...); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Compile(got.g, order(got), Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	state := driver.NewState()
	defer state.Close()
	mc, err := New(p, newHostBackend(&hostDevice{}), state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if err := mc.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.5, Iteration: 1}); err != nil {
		t.Fatal(err)
	}
	if err := state.Sync(); err != nil {
		t.Fatal(err)
	}
	tape := gorgonia.NewTapeMachine(ref.g, gorgonia.BindDualValues(order(ref)...))
	defer tape.Close()
	if err := tape.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i, l := range order(ref) {
		g, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		w := clone(l.Value().Data().([]float32))
		for j, d := range g.Data().([]float32) {
			w[j] -= 0.5 * d
		}
		compareSlices(t, l.Name()+" after one step", order(got)[i].Value().Data().([]float32), w)
	}
}

// TestStartTrainProtocol: StartTrain and FinishTrain pair up, two steps
// at most are started, and no other run comes between.
func TestStartTrainProtocol(t *testing.T) {
	spec := modelSpec{hidden: ops.ReLU, out: ops.Softmax, loss: ops.SoftmaxCrossEntropy, fromLogits: true, batch: 2}
	tm := buildModel(t, spec, newValues(spec, 3), true)
	m := hostMachine(t, tm.g, tm.learnables())
	if m.Pipelines() {
		t.Error("a machine on a backend that runs each step at once says it pipelines")
	}
	u := optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: 1}
	if err := m.FinishTrain(); err == nil {
		t.Error("FinishTrain with no step started succeeded")
	}
	for i := range 2 {
		if err := m.StartTrain(u); err != nil {
			t.Fatalf("StartTrain %d: %v", i+1, err)
		}
	}
	if err := m.StartTrain(u); err == nil {
		t.Error("a third StartTrain succeeded")
	}
	if err := m.RunAll(); err == nil {
		t.Error("RunAll with started steps succeeded")
	}
	if err := m.Train(u); err == nil {
		t.Error("Train with started steps succeeded")
	}
	for i := range 2 {
		if err := m.FinishTrain(); err != nil {
			t.Fatalf("FinishTrain %d: %v", i+1, err)
		}
	}
	if err := m.Train(u); err != nil {
		t.Errorf("Train once the started steps finished: %v", err)
	}
}
