package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestRecurrenceGradients checks the gradients of a Recurrence's inputs
// (projections, recurrent kernel, GRU's recurrent bias) for each cell,
// read forwards and backwards, the last state and the sequence, against
// central finite differences in float64.
func TestRecurrenceGradients(t *testing.T) {
	const batch, steps, units = 2, 4, 3
	rng := rand.New(rand.NewPCG(5, 6))
	randoms := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * (2*rng.Float64() - 1)
		}
		return v
	}
	type variant struct {
		cell                          RecurrenceCell
		backwards, sequences, recBias bool
		act                           Activation
		init, masked, states          bool
	}
	var variants []variant
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell, GRUBeforeCell} {
		for _, backwards := range []bool{false, true} {
			for _, sequences := range []bool{false, true} {
				variants = append(variants, variant{cell, backwards, sequences, cell == GRUCell, Tanh, false, false, false})
			}
		}
	}
	variants = append(variants, variant{GRUCell, false, true, false, Tanh, false, false, false}, variant{LSTMCell, true, true, false, Softsign, false, false, false},
		variant{GRUBeforeCell, true, true, false, ELU, false, false, false},
		variant{RNNCell, false, true, false, ELU, false, false, false})
	// Initial states, masks and the last states, alone and together.
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell} {
		for _, backwards := range []bool{false, true} {
			for _, sequences := range []bool{false, true} {
				for _, ims := range [][3]bool{{true, false, false}, {false, true, false}, {false, false, true}, {true, true, true}} {
					variants = append(variants, variant{cell, backwards, sequences, cell == GRUCell, Tanh, ims[0], ims[1], ims[2]})
				}
			}
		}
	}
	// Zero output at masked steps (Bidirectional's), with sequences.
	for _, cell := range []RecurrenceCell{LSTMCell, GRUCell} {
		variants = append(variants, variant{cell, true, true, cell == GRUCell, Tanh, true, true, true})
	}
	// The mask: sample 0 skips its first and third steps, sample 1 its
	// last two.
	mask := []float64{0, 1, 0, 1, 1, 1, 0, 0}
	for _, v := range variants {
		p := RecurrenceParams{Cell: v.cell, Batch: batch, Steps: steps, Units: units, Act: v.act, RecAct: Sigmoid, Alpha: 1,
			Backwards: v.backwards, Sequences: v.sequences, States: v.states}
		if v.act == Tanh && v.init && v.masked && v.states && v.sequences && v.backwards && v.cell != RNNCell {
			p.ZeroMasked = true // the zero-output variants (and the like ones above, which then check it too)
		}
		t.Run(fmt.Sprintf("%v/act=%v/backwards=%t/sequences=%t/recbias=%t/init=%t/masked=%t/states=%t", v.cell, v.act, v.backwards, v.sequences, v.recBias, v.init, v.masked, v.states), func(t *testing.T) {
			gu := p.Gates() * units
			g := gorgonia.NewGraph()
			node := func(name string, scale float64, shape ...int) *gorgonia.Node {
				return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
					gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(randoms(tensor.Shape(shape).TotalSize(), scale)))))
			}
			proj, rec := node("proj", 1.5, batch, steps, gu), node("rec", 0.8, units, gu)
			wrt := []*gorgonia.Node{proj, rec}
			var in RecurrenceInputs
			if v.recBias {
				in.RecBias = node("recbias", 0.5, gu)
				wrt = append(wrt, in.RecBias)
			}
			if v.init {
				in.H0 = node("h0", 0.7, batch, units)
				wrt = append(wrt, in.H0)
				if v.cell == LSTMCell {
					in.C0 = node("c0", 0.7, batch, units)
					wrt = append(wrt, in.C0)
				}
			}
			if v.masked {
				in.Mask = gorgonia.NewTensor(g, tensor.Float64, 2, gorgonia.WithShape(batch, steps), gorgonia.WithName("mask"),
					gorgonia.WithValue(tensor.New(tensor.WithShape(batch, steps), tensor.WithBacking(slices.Clone(mask)))))
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
			target := node("target", 1, batch, n/batch)
			cost, err := Loss(MeanSquaredError, flat, target)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gorgonia.Grad(cost, wrt...); err != nil {
				t.Fatal(err)
			}
			m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(wrt...))
			defer m.Close()
			eval := func() float64 {
				m.Reset()
				if err := m.RunAll(); err != nil {
					t.Fatal(err)
				}
				return cost.Value().Data().(float64)
			}
			eval()
			analytic := make([][]float64, len(wrt))
			for i, w := range wrt {
				gv, err := w.Grad()
				if err != nil {
					t.Fatal(err)
				}
				analytic[i] = slices.Clone(gv.Data().([]float64))
			}
			const eps = 1e-6
			for i, w := range wrt {
				vals := w.Value().Data().([]float64)
				for k := range vals {
					orig := vals[k]
					vals[k] = orig + eps
					up := eval()
					vals[k] = orig - eps
					down := eval()
					vals[k] = orig
					numeric := (up - down) / (2 * eps)
					if a := analytic[i][k]; math.Abs(a-numeric) > 1e-7*max(1, math.Abs(numeric)) {
						t.Errorf("d cost/d %s[%d]: analytic %.10g, finite difference %.10g", w.Name(), k, a, numeric)
					}
				}
			}
		})
	}
}

