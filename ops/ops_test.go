package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// matrix makes a float64 graph node holding the given values.
func matrix(g *gorgonia.ExprGraph, name string, shape tensor.Shape, data []float64) *gorgonia.Node {
	v := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
	return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(v))
}

func randomData(rng *rand.Rand, n int, scale float64) []float64 {
	d := make([]float64, n)
	for i := range d {
		d[i] = (rng.Float64()*2 - 1) * scale
	}
	return d
}

// evalScalar runs the graph once and returns the cost.
func evalScalar(t *testing.T, m gorgonia.VM, cost *gorgonia.Node) float64 {
	t.Helper()
	m.Reset()
	if err := m.RunAll(); err != nil {
		t.Fatalf("RunAll: %v", err)
	}
	switch v := cost.Value().(type) {
	case *gorgonia.F64:
		return float64(*v)
	case *gorgonia.F32:
		return float64(*v)
	}
	t.Fatalf("cost value is %T", cost.Value())
	return 0
}

// checkGradients compares gorgonia's symbolic gradients of cost with
// respect to wrt against central finite differences.
func checkGradients(t *testing.T, g *gorgonia.ExprGraph, cost *gorgonia.Node, wrt ...*gorgonia.Node) {
	t.Helper()
	if _, err := gorgonia.Grad(cost, wrt...); err != nil {
		t.Fatalf("Grad: %v", err)
	}
	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(wrt...))
	defer m.Close()
	evalScalar(t, m, cost)
	analytic := make([][]float64, len(wrt))
	for i, n := range wrt {
		gv, err := n.Grad()
		if err != nil {
			t.Fatalf("grad of %v: %v", n.Name(), err)
		}
		analytic[i] = append([]float64(nil), gv.Data().([]float64)...)
	}
	const h = 1e-6
	for i, n := range wrt {
		data := n.Value().Data().([]float64)
		for k := range data {
			orig := data[k]
			data[k] = orig + h
			plus := evalScalar(t, m, cost)
			data[k] = orig - h
			minus := evalScalar(t, m, cost)
			data[k] = orig
			numeric := (plus - minus) / (2 * h)
			a := analytic[i][k]
			if diff := math.Abs(a - numeric); diff > 1e-4*math.Max(math.Abs(a), math.Abs(numeric))+1e-8 {
				t.Errorf("d cost/d %s[%d]: analytic %.10g, finite difference %.10g", n.Name(), k, a, numeric)
			}
		}
	}
}

