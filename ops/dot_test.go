package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dotCases are the inputs and axes BatchDot is checked on: rank 2, and
// rank 3 along each pair of axes, counted from either end.
var dotCases = []struct {
	a, b         []int
	axisA, axisB int
	out          []int
}{
	{[]int{3, 4}, []int{3, 4}, 1, 1, []int{3, 1}},
	{[]int{2, 5}, []int{2, 5}, -1, -1, []int{2, 1}},
	{[]int{2, 3, 4}, []int{2, 5, 4}, 2, 2, []int{2, 3, 5}},
	{[]int{2, 3, 4}, []int{2, 4, 5}, 2, 1, []int{2, 3, 5}},
	{[]int{2, 4, 3}, []int{2, 4, 5}, 1, 1, []int{2, 3, 5}},
	{[]int{2, 4, 3}, []int{2, 5, 4}, 1, 2, []int{2, 3, 5}},
	{[]int{3, 2, 4}, []int{3, 1, 4}, -1, -1, []int{3, 2, 1}},
}

// TestBatchDotGradients checks both inputs' gradients of BatchDot, after
// L2Normalize or not, against finite differences.
func TestBatchDotGradients(t *testing.T) {
	for ci, c := range dotCases {
		for _, normalize := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v·%v axes (%d, %d) normalize=%t", c.a, c.b, c.axisA, c.axisB, normalize), func(t *testing.T) {
				g := gorgonia.NewGraph()
				rng := rand.New(rand.NewPCG(uint64(ci), 5))
				a := matrix(g, "a", tensor.Shape(c.a), randomData(rng, tensor.Shape(c.a).TotalSize(), 1))
				b := matrix(g, "b", tensor.Shape(c.b), randomData(rng, tensor.Shape(c.b).TotalSize(), 1))
				x, y := a, b
				if normalize {
					var err error
					if x, err = L2Normalize(a, c.axisA); err != nil {
						t.Fatal(err)
					}
					if y, err = L2Normalize(b, c.axisB); err != nil {
						t.Fatal(err)
					}
				}
				out, err := BatchDot(x, y, c.axisA, c.axisB)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out.Shape(), c.out) {
					t.Fatalf("shape %v, want %v", out.Shape(), c.out)
				}
				checkGradients(t, g, flatCost(t, g, rng, out), a, b)
			})
		}
	}
}

// TestL2NormalizeGradients: L2Normalize alone, along each axis of a rank 3
// input and of a matrix.
func TestL2NormalizeGradients(t *testing.T) {
	for ci, c := range []struct {
		shape []int
		axis  int
	}{{[]int{3, 4}, 1}, {[]int{2, 3, 4}, 1}, {[]int{2, 3, 4}, -1}, {[]int{2, 1, 3}, 1}} {
		t.Run(fmt.Sprintf("%v axis %d", c.shape, c.axis), func(t *testing.T) {
			g := gorgonia.NewGraph()
			rng := rand.New(rand.NewPCG(uint64(ci), 6))
			x := matrix(g, "x", tensor.Shape(c.shape), randomData(rng, tensor.Shape(c.shape).TotalSize(), 1))
			y, err := L2Normalize(x, c.axis)
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, flatCost(t, g, rng, y), x)
		})
	}
}

