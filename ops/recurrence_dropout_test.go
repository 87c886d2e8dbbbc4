package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// recDropPlace says where a hand-written loop applies the recurrent
// dropout masks: right (Keras' cells: gate g's mask on the state before
// gate g's recurrent product only) or one of the wrong places the
// controls check the kernel against.
type recDropPlace int

const (
	dropRight     recDropPlace = iota
	dropShared                 // gate 0's mask for every gate
	dropAlsoState              // also on the state the cell carries (LSTM's c, GRU's z·h, RNN's output)
)

// handRecDrop runs a RNN, LSTM or GRU (reset_after) over in's steps with
// recurrent dropout masks in.rd (batch, G·units), written out value by
// value in float64 from the cells' formulas; it returns the state after
// every step read (batch, steps, units).
func handRecDrop(p RecurrenceParams, in recIn[float64], place recDropPlace) []float64 {
	B, S, U, G := p.Batch, p.Steps, p.Units, p.Gates()
	gu := G * U
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	out := make([]float64, B*S*U)
	for b := range B {
		h, c := make([]float64, U), make([]float64, U)
		mask := func(g, j int) float64 {
			if place == dropShared {
				g = 0
			}
			return in.rd[b*gu+g*U+j]
		}
		for k := range S {
			t := p.step(k)
			x := in.proj[(b*S+t)*gu:][:gu]
			// r[g·U+i]: gate g's recurrent product (plus the recurrent bias).
			r := make([]float64, gu)
			for g := range G {
				for i := range U {
					for j := range U {
						r[g*U+i] += h[j] * mask(g, j) * in.rec[j*gu+g*U+i]
					}
					if in.rb != nil {
						r[g*U+i] += in.rb[g*U+i]
					}
				}
			}
			hn, cn := make([]float64, U), make([]float64, U)
			for i := range U {
				switch p.Cell {
				case RNNCell:
					hn[i] = math.Tanh(x[i] + r[i])
					if place == dropAlsoState {
						hn[i] *= mask(0, i)
					}
				case LSTMCell:
					ig, fg := sig(x[i]+r[i]), sig(x[U+i]+r[U+i])
					cc, og := math.Tanh(x[2*U+i]+r[2*U+i]), sig(x[3*U+i]+r[3*U+i])
					prevC := c[i]
					if place == dropAlsoState {
						prevC *= mask(1, i)
					}
					cn[i] = fg*prevC + ig*cc
					hn[i] = og * math.Tanh(cn[i])
				case GRUCell:
					z, rg := sig(x[i]+r[i]), sig(x[U+i]+r[U+i])
					cand := math.Tanh(x[2*U+i] + rg*r[2*U+i])
					prev := h[i]
					if place == dropAlsoState {
						prev *= mask(0, i)
					}
					hn[i] = z*prev + (1-z)*cand
				}
			}
			h, c = hn, cn
			copy(out[(b*S+k)*U:][:U], h)
		}
	}
	return out
}

// recDropMask draws a recurrent dropout mask (batch, G·units) of 0 and
// 1/(1-rate), as the layers draw it.
func recDropMask(rng *rand.Rand, n int, rate float64) []float64 {
	m := make([]float64, n)
	for i := range m {
		if rng.Float64() >= rate {
			m[i] = 1 / (1 - rate)
		}
	}
	return m
}

