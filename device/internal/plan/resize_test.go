package plan

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"gorgonia.org/gorgonia"
)

// TestResizeOpsMatchTapeMachine compiles opstest.ResizeGraph (Pad2D,
// UpSample2D and Crop2D, forward and backward) and runs it on the host
// backend, each step through its op's Do, against gorgonia's tape machine:
// the same loss and gradients, and a step of each kind in the plan.
func TestResizeOpsMatchTapeMachine(t *testing.T) {
	ref, err := opstest.BuildResizeGraph(9, 3)
	if err != nil {
		t.Fatal(err)
	}
	tm := gorgonia.NewTapeMachine(ref.G, gorgonia.BindDualValues(ref.Learnables...))
	defer tm.Close()
	if err := tm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got, err := opstest.BuildResizeGraph(9, 3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(got.G, got.Learnables, Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]int{}
	for _, s := range p.Steps {
		kinds[s.Kind]++
	}
	// A Pad2D forward and as Crop2D's gradient, and the other way round.
	for k, n := range map[Kind]int{Pad2D: 2, Crop2D: 2, UpSample: 1, UpSampleGrad: 1} {
		if kinds[k] != n {
			t.Errorf("the plan has %d %v steps, want %d: %v", kinds[k], k, n, p.Steps)
		}
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
