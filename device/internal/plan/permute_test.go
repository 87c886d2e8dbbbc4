package plan

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"gorgonia.org/gorgonia"
)

// TestPermuteMatchesTapeMachine compiles opstest.PermuteGraph (two
// permutations, forward and backward) and runs it on the host backend,
// each step through its op's Do, against gorgonia's tape machine: the
// same loss and gradients, and a Permute step for each permutation and
// each gradient.
func TestPermuteMatchesTapeMachine(t *testing.T) {
	ref, err := opstest.BuildPermuteGraph(9, 3)
	if err != nil {
		t.Fatal(err)
	}
	tm := gorgonia.NewTapeMachine(ref.G, gorgonia.BindDualValues(ref.Learnables...))
	defer tm.Close()
	if err := tm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got, err := opstest.BuildPermuteGraph(9, 3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(got.G, got.Learnables, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range p.Steps {
		if s.Kind == Permute {
			n++
		}
	}
	if n != 4 {
		t.Errorf("the plan has %d Permute steps, want 4: %v", n, p.Steps)
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
}
