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

// flatCost is the mean squared error of y, flattened to (batch, rest),
// against a fixed random target: a scalar whose gradient reaches every
// value of y with its own weight.
func flatCost(t *testing.T, g *gorgonia.ExprGraph, rng *rand.Rand, y *gorgonia.Node) *gorgonia.Node {
	t.Helper()
	f := y
	if y.Dims() != 2 {
		var err error
		if f, err = Flatten(y, true); err != nil {
			t.Fatal(err)
		}
	}
	s := f.Shape()
	tn := matrix(g, "target", s.Clone(), randomData(rng, s.TotalSize(), 1))
	cost, err := Loss(MeanSquaredError, f, tn)
	if err != nil {
		t.Fatal(err)
	}
	return cost
}

var binaryKinds = []BinaryKind{BinaryAdd, BinarySubtract, BinaryMultiply, BinaryMaximum, BinaryMinimum, BinaryDivide}

// broadcastCases are the pairs of shapes the binary ops are checked on:
// equal shapes, and each input broadcast along one or more axes, on
// either side, with the batch axis too.
var broadcastCases = [][2][]int{
	{{4, 3}, {4, 3}},
	{{4, 1}, {4, 3}},
	{{4, 3}, {4, 1}},
	{{1, 3}, {4, 3}},
	{{1, 1}, {4, 3}},
	{{2, 3, 4}, {2, 3, 4}},
	{{2, 1, 4}, {2, 3, 1}},
	{{2, 3, 1}, {2, 1, 1}},
	{{2, 1, 3, 1}, {2, 2, 1, 2}},
}

func TestBinaryGradients(t *testing.T) {
	for ci, shapes := range broadcastCases {
		for _, kind := range binaryKinds {
			t.Run(fmt.Sprintf("%v %v %v", kind, shapes[0], shapes[1]), func(t *testing.T) {
				g := gorgonia.NewGraph()
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(kind)))
				sa, sb := tensor.Shape(shapes[0]), tensor.Shape(shapes[1])
				a := matrix(g, "a", sa, randomData(rng, sa.TotalSize(), 1))
				b := matrix(g, "b", sb, randomData(rng, sb.TotalSize(), 1))
				y, err := Binary(kind, a, b)
				if err != nil {
					t.Fatal(err)
				}
				if want := (BinaryParams{A: shapes[0], B: shapes[1]}).Out(); !slices.Equal(y.Shape(), want) {
					t.Fatalf("output shape %v, want %v", y.Shape(), want)
				}
				checkGradients(t, g, flatCost(t, g, rng, y), a, b)
			})
		}
	}
}

// TestAverageChainGradients: Keras' Average of three inputs, an Add chain
// divided by 3, with one input broadcast, and a Scale.
func TestAverageChainGradients(t *testing.T) {
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(7, 7))
	a := matrix(g, "a", tensor.Shape{3, 4}, randomData(rng, 12, 1))
	b := matrix(g, "b", tensor.Shape{3, 1}, randomData(rng, 3, 1))
	c := matrix(g, "c", tensor.Shape{3, 4}, randomData(rng, 12, 1))
	s, err := Add(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = Add(s, c); err != nil {
		t.Fatal(err)
	}
	avg, err := DivideBy(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	y, err := Scale(avg, -1.5)
	if err != nil {
		t.Fatal(err)
	}
	checkGradients(t, g, flatCost(t, g, rng, y), a, b, c)
}

// run applies op to float64 tensors of the given shapes and values.
func run(t *testing.T, op gorgonia.Op, args ...*tensor.Dense) []float64 {
	t.Helper()
	vs := make([]gorgonia.Value, len(args))
	for i, a := range args {
		vs[i] = a
	}
	v, err := op.Do(vs...)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*tensor.Dense).Data().([]float64)
}

func t64(data []float64, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

func sameFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %v, want %v", what, got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
	}
}

