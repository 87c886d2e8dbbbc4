package nn

import (
	"context"
	"math"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

// fitTwins trains two copies of the model build makes (seeded alike), each
// with its own optimizer from newOpt, with Fit and opts: [0] on gorgonia's
// tape machine, [1] on the plan machine, which the test requires. It
// returns the models and each one's losses per epoch.
func fitTwins(t *testing.T, build func() *Sequential, newOpt func() (optim.Optimizer, error), loss losses.Loss, ds data.Dataset, opts ...Option) ([2]*Sequential, [2][]float64) {
	t.Helper()
	var ms [2]*Sequential
	var hist [2][]float64
	for i, reference := range []bool{true, false} {
		opt, err := newOpt()
		if err != nil {
			t.Fatal(err)
		}
		m := build()
		if err := m.Compile(opt, loss, nil, OnDevice("/CPU:0")); err != nil {
			t.Fatal(err)
		}
		m.compiled.reference = reference
		t.Cleanup(func() { m.Close() })
		h, err := m.Fit(context.Background(), ds, append([]Option{Verbose(0)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		ms[i], hist[i] = m, h.Get("loss")
	}
	requirePlanMachines(t, ms[1])
	return ms, hist
}

// requireSameTraining fails the test unless the twins' losses agree within
// 1e-5 relative at every epoch and their weights within 1e-5.
func requireSameTraining(t *testing.T, ms [2]*Sequential, loss [2][]float64) {
	t.Helper()
	if len(loss[0]) == 0 || len(loss[0]) != len(loss[1]) {
		t.Fatalf("losses %v and %v", loss[0], loss[1])
	}
	for e := range loss[0] {
		if d := math.Abs(loss[1][e] - loss[0][e]); !(d <= 1e-5*math.Max(1e-3, math.Abs(loss[0][e]))) {
			t.Fatalf("epoch %d: loss %v on the plan machine, %v on the tape machine", e, loss[1][e], loss[0][e])
		}
	}
	for li, l := range ms[0].layers {
		for pi, prm := range l.Params() {
			want := prm.Value.Data().([]float32)
			got := ms[1].layers[li].Params()[pi].Value.Data().([]float32)
			for j := range want {
				if d := math.Abs(float64(got[j] - want[j])); d > 1e-5*(1+math.Abs(float64(want[j]))) {
					t.Fatalf("%s/%s[%d] = %v on the plan machine, %v on the tape machine", l.Name(), prm.Name, j, got[j], want[j])
				}
			}
		}
	}
}
