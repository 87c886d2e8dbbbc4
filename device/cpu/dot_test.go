package cpu_test

import (
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
)

// TestDotOpsTrainLikeTheTapeMachine: the CPU machine's Train on
// opstest.DotGraph (BatchDot along every pair of transposes,
// L2Normalize and their gradients) against the tape machine plus optim,
// 20 steps of momentum from the same values.
func TestDotOpsTrainLikeTheTapeMachine(t *testing.T) {
	trainsLikeTheTapeMachine(t, func() testGraph {
		m, err := opstest.BuildDotGraph(4, 8)
		if err != nil {
			t.Fatal(err)
		}
		return testGraph{m.G, m.Learnables, &m.LossValue}
	})
}
