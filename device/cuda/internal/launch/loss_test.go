package launch

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestForLossKnowsEveryKind fails when package ops gains a loss kind that
// ForLoss refuses: the kernels must then learn it, so that nothing trains
// on the GPU against a loss the kernels silently do not compute.
func TestForLossKnowsEveryKind(t *testing.T) {
	n := 0
	for k := ops.LossKind(0); !strings.HasPrefix(k.String(), "LossKind("); k++ {
		l, err := ForLoss(k, ops.LossParams{})
		if err != nil {
			t.Errorf("%v: %v", k, err)
			continue
		}
		if l.Kind != k || l.Weights != -1 || l.LabelSmoothing != 0 || l.ZeroOne != (k == ops.Hinge || k == ops.SquaredHinge) {
			t.Errorf("%v: %+v", k, l)
		}
		if want := map[bool]float64{true: 1, false: 0}[k == ops.Huber]; l.Delta != want {
			t.Errorf("%v: delta %v, want %v", k, l.Delta, want)
		}
		n++
	}
	if n < 18 {
		t.Errorf("%d loss kinds, want at least ops' 18", n)
	}
	for _, k := range []ops.LossKind{-1, ops.CosineSimilarity + 1, 42} {
		if _, err := ForLoss(k, ops.LossParams{}); err == nil || !strings.Contains(err.Error(), k.String()) {
			t.Errorf("%v: %v, want an error naming the kind", k, err)
		}
	}
}

// TestForLossKnowsEveryParameter fails when ops.LossParams gains a field:
// ForLoss must then pass it to the kernels (or refuse losses that set it).
func TestForLossKnowsEveryParameter(t *testing.T) {
	known := map[string]bool{"LabelSmoothing": true, "Delta": true}
	ty := reflect.TypeFor[ops.LossParams]()
	for i := range ty.NumField() {
		if f := ty.Field(i); !known[f.Name] {
			t.Errorf("ops.LossParams has a field %s that launch.ForLoss does not know", f.Name)
		}
	}
}

func TestForLossParameters(t *testing.T) {
	for _, k := range []ops.LossKind{ops.SoftmaxCrossEntropy, ops.SigmoidCrossEntropy, ops.CategoricalCrossentropy, ops.BinaryCrossentropy} {
		for _, ls := range []float64{0.1, 1} {
			if l, err := ForLoss(k, ops.LossParams{LabelSmoothing: ls}); err != nil || l.LabelSmoothing != ls {
				t.Errorf("%v smoothed by %v: %+v, %v", k, ls, l, err)
			}
		}
	}
	if l, err := ForLoss(ops.Huber, ops.LossParams{Delta: 2.5}); err != nil || l.Delta != 2.5 {
		t.Errorf("huber delta 2.5: %+v, %v", l, err)
	}
	for _, tc := range []struct {
		kind ops.LossKind
		p    ops.LossParams
		want string
	}{
		{ops.SparseSoftmaxCrossEntropy, ops.LossParams{LabelSmoothing: 0.1}, "label smoothing 0.1"},
		{ops.MeanSquaredError, ops.LossParams{LabelSmoothing: 0.1}, "label smoothing 0.1"},
		{ops.CategoricalCrossentropy, ops.LossParams{LabelSmoothing: 1.5}, "label smoothing 1.5"},
		{ops.CategoricalCrossentropy, ops.LossParams{LabelSmoothing: math.NaN()}, "label smoothing NaN"},
		{ops.MeanAbsoluteError, ops.LossParams{Delta: 1}, "delta 1"},
		{ops.Huber, ops.LossParams{Delta: -1}, "delta -1"},
		{ops.Huber, ops.LossParams{Delta: math.Inf(1)}, "delta +Inf"},
	} {
		_, err := ForLoss(tc.kind, tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.kind.String()) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v with %+v: %v, want an error naming the kind and %q", tc.kind, tc.p, err, tc.want)
		}
	}
}

// TestForLossStep reads a step's parameters from its op's Info (as
// plan.Compile fills it in from ops.Inspect) and finds its sample
// weights, as the CPU backend does.
func TestForLossStep(t *testing.T) {
	g := gorgonia.NewGraph()
	p := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(4, 3), gorgonia.WithName("p"))
	y := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(4, 3), gorgonia.WithName("y"))
	w := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(4), gorgonia.WithName("w"))
	huber, err := ops.LossWith(ops.Huber, ops.LossParams{Delta: 0.5}, p, y)
	if err != nil {
		t.Fatal(err)
	}
	weighted, err := ops.WeightedLoss(ops.CategoricalCrossentropy, ops.LossParams{LabelSmoothing: 0.2}, p, y, w)
	if err != nil {
		t.Fatal(err)
	}
	info := func(n *gorgonia.Node) ops.Info {
		i, ok := ops.Inspect(n.Op())
		if !ok {
			t.Fatalf("%v is not an op of package ops", n.Op())
		}
		return i
	}
	for _, tc := range []struct {
		s    plan.Step
		want Loss
	}{
		{plan.Step{Kind: plan.Loss, Op: info(huber), In: []int{0, 1}}, Loss{Kind: ops.Huber, Delta: 0.5, Weights: -1}},
		{plan.Step{Kind: plan.LossGrad, Op: info(huber), In: []int{0, 1, 2}}, Loss{Kind: ops.Huber, Delta: 0.5, Weights: -1}},
		{plan.Step{Kind: plan.Loss, Op: info(weighted), In: []int{0, 1, 2}},
			Loss{Kind: ops.CategoricalCrossentropy, LabelSmoothing: 0.2, Weights: 2}},
		{plan.Step{Kind: plan.LossGrad, Op: info(weighted), In: []int{0, 1, 2, 3}},
			Loss{Kind: ops.CategoricalCrossentropy, LabelSmoothing: 0.2, Weights: 3}},
		{plan.Step{Kind: plan.Loss, Op: ops.Info{Kind: ops.OpLoss, Loss: ops.Hinge}, In: []int{0, 1}}, Loss{Kind: ops.Hinge, ZeroOne: true, Weights: -1}},
	} {
		got, err := ForLossStep(&tc.s)
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.s, got, err, tc.want)
		}
	}
	if _, err := ForLossStep(&plan.Step{Kind: plan.Loss, Op: ops.Info{Kind: ops.OpLoss, Loss: 42}, In: []int{0, 1}}); err == nil || !strings.Contains(err.Error(), "LossKind(42)") {
		t.Errorf("unknown kind: %v, want an error naming it", err)
	}
	if _, err := ForLossStep(&plan.Step{Kind: plan.Add}); err == nil {
		t.Error("an Add step: no error")
	}
}