func TestGradientsOfLayersAndLosses(t *testing.T) {
	const batch, in, out = 4, 5, 3
	type build func(g *gorgonia.ExprGraph, rng *rand.Rand) (cost *gorgonia.Node, wrt []*gorgonia.Node, err error)
	var dense func(act Activation, loss LossKind, usePre bool, bias bool) build
	denseAlpha := func(act Activation, alpha float64, loss LossKind, usePre bool, bias bool) build {
		return func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
			x := matrix(g, "x", tensor.Shape{batch, in}, randomData(rng, batch*in, 1))
			w := matrix(g, "w", tensor.Shape{in, out}, randomData(rng, in*out, 1))
			var b *gorgonia.Node
			wrt := []*gorgonia.Node{x, w}
			if bias {
				b = matrix(g, "b", tensor.Shape{out}, randomData(rng, out, 0.5))
				wrt = append(wrt, b)
			}
			z, err := Affine(x, w, b, true)
			if err != nil {
				return nil, nil, err
			}
			y, err := ActivateWith(act, alpha, z)
			if err != nil {
				return nil, nil, err
			}
			target := targets(rng, loss, batch, out)
			tn := matrix(g, "target", tensor.Shape{batch, target.cols}, target.data)
			pred := y
			if usePre {
				pred = z
			}
			cost, err := Loss(loss, pred, tn)
			return cost, wrt, err
		}
	}
	dense = func(act Activation, loss LossKind, usePre bool, bias bool) build {
		return denseAlpha(act, DefaultAlpha(act), loss, usePre, bias)
	}
	flatten := func(g *gorgonia.ExprGraph, rng *rand.Rand) (*gorgonia.Node, []*gorgonia.Node, error) {
		x := matrix(g, "x", tensor.Shape{batch, 2, 3}, randomData(rng, batch*6, 1))
		f, err := Flatten(x, true)
		if err != nil {
			return nil, nil, err
		}
		w := matrix(g, "w", tensor.Shape{6, out}, randomData(rng, 6*out, 1))
		z, err := Affine(f, w, nil, true)
		if err != nil {
			return nil, nil, err
		}
		tn := matrix(g, "target", tensor.Shape{batch, out}, randomData(rng, batch*out, 1))
		cost, err := Loss(MeanSquaredError, z, tn)
		return cost, []*gorgonia.Node{x, w}, err
	}
	tests := []struct {
		name  string
		build build
	}{
		{"linear+mse", dense(Linear, MeanSquaredError, false, true)},
		{"linear+mse no bias", dense(Linear, MeanSquaredError, false, false)},
		{"relu+mse", dense(ReLU, MeanSquaredError, false, true)},
		{"tanh+mse", dense(Tanh, MeanSquaredError, false, true)},
		{"gelu+mse", dense(GELU, MeanSquaredError, false, true)},
		{"gelu_approximate+mse", dense(GELUApproximate, MeanSquaredError, false, true)},
		{"swish+mse", dense(Swish, MeanSquaredError, false, true)},
		{"elu+mse", dense(ELU, MeanSquaredError, false, true)},
		{"elu alpha 0.5+mse", denseAlpha(ELU, 0.5, MeanSquaredError, false, true)},
		{"selu+mse", dense(SELU, MeanSquaredError, false, true)},
		{"softplus+mse", dense(Softplus, MeanSquaredError, false, true)},
		{"softsign+mse", dense(Softsign, MeanSquaredError, false, true)},
		{"hard_sigmoid+mse", dense(HardSigmoid, MeanSquaredError, false, true)},
		{"exponential+mse", dense(Exponential, MeanSquaredError, false, true)},
		{"leaky_relu+mse", dense(LeakyReLU, MeanSquaredError, false, true)},
		{"leaky_relu alpha 0.3+mse", denseAlpha(LeakyReLU, 0.3, MeanSquaredError, false, true)},
		{"sigmoid+binary_crossentropy", dense(Sigmoid, BinaryCrossentropy, false, true)},
		{"softmax+categorical_crossentropy", dense(Softmax, CategoricalCrossentropy, false, true)},
		{"sigmoid+categorical_crossentropy (normalise path)", dense(Sigmoid, CategoricalCrossentropy, false, true)},
		{"softmax+sparse_categorical_crossentropy", dense(Softmax, SparseCategoricalCrossentropy, false, true)},
		{"softmax+mse", dense(Softmax, MeanSquaredError, false, true)},
		{"logits softmax cross-entropy", dense(Linear, SoftmaxCrossEntropy, true, true)},
		{"logits sparse softmax cross-entropy", dense(Linear, SparseSoftmaxCrossEntropy, true, true)},
		{"logits sigmoid cross-entropy", dense(Linear, SigmoidCrossEntropy, true, true)},
		{"flatten", flatten},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			cost, wrt, err := tc.build(g, rand.New(rand.NewPCG(uint64(i), 7)))
			if err != nil {
				t.Fatal(err)
			}
			checkGradients(t, g, cost, wrt...)
		})
	}
}

type targetData struct {
	cols int
	data []float64
}

// targets draws valid targets for a loss kind: one-hot rows, class indices
// or values in (0, 1).
func targets(rng *rand.Rand, kind LossKind, batch, classes int) targetData {
	switch kind {
	case SparseSoftmaxCrossEntropy, SparseCategoricalCrossentropy:
		d := make([]float64, batch)
		for i := range d {
			d[i] = float64(rng.IntN(classes))
		}
		return targetData{1, d}
	case SoftmaxCrossEntropy, CategoricalCrossentropy:
		d := make([]float64, batch*classes)
		for r := 0; r < batch; r++ {
			d[r*classes+rng.IntN(classes)] = 1
		}
		return targetData{classes, d}
	}
	d := make([]float64, batch*classes)
	for i := range d {
		d[i] = rng.Float64()
	}
	return targetData{classes, d}
}

