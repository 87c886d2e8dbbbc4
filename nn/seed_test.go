package nn

import (
	"context"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
)

// One seed, the model's, makes a whole program reproducible: the initial
// weights and the shuffles of each Fit without a Seed of its own, two Fit
// calls getting two different orders.
func TestSetSeedMakesEveryFitReproducible(t *testing.T) {
	type run struct {
		orders  [][]int // the first batch of each of two Fit calls
		weights []float32
	}
	fitTwice := func(t *testing.T, seed *uint64, opts ...Option) run {
		t.Helper()
		m := NewSequential(layers.Input(4), layers.Dense(3, layers.Softmax))
		if seed != nil {
			m.SetSeed(*seed)
		}
		if err := m.Compile(newTestSGD(t), losses.CategoricalCrossentropy{}, nil, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		p := newProbe(threeClasses(t))
		var r run
		for range 2 {
			before := len(p.inputs)
			if _, err := m.Fit(context.Background(), p, append([]Option{Epochs(1), BatchSize(70), Verbose(0)}, opts...)...); err != nil {
				t.Fatal(err)
			}
			r.orders = append(r.orders, p.inputs[before])
		}
		ws, err := m.GetWeights()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			r.weights = append(r.weights, w.Data().([]float32)...)
		}
		return r
	}
	seed, other := uint64(5), uint64(6)
	a, b := fitTwice(t, &seed), fitTwice(t, &seed)
	if !slices.Equal(a.orders[0], b.orders[0]) || !slices.Equal(a.orders[1], b.orders[1]) {
		t.Error("two runs with SetSeed(5) shuffled differently")
	}
	if !slices.Equal(a.weights, b.weights) {
		t.Error("two runs with SetSeed(5) trained different weights")
	}
	if slices.Equal(a.orders[0], a.orders[1]) {
		t.Error("the second Fit repeated the first one's shuffle")
	}
	// The controls: another seed, or none, shuffles otherwise.
	if c := fitTwice(t, &other); slices.Equal(a.orders[0], c.orders[0]) {
		t.Error("SetSeed(6) shuffled as SetSeed(5) did")
	}
	if c, d := fitTwice(t, nil), fitTwice(t, nil); slices.Equal(c.orders[0], d.orders[0]) && slices.Equal(c.weights, d.weights) {
		t.Error("two runs without a seed were the same")
	}
	// A Fit's own Seed wins over the model's.
	if c, d := fitTwice(t, &seed, Seed(9)), fitTwice(t, &other, Seed(9)); !slices.Equal(c.orders[0], d.orders[0]) {
		t.Error("Seed(9) did not fix the shuffle whatever the model's seed")
	}
}
