package layers

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LeakyReLU, ELU and PReLU on a 2×3 image of one channel, by hand: Keras'
// documented LeakyReLU examples, e^-2 - 1 and so on.
func TestAdvancedActivationValues(t *testing.T) {
	x := []float32{-3, -1, 0, 2, -2, 5}
	em := func(alpha, v float64) float32 { return float32(alpha * math.Expm1(v)) }
	prelu := NewPReLU(AlphaInitializer(constant(0.25)))
	for _, c := range []struct {
		l    Layer
		want []float32
	}{
		{NewLeakyReLU(0.3), []float32{-0.9, -0.3, 0, 2, -0.6, 5}},
		{NewLeakyReLU(0.1), []float32{-0.3, -0.1, 0, 2, -0.2, 5}},
		{NewELU(1), []float32{em(1, -3), em(1, -1), 0, 2, em(1, -2), 5}},
		{NewELU(0.5), []float32{em(0.5, -3), em(0.5, -1), 0, 2, em(0.5, -2), 5}},
	} {
		shape, got := callOn(t, c.l, []int{2, 3, 1}, 1, x)
		if !slices.Equal(shape, []int{2, 3, 1}) || !near(got, c.want, 1e-6) {
			t.Errorf("%s: %v %v, want %v", c.l.Type(), shape, got, c.want)
		}
	}
	// PReLU needs its weight node: build, then call with alpha bound.
	if _, err := prelu.Build([]int{2, 3, 1}, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	in := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(1, 2, 3, 1), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2, 3, 1), tensor.WithBacking(x))))
	a := prelu.Params()[0].Value
	alpha := gorgonia.NewTensor(g, tensor.Float32, a.Dims(), gorgonia.WithShape(a.Shape()...), gorgonia.WithName("alpha"), gorgonia.WithValue(a))
	f, err := prelu.Call(Flow{Node: in}, []*gorgonia.Node{alpha})
	if err != nil {
		t.Fatal(err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Node.Value().Data().([]float32), []float32{-0.75, -0.25, 0, 2, -0.5, 5}; !slices.Equal(got, want) {
		t.Errorf("PReLU with alpha 0.25: %v, want %v", got, want)
	}
}

func near(got, want []float32, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol*math.Max(1, math.Abs(float64(want[i]))) {
			return false
		}
	}
	return true
}

// PReLU's alpha has the sample's shape but 1 along the shared axes, as
// Keras': on (5, 5, 3) images with shared_axes [1, 2], 3 values.
func TestPReLUAlphaShape(t *testing.T) {
	for _, c := range []struct {
		l     *PReLULayer
		in    []int
		alpha []int
	}{
		{NewPReLU(), []int{5, 5, 3}, []int{5, 5, 3}},
		{NewPReLU(SharedAxes(1, 2)), []int{5, 5, 3}, []int{1, 1, 3}},
		{NewPReLU(SharedAxes(3)), []int{5, 5, 3}, []int{5, 5, 1}},
		{NewPReLU(), []int{7}, []int{7}},
	} {
		out, ws, err := PlanBuild(c.l, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, c.in) || len(ws) != 1 || ws[0].Name != "alpha" || !slices.Equal(ws[0].Shape, c.alpha) {
			t.Errorf("%v on %v: output %v, weights %v; want %v and alpha %v", c.l.shared, c.in, out, ws, c.in, c.alpha)
		}
		if _, err := c.l.Build(c.in, rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		if p := c.l.Params(); len(p) != 1 || !slices.Equal(p[0].Value.Shape(), c.alpha) || slices.ContainsFunc(p[0].Value.Data().([]float32), func(v float32) bool { return v != 0 }) {
			t.Errorf("%v on %v: alpha %v, want zeros of shape %v", c.l.shared, c.in, p, c.alpha)
		}
	}
	for _, c := range []struct {
		l    *PReLULayer
		in   []int
		want string
	}{
		{NewPReLU(SharedAxes(0)), []int{3}, "shared_axes [0]"},
		{NewPReLU(SharedAxes(1, 1)), []int{3, 3}, "each once"},
		{NewPReLU(SharedAxes(3)), []int{3, 3}, "shared axis 3"},
	} {
		if _, err := c.l.Build(c.in, rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v on %v: %v, want an error saying %q", c.l.shared, c.in, err, c.want)
		}
	}
	for _, l := range []Layer{NewLeakyReLU(-0.1), NewELU(math.NaN())} {
		if _, err := l.Build([]int{3}, nil); err == nil || !strings.Contains(err.Error(), "alpha") {
			t.Errorf("%s: %v, want an error about alpha", l.Type(), err)
		}
	}
}

// The gradients of PReLU's input and alpha (shared along axis 1), and of
// the LeakyReLU and ELU layers' input, against central finite differences
// in float64.
func TestAdvancedActivationGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, l := range []Layer{NewPReLU(SharedAxes(1)), NewLeakyReLU(0.3), NewELU(0.7)} {
		t.Run(l.Type(), func(t *testing.T) {
			sample := []int{3, 2}
			if _, err := l.Build(sample, rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			g := gorgonia.NewGraph()
			x := float64Node(g, "x", uniformValues(rng, 12, 1), 2, 3, 2)
			wrt := []*gorgonia.Node{x}
			var params []*gorgonia.Node
			if len(l.Params()) == 1 {
				alpha := float64Node(g, "alpha", uniformValues(rng, 2, 1), 1, 2)
				params = []*gorgonia.Node{alpha}
				wrt = append(wrt, alpha)
			}
			f, err := l.Call(Flow{Node: x, NeedsGrad: true}, params)
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, mseCost(t, f.Node, 2, uniformValues(rng, 12, 1), "y"), wrt...)
		})
	}
}