func TestLossValues(t *testing.T) {
	tests := []struct {
		name   string
		kind   LossKind
		shape  tensor.Shape
		pred   []float64
		target []float64
		want   float64
	}{
		{"softmax CE from logits", SoftmaxCrossEntropy, tensor.Shape{1, 3}, []float64{1, 2, 3}, []float64{0, 0, 1}, 0.40760596444438013},
		{"softmax CE, batch mean", SoftmaxCrossEntropy, tensor.Shape{2, 3}, []float64{1, 2, 3, 0, 0, 0}, []float64{0, 0, 1, 1, 0, 0}, (0.40760596444438013 + math.Log(3)) / 2},
		{"sparse softmax CE", SparseSoftmaxCrossEntropy, tensor.Shape{1, 3}, []float64{1, 2, 3}, []float64{0}, 2.40760596444438},
		{"sigmoid CE at zero logit", SigmoidCrossEntropy, tensor.Shape{1, 1}, []float64{0}, []float64{1}, math.Ln2},
		{"categorical CE on probabilities", CategoricalCrossentropy, tensor.Shape{1, 3}, []float64{0.2, 0.3, 0.5}, []float64{0, 1, 0}, -math.Log(0.3)},
		{"categorical CE normalises rows", CategoricalCrossentropy, tensor.Shape{1, 3}, []float64{1, 1, 2}, []float64{0, 0, 1}, math.Ln2},
		{"categorical CE clips zero to 1e-7", CategoricalCrossentropy, tensor.Shape{1, 3}, []float64{0, 1, 0}, []float64{1, 0, 0}, 16.11809565095832},
		{"sparse categorical CE on probabilities", SparseCategoricalCrossentropy, tensor.Shape{1, 3}, []float64{0.2, 0.3, 0.5}, []float64{2}, -math.Log(0.5)},
		{"binary CE on probabilities", BinaryCrossentropy, tensor.Shape{1, 2}, []float64{0.9, 0.2}, []float64{1, 0}, 0.1642519154304695},
		{"mean squared error", MeanSquaredError, tensor.Shape{1, 2}, []float64{1, 2}, []float64{0, 4}, 2.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			p := matrix(g, "p", tc.shape, tc.pred)
			ts := tc.shape.Clone()
			if tc.kind.Sparse() {
				ts[1] = 1
			}
			y := matrix(g, "y", ts, tc.target)
			cost, err := Loss(tc.kind, p, y)
			if err != nil {
				t.Fatal(err)
			}
			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			if got := evalScalar(t, m, cost); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("loss = %.15g, want %.15g", got, tc.want)
			}
		})
	}
}

func TestLossRejectsBadTargets(t *testing.T) {
	tests := []struct {
		name   string
		kind   LossKind
		target []float64
		tshape tensor.Shape
	}{
		{"class index too large", SparseSoftmaxCrossEntropy, []float64{3}, tensor.Shape{1, 1}},
		{"negative class index", SparseCategoricalCrossentropy, []float64{-1}, tensor.Shape{1, 1}},
		{"fractional class index", SparseSoftmaxCrossEntropy, []float64{0.5}, tensor.Shape{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			p := matrix(g, "p", tensor.Shape{1, 3}, []float64{0.2, 0.3, 0.5})
			y := matrix(g, "y", tc.tshape, tc.target)
			cost, err := Loss(tc.kind, p, y)
			if err != nil {
				t.Fatal(err)
			}
			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			if err := m.RunAll(); err == nil {
				t.Fatalf("RunAll accepted target %v for %v (cost %v)", tc.target, tc.kind, cost.Value())
			}
		})
	}
	g := gorgonia.NewGraph()
	p := matrix(g, "p", tensor.Shape{2, 3}, make([]float64, 6))
	y := matrix(g, "y", tensor.Shape{2, 4}, make([]float64, 8))
	if _, err := Loss(CategoricalCrossentropy, p, y); err == nil {
		t.Error("Loss accepted targets of shape (2, 4) for predictions of shape (2, 3)")
	}
}

