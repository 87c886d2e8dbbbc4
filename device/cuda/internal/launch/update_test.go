package launch

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/optim"
)

func TestForUpdateSlots(t *testing.T) {
	for _, tc := range []struct {
		u     optim.Update
		slots []int
	}{
		{optim.Update{Rule: optim.RuleSGD}, nil},
		{optim.Update{Rule: optim.RuleNesterov, Momentum: 0.9}, []int{0}},
		{optim.Update{Rule: optim.RuleAdam, Iteration: 1}, []int{0, 1, -1}},
		{optim.Update{Rule: optim.RuleAdam, Iteration: 1, AMSGrad: true}, []int{0, 1, 2}},
		{optim.Update{Rule: optim.RuleRMSprop}, []int{0, -1, -1}},
		{optim.Update{Rule: optim.RuleRMSprop, Momentum: 0.5}, []int{0, 1, -1}},
		{optim.Update{Rule: optim.RuleRMSprop, Centered: true}, []int{0, -1, 1}},
		{optim.Update{Rule: optim.RuleRMSprop, Momentum: 0.5, Centered: true}, []int{0, 1, 2}},
		{optim.Update{Rule: optim.RuleAdagrad}, []int{0}},
		{optim.Update{Rule: optim.RuleAdadelta}, []int{0, 1}},
		{optim.Update{Rule: optim.RuleAdamax, Iteration: 3}, []int{0, 1}},
		{optim.Update{Rule: optim.RuleNadam, Iteration: 3}, []int{0, 1}},
	} {
		l, err := ForUpdate(tc.u)
		if err != nil {
			t.Errorf("%v: %v", tc.u.Rule, err)
			continue
		}
		if !slices.Equal(l.Slots, tc.slots) {
			t.Errorf("%+v: slots %v, want %v", tc.u, l.Slots, tc.slots)
		}
		if l.Nesterov != (tc.u.Rule == optim.RuleNesterov) {
			t.Errorf("%v: Nesterov %t", tc.u.Rule, l.Nesterov)
		}
	}
}

func TestForUpdateOptions(t *testing.T) {
	l, err := ForUpdate(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1, ClipNorm: 2, ClipValue: 0.5, WeightDecay: 0.004})
	if err != nil {
		t.Fatal(err)
	}
	if l.ClipNorm != 2 || l.ClipValue != 0.5 || !l.Decays || l.Decay != float32(0.004*0.1) {
		t.Errorf("options %+v", l)
	}
	// A weight decay at a learning rate of 0 still decays (w - w·0), as
	// optim does: its test is WeightDecay > 0.
	if l, _ := ForUpdate(optim.Update{Rule: optim.RuleSGD, WeightDecay: 0.1}); !l.Decays || l.Decay != 0 {
		t.Errorf("decay at rate 0: %+v", l)
	}
	if l, _ := ForUpdate(optim.Update{Rule: optim.RuleSGD, LearningRate: 0.1}); l.Decays || l.ClipNorm != 0 || l.ClipValue != 0 || l.Global {
		t.Errorf("no options: %+v", l)
	}
	l, err = ForUpdate(optim.Update{Rule: optim.RuleAdam, LearningRate: 0.1, Iteration: 1, GlobalClipNorm: 1.5, ClipValue: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Global || l.ClipNorm != 0 || l.ClipValue != 0.5 {
		t.Errorf("global_clipnorm: %+v", l)
	}
}

func TestGlobalParts(t *testing.T) {
	offsets, parts := GlobalParts([]int{1, 300, 0, 1 << 20, 7})
	if want := []int{0, 1, 3, 4, 1028}; !slices.Equal(offsets, want) || parts != 1029 {
		t.Errorf("GlobalParts: offsets %v, %d parts; want %v, 1029", offsets, parts, want)
	}
	if offsets, parts := GlobalParts(nil); len(offsets) != 0 || parts != 0 {
		t.Errorf("GlobalParts(nil): %v, %d", offsets, parts)
	}
}

func TestForUpdateRefuses(t *testing.T) {
	for _, u := range []optim.Update{
		{Rule: 42, LearningRate: 0.1},
		{Rule: optim.RuleAdam, LearningRate: 0.1}, // iteration 0
		{Rule: optim.RuleSGD, LearningRate: 0.1, ClipNorm: -1},
		{Rule: optim.RuleSGD, LearningRate: 0.1, GlobalClipNorm: -1},
		{Rule: optim.RuleSGD, LearningRate: 0.1, ClipNorm: 1, GlobalClipNorm: 1},
		// The factor comes from the GlobalNorm step on the device.
		{Rule: optim.RuleSGD, LearningRate: 0.1, GlobalClipNorm: 1, GlobalScale: 0.5},
		{Rule: optim.RuleSGD, LearningRate: 0.1, GlobalScale: 0.5},
	} {
		if _, err := ForUpdate(u); err == nil {
			t.Errorf("%+v: no error", u)
		}
	}
	_, err := ForUpdate(optim.Update{Rule: 42, LearningRate: 0.1})
	if err == nil || !strings.Contains(err.Error(), "Rule(42)") {
		t.Errorf("unknown rule: %v, want an error naming it", err)
	}
}

func TestSumGrid(t *testing.T) {
	for _, tc := range []struct{ n, grid int }{{0, 1}, {1, 1}, {256, 1}, {257, 2}, {70001, 274}, {1 << 30, 1024}} {
		if got := SumGrid(tc.n); got != tc.grid {
			t.Errorf("SumGrid(%d) = %d, want %d", tc.n, got, tc.grid)
		}
	}
}

// TestForUpdateKnowsEveryField fails when optim.Update gains a field:
// ForUpdate must then learn it (or refuse updates that set it), so that
// the GPU never silently computes another update than the CPU.
func TestForUpdateKnowsEveryField(t *testing.T) {
	known := map[string]bool{"Rule": true, "LearningRate": true, "Momentum": true, "Beta1": true, "Beta2": true,
		"Epsilon": true, "Rho": true, "Centered": true, "AMSGrad": true, "InitialAccumulator": true, "ClipNorm": true,
		"ClipValue": true, "WeightDecay": true, "Iteration": true,
		"GlobalClipNorm": true, // Global: the factor of the step's GlobalNorm step, on the device
		"GlobalScale":    true} // refused: a factor set on the host
	ty := reflect.TypeFor[optim.Update]()
	for i := range ty.NumField() {
		if f := ty.Field(i); f.IsExported() && !known[f.Name] {
			t.Errorf("optim.Update has a field %s that launch.ForUpdate does not know", f.Name)
		}
	}
}
