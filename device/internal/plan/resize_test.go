package plan

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
)

// TestResizeOpsMatchTapeMachine compiles opstest.ResizeGraph (Pad2D,
// UpSample2D and Crop2D, forward and backward) and runs it on the host
// backend, each step through its op's Do, against gorgonia's tape machine:
// the same loss and gradients, and a step of each kind in the plan.
func TestResizeOpsMatchTapeMachine(t *testing.T) {
	p := matchesTapeMachine(t, func() (*opstest.Graph, error) { return opstest.BuildResizeGraph(9, 3) })
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
}
