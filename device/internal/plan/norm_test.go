package plan

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnNet is x·w, batch-normalized with the batch's statistics, ReLU, then
// x·v and softmax cross-entropy: gradients for w, gamma, beta and v.
func bnNet(t *testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	t.Helper()
	return bnNetOf(t, false)
}

// bnBiasNet is bnNet with a bias b added to x·w before the normalization,
// as a convolution's or a dense layer's: gradients for w, b, gamma, beta
// and v.
func bnBiasNet(t *testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	t.Helper()
	return bnNetOf(t, true)
}

// bnNetOf is bnNet, with a bias where bias is true.
func bnNetOf(t *testing.T, bias bool) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	t.Helper()
	const rows, in, hidden, classes = 32, 5, 24, 3
	rng := rand.New(rand.NewPCG(4, 5))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(scale * rng.NormFloat64())
		}
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
	}
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	x, w, v := mk("x", 1, rows, in), mk("w", 0.5, in, hidden), mk("v", 0.5, hidden, classes)
	gamma, beta := mk("gamma", 0.3, hidden), mk("beta", 0.3, hidden)
	y := oneHotLabels(g, rng, rows, classes)
	var b *gorgonia.Node
	params := []*gorgonia.Node{w, gamma, beta, v}
	if bias {
		b = mk("b", 0.3, hidden)
		params = append(params, b)
	}
	h := must(ops.Affine(x, w, b, false))
	mean, variance, err := ops.ColumnMoments(h)
	if err != nil {
		t.Fatal(err)
	}
	h = must(ops.BatchNormalize(h, mean, variance, gamma, beta, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, true))
	h = must(ops.Activate(ops.ReLU, h))
	loss := must(ops.Loss(ops.SoftmaxCrossEntropy, must(ops.Affine(h, v, nil, true)), y))
	return g, params, withGradients(t, loss, params)
}

// trainNet compiles a network with caps and runs three SGD steps on the
// host backend: the losses, the weights after, and the plan.
func trainNet(t *testing.T, net func(*testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value), caps Capabilities) ([]float64, [][]float32, *Plan) {
	t.Helper()
	g, params, read := net(t)
	p, err := Compile(g, params, caps)
	if err != nil {
		t.Fatal(err)
	}
	state := driver.NewState()
	m, err := New(p, capsBackend{hostBackendOn(&subDevice{}), caps}, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var losses []float64
	for it := range 3 {
		if err := m.Train(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, Iteration: int64(it + 1)}); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, scalar(t, *read))
	}
	if err := state.Sync(); err != nil { // the weights back from the device
		t.Fatal(err)
	}
	var w [][]float32
	for _, l := range params {
		w = append(w, append([]float32(nil), l.Value().Data().([]float32)...))
	}
	return losses, w, p
}

// TestGammaInNormGrad compiles a batch-normalized network with and without
// Capabilities.GammaInNormGrad: with it the BatchNormGrad step has gamma's
// gradient as a second output and no BatchNormGammaGrad step is left, and
// three SGD steps give the same losses and weights, within the float32
// rounding by which the two ways of summing Σ dy·x̂ differ.
func TestGammaInNormGrad(t *testing.T) {
	wantL, wantW, plain := trainNet(t, bnNet, Capabilities{})
	gotL, gotW, fused := trainNet(t, bnNet, Capabilities{GammaInNormGrad: true})
	if normSteps(plain, ops.BatchNormGammaGrad, 1) != 1 || normSteps(plain, ops.BatchNormGrad, 1) != 1 {
		t.Fatalf("without the capability: want one BatchNormGrad and one BatchNormGammaGrad step")
	}
	if normSteps(fused, ops.BatchNormGammaGrad, 1) != 0 || normSteps(fused, ops.BatchNormGrad, 2) != 1 {
		t.Fatalf("with the capability: want one BatchNormGrad step with two outputs and no BatchNormGammaGrad step")
	}
	_, initial, _ := bnNet(t)
	if moved := func() bool {
		for j, v := range initial[1].Value().Data().([]float32) {
			if v != gotW[1][j] {
				return true
			}
		}
		return false
	}(); !moved {
		t.Fatalf("gamma did not move in training: the comparison would test nothing")
	}
	for i := range wantL {
		if math.Abs(gotL[i]-wantL[i]) > 1e-6*math.Abs(wantL[i]) {
			t.Errorf("step %d: loss %v, want %v", i+1, gotL[i], wantL[i])
		}
	}
	for i := range wantW {
		for j := range wantW[i] {
			if d := math.Abs(float64(gotW[i][j] - wantW[i][j])); d > 1e-6*(1+math.Abs(float64(wantW[i][j]))) {
				t.Fatalf("weight %d[%d] = %v, want %v", i, j, gotW[i][j], wantW[i][j])
			}
		}
	}
}

