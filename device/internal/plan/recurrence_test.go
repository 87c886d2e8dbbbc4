package plan

import (
	"fmt"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// TestRecurrenceMatchesTapeMachine compiles opstest.RecurrenceGraph of
// each cell (forwards and backwards, the last state and the sequence;
// from initial states, with a mask, returning the states, under a
// recurrent dropout mask) and runs it on the host backend, each step through its op's Do,
// against gorgonia's tape machine: the same loss and gradients, one
// Recurrence and one RecurrenceGrad step sharing their scratch (the
// gradient reads the forward pass's planes, Saved).
func TestRecurrenceMatchesTapeMachine(t *testing.T) {
	for _, cell := range []ops.RecurrenceCell{ops.RNNCell, ops.LSTMCell, ops.GRUCell, ops.GRUBeforeCell} {
		variants := []opstest.RecurrenceVariant{{}, {Backwards: true, Sequences: true}}
		if cell != ops.GRUBeforeCell {
			variants = append(variants, opstest.RecurrenceVariant{Init: true, Masked: true, States: true},
				opstest.RecurrenceVariant{Backwards: true, Sequences: true, Init: true, Masked: true, States: true},
				opstest.RecurrenceVariant{Sequences: true, Masked: true, ZeroMasked: true},
				opstest.RecurrenceVariant{RecDropped: true}, opstest.RecurrenceVariant{Backwards: true, Sequences: true, Init: true, Masked: true, States: true, RecDropped: true})
		}
		for _, v := range variants {
			t.Run(fmt.Sprintf("%v/%+v", cell, v), func(t *testing.T) {
				p := matchesTapeMachine(t, func() (*opstest.Graph, error) { return opstest.BuildRecurrenceGraphWith(3, cell, 4, v) })
				kinds := map[Kind]int{}
				for _, s := range p.Steps {
					kinds[s.Kind]++
					if s.Kind == Recurrence || s.Kind == RecurrenceGrad {
						if len(s.Out) != 2 || p.Buffers[s.Out[1]].Elems != s.Op.Recurrence.Workspace() {
							t.Errorf("%v: outputs %v, want the value and scratch of %d", s, s.Out, s.Op.Recurrence.Workspace())
						}
					}
				}
				var scratch []int
				for _, s := range p.Steps {
					if s.Kind == Recurrence || s.Kind == RecurrenceGrad {
						scratch = append(scratch, s.Out[1])
						if s.Kind == RecurrenceGrad && (!s.Op.Recurrence.Saved || s.In[len(s.In)-1] != s.Out[1]) {
							t.Errorf("%v: the gradient does not read the Recurrence's planes", s)
						}
					}
				}
				if len(scratch) == 2 && scratch[0] != scratch[1] {
					t.Errorf("the Recurrence's scratch is buffer %d, its gradient's %d: want the same", scratch[0], scratch[1])
				}
				if kinds[Recurrence] != 1 || kinds[RecurrenceGrad] != 1 {
					t.Errorf("the plan has %d Recurrence and %d RecurrenceGrad steps, want one each: %v", kinds[Recurrence], kinds[RecurrenceGrad], p.Steps)
				}
			})
		}
	}
}