// TestBinaryValues: values and gradients worked out by hand, ties of
// Maximum and Minimum going to the first input (TensorFlow's
// greater_equal and less_equal masks), NaNs propagating forward.
func TestBinaryValues(t *testing.T) {
	a, b := []float64{1, 2, 3, math.NaN()}, []float64{1, 0, 5, 2}
	dy := []float64{10, 20, 30, 40}
	nan := math.NaN()
	q := func(a, b float64) float64 { return a / b } // rounded at run time, as the op divides
	cases := []struct {
		kind      BinaryKind
		y, da, db []float64
	}{
		{BinaryAdd, []float64{2, 2, 8, nan}, dy, dy},
		{BinarySubtract, []float64{0, 2, -2, nan}, dy, []float64{-10, -20, -30, -40}},
		{BinaryMultiply, []float64{1, 0, 15, nan}, []float64{10, 0, 150, 80}, []float64{10, 40, 90, nan}},
		// a ≥ b: 1≥1 (a tie: a gets it all), 2≥0, not 3≥5, not NaN≥2.
		{BinaryMaximum, []float64{1, 2, 5, nan}, []float64{10, 20, 0, 0}, []float64{0, 0, 30, 40}},
		// a ≤ b: 1≤1, not 2≤0, 3≤5, not NaN≤2.
		{BinaryMinimum, []float64{1, 0, 3, nan}, []float64{10, 0, 30, 0}, []float64{0, 20, 0, 40}},
		// a/b, dy/b and dy·(-a/b)/b: 1/1, 2/0 = +Inf (its gradients ±Inf),
		// 3/5 = 0.6, NaN; 30·(-3/5)/5 = -3.6.
		{BinaryDivide, []float64{1, math.Inf(1), 0.6, nan}, []float64{10, math.Inf(1), 6, 20}, []float64{-10, math.Inf(-1), 30 * q(q(-3, 5), 5), nan}},
	}
	for _, c := range cases {
		p := BinaryParams{Kind: c.kind, A: []int{2, 2}, B: []int{2, 2}}
		sameFloats(t, c.kind.String(), run(t, binaryOp{p: p}, t64(a, 2, 2), t64(b, 2, 2)), c.y)
		for wrt, want := range [][]float64{c.da, c.db} {
			p.Wrt = wrt
			sameFloats(t, fmt.Sprintf("%v gradient of input %d", c.kind, wrt), run(t, binaryGradOp{p: p}, t64(a, 2, 2), t64(b, 2, 2), t64(dy, 2, 2)), want)
		}
	}
	// NaN in b: Maximum and Minimum give NaN either way round.
	for _, kind := range []BinaryKind{BinaryMaximum, BinaryMinimum} {
		p := BinaryParams{Kind: kind, A: []int{1, 2}, B: []int{1, 2}}
		sameFloats(t, kind.String()+" of a NaN b", run(t, binaryOp{p: p}, t64([]float64{1, 2}, 1, 2), t64([]float64{nan, 0}, 1, 2)), []float64{nan, map[BinaryKind]float64{BinaryMaximum: 2, BinaryMinimum: 0}[kind]})
	}

	// Broadcast: a (2, 1) against b (2, 3); each a[r] meets a row of b.
	ab, bb := []float64{1, 2}, []float64{1, 2, 3, 4, 5, 6}
	dyb := []float64{1, 10, 100, 2, 20, 200}
	bcast := []struct {
		kind      BinaryKind
		y, da, db []float64
	}{
		{BinaryAdd, []float64{2, 3, 4, 6, 7, 8}, []float64{111, 222}, dyb},
		{BinarySubtract, []float64{0, -1, -2, -2, -3, -4}, []float64{111, 222}, []float64{-1, -10, -100, -2, -20, -200}},
		// da[r] = Σ_c dy[r,c]·b[r,c]; db = dy·a[r].
		{BinaryMultiply, []float64{1, 2, 3, 8, 10, 12}, []float64{1 + 20 + 300, 8 + 100 + 1200}, []float64{1, 10, 100, 4, 40, 400}},
		// a ≥ b: row 0: 1≥1 (a tie), not 1≥2, not 1≥3; row 1: never.
		{BinaryMaximum, []float64{1, 2, 3, 4, 5, 6}, []float64{1, 0}, []float64{0, 10, 100, 2, 20, 200}},
		{BinaryMinimum, []float64{1, 1, 1, 2, 2, 2}, []float64{111, 222}, []float64{0, 0, 0, 0, 0, 0}},
		// da[r] = Σ_c dy[r,c]/b[r,c]; db = dy·(-a[r]/b)/b.
		{BinaryDivide, []float64{1, q(1, 2), q(1, 3), q(2, 4), q(2, 5), q(2, 6)}, []float64{1 + q(10, 2) + q(100, 3), q(2, 4) + q(20, 5) + q(200, 6)},
			[]float64{-1, 10 * q(q(-1, 2), 2), 100 * q(q(-1, 3), 3), 2 * q(q(-2, 4), 4), 20 * q(q(-2, 5), 5), 200 * q(q(-2, 6), 6)}},
	}
	for _, c := range bcast {
		p := BinaryParams{Kind: c.kind, A: []int{2, 1}, B: []int{2, 3}}
		sameFloats(t, c.kind.String()+" broadcast", run(t, binaryOp{p: p}, t64(ab, 2, 1), t64(bb, 2, 3)), c.y)
		for wrt, want := range [][]float64{c.da, c.db} {
			p.Wrt = wrt
			sameFloats(t, fmt.Sprintf("%v broadcast gradient of input %d", c.kind, wrt), run(t, binaryGradOp{p: p}, t64(ab, 2, 1), t64(bb, 2, 3), t64(dyb, 2, 3)), want)
		}
	}

	sp := ScaleParams{Factor: 3, Divide: true}
	sameFloats(t, "x/3", run(t, scaleOp{p: sp, dims: 2}, t64([]float64{3, 1, -6, 0}, 2, 2)), []float64{1, 1.0 / 3, -2, 0})
	sameFloats(t, "x·-2", run(t, scaleOp{p: ScaleParams{Factor: -2}, dims: 1}, t64([]float64{3, 1}, 2)), []float64{-6, -2})
}