// TestBatchDotValues: Keras' own example of Dot(axes=(1, 2)), a dot
// product of rows, and cosine similarities worked out by hand.
func TestBatchDotValues(t *testing.T) {
	// keras.layers.Dot(axes=(1, 2)) of np.arange(10).reshape(1, 5, 2) and
	// np.arange(10, 20).reshape(1, 2, 5) is [[[260, 360], [320, 445]]].
	x, y := make([]float64, 10), make([]float64, 10)
	for i := range x {
		x[i], y[i] = float64(i), float64(10+i)
	}
	g := gorgonia.NewGraph()
	out, err := BatchDot(matrix(g, "x", tensor.Shape{1, 5, 2}, x), matrix(g, "y", tensor.Shape{1, 2, 5}, y), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Op().(batchMatMulOp).p
	sameFloats(t, "Keras' example", run(t, batchMatMulOp{p: p}, t64(x, 1, 5, 2), t64(y, 1, 2, 5)), []float64{260, 360, 320, 445})

	// Rows: (1, 2, 3)·(4, 5, 6) = 32 and (1, 0, 0)·(0, 2, 0) = 0.
	p = BatchMatMulParams{Batch: 2, M: 1, K: 3, N: 1, A: []int{2, 3}, B: []int{2, 3}, Out: []int{2, 1}}
	sameFloats(t, "rows", run(t, batchMatMulOp{p: p}, t64([]float64{1, 2, 3, 1, 0, 0}, 2, 3), t64([]float64{4, 5, 6, 0, 2, 0}, 2, 3)), []float64{32, 0})

	// Normalized: (3, 4) is (0.6, 0.8); a zero row stays zero, and its
	// gradient is dy·1e6 (the norm's floor, √1e-12).
	np := L2NormParams{Shape: []int{2, 2}, Axis: 1}
	sameFloats(t, "normalized", run(t, l2NormOp{p: np}, t64([]float64{3, 4, 0, 0}, 2, 2)), []float64{0.6, 0.8, 0, 0})
	// d(x/|x|) = (dy - y·(y·dy))/|x|: at (3, 4) with dy (1, 0), (1 - 0.36, -0.48)/5.
	dx := run(t, l2NormOp{p: np, grad: true}, t64([]float64{3, 4, 0, 0}, 2, 2), t64([]float64{1, 0, 2, -1}, 2, 2))
	want := []float64{0.64 / 5, -0.48 / 5, 2e6, -1e6}
	for i := range want {
		if math.Abs(dx[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Errorf("normalize's gradient %v, want %v", dx, want)
			break
		}
	}
	// Along axis 1 of (1, 2, 2): each column is a run, (3, 4) and (4, -3).
	np = L2NormParams{Shape: []int{1, 2, 2}, Axis: 1}
	if np.Outer() != 1 || np.Len() != 2 || np.Inner() != 2 {
		t.Errorf("runs of %v: outer %d, len %d, inner %d", np, np.Outer(), np.Len(), np.Inner())
	}
	sameFloats(t, "normalized along axis 1", run(t, l2NormOp{p: np}, t64([]float64{3, 4, 4, -3}, 1, 2, 2)), []float64{0.6, 0.8, 0.8, -0.6})
}

func TestBatchDotRefusesBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	mk := func(shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...))
	}
	cases := []struct {
		a, b         *gorgonia.Node
		axisA, axisB int
		want         string
	}{
		{mk(2, 3), mk(2, 4), 1, 1, "3 != 4"},
		{mk(2, 3, 4), mk(2, 3, 4), 2, 1, "4 != 3"},
		{mk(2, 3), mk(2, 3), 0, 0, "batch axis 0"},
		{mk(2, 3, 4), mk(2, 3, 4), -3, -3, "batch axis 0"},
		{mk(2, 3), mk(2, 3), 2, 2, "non-batch axes 1 to 1"},
		{mk(2, 3), mk(3, 3), 1, 1, "different batch sizes"},
		{mk(2, 3), mk(2, 3, 3), 1, 1, "rank 2"},
		{mk(2, 2, 2, 2), mk(2, 2, 2, 2), 3, 3, "rank 3"},
	}
	for _, c := range cases {
		if _, err := BatchDot(c.a, c.b, c.axisA, c.axisB); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("BatchDot of %v and %v along (%d, %d): %v, want an error saying %q", c.a.Shape(), c.b.Shape(), c.axisA, c.axisB, err, c.want)
		}
	}
	for _, axis := range []int{0, 2, -2} {
		if _, err := L2Normalize(mk(2, 3), axis); err == nil {
			t.Errorf("L2Normalize along %d of (2, 3) was accepted", axis)
		}
	}

	// Inspect gives copies of the op's parameters.
	y, err := BatchDot(mk(2, 3, 4), mk(2, 5, 4), -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	info, ok := Inspect(y.Op())
	if want := (BatchMatMulParams{Batch: 2, M: 3, K: 4, N: 5, TransB: true}); !ok || info.Kind != OpBatchMatMul ||
		info.BatchMatMul.M != want.M || info.BatchMatMul.K != want.K || info.BatchMatMul.N != want.N ||
		info.BatchMatMul.TransA || !info.BatchMatMul.TransB || !slices.Equal(info.BatchMatMul.Out, []int{2, 3, 5}) {
		t.Errorf("Inspect: %+v, %v", info, ok)
	}
	info.BatchMatMul.A[0] = 99
	if y.Op().(batchMatMulOp).p.A[0] != 2 {
		t.Error("Info shares the op's shapes")
	}
	n, err := L2Normalize(mk(2, 3, 4), -2)
	if err != nil {
		t.Fatal(err)
	}
	info, ok = Inspect(n.Op())
	if !ok || info.Kind != OpL2Normalize || info.L2Norm.Axis != 1 || !slices.Equal(info.L2Norm.Shape, []int{2, 3, 4}) {
		t.Errorf("Inspect: %+v, %v", info, ok)
	}
	info, ok = Inspect(l2NormOp{p: info.L2Norm, grad: true})
	if !ok || info.Kind != OpL2NormalizeGrad {
		t.Errorf("Inspect of the gradient: %+v, %v", info, ok)
	}
}
