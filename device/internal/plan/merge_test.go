package plan

import (
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/gokeras/gokeras/device/internal/opstest"
)

// TestMergeOpsMatchTapeMachine compiles a graph of the merge ops
// (opstest.MergeGraph: every binary kind, broadcasts on either side,
// Scale, Concatenate) and runs it on the host backend, each step through its op's Do,
// against gorgonia's tape machine: the same loss and gradients, and a step
// of each kind in the plan.
func TestMergeOpsMatchTapeMachine(t *testing.T) {
	p := matchesTapeMachine(t, func() (*opstest.Graph, error) { return opstest.BuildMergeGraph(9, 4) })
	kinds := map[Kind]int{}
	for _, s := range p.Steps {
		kinds[s.Kind]++
	}
	for _, k := range []Kind{Binary, BinaryGrad, Scale, Concat, ConcatGrad} {
		if kinds[k] == 0 {
			t.Errorf("the plan has no %v step: %v", k, p.Steps)
		}
	}
}

// matchesTapeMachine builds a graph twice with build, runs one on
// gorgonia's tape machine and the other compiled (Capabilities{}) on the
// host backend, each step through its op's Do, twice with a Reset
// between, and checks that they give the same loss and gradients. It
// returns the plan, for the caller's checks of its steps.
func matchesTapeMachine(t *testing.T, build func() (*opstest.Graph, error)) *Plan {
	t.Helper()
	ref, err := build()
	if err != nil {
		t.Fatal(err)
	}
	tm := gorgonia.NewTapeMachine(ref.G, gorgonia.BindDualValues(ref.Learnables...))
	defer tm.Close()
	if err := tm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got, err := build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(got.G, got.Learnables, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	m := hostMachine(t, got.G, got.Learnables)
	for run := 0; run < 2; run++ {
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		m.Reset()
	}
	compare(t, "loss", scalar(t, got.LossValue), scalar(t, ref.LossValue))
	for i, l := range got.Learnables {
		gg, err := l.Grad()
		if err != nil {
			t.Fatal(err)
		}
		rg, err := ref.Learnables[i].Grad()
		if err != nil {
			t.Fatal(err)
		}
		compareSlices(t, "gradient of "+l.Name(), gg.Data().([]float32), rg.Data().([]float32))
	}
	return p
}
