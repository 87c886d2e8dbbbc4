package layers

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
)

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
