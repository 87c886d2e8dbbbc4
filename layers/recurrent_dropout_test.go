package layers

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// runDropped runs l (built for (steps, features)) on x (batch, steps,
// features) in float64 with the given weights, in a training graph at
// training step step (or, with training false, an inference graph), and
// returns its output.
func runDropped(t *testing.T, l *RecurrentLayer, batch, steps, features int, x []float64, ws [][]float64, training bool, step uint64) []float64 {
	t.Helper()
	g := gorgonia.NewGraph()
	xn := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(batch, steps, features), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(batch, steps, features), tensor.WithBacking(slices.Clone(x)))))
	var params []*gorgonia.Node
	for i, p := range l.Params() {
		s := p.Value.Shape().Clone()
		params = append(params, gorgonia.NewTensor(g, tensor.Float64, len(s), gorgonia.WithShape(s...), gorgonia.WithName(p.Name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(s...), tensor.WithBacking(slices.Clone(ws[i]))))))
	}
	in := Flow{Node: xn, Training: training}
	if training {
		sv := ops.StepValues(step, 0)
		in.Step = gorgonia.NewTensor(g, tensor.Float64, 1, gorgonia.WithShape(ops.StepValueCount), gorgonia.WithName("step"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(ops.StepValueCount), tensor.WithBacking([]float64{float64(sv[0]), float64(sv[1]), float64(sv[2]), float64(sv[3])}))))
	}
	f, err := l.Call(in, params)
	if err != nil {
		t.Fatal(err)
	}
	var read gorgonia.Value
	gorgonia.Read(f.Node, &read)
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(read.Data().([]float64))
}

