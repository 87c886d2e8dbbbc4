package ops

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRecurrence runs the CPU's kernels of an LSTM(128) over 100
// timesteps of batch 32 (issue 30's benchmark shape), the forward pass
// and the backward pass from its saved planes, on buffers made once: the
// allocations it reports are the fan-out to threads (the products' and
// the cells'), no buffers.
func BenchmarkRecurrence(b *testing.B) {
	p := RecurrenceParams{Cell: LSTMCell, Batch: 32, Steps: 100, Units: 128, Act: Tanh, RecAct: Sigmoid, Sequences: true}
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(scale * rng.NormFloat64())
		}
		return v
	}
	gu := p.Gates() * p.Units
	proj, rec := fill(p.Batch*p.Steps*gu, 1), fill(p.Units*gu, 0.1)
	dy := fill(p.Batch*p.Steps*p.Units, 1)
	y, ws := make([]float32, len(dy)), make([]float32, p.Workspace())
	n := 0
	for _, v := range p.GradParts() {
		n += v
	}
	out := make([]float32, n)
	saved := p
	saved.Saved = true
	b.ReportAllocs()
	for b.Loop() {
		RecurrenceForward(p, proj, rec, nil, y, ws)
		RecurrenceBackward(saved, proj, rec, nil, dy, out, ws)
	}
}