func TestActivationValues(t *testing.T) {
	x := []float64{-2, 0, 3}
	tests := []struct {
		act  Activation
		want []float64
	}{
		{Linear, []float64{-2, 0, 3}},
		{ReLU, []float64{0, 0, 3}},
		{Sigmoid, []float64{1 / (1 + math.Exp(2)), 0.5, 1 / (1 + math.Exp(-3))}},
		{Tanh, []float64{math.Tanh(-2), 0, math.Tanh(3)}},
		{Softmax, []float64{math.Exp(-2) / (math.Exp(-2) + 1 + math.Exp(3)), 1 / (math.Exp(-2) + 1 + math.Exp(3)), math.Exp(3) / (math.Exp(-2) + 1 + math.Exp(3))}},
		{GELU, []float64{-0.04550026389635844, 0, 2.99595030590511}}, // x·Φ(x), Φ from Python's math.erfc
	}
	for _, tc := range tests {
		got := make([]float64, 3)
		activate(tc.act, DefaultAlpha(tc.act), 3, x, got)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Errorf("%v(%v) = %v, want %v", tc.act, x, got, tc.want)
				break
			}
		}
	}
	if _, err := ParseActivation("mish"); err == nil {
		t.Error("ParseActivation accepted an unknown name")
	}
	if a, err := ParseActivation("silu"); a != Swish || err != nil {
		t.Errorf(`ParseActivation("silu") = %v, %v; want swish`, a, err)
	}
	for a := Linear; a <= LeakyReLU; a++ {
		if got, err := ParseActivation(a.String()); got != a || err != nil {
			t.Errorf("ParseActivation(%q) = %v, %v; want %v", a.String(), got, err, a)
		}
	}
	if a, err := ParseActivation("GELU"); a != GELU || err != nil {
		t.Errorf(`ParseActivation("GELU") = %v, %v; want gelu`, a, err)
	}
}

func TestInspectNamesEveryOpOfAModelGraph(t *testing.T) {
	g := gorgonia.NewGraph()
	x := matrix(g, "x", tensor.Shape{2, 1, 3}, make([]float64, 6))
	f, _ := Flatten(x, false)
	w := matrix(g, "w", tensor.Shape{3, 4}, make([]float64, 12))
	b := matrix(g, "b", tensor.Shape{4}, make([]float64, 4))
	z, err := Affine(f, w, b, false)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := Activate(Softmax, z)
	target := matrix(g, "t", tensor.Shape{2, 4}, make([]float64, 8))
	cost, err := Loss(MeanSquaredError, y, target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gorgonia.Grad(cost, w, b); err != nil {
		t.Fatal(err)
	}
	seen := map[OpKind]bool{}
	for _, n := range g.AllNodes() {
		if n.Op() == nil {
			continue
		}
		if info, ok := Inspect(n.Op()); ok {
			seen[info.Kind] = true
		}
	}
	for _, k := range []OpKind{OpAffine, OpMatMul, OpSumRows, OpActivation, OpActivationGrad, OpReshape, OpLoss, OpLossGrad} {
		if !seen[k] {
			t.Errorf("no node of kind %d found by Inspect", k)
		}
	}
}

// Reshape gives the shape asked for, axis for axis: a vector of 4 becomes a
// row (1, 4), which tensor.Shape.Eq would take for the vector itself.
func TestReshapeAddsAnAxisOfOne(t *testing.T) {
	g := gorgonia.NewGraph()
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4), gorgonia.WithName("v"))
	r, err := Reshape(v, []int{1, 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Shape(); len(got) != 2 || got[0] != 1 || got[1] != 4 {
		t.Errorf("Reshape of (4) to (1, 4) has shape %v", got)
	}
	if same, err := Reshape(v, []int{4}, true); err != nil || same != v {
		t.Errorf("Reshape to its own shape: %v, %v; want the node itself", same, err)
	}
}