// TestBroadcastLayout: merged axes and strides.
func TestBroadcastLayout(t *testing.T) {
	cases := []struct {
		a, b       []int
		dims, s, t []int
	}{
		{[]int{4, 3}, []int{4, 3}, []int{12}, []int{1}, []int{1}},
		{[]int{4, 1}, []int{4, 3}, []int{4, 3}, []int{1, 0}, []int{3, 1}},
		{[]int{1, 3}, []int{4, 3}, []int{4, 3}, []int{0, 1}, []int{3, 1}},
		{[]int{1, 1}, []int{4, 3}, []int{12}, []int{0}, []int{1}},
		{[]int{2, 1, 4}, []int{2, 3, 1}, []int{2, 3, 4}, []int{4, 0, 1}, []int{3, 1, 0}},
		// An axis of 1 on both sides is dropped; axes broadcast alike merge.
		{[]int{2, 1, 3, 5, 1}, []int{2, 1, 3, 5, 7}, []int{30, 7}, []int{1, 0}, []int{7, 1}},
		{[]int{1, 1}, []int{1, 1}, []int{1}, []int{1}, []int{1}},
	}
	for _, c := range cases {
		l := BinaryParams{A: c.a, B: c.b}.Layout()
		if !slices.Equal(l.Dims, c.dims) || !slices.Equal(l.StrideA, c.s) || !slices.Equal(l.StrideB, c.t) {
			t.Errorf("layout of %v and %v: %+v, want dims %v, strides %v and %v", c.a, c.b, l, c.dims, c.s, c.t)
		}
	}
}

func TestBinaryRefusesBadShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	mk := func(shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...))
	}
	for _, c := range [][2]*gorgonia.Node{
		{mk(4, 3), mk(4, 2)},
		{mk(4, 3), mk(4, 3, 1)},
		{mk(2, 1, 2, 1, 2, 1, 2), mk(2, 2, 1, 2, 1, 2, 1)}, // seven alternating runs
	} {
		if _, err := Add(c[0], c[1]); err == nil {
			t.Errorf("Add of shapes %v and %v was accepted", c[0].Shape(), c[1].Shape())
		}
	}
	if _, err := Binary(BinaryKind(99), mk(2, 2), mk(2, 2)); err == nil {
		t.Error("an unknown kind was accepted")
	}
	if _, err := DivideBy(mk(2, 2), 0); err == nil {
		t.Error("a division by 0 was accepted")
	}
	if _, err := Scale(mk(2, 2), math.Inf(1)); err == nil {
		t.Error("an infinite factor was accepted")
	}
}

// TestInspectMergeOps: Info carries the params, and its shapes are copies.
func TestInspectMergeOps(t *testing.T) {
	p := BinaryParams{Kind: BinaryMaximum, A: []int{2, 1}, B: []int{2, 3}, Wrt: 1}
	info, ok := Inspect(binaryGradOp{p: p})
	if !ok || info.Kind != OpBinaryGrad || info.Binary.Kind != BinaryMaximum || info.Binary.Wrt != 1 || !slices.Equal(info.Binary.A, p.A) {
		t.Fatalf("Inspect: %+v, %v", info, ok)
	}
	info.Binary.A[0] = 99
	if p.A[0] != 2 {
		t.Error("Info shares the op's shapes")
	}
	if info, ok := Inspect(binaryOp{p: p}); !ok || info.Kind != OpBinary {
		t.Errorf("Inspect: %+v", info)
	}
	if info, ok := Inspect(scaleOp{p: ScaleParams{Factor: 0.5}}); !ok || info.Kind != OpScale || info.Scale.Factor != 0.5 {
		t.Errorf("Inspect: %+v", info)
	}
}

// TestScaleOfScalarGradients: a scalar scaled, as a model of several
// outputs weighs each output's loss, and its value.
func TestScaleOfScalarGradients(t *testing.T) {
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(8, 8))
	a := matrix(g, "a", tensor.Shape{3, 4}, randomData(rng, 12, 1))
	cost, err := Scale(flatCost(t, g, rng, a), 0.7)
	if err != nil {
		t.Fatal(err)
	}
	if cost.Dims() != 0 {
		t.Fatalf("Scale of a scalar has shape %v", cost.Shape())
	}
	checkGradients(t, g, cost, a)
	v, err := scaleOp{p: ScaleParams{Factor: 0.5}}.Do(gorgonia.NewF64(3))
	if err != nil || float64(*v.(*gorgonia.F64)) != 1.5 {
		t.Errorf("3·0.5 = %v, %v; want 1.5", v, err)
	}
}

// TestBinaryReLUForward checks a merge with its ReLU in one pass against
// the merge, then the ReLU activation, bit for bit: an Add of one shape
// (the chunked pass, over more values than a chunk), a broadcast Add and a
// Multiply (the merge, then the ReLU), with NaN among the inputs.
func TestBinaryReLUForward(t *testing.T) {
	for _, p := range []BinaryParams{
		{Kind: BinaryAdd, A: []int{3, 20000}, B: []int{3, 20000}},
		{Kind: BinaryAdd, A: []int{4, 5}, B: []int{1, 5}},
		{Kind: BinaryMultiply, A: []int{6, 7}, B: []int{6, 7}},
	} {
		size := func(s []int) int { return s[0] * s[1] }
		rng := rand.New(rand.NewPCG(uint64(size(p.A)), 2))
		a, b := make([]float32, size(p.A)), make([]float32, size(p.B))
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		a[1] = float32(math.NaN())
		n := size(p.Out())
		want, got := make([]float32, n), make([]float32, n)
		BinaryForward(p, a, b, want)
		ActivationForward(ReLU, 0, n, want, want)
		BinaryReLUForward(p, a, b, got)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v %v %v: value %d = %v, want %v", p.Kind, p.A, p.B, i, got[i], want[i])
			}
		}
	}
}
