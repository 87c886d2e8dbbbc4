package plan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mustNode returns a function that returns its node, failing t on an
// error: for building the small graphs.
func mustNode(t *testing.T) func(*gorgonia.Node, error) *gorgonia.Node {
	return func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// oneHotLabels adds a (rows, classes) input node "y" of one-hot labels,
// each row's class drawn from rng.
func oneHotLabels(g *gorgonia.ExprGraph, rng *rand.Rand, rows, classes int) *gorgonia.Node {
	labels := make([]float32, rows*classes)
	for r := range rows {
		labels[r*classes+rng.IntN(classes)] = 1
	}
	return gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(rows, classes), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(rows, classes), tensor.WithBacking(labels))))
}

// withGradients has a gorgonia.Read of loss store its value and adds the
// gradients of params, failing t on an error: the small graphs' last
// step. It returns where the loss is read.
func withGradients(t *testing.T, loss *gorgonia.Node, params []*gorgonia.Node) *gorgonia.Value {
	t.Helper()
	var read gorgonia.Value
	gorgonia.Read(loss, &read)
	if _, err := gorgonia.Grad(loss, params...); err != nil {
		t.Fatal(err)
	}
	return &read
}

// sameTraining fails t unless the losses and the weights of two trainings
// (trainNet's) are the same bit for bit.
func sameTraining(t *testing.T, gotL, wantL []float64, gotW, wantW [][]float32) {
	t.Helper()
	for i := range wantL {
		if math.Float64bits(gotL[i]) != math.Float64bits(wantL[i]) {
			t.Errorf("step %d: loss %v, want %v", i+1, gotL[i], wantL[i])
		}
	}
	for i := range wantW {
		for j := range wantW[i] {
			if math.Float32bits(gotW[i][j]) != math.Float32bits(wantW[i][j]) {
				t.Fatalf("weight %d[%d] = %v, want %v", i, j, gotW[i][j], wantW[i][j])
			}
		}
	}
}

// convReLUNet is a convolution and its ReLU, max pooling, a second
// convolution and its ReLU, a third convolution reading that ReLU's
// output, then a dense layer and softmax cross-entropy: the first ReLU's
// gradient comes from the pooling's, the second's from the third
// convolution's input gradient.
func convReLUNet(t *testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	t.Helper()
	const batch, hw, c, f1, f2, f3, classes = 4, 8, 3, 6, 5, 4, 3
	rng := rand.New(rand.NewPCG(8, 9))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return opstest.NormalTensor(g, rng, name, scale, shape...)
	}
	must := mustNode(t)
	x := mk("x", 1, batch, hw, hw, c)
	y := oneHotLabels(g, rng, batch, classes)
	k1, b1 := mk("k1", 0.4, 9*c, f1), mk("b1", 0.1, f1)
	k2, b2 := mk("k2", 0.3, 9*f1, f2), mk("b2", 0.1, f2)
	k3 := mk("k3", 0.3, 9*f2, f3)
	w4 := mk("w4", 0.3, 4*4*f3, classes)
	same := ops.WindowSpec{Kernel: [2]int{3, 3}, Same: true}
	h := must(ops.Patches(x, same, false))
	h = must(ops.Activate(ops.ReLU, must(ops.Affine(h, k1, b1, true))))
	h = must(ops.Reshape(h, []int{batch, hw, hw, f1}, true))
	h = must(ops.Pool(h, ops.MaxPool, ops.WindowSpec{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}}, true))
	h = must(ops.Patches(h, same, true))
	h = must(ops.Activate(ops.ReLU, must(ops.Affine(h, k2, b2, true))))
	h = must(ops.Reshape(h, []int{batch, 4, 4, f2}, true))
	h = must(ops.Patches(h, same, true))
	h = must(ops.Affine(h, k3, nil, true))
	h = must(ops.Reshape(h, []int{batch, 4 * 4 * f3}, true))
	loss := must(ops.Loss(ops.SoftmaxCrossEntropy, must(ops.Affine(h, w4, nil, true)), y))
	params := []*gorgonia.Node{k1, b1, k2, b2, k3, w4}
	return g, params, withGradients(t, loss, params)
}

// twoPathNet is x·w and its ReLU h, read by two paths, h·u + h, then
// h·v and softmax cross-entropy: the ReLU's gradient is that of the sum
// of its two paths' gradients.
func twoPathNet(t *testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	t.Helper()
	const rows, in, hidden, classes = 32, 5, 24, 3
	rng := rand.New(rand.NewPCG(10, 11))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return opstest.NormalTensor(g, rng, name, scale, shape...)
	}
	must := mustNode(t)
	x, w, u, v := mk("x", 1, rows, in), mk("w", 0.5, in, hidden), mk("u", 0.5, hidden, hidden), mk("v", 0.5, hidden, classes)
	y := oneHotLabels(g, rng, rows, classes)
	h := must(ops.Activate(ops.ReLU, must(ops.Affine(x, w, nil, false))))
	h = must(ops.Add(must(ops.Affine(h, u, nil, true)), h))
	loss := must(ops.Loss(ops.SoftmaxCrossEntropy, must(ops.Affine(h, v, nil, true)), y))
	params := []*gorgonia.Node{w, u, v}
	return g, params, withGradients(t, loss, params)
}

