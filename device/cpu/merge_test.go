package cpu_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/cpu"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
)

// TestMergeOpsTrainLikeTheTapeMachine trains opstest.MergeGraph (every
// merge op, forward and backward, broadcasts on either side) with the CPU
// machine's Train, on the plan (no fallback to the tape machine), and on
// the reference tape machine plus optim, from the same values: the same
// loss and weights after each of 20 steps of momentum.
func TestMergeOpsTrainLikeTheTapeMachine(t *testing.T) {
	trainsLikeTheTapeMachine(t, func() testGraph {
		m, err := opstest.BuildMergeGraph(4, 8)
		if err != nil {
			t.Fatal(err)
		}
		return testGraph{m.G, m.Learnables, &m.LossValue}
	})
}

// TestResizeOpsTrainLikeTheTapeMachine: the same of opstest.ResizeGraph
// (Pad2D, UpSample2D, Crop2D and their gradients).
func TestResizeOpsTrainLikeTheTapeMachine(t *testing.T) {
	trainsLikeTheTapeMachine(t, func() testGraph {
		m, err := opstest.BuildResizeGraph(4, 8)
		if err != nil {
			t.Fatal(err)
		}
		return testGraph{m.G, m.Learnables, &m.LossValue}
	})
}

// TestPermuteTrainsLikeTheTapeMachine: the same of opstest.PermuteGraph
// (a batch of transposes, another permutation and their gradients).
func TestPermuteTrainsLikeTheTapeMachine(t *testing.T) {
	trainsLikeTheTapeMachine(t, func() testGraph {
		m, err := opstest.BuildPermuteGraph(4, 8)
		if err != nil {
			t.Fatal(err)
		}
		return testGraph{m.G, m.Learnables, &m.LossValue}
	})
}

// testGraph is an opstest graph: its learnables and where it reads its
// loss.
type testGraph struct {
	G          *gorgonia.ExprGraph
	Learnables []*gorgonia.Node
	LossValue  *gorgonia.Value
}

// trainsLikeTheTapeMachine trains two graphs mk makes, one with the CPU
// machine's Train on the plan, one on the tape machine plus optim, 20
// steps of momentum, and requires the same losses and weights.
func trainsLikeTheTapeMachine(t *testing.T, mk func() testGraph) {
	t.Helper()
	var warnings strings.Builder
	defer cpu.SetFallbackWarnings(&warnings)()
	fused, host := mk(), mk()
	newOpt := func() optim.Optimizer {
		o, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05, Momentum: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	devOpt, hostOpt := newOpt(), newOpt()
	st := driver.NewState()
	defer st.Close()
	fm, err := device.NewMachine(cpuSpec(t), fused.G, driver.MachineOptions{Learnables: fused.Learnables, State: st, Slots: devOpt.Slot})
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	if warnings.Len() > 0 {
		t.Fatalf("the graph fell back to the tape machine: %s", warnings.String())
	}
	hm, err := device.NewMachine(cpuSpec(t), host.G, driver.MachineOptions{Learnables: host.Learnables, Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hm.Close()
	var first, last float64
	for step := 1; step <= 20; step++ {
		if err := fm.(driver.Trainer).Train(devOpt.NextUpdate()); err != nil {
			t.Fatal(err)
		}
		devOpt.Advance()
		if err := hm.RunAll(); err != nil {
			t.Fatal(err)
		}
		var vars []optim.Variable
		for _, n := range host.Learnables {
			g, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			vars = append(vars, optim.Variable{Name: n.Name(), Value: n.Value().Data().([]float32), Grad: g.Data().([]float32)})
		}
		if err := hostOpt.Apply(vars); err != nil {
			t.Fatal(err)
		}
		for _, v := range vars {
			clear(v.Grad)
		}
		fm.Reset()
		hm.Reset()
		a, b := lossOf(t, *fused.LossValue), lossOf(t, *host.LossValue)
		if math.Abs(a-b) > 1e-5*math.Abs(b) {
			t.Fatalf("step %d: loss %v with Train, %v on the tape machine", step, a, b)
		}
		if step == 1 {
			first = b
		}
		last = b
		if err := st.Sync(); err != nil {
			t.Fatal(err)
		}
		for i, n := range fused.Learnables {
			got, want := n.Value().Data().([]float32), host.Learnables[i].Value().Data().([]float32)
			for j := range want {
				if math.Abs(float64(got[j]-want[j])) > 1e-5*(1+math.Abs(float64(want[j]))) {
					t.Fatalf("step %d: %s[%d] = %v after Train, %v after optim", step, n.Name(), j, got[j], want[j])
				}
			}
		}
	}
	if !(last < first) {
		t.Errorf("the loss did not fall: %v -> %v", first, last)
	}
}

func lossOf(t *testing.T, v gorgonia.Value) float64 {
	t.Helper()
	f, ok := v.(*gorgonia.F32)
	if !ok {
		t.Fatalf("loss read back as %T", v)
	}
	return float64(*f)
}