// TestRecurrenceHandComputed checks an LSTM of one unit over two steps
// against its formulas worked out by hand, forwards and backwards.
func TestRecurrenceHandComputed(t *testing.T) {
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// Projections of two steps (i, f, c, o each), recurrent kernel.
	proj := []float64{0.5, -0.2, 0.8, 0.1, -0.3, 0.4, 0.2, 0.9}
	rec := []float64{0.1, 0.4, -0.6, 0.9}
	want := func(first, second int) []float64 {
		h, c := 0.0, 0.0
		var hs []float64
		for _, s := range []int{first, second} {
			x := proj[4*s : 4*s+4]
			i, f := sig(x[0]+rec[0]*h), sig(x[1]+rec[1]*h)
			g, o := math.Tanh(x[2]+rec[2]*h), sig(x[3]+rec[3]*h)
			c = f*c + i*g
			h = o * math.Tanh(c)
			hs = append(hs, h)
		}
		return hs
	}
	for _, backwards := range []bool{false, true} {
		p := RecurrenceParams{Cell: LSTMCell, Batch: 1, Steps: 2, Units: 1, Act: Tanh, RecAct: Sigmoid, Backwards: backwards, Sequences: true}
		y := make([]float64, 2)
		recurrenceForward(p, recIn[float64]{proj: proj, rec: rec}, y, make([]float64, p.Workspace()))
		w := want(0, 1)
		if backwards {
			w = want(1, 0)
		}
		for i := range w {
			if math.Abs(y[i]-w[i]) > 1e-15 {
				t.Errorf("backwards=%t: output %d: %.17g, want %.17g", backwards, i, y[i], w[i])
			}
		}
	}
}

// TestRecurrenceRefusals checks the shapes and arguments Recurrence
// refuses.
func TestRecurrenceRefusals(t *testing.T) {
	g := gorgonia.NewGraph()
	proj := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 8), gorgonia.WithName("proj"))
	rec := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 8), gorgonia.WithName("rec"))
	rb := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(8), gorgonia.WithName("rb"))
	ok := RecurrenceParams{Cell: LSTMCell, Batch: 2, Steps: 3, Units: 2, Act: Tanh, RecAct: Sigmoid}
	if _, err := Recurrence(proj, rec, nil, ok); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p  RecurrenceParams
		rb *gorgonia.Node
	}{
		{RecurrenceParams{Cell: GRUCell, Batch: 2, Steps: 3, Units: 2, Act: Tanh, RecAct: Sigmoid}, nil},
		{RecurrenceParams{Cell: LSTMCell, Batch: 2, Steps: 4, Units: 2, Act: Tanh, RecAct: Sigmoid}, nil},
		{ok, rb},
		{RecurrenceParams{Cell: LSTMCell, Batch: 2, Steps: 3, Units: 2, Act: Softmax, RecAct: Sigmoid}, nil},
		{RecurrenceParams{Batch: 2, Steps: 3, Units: 2}, nil},
	} {
		if _, err := Recurrence(proj, rec, c.rb, c.p); err == nil {
			t.Errorf("%v: no error", c.p)
		}
	}
}

// TestRecurrenceOnEveryCore checks that the kernels, whose cells run on
// every core in ranges of samples for a batch this large, compute the
// same bits as on one core, forward and backward, for each cell (run it
// with -race too).
func TestRecurrenceOnEveryCore(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core")
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell, GRUBeforeCell} {
		p := RecurrenceParams{Cell: cell, Batch: 33, Steps: 6, Units: 64, Act: Tanh, RecAct: Sigmoid, Sequences: true, RecBias: cell == GRUCell}
		gu := p.Gates() * p.Units
		fill := func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			return v
		}
		proj, rec, dy := fill(p.Batch*p.Steps*gu), fill(p.Units*gu), fill(p.Batch*p.Steps*p.Units)
		for i := range rec {
			rec[i] *= 0.1
		}
		var rb []float32
		if p.RecBias {
			rb = fill(gu)
		}
		n := 0
		for _, v := range p.GradParts() {
			n += v
		}
		run := func() ([]float32, []float32) {
			y, out, ws := make([]float32, len(dy)), make([]float32, n), make([]float32, p.Workspace())
			RecurrenceForward(p, proj, rec, rb, y, ws)
			saved := p
			saved.Saved = true
			RecurrenceBackward(saved, proj, rec, rb, dy, out, ws)
			return y, out
		}
		y, out := run()
		procs := runtime.GOMAXPROCS(1)
		y1, out1 := run()
		runtime.GOMAXPROCS(procs)
		if !slices.Equal(y, y1) || !slices.Equal(out, out1) {
			t.Errorf("%v: the kernels on %d cores compute other values than on one", cell, procs)
		}
	}
}