// TestReLUGradFolds trains convReLUNet with the convolutions without
// patches, the ReLUs folded into the convolutions, and with and without
// Capabilities.FoldsReLUGrad: with it both ReLUs' gradient steps go, into
// the max pooling's gradient and the third convolution's input gradient,
// their incoming gradients take no memory, and three SGD steps give the
// same losses and weights bit for bit. A backend that folds nothing keeps
// both steps.
func TestReLUGradFolds(t *testing.T) {
	caps := Capabilities{BiasInGemm: true, FoldsReLU: func(s *Step) bool { return s.Kind == ConvForward },
		Conv: func(w ops.Window, filters int) (ConvMemory, bool) {
			return ConvMemory{InputGrid: w.InputSize(), OutputGrid: w.Positions() * filters, Forward: 1, InputGrad: 1}, true
		}}
	wantL, wantW, plain := trainNet(t, convReLUNet, caps)
	none := caps
	none.FoldsReLUGrad = func(*Step, int) bool { return false }
	_, _, kept := trainNet(t, convReLUNet, none)
	folds := caps
	folds.FoldsReLUGrad = func(s *Step, y int) bool {
		return s.Kind == ConvInputGrad || s.Kind == PoolGrad && s.Op.Pool == ops.MaxPool && s.In[0] == y
	}
	gotL, gotW, fused := trainNet(t, convReLUNet, folds)
	count := func(p *Plan) (grads int, folded map[Kind]int) {
		folded = map[Kind]int{}
		for _, s := range p.Steps {
			switch {
			case s.Kind == ActGrad && s.Op.Activation == ops.ReLU:
				grads++
			case (s.Kind == ConvInputGrad || s.Kind == PoolGrad) && s.Op.Activation == ops.ReLU:
				folded[s.Kind]++
			}
		}
		return grads, folded
	}
	for _, c := range []struct {
		name         string
		plan         *Plan
		grads, folds int
	}{{"without the capability", plain, 2, 0}, {"folding nothing", kept, 2, 0}, {"with the capability", fused, 0, 2}} {
		grads, folded := count(c.plan)
		if grads != c.grads || folded[ConvInputGrad]+folded[PoolGrad] != c.folds || c.folds > 0 && (folded[ConvInputGrad] != 1 || folded[PoolGrad] != 1) {
			t.Fatalf("%s: %d ReLU gradient steps, folded %v, want %d and %d", c.name, grads, folded, c.grads, c.folds)
		}
	}
	for _, s := range plain.Steps {
		if s.Kind == ActGrad && s.Op.Activation == ops.ReLU {
			if e := fused.Buffers[s.In[2]].Elems; e != 0 {
				t.Errorf("with the capability, the gradient into a ReLU keeps %d values, want 0", e)
			}
		}
	}
	sameTraining(t, gotL, wantL, gotW, wantW)
}

// TestReLUGradFoldsIntoAdd trains twoPathNet with and without
// Capabilities.FoldsReLUGrad for Add steps: with it the ReLU's gradient
// step goes into the sum of its output's two gradients, which then takes
// no memory, with the same losses and weights bit for bit.
func TestReLUGradFoldsIntoAdd(t *testing.T) {
	wantL, wantW, plain := trainNet(t, twoPathNet, Capabilities{})
	folds := Capabilities{FoldsReLUGrad: func(s *Step, y int) bool { return s.Kind == Add }}
	gotL, gotW, fused := trainNet(t, twoPathNet, folds)
	grads := func(p *Plan) (n, folded int) {
		for _, s := range p.Steps {
			switch {
			case s.Kind == ActGrad && s.Op.Activation == ops.ReLU:
				n++
			case s.Kind == Add && s.Op.Activation == ops.ReLU:
				folded++
			}
		}
		return n, folded
	}
	if n, f := grads(plain); n != 1 || f != 0 {
		t.Fatalf("without the capability: %d ReLU gradient steps, %d folded, want 1 and 0", n, f)
	}
	if n, f := grads(fused); n != 0 || f != 1 {
		t.Fatalf("with the capability: %d ReLU gradient steps, %d folded, want 0 and 1", n, f)
	}
	sameTraining(t, gotL, wantL, gotW, wantW)
}
