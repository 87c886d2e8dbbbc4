package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// uniformValues returns n values drawn by rng uniformly from
// [-scale, scale).
func uniformValues(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * (2*rng.Float64() - 1)
	}
	return v
}

// float64Node makes a float64 node of g named name, of the given shape,
// holding vals (not a copy).
func float64Node(g *gorgonia.ExprGraph, name string, vals []float64, shape ...int) *gorgonia.Node {
	return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
		gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(vals))))
}

// mseCost returns the mean squared error of out, its batch samples
// flattened into rows, against target (as many values as out), a node of
// out's graph named name.
func mseCost(t *testing.T, out *gorgonia.Node, batch int, target []float64, name string) *gorgonia.Node {
	t.Helper()
	n := out.Shape().TotalSize()
	flat, err := ops.Reshape(out, []int{batch, n / batch}, true)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := ops.Loss(ops.MeanSquaredError, flat, float64Node(out.Graph(), name, target, batch, n/batch))
	if err != nil {
		t.Fatal(err)
	}
	return cost
}

// mseCostOfOutputs returns the sum over outs of each one's mseCost
// against targets drawn by rng from [-1, 1), named y0, y1, ...
func mseCostOfOutputs(t *testing.T, outs []Flow, batch int, rng *rand.Rand) *gorgonia.Node {
	t.Helper()
	var cost *gorgonia.Node
	for i, o := range outs {
		c := mseCost(t, o.Node, batch, uniformValues(rng, o.Node.Shape().TotalSize(), 1), fmt.Sprintf("y%d", i))
		if cost == nil {
			cost = c
			continue
		}
		var err error
		if cost, err = gorgonia.Add(cost, c); err != nil {
			t.Fatal(err)
		}
	}
	return cost
}

// checkGradients compares the symbolic gradients of cost, a float64
// scalar of graph g, with respect to each of wrt against central finite
// differences (step 1e-6): each within 1e-7·max(1, |finite difference|).
// It runs the graph at the unperturbed values last, so a value read from
// the graph (gorgonia.Read) afterwards is the one of those values.
func checkGradients(t *testing.T, g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt ...*gorgonia.Node) {
	t.Helper()
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
	for i, n := range wrt {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		analytic[i] = slices.Clone(gv.Data().([]float64))
	}
	const eps = 1e-6
	for i, n := range wrt {
		vals := n.Value().Data().([]float64)
		for k, orig := range vals {
			vals[k] = orig + eps
			up := eval()
			vals[k] = orig - eps
			down := eval()
			vals[k] = orig
			numeric := (up - down) / (2 * eps)
			if a := analytic[i][k]; math.Abs(a-numeric) > 1e-7*max(1, math.Abs(numeric)) {
				t.Errorf("d cost/d %s[%d]: analytic %.10g, finite difference %.10g", n.Name(), k, a, numeric)
			}
		}
	}
	eval()
}