// TestBiasInNormGrad compiles a batch-normalized network whose dense
// layer has a bias, with Capabilities.GammaInNormGrad and with and without
// BiasInNormGrad: with it the BatchNormGrad step has the bias's gradient
// (the SumRows of its input gradient) as a third output and that SumRows
// step is gone (beta's, of the normalization's incoming gradient, stays),
// and three SGD steps give the same losses and weights bit for bit (the
// same sums, each block summed as it is written). Without
// GammaInNormGrad there is nothing to fold into.
func TestBiasInNormGrad(t *testing.T) {
	gamma := Capabilities{GammaInNormGrad: true}
	both := Capabilities{GammaInNormGrad: true, BiasInNormGrad: true}
	wantL, wantW, plain := trainNet(t, bnBiasNet, gamma)
	gotL, gotW, fused := trainNet(t, bnBiasNet, both)
	_, _, alone := trainNet(t, bnBiasNet, Capabilities{BiasInNormGrad: true})
	sumRows := func(p *Plan) int {
		n := 0
		for _, s := range p.Steps {
			if s.Kind == SumRows {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name          string
		plan          *Plan
		outs, sumRows int
	}{{"GammaInNormGrad", plain, 2, 2}, {"BiasInNormGrad alone", alone, 1, 2}, {"both", fused, 3, 1}} {
		if normSteps(c.plan, ops.BatchNormGrad, c.outs) != 1 || sumRows(c.plan) != c.sumRows {
			t.Fatalf("%s: want one BatchNormGrad step with %d outputs and %d SumRows steps", c.name, c.outs, c.sumRows)
		}
	}
	for _, s := range fused.Steps {
		if s.Kind == Norm && len(s.Out) == 3 && s.Out[2] != fused.Grads[4] {
			t.Fatalf("the BatchNormGrad step's third output is buffer %d, want the bias's gradient %d", s.Out[2], fused.Grads[4])
		}
	}
	sameTraining(t, gotL, wantL, gotW, wantW)
}

// normSteps is the number of p's Norm steps of kind with outs outputs.
func normSteps(p *Plan, kind ops.NormKind, outs int) int {
	n := 0
	for _, s := range p.Steps {
		if s.Kind == Norm && s.Op.Norm == kind && len(s.Out) == outs {
			n++
		}
	}
	return n
}

// TestMomentsInOneStep compiles a batch-normalized network with and
// without Capabilities.MomentsInOneStep: with it the ColumnMean step has
// the variance as a second output and no ColumnVariance step is left, and
// three SGD steps give the same losses and weights bit for bit (the same
// sums, x read once).
func TestMomentsInOneStep(t *testing.T) {
	wantL, wantW, plain := trainNet(t, bnNet, Capabilities{})
	gotL, gotW, fused := trainNet(t, bnNet, Capabilities{MomentsInOneStep: true})
	if normSteps(plain, ops.ColumnMean, 1) != 1 || normSteps(plain, ops.ColumnVariance, 1) != 1 {
		t.Fatalf("without the capability: want one ColumnMean and one ColumnVariance step")
	}
	if normSteps(fused, ops.ColumnVariance, 1) != 0 || normSteps(fused, ops.ColumnMean, 2) != 1 {
		t.Fatalf("with the capability: want one ColumnMean step with two outputs and no ColumnVariance step")
	}
	if !slices.Equal(gotL, wantL) {
		t.Errorf("losses %v, want %v", gotL, wantL)
	}
	for i := range wantW {
		if !slices.Equal(gotW[i], wantW[i]) {
			t.Errorf("weight %d differs", i)
		}
	}
}

// residualNet is x·w added to x·u, ReLU, then x·v and softmax
// cross-entropy: a residual block's Add and the ReLU after it.
func residualNet(t *testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	t.Helper()
	const rows, in, hidden, classes = 32, 5, 24, 3
	rng := rand.New(rand.NewPCG(6, 7))
	g := gorgonia.NewGraph()
	mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
		return opstest.NormalTensor(g, rng, name, scale, shape...)
	}
	must := mustNode(t)
	x, w, u, v := mk("x", 1, rows, in), mk("w", 0.5, in, hidden), mk("u", 0.5, in, hidden), mk("v", 0.5, hidden, classes)
	y := oneHotLabels(g, rng, rows, classes)
	h := must(ops.Add(must(ops.Affine(x, w, nil, false)), must(ops.Affine(x, u, nil, false))))
	h = must(ops.Activate(ops.ReLU, h))
	loss := must(ops.Loss(ops.SoftmaxCrossEntropy, must(ops.Affine(h, v, nil, true)), y))
	params := []*gorgonia.Node{w, u, v}
	return g, params, withGradients(t, loss, params)
}

// TestReLUFolds compiles networks whose ReLU only follows a batch
// normalization or a residual Add, with and without
// Capabilities.FoldsReLU: with it that step applies the ReLU, no ReLU
// BiasAct step is left, the values before the ReLU take no memory, and
// three SGD steps give the same losses and weights bit for bit (the same
// arithmetic in one pass). A backend that folds nothing leaves the plan
// as it was.
func TestReLUFolds(t *testing.T) {
	for _, c := range []struct {
		name string
		net  func(*testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value)
		kind Kind
	}{
		{"batch normalization", bnNet, Norm},
		{"residual add", residualNet, Binary},
	} {
		t.Run(c.name, func(t *testing.T) {
			folds := func(s *Step) bool { return s.Kind == c.kind }
			wantL, wantW, plain := trainNet(t, c.net, Capabilities{})
			gotL, gotW, fused := trainNet(t, c.net, Capabilities{FoldsReLU: folds})
			_, _, none := trainNet(t, c.net, Capabilities{FoldsReLU: func(*Step) bool { return false }})
			count := func(p *Plan) (relus, folded int) {
				for _, s := range p.Steps {
					switch {
					case s.Kind == BiasAct && s.Op.Activation == ops.ReLU:
						relus++
					case s.Kind == c.kind && s.Op.Activation == ops.ReLU:
						folded++
					}
				}
				return relus, folded
			}
			for _, p := range []struct {
				name          string
				plan          *Plan
				relus, folded int
			}{{"without the capability", plain, 1, 0}, {"folding nothing", none, 1, 0}, {"with the capability", fused, 0, 1}} {
				if r, f := count(p.plan); r != p.relus || f != p.folded {
					t.Fatalf("%s: %d ReLU steps and %d steps with a ReLU, want %d and %d", p.name, r, f, p.relus, p.folded)
				}
			}
			for _, s := range plain.Steps {
				if s.Kind == BiasAct && s.Op.Activation == ops.ReLU {
					if e := fused.Buffers[s.In[0]].Elems; e != 0 {
						t.Errorf("with the capability, the buffer before the ReLU keeps %d values, want 0", e)
					}
				}
			}
			sameTraining(t, gotL, wantL, gotW, wantW)
		})
	}
}

// bnResidualNet is a residual connection after a batch normalization:
// BatchNormalization(x·w) + x·u (the shortcut computed after the
// normalization, as a projection shortcut is), then with relu a ReLU,
// then ·v and softmax cross-entropy.
func bnResidualNet(relu bool) func(*testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
	return func(t *testing.T) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Value) {
		t.Helper()
		const rows, in, hidden, classes = 32, 5, 24, 3
		rng := rand.New(rand.NewPCG(8, 9))
		g := gorgonia.NewGraph()
		mk := func(name string, scale float64, shape ...int) *gorgonia.Node {
			return opstest.NormalTensor(g, rng, name, scale, shape...)
		}
		must := mustNode(t)
		x, w, u, v := mk("x", 1, rows, in), mk("w", 0.5, in, hidden), mk("u", 0.5, in, hidden), mk("v", 0.5, hidden, classes)
		gamma, beta := mk("gamma", 0.3, hidden), mk("beta", 0.3, hidden)
		y := oneHotLabels(g, rng, rows, classes)
		h := must(ops.Affine(x, w, nil, false))
		mean, variance, err := ops.ColumnMoments(h)
		if err != nil {
			t.Fatal(err)
		}
		h = must(ops.BatchNormalize(h, mean, variance, gamma, beta, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, true))
		h = must(ops.Add(h, must(ops.Affine(x, u, nil, false))))
		if relu {
			h = must(ops.Activate(ops.ReLU, h))
		}
		loss := must(ops.Loss(ops.SoftmaxCrossEntropy, must(ops.Affine(h, v, nil, true)), y))
		params := []*gorgonia.Node{w, u, gamma, beta, v}
		return g, params, withGradients(t, loss, params)
	}
}

