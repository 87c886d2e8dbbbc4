//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// TestRecurrenceTrainsAsOnCPU trains opstest.RecurrenceGraph of each
// cell (forwards and backwards, the last state and the sequence; from
// initial states, with a mask, returning the states; under a recurrent
// dropout mask) on
// /GPU:0 (gk_rec_fwd, gk_rec_bwd and cuBLAS per timestep) and on /CPU:0
// (ops.RecurrenceForward and RecurrenceBackward) from the same values, 20
// steps of Adam: the same loss at every step and the same weights at the
// end, within 1e-5.
func TestRecurrenceTrainsAsOnCPU(t *testing.T) {
	for _, cell := range []ops.RecurrenceCell{ops.RNNCell, ops.LSTMCell, ops.GRUCell, ops.GRUBeforeCell} {
		variants := []opstest.RecurrenceVariant{{}, {Backwards: true, Sequences: true}, {Sequences: true}}
		if cell != ops.GRUBeforeCell {
			variants = append(variants, opstest.RecurrenceVariant{Init: true, Masked: true, States: true},
				opstest.RecurrenceVariant{Backwards: true, Sequences: true, Init: true, Masked: true, States: true},
				opstest.RecurrenceVariant{Sequences: true, Masked: true},
				opstest.RecurrenceVariant{Backwards: true, Sequences: true, Masked: true, ZeroMasked: true, Init: true},
				opstest.RecurrenceVariant{RecDropped: true}, opstest.RecurrenceVariant{Init: true, RecDropped: true}, opstest.RecurrenceVariant{Backwards: true, Sequences: true, Init: true, Masked: true, States: true, RecDropped: true})
		}
		for _, v := range variants {
			t.Run(fmt.Sprintf("%v/%+v", cell, v), func(t *testing.T) {
				trainsAsOnCPU(t, func() gpuTestGraph {
					m, err := opstest.BuildRecurrenceGraphWith(11, cell, 6, v)
					if err != nil {
						t.Fatal(err)
					}
					return gpuTestGraph{m.G, m.Learnables, &m.LossValue}
				})
			})
		}
	}
}
