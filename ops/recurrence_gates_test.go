package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRecurrenceFloat32GatesNearFloat64 runs each cell's float32 kernels,
// whose sigmoid and tanh are the vector kernels, and the float64 ones
// (math.Exp, math.Tanh) on the same values over 30 steps: the outputs and
// every gradient agree within 2e-5 of the largest value of each.
func TestRecurrenceFloat32GatesNearFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell, GRUBeforeCell} {
		for _, acts := range [][2]Activation{{Tanh, Sigmoid}, {Sigmoid, Tanh}, {ReLU, HardSigmoid}} {
			p := RecurrenceParams{Cell: cell, Batch: 5, Steps: 30, Units: 19, Act: acts[0], RecAct: acts[1], Sequences: true, RecBias: cell == GRUCell}
			gu := p.Gates() * p.Units
			fill := func(n int, scale float64) ([]float32, []float64) {
				v32, v64 := make([]float32, n), make([]float64, n)
				for i := range v32 {
					v32[i] = float32(scale * rng.NormFloat64())
					v64[i] = float64(v32[i])
				}
				return v32, v64
			}
			proj32, proj64 := fill(p.Batch*p.Steps*gu, 2)
			rec32, rec64 := fill(p.Units*gu, 0.3)
			dy32, dy64 := fill(p.Batch*p.Steps*p.Units, 1)
			var rb32 []float32
			var rb64 []float64
			if p.RecBias {
				rb32, rb64 = fill(gu, 0.5)
			}
			n := 0
			for _, v := range p.GradParts() {
				n += v
			}
			y32, out32 := make([]float32, len(dy32)), make([]float32, n)
			y64, out64 := make([]float64, len(dy64)), make([]float64, n)
			recurrenceForward(p, recIn[float32]{proj: proj32, rec: rec32, rb: rb32}, y32, make([]float32, p.Workspace()))
			recurrenceBackward(p, recIn[float32]{proj: proj32, rec: rec32, rb: rb32}, dy32, out32, make([]float32, p.Workspace()))
			recurrenceForward(p, recIn[float64]{proj: proj64, rec: rec64, rb: rb64}, y64, make([]float64, p.Workspace()))
			recurrenceBackward(p, recIn[float64]{proj: proj64, rec: rec64, rb: rb64}, dy64, out64, make([]float64, p.Workspace()))
			near := func(what string, got []float32, want []float64) {
				t.Helper()
				scale := 0.0
				for _, v := range want {
					scale = max(scale, math.Abs(v))
				}
				for i := range want {
					if d := math.Abs(float64(got[i]) - want[i]); !(d <= 2e-5*scale) {
						t.Fatalf("%v (%v, %v) %s value %d: float32 %v, float64 %v (off by %.3g of %.3g)", cell, acts[0], acts[1], what, i, got[i], want[i], d, scale)
					}
				}
			}
			near("output", y32, y64)
			at := 0
			for k, part := range p.GradParts() {
				near([]string{"projections' gradient", "recurrent kernel's gradient", "recurrent bias' gradient"}[k], out32[at:at+part], out64[at:at+part])
				at += part
			}
		}
	}
}