// TestAddInBatchNorm compiles a residual connection's add after a batch
// normalization, with a ReLU after it (folded into the add) and without,
// with and without Capabilities.AddInBatchNorm: with it no Binary step is
// left, one BatchNorm step reads the shortcut as its sixth input, after
// the step that computes it, with the add's activation, the normalized
// values take no memory, and three SGD steps give the same losses and
// weights bit for bit (the same arithmetic in one pass).
func TestAddInBatchNorm(t *testing.T) {
	folds := func(s *Step) bool { return s.Kind == Binary || (s.Kind == Norm && s.Op.Norm == ops.BatchNorm) }
	for _, relu := range []bool{true, false} {
		net := bnResidualNet(relu)
		wantL, wantW, plain := trainNet(t, net, Capabilities{FoldsReLU: folds})
		gotL, gotW, fused := trainNet(t, net, Capabilities{FoldsReLU: folds, AddInBatchNorm: true})
		act := ops.Linear
		if relu {
			act = ops.ReLU
		}
		var normalized int
		for _, s := range plain.Steps {
			if s.Kind == Norm && s.Op.Norm == ops.BatchNorm {
				normalized = s.Out[0]
			}
		}
		binaries, adds := 0, 0
		for i, s := range fused.Steps {
			switch {
			case s.Kind == Binary:
				binaries++
			case s.Kind == Norm && s.Op.Norm == ops.BatchNorm:
				if len(s.In) != 6 || s.Op.Activation != act {
					t.Fatalf("relu %v: the BatchNorm step has %d inputs and activation %v, want 6 and %v", relu, len(s.In), s.Op.Activation, act)
				}
				if w := fused.lastWriter(s.In[5]); w > i {
					t.Fatalf("relu %v: the shortcut is written at step %d, after the normalization's step %d", relu, w, i)
				}
				adds++
			}
		}
		if binaries != 0 || adds != 1 {
			t.Fatalf("relu %v: %d Binary steps and %d BatchNorm steps with the add, want 0 and 1", relu, binaries, adds)
		}
		if e := fused.Buffers[normalized].Elems; e != 0 {
			t.Errorf("relu %v: the normalized values keep %d values, want 0", relu, e)
		}
		sameTraining(t, gotL, wantL, gotW, wantW)
	}
}
