package plan

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
)

// TestDotOpsMatchTapeMachine compiles opstest.DotGraph (BatchDot along
// every pair of transposes, L2Normalize, forward and backward) and runs it
// on the host backend, each step through its op's Do, against gorgonia's
// tape machine: the same loss and gradients, and steps of each kind in the
// plan.
func TestDotOpsMatchTapeMachine(t *testing.T) {
	p := matchesTapeMachine(t, func() (*opstest.Graph, error) { return opstest.BuildDotGraph(9, 3) })
	kinds := map[Kind]int{}
	transposes := map[[2]bool]int{}
	for _, s := range p.Steps {
		kinds[s.Kind]++
		if s.Kind == BatchMatMul {
			transposes[[2]bool{s.Op.BatchMatMul.TransA, s.Op.BatchMatMul.TransB}]++
		}
	}
	// Five products forward, two gradients each (d5's second factor, u,
	// is computed from a learnable; every product's inputs need theirs);
	// four normalizations, each with its gradient.
	for k, n := range map[Kind]int{BatchMatMul: 15, L2Normalize: 4, L2NormalizeGrad: 4} {
		if kinds[k] != n {
			t.Errorf("the plan has %d %v steps, want %d: %v", kinds[k], k, n, p.Steps)
		}
	}
	if len(transposes) != 4 {
		t.Errorf("the products transpose as %v: want every pair", transposes)
	}
}
