//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// TestRecurrenceTrainsAsOnCPU trains opstest.RecurrenceGraph of each
// cell (forwards and backwards, the last state and the sequence) on
// /GPU:0 (gk_rec_fwd, gk_rec_bwd and cuBLAS per timestep) and on /CPU:0
// (ops.RecurrenceForward and RecurrenceBackward) from the same values, 20
// steps of Adam: the same loss at every step and the same weights at the
// end, within 1e-5.
func TestRecurrenceTrainsAsOnCPU(t *testing.T) {
	for _, cell := range []ops.RecurrenceCell{ops.RNNCell, ops.LSTMCell, ops.GRUCell, ops.GRUBeforeCell} {
		for _, v := range [][2]bool{{false, false}, {true, true}, {false, true}} {
			t.Run(fmt.Sprintf("%v/backwards=%t/sequences=%t", cell, v[0], v[1]), func(t *testing.T) {
				trainsAsOnCPU(t, func() gpuTestGraph {
					m, err := opstest.BuildRecurrenceGraph(11, cell, 6, v[0], v[1])
					if err != nil {
						t.Fatal(err)
					}
					return gpuTestGraph{m.G, m.Learnables, &m.LossValue}
				})
			})
		}
	}
}
