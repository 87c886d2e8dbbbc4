package opstest

import (
	"math/rand/v2"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RecurrenceGraph is a small float32 training graph of a Recurrence, for
// the machines' tests: sequences x (Batch, 5, 3) times a kernel wk (3,
// G·4) plus a bias, as a recurrent layer projects its inputs, then the
// Recurrence of 4 units (a GRU with a recurrent bias), its output
// flattened times wo, mean squared error against y.
type RecurrenceGraph = Graph

// BuildRecurrenceGraph builds a RecurrenceGraph of cell with its
// gradients, its values drawn from seed: two graphs of one seed start
// from the same values.
func BuildRecurrenceGraph(seed uint64, cell ops.RecurrenceCell, batch int, backwards, sequences bool) (*RecurrenceGraph, error) {
	return BuildRecurrenceGraphWith(seed, cell, batch, RecurrenceVariant{Backwards: backwards, Sequences: sequences})
}

// RecurrenceVariant says how a RecurrenceGraph's Recurrence reads its
// steps: backwards, outputting the sequence, from initial states (which
// it trains), with a mask (a constant that skips some steps of some
// samples, computed from x by a Mask op), outputting its last states too.
type RecurrenceVariant struct {
	Backwards, Sequences, Init, Masked, States bool
	// ZeroMasked: zero output at the masked steps (ops.RecurrenceParams').
	ZeroMasked bool
	// RecDropped: a constant recurrent dropout mask (batch, G·units) of
	// zeros and twos (rate 0.5), different for each gate.
	RecDropped bool
	// Steps is the sequences' length; 0 means 5.
	Steps int
}

// BuildRecurrenceGraphWith is BuildRecurrenceGraph of a variant.
func BuildRecurrenceGraphWith(seed uint64, cell ops.RecurrenceCell, batch int, v RecurrenceVariant) (*RecurrenceGraph, error) {
	backwards, sequences := v.Backwards, v.Sequences
	const features, units = 3, 4
	steps := 5
	if v.Steps > 0 {
		steps = v.Steps
	}
	rng := rand.New(rand.NewPCG(seed, 29))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return normalTensor(g, rng, name, scale, shape...)
	}
	p := ops.RecurrenceParams{Cell: cell, Batch: batch, Steps: steps, Units: units, Act: ops.Tanh, RecAct: ops.Sigmoid,
		Backwards: backwards, Sequences: sequences, States: v.States, ZeroMasked: v.ZeroMasked}
	gu := p.Gates() * units
	outCols := units
	if sequences {
		outCols *= steps
	}
	if v.States {
		outCols += p.StateCount() * units
	}
	m := &RecurrenceGraph{G: g, X: mk("x", 1, batch, steps, features), Y: mk("y", 0.5, batch, 2)}
	wk, bk, rec, wo := mk("wk", 0.5, features, gu), mk("bk", 0.2, gu), mk("rec", 0.5, units, gu), mk("wo", 0.3, outCols, 2)
	m.Learnables = []*gorgonia.Node{wk, bk, rec, wo}
	var in ops.RecurrenceInputs
	if cell == ops.GRUCell {
		in.RecBias = mk("rb", 0.2, gu)
		m.Learnables = append(m.Learnables, in.RecBias)
	}
	if v.Init {
		in.H0 = mk("h0", 0.5, batch, units)
		m.Learnables = append(m.Learnables, in.H0)
		if cell == ops.LSTMCell {
			in.C0 = mk("c0", 0.5, batch, units)
			m.Learnables = append(m.Learnables, in.C0)
		}
	}
	if v.Masked {
		// Sample b skips step (b mod 5) and, for odd b, its last two: its
		// features there are zero, and a Mask op of x says so.
		xv := m.X.Value().Data().([]float32)
		for b := range batch {
			for t := range steps {
				if t == b%steps || (b%2 == 1 && t >= steps-2) {
					clear(xv[(b*steps+t)*features:][:features])
				}
			}
		}
		var err error
		if in.Mask, err = ops.Mask(m.X, 0); err != nil {
			return nil, err
		}
	}
	if v.RecDropped {
		vals := make([]float32, batch*gu)
		for i := range vals {
			if rng.IntN(2) == 0 {
				vals[i] = 2
			}
		}
		in.RecDrop = gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(batch, gu), gorgonia.WithName("recdrop"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(batch, gu), tensor.WithBacking(vals))))
	}
	flat, err := ops.Reshape(m.X, []int{batch * steps, features}, false)
	if err != nil {
		return nil, err
	}
	proj, err := ops.Affine(flat, wk, bk, false)
	if err != nil {
		return nil, err
	}
	if proj, err = ops.Reshape(proj, []int{batch, steps, gu}, true); err != nil {
		return nil, err
	}
	h, err := ops.RecurrenceWith(proj, rec, in, p)
	if err != nil {
		return nil, err
	}
	if h, err = ops.Reshape(h, []int{batch, outCols}, true); err != nil {
		return nil, err
	}
	z, err := ops.Affine(h, wo, nil, true)
	if err != nil {
		return nil, err
	}
	if m.Loss, err = ops.Loss(ops.MeanSquaredError, z, m.Y); err != nil {
		return nil, err
	}
	if err := withGradients(m.Loss, &m.LossValue, m.Learnables, "recurrence"); err != nil {
		return nil, err
	}
	return m, nil
}
