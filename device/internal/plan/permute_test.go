package plan

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
)

// TestPermuteMatchesTapeMachine compiles opstest.PermuteGraph (two
// permutations, forward and backward) and runs it on the host backend,
// each step through its op's Do, against gorgonia's tape machine: the
// same loss and gradients, and a Permute step for each permutation and
// each gradient.
func TestPermuteMatchesTapeMachine(t *testing.T) {
	p := matchesTapeMachine(t, func() (*opstest.Graph, error) { return opstest.BuildPermuteGraph(9, 3) })
	n := 0
	for _, s := range p.Steps {
		if s.Kind == Permute {
			n++
		}
	}
	if n != 4 {
		t.Errorf("the plan has %d Permute steps, want 4: %v", n, p.Steps)
	}
}
