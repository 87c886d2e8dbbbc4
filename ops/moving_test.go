package ops

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestMovingUpdateByHand checks the host kernel against values worked out
// by hand, and that it rounds m·moving + (1-m)·stat·bessel computed in
// float64 to float32, as BatchNormalization's host update always did.
func TestMovingUpdateByHand(t *testing.T) {
	// momentum 0.75: 0.75·2 + 0.25·6 = 3; 0.75·(-4) + 0.25·8 = -1;
	// with bessel 8/7 on a variance of 5.25: 0.75·1 + 0.25·6 = 2.25.
	for _, tc := range []struct {
		p                  MovingParams
		moving, stat, want []float32
	}{
		{MovingParams{Momentum: 0.75}, []float32{2, -4}, []float32{6, 8}, []float32{3, -1}},
		{MovingParams{Momentum: 0.75, Bessel: 8.0 / 7}, []float32{1}, []float32{5.25}, []float32{2.25}},
		{MovingParams{Momentum: 1}, []float32{7}, []float32{100}, []float32{7}},
		{MovingParams{Momentum: 0}, []float32{7}, []float32{100}, []float32{100}},
	} {
		got := slices.Clone(tc.moving)
		MovingUpdate(tc.p, got, tc.stat)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: moving %v with %v gave %v, want %v", tc.p, tc.moving, tc.stat, got, tc.want)
		}
	}
	// The rounding: 0.99·0.1f + 0.01·0.3f in float64, rounded once.
	moving, stat := []float32{0.1}, []float32{0.3}
	want := float32(0.99*float64(float32(0.1)) + 0.01*float64(float32(0.3))*1.25)
	MovingUpdate(MovingParams{Momentum: 0.99, Bessel: 1.25}, moving, stat)
	if moving[0] != want {
		t.Errorf("rounding: got %v (%08x), want %v (%08x)", moving[0], math.Float32bits(moving[0]), want, math.Float32bits(want))
	}
}

// TestMovingAverageNode checks the node: its Do (the host reference)
// leaves moving alone and returns what MovingUpdate computes, its
// derivatives by finite differences are the momentum and
// (1-momentum)·bessel (the update is linear in both), Inspect carries the
// parameters, and bad arguments are refused.
func TestMovingAverageNode(t *testing.T) {
	p := MovingParams{Momentum: 0.9, Bessel: 4.0 / 3}
	g := gorgonia.NewGraph()
	mv := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 0.5}))
	st := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{3, 0.25, -1}))
	moving := gorgonia.NewTensor(g, tensor.Float64, 1, gorgonia.WithShape(3), gorgonia.WithName("moving"), gorgonia.WithValue(mv))
	stat := gorgonia.NewTensor(g, tensor.Float64, 1, gorgonia.WithShape(3), gorgonia.WithName("stat"), gorgonia.WithValue(st))
	next, err := MovingAverage(moving, stat, p)
	if err != nil {
		t.Fatal(err)
	}
	info, ok := Inspect(next.Op())
	if !ok || info.Kind != OpMovingAverage || info.Moving != p {
		t.Fatalf("Inspect = %+v, %v; want OpMovingAverage with %+v", info, ok, p)
	}
	do := func(m, s []float64) []float64 {
		v, err := next.Op().Do(tensor.New(tensor.WithShape(len(m)), tensor.WithBacking(slices.Clone(m))),
			tensor.New(tensor.WithShape(len(s)), tensor.WithBacking(slices.Clone(s))))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*tensor.Dense).Data().([]float64)
	}
	m0, s0 := slices.Clone(mv.Data().([]float64)), slices.Clone(st.Data().([]float64))
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mv.Data().([]float64), m0) {
		t.Errorf("running the graph changed moving to %v", mv.Data())
	}
	got := next.Value().(*tensor.Dense).Data().([]float64)
	for i := range m0 {
		want := p.Momentum*m0[i] + (1-p.Momentum)*s0[i]*p.Bessel
		if math.Abs(got[i]-want) > 1e-15 {
			t.Errorf("value %d: %v, want %v", i, got[i], want)
		}
	}
	// Finite differences, each input in turn.
	const h = 1e-6
	for i := range m0 {
		for _, tc := range []struct {
			name  string
			which int
			want  float64
		}{{"moving", 0, p.Momentum}, {"stat", 1, (1 - p.Momentum) * p.Bessel}} {
			plus, minus := [2][]float64{slices.Clone(m0), slices.Clone(s0)}, [2][]float64{slices.Clone(m0), slices.Clone(s0)}
			plus[tc.which][i] += h
			minus[tc.which][i] -= h
			d := (do(plus[0], plus[1])[i] - do(minus[0], minus[1])[i]) / (2 * h)
			if math.Abs(d-tc.want) > 1e-8 {
				t.Errorf("∂next[%d]/∂%s[%d] = %v by finite differences, want %v", i, tc.name, i, d, tc.want)
			}
		}
	}
	if _, err := gorgonia.Grad(gorgonia.Must(gorgonia.Sum(next)), moving); err == nil {
		t.Error("a gradient through an update was taken")
	}
	for _, bad := range []struct {
		p    MovingParams
		want string
	}{{MovingParams{Momentum: 1.5}, "momentum"}, {MovingParams{Momentum: 0.5, Bessel: -1}, "Bessel"}} {
		if _, err := MovingAverage(moving, stat, bad.p); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: error %v, want one naming %s", bad.p, err, bad.want)
		}
	}
	other := gorgonia.NewTensor(g, tensor.Float64, 1, gorgonia.WithShape(2), gorgonia.WithName("other"))
	if _, err := MovingAverage(moving, other, p); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("statistics of another shape: error %v", err)
	}
}