// identity is the n×n identity matrix's values.
func identity(n int) []float64 {
	v := make([]float64, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	return v
}

// TestRecurrentDropoutMasks reads the masks off linear SimpleRNNs whose
// kernels are the identity: with RecurrentDropout, inputs of ones at the
// first step and zeros after give h₀ = 1, h₁ = m and h₂ = m·m when the
// mask m is the same at every step; with InputDropout and a zero
// recurrent kernel, inputs of ones at every step give h_t = m at every
// step. Each mask holds 0 and 1/(1-rate) only, drops about rate of the
// units (within four standard deviations over batch·units draws), differs
// from one training step to the next, and nothing is dropped outside
// training.
func TestRecurrentDropoutMasks(t *testing.T) {
	const batch, steps, units, rate = 256, 3, 32, 0.3
	kept := float64(ops.DropoutParams{Rate: rate}.Scale()) // 1/(1-rate) in float32, as the dropout op scales
	sd := math.Sqrt(rate * (1 - rate) / (batch * units))
	for _, recurrent := range []bool{true, false} {
		opt := InputDropout(rate)
		if recurrent {
			opt = RecurrentDropout(rate)
		}
		l := SimpleRNN(units, Linear, ReturnSequences(), opt)
		if _, err := l.Build([]int{steps, units}, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		x := make([]float64, batch*steps*units)
		rec := identity(units)
		for b := range batch {
			for k := range steps {
				if !recurrent || k == 0 {
					for j := range units {
						x[(b*steps+k)*units+j] = 1
					}
				}
			}
		}
		if !recurrent {
			rec = make([]float64, units*units)
		}
		ws := [][]float64{identity(units), rec, make([]float64, units)}
		at := func(y []float64, b, k, j int) float64 { return y[(b*steps+k)*units+j] }
		y := runDropped(t, l, batch, steps, units, x, ws, true, 7)
		dropped := 0
		for b := range batch {
			for j := range units {
				var m float64
				if recurrent {
					if h0 := at(y, b, 0, j); h0 != 1 {
						t.Fatalf("recurrent: h0 = %v at sample %d unit %d, want 1 (the first step has no state to drop)", h0, b, j)
					}
					m = at(y, b, 1, j)
					if h2 := at(y, b, 2, j); math.Abs(h2-m*m) > 1e-12 {
						t.Fatalf("recurrent: h2 = %v at sample %d unit %d, want m·m = %v: the mask is not the same at every step", h2, b, j, m*m)
					}
				} else {
					m = at(y, b, 0, j)
					for k := 1; k < steps; k++ {
						if h := at(y, b, k, j); h != m {
							t.Fatalf("input: step %d: %v at sample %d unit %d, step 0's %v: the mask is not the same at every step", k, h, b, j, m)
						}
					}
				}
				switch {
				case m == 0:
					dropped++
				case m != kept:
					t.Fatalf("recurrent=%t: mask value %v, want 0 or %v", recurrent, m, kept)
				}
			}
		}
		frac := float64(dropped) / (batch * units)
		t.Logf("recurrent=%t: %.4f of the units dropped (rate %v, sd %.4f)", recurrent, frac, rate, sd)
		if math.Abs(frac-rate) > 4*sd {
			t.Errorf("recurrent=%t: %.4f of the units dropped, want %v within %.4f", recurrent, frac, rate, 4*sd)
		}
		if other := runDropped(t, l, batch, steps, units, x, ws, true, 8); slices.Equal(other, y) {
			t.Errorf("recurrent=%t: training steps 7 and 8 drop the same units", recurrent)
		}
		if again := runDropped(t, l, batch, steps, units, x, ws, true, 7); !slices.Equal(again, y) {
			t.Errorf("recurrent=%t: training step 7 drops other units the second time", recurrent)
		}
		infer := runDropped(t, l, batch, steps, units, x, ws, false, 0)
		for i, v := range infer { // recurrent: h_t = h_{t-1}·I; input: x_t·I
			if v != 1 {
				t.Fatalf("recurrent=%t: inference output %v at %d, want 1: nothing is dropped outside training", recurrent, v, i)
			}
		}
	}
}

// TestRecurrentDropoutRefusals: rates outside [0, 1), and recurrent
// dropout in a GRU with reset_after=False, are refused, naming the
// argument, in Go and in configs.
func TestRecurrentDropoutRefusals(t *testing.T) {
	for _, c := range []struct {
		l    *RecurrentLayer
		want string
	}{
		{LSTM(4, InputDropout(1)), "dropout must be a fraction in [0, 1)"},
		{GRU(4, RecurrentDropout(-0.1)), "recurrent_dropout must be a fraction in [0, 1)"},
		{GRU(4, RecurrentDropout(0.2), ResetAfter(false)), "recurrent_dropout is not supported for a GRU with reset_after=False"},
	} {
		if err := c.l.CheckConfig(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.l.Type(), err, c.want)
		}
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"units": 4, "dropout": 1.0}, "dropout = 1"},
		{map[string]any{"units": 4, "recurrent_dropout": 0.2, "reset_after": false}, "recurrent_dropout = 0.2"},
	} {
		if _, err := recurrentFromConfig(gruCell)(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestRecurrentDropoutConfig: the rates and the seed are written and read
// back.
func TestRecurrentDropoutConfig(t *testing.T) {
	for _, l := range []*RecurrentLayer{
		LSTM(4, InputDropout(0.2), RecurrentDropout(0.3), Seed(7)),
		GRU(3, RecurrentDropout(0.5)),
		SimpleRNN(2, InputDropout(0.25)),
	} {
		c, err := ConfigOf(l)
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := back.(*RecurrentLayer)
		if !ok {
			t.Fatalf("%s read back as %T", l.Type(), back)
		}
		if r.dropout != l.dropout || r.recurrentDropout != l.recurrentDropout || r.seeded != l.seeded || r.seed != l.seed {
			t.Errorf("%s: read back dropout %v, recurrent_dropout %v, seed %v (%t); want %v, %v, %v (%t)", l.Type(),
				r.dropout, r.recurrentDropout, r.seed, r.seeded, l.dropout, l.recurrentDropout, l.seed, l.seeded)
		}
		if _, has := c.Config["seed"]; has != l.seeded {
			t.Errorf("%s: seed written: %t, want %t (Keras 2's recurrent layers take none)", l.Type(), has, l.seeded)
		}
	}
}