// TestRecurrenceRecDropHandLoop checks the kernel's output under
// recurrent dropout masks against the cells written out by hand, for
// each cell read forwards and backwards, and checks that masks put in the
// wrong places (one mask shared by the gates; the carried state dropped
// too) give outputs the check tells apart.
func TestRecurrenceRecDropHandLoop(t *testing.T) {
	const batch, steps, units = 3, 5, 4
	rng := rand.New(rand.NewPCG(21, 22))
	randoms := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
		return v
	}
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell} {
		for _, backwards := range []bool{false, true} {
			p := RecurrenceParams{Cell: cell, Batch: batch, Steps: steps, Units: units, Act: Tanh, RecAct: Sigmoid,
				Backwards: backwards, Sequences: true, RecDropped: true}
			gu := p.Gates() * units
			in := recIn[float64]{proj: randoms(batch * steps * gu), rec: randoms(units * gu), rd: recDropMask(rng, batch*gu, 0.4)}
			if cell == GRUCell {
				in.rb, p.RecBias = randoms(gu), true
			}
			y := make([]float64, batch*steps*units)
			recurrenceForward(p, in, y, make([]float64, p.Workspace()))
			diff := func(want []float64) float64 {
				d := 0.0
				for i := range want {
					d = max(d, math.Abs(y[i]-want[i]))
				}
				return d
			}
			if d := diff(handRecDrop(p, in, dropRight)); d > 1e-13 {
				t.Errorf("%v backwards=%t: the kernel differs from the cells written out by %g", cell, backwards, d)
			}
			wrong := map[recDropPlace]string{dropAlsoState: "the carried state dropped too"}
			if cell != RNNCell {
				wrong[dropShared] = "one mask for all gates"
			}
			for place, what := range wrong {
				if d := diff(handRecDrop(p, in, place)); d < 1e-3 {
					t.Errorf("%v backwards=%t: control %q: the kernel's output is within %g of it: the check cannot tell the places apart", cell, backwards, what, d)
				}
			}
		}
	}
}

// TestRecurrenceRecDropGradients checks the gradients of a Recurrence
// under a fixed recurrent dropout mask against central finite differences
// in float64, for each cell, with and without initial states, a mask over
// the steps and the last states.
func TestRecurrenceRecDropGradients(t *testing.T) {
	const batch, steps, units = 2, 4, 3
	rng := rand.New(rand.NewPCG(31, 32))
	randoms := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * (2*rng.Float64() - 1)
		}
		return v
	}
	stepMask := []float64{0, 1, 0, 1, 1, 1, 0, 0}
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell} {
		for _, extra := range []bool{false, true} { // initial states, a step mask and the last states, backwards
			p := RecurrenceParams{Cell: cell, Batch: batch, Steps: steps, Units: units, Act: Tanh, RecAct: Sigmoid,
				Sequences: true, States: extra, Backwards: extra}
			t.Run(fmt.Sprintf("%v/extra=%t", cell, extra), func(t *testing.T) {
				gu := p.Gates() * units
				g := gorgonia.NewGraph()
				node := func(name string, vals []float64, shape ...int) *gorgonia.Node {
					return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
						gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))))
				}
				proj, rec := node("proj", randoms(batch*steps*gu, 1.5), batch, steps, gu), node("rec", randoms(units*gu, 0.8), units, gu)
				wrt := []*gorgonia.Node{proj, rec}
				in := RecurrenceInputs{RecDrop: node("recdrop", recDropMask(rng, batch*gu, 0.5), batch, gu)}
				if cell == GRUCell {
					in.RecBias = node("recbias", randoms(gu, 0.5), gu)
					wrt = append(wrt, in.RecBias)
				}
				if extra {
					in.H0 = node("h0", randoms(batch*units, 0.7), batch, units)
					wrt = append(wrt, in.H0)
					if cell == LSTMCell {
						in.C0 = node("c0", randoms(batch*units, 0.7), batch, units)
						wrt = append(wrt, in.C0)
					}
					in.Mask = node("mask", slices.Clone(stepMask), batch, steps)
				}
				y, err := RecurrenceWith(proj, rec, in, p)
				if err != nil {
					t.Fatal(err)
				}
				n := y.Shape().TotalSize()
				flat, err := Reshape(y, []int{batch, n / batch}, true)
				if err != nil {
					t.Fatal(err)
				}
				cost, err := Loss(MeanSquaredError, flat, node("target", randoms(n, 1), batch, n/batch))
				if err != nil {
					t.Fatal(err)
				}
				checkGradients(t, g, cost, wrt...)
			})
		}
	}
}