// TestRecurrenceMaskSkipsSteps checks a masked Recurrence against the
// same op run without a mask on each sample's steps that the mask keeps,
// in the order they are read: the output at a skipped step is the
// output of the last step read before it (zero before the first, even
// from initial states; zero at every skipped step with ZeroMasked), the
// states returned are the last step read's (the initial ones when none
// is), for each cell, read forwards and backwards, from zero and from
// initial states.
func TestRecurrenceMaskSkipsSteps(t *testing.T) {
	const batch, steps, units = 4, 5, 3
	rng := rand.New(rand.NewPCG(8, 9))
	randoms := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
		return v
	}
	// Padding at the end, at the start, holes, and nothing read.
	mask := []float64{1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, cell := range []RecurrenceCell{RNNCell, LSTMCell, GRUCell} {
		for _, backwards := range []bool{false, true} {
			for _, mode := range []int{0, 1, 2} { // from zero, from initial states, zero output at skipped steps
				init, zero := mode == 1, mode == 2
				p := RecurrenceParams{Cell: cell, Batch: batch, Steps: steps, Units: units, Act: Tanh, RecAct: Sigmoid,
					Backwards: backwards, Sequences: true, States: true, Init: init, Masked: true, ZeroMasked: zero}
				gu := p.Gates() * units
				in := recIn[float64]{proj: randoms(batch * steps * gu), rec: randoms(units * gu), mask: mask}
				if cell == GRUCell {
					in.rb, p.RecBias = randoms(gu), true
				}
				if init {
					in.h0 = randoms(batch * units)
					if cell == LSTMCell {
						in.c0 = randoms(batch * units)
					}
				}
				y := make([]float64, p.Out()[1])
				recurrenceForward(p, in, y, make([]float64, p.Workspace()))
				ns := p.StateCount()
				for b := range batch {
					// The steps the mask keeps, in the order read.
					var kept []int
					for k := range steps {
						if mask[b*steps+p.step(k)] != 0 {
							kept = append(kept, p.step(k))
						}
					}
					states := make([][]float64, ns) // the last states, the initial ones by default
					for s := range ns {
						states[s] = make([]float64, units)
						if init {
							copy(states[s], [][]float64{in.h0, in.c0}[s][b*units:][:units])
						}
					}
					var seq []float64 // the outputs of the steps kept
					if len(kept) > 0 {
						q := RecurrenceParams{Cell: cell, Batch: 1, Steps: len(kept), Units: units, Act: Tanh, RecAct: Sigmoid,
							Sequences: true, States: true, Init: init, RecBias: p.RecBias}
						qin := recIn[float64]{rec: in.rec, rb: in.rb}
						for _, t := range kept {
							qin.proj = append(qin.proj, in.proj[(b*steps+t)*gu:][:gu]...)
						}
						if init {
							qin.h0, qin.c0 = states[0], nil
							if cell == LSTMCell {
								qin.c0 = states[1]
							}
						}
						qy := make([]float64, q.Out()[1])
						recurrenceForward(q, qin, qy, make([]float64, q.Workspace()))
						seq = qy[:len(kept)*units]
						for s := range ns {
							states[s] = qy[len(kept)*units+s*units:][:units]
						}
					}
					read := 0
					for k := range steps {
						want := make([]float64, units)
						if mask[b*steps+p.step(k)] != 0 {
							read++
						}
						if read > 0 && !(zero && mask[b*steps+p.step(k)] == 0) {
							want = seq[(read-1)*units:][:units]
						}
						got := y[(b*steps+k)*units:][:units]
						for j := range want {
							if math.Abs(got[j]-want[j]) > 1e-12 {
								t.Errorf("%v backwards=%t init=%t: sample %d, step %d: output %v, want %v", cell, backwards, init, b, k, got, want)
								break
							}
						}
					}
					for s := range ns {
						got := y[p.OutValues()+s*batch*units+b*units:][:units]
						for j := range got {
							if math.Abs(got[j]-states[s][j]) > 1e-12 {
								t.Errorf("%v backwards=%t init=%t: sample %d: state %d %v, want %v", cell, backwards, init, b, s, got, states[s])
								break
							}
						}
					}
				}
			}
		}
	}
}
