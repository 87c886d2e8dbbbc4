package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestPenaltyValuesAndGradients(t *testing.T) {
	if got := penalty(PenaltyParams{L1: 0.5, L2: 2}, []float64{1, -2, 0}); got != 0.5*3+2*5 {
		t.Errorf("penalty of (1, -2, 0) = %v, want 11.5", got)
	}
	if got := penalty(PenaltyParams{L2: 1, Scale: 0.25}, []float64{2}); got != 1 {
		t.Errorf("scaled penalty = %v, want 1", got)
	}
	for i, p := range []PenaltyParams{{L1: 0.3}, {L2: 0.7}, {L1: 0.1, L2: 0.2, Scale: 0.5}} {
		g := gorgonia.NewGraph()
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		x := matrix(g, "x", tensor.Shape{3, 4}, randomData(rng, 12, 1))
		w := matrix(g, "w", tensor.Shape{4, 2}, randomData(rng, 8, 1))
		z, err := Affine(x, w, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		tn := matrix(g, "t", tensor.Shape{3, 2}, randomData(rng, 6, 1))
		loss, err := Loss(MeanSquaredError, z, tn)
		if err != nil {
			t.Fatal(err)
		}
		pen, err := Penalty(w, p)
		if err != nil {
			t.Fatal(err)
		}
		cost, err := gorgonia.Add(loss, pen)
		if err != nil {
			t.Fatal(err)
		}
		// w gets gradients along two paths, summed by gorgonia's Add.
		checkGradients(t, g, cost, x, w)
	}
	if _, err := Penalty(gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float64), PenaltyParams{L1: math.NaN()}); err == nil {
		t.Error("a NaN l1 was accepted")
	}
}
