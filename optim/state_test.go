package optim

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestStateRestoresTrainingExactly(t *testing.T) {
	makers := map[string]func() (Stateful, error){
		"sgd":      func() (Stateful, error) { return NewSGD(SGDConfig{LearningRate: 0.1}) },
		"momentum": func() (Stateful, error) { return NewSGD(SGDConfig{LearningRate: 0.1, Momentum: 0.9}) },
		"nesterov": func() (Stateful, error) { return NewSGD(SGDConfig{LearningRate: 0.1, Momentum: 0.5, Nesterov: true}) },
		"adam":     func() (Stateful, error) { return NewAdam(AdamConfig{LearningRate: 0.01}) },
	}
	grads := [][]float32{{1, -2, 0.5}, {0.3, 0.1, -1}, {-0.7, 2, 0.2}, {0.05, -0.4, 1.5}, {1, 1, 1}}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			a, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			w := []float32{1, 2, 3}
			apply := func(o Optimizer, w []float32, g []float32) {
				if err := o.Apply([]Variable{{Name: "dense/kernel", Value: w, Grad: slices.Clone(g)}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, g := range grads[:3] {
				apply(a, w, g)
			}
			st := a.State()
			if st.Iterations != 3 {
				t.Errorf("iterations %d, want 3", st.Iterations)
			}
			for _, slot := range SlotNames(a) {
				if len(st.Slots[slot]["dense/kernel"]) != 3 {
					t.Errorf("slot %q = %v, want 3 values", slot, st.Slots[slot])
				}
			}
			b, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			if err := b.SetState(st); err != nil {
				t.Fatal(err)
			}
			// Changing the saved state must not reach either optimizer.
			for _, slot := range st.Slots {
				for _, v := range slot {
					v[0] = 1e9
				}
			}
			w2 := slices.Clone(w)
			for _, g := range grads[3:] {
				apply(a, w, g)
				apply(b, w2, g)
			}
			if !slices.Equal(w, w2) {
				t.Errorf("restored optimizer gave %v, the original %v", w2, w)
			}
			if b.Iterations() != 5 {
				t.Errorf("restored optimizer counts %d iterations, want 5", b.Iterations())
			}
		})
	}
}

func TestSetStateRejects(t *testing.T) {
	sgd := func() Stateful { o, _ := NewSGD(SGDConfig{}); return o }
	momentum := func() Stateful { o, _ := NewSGD(SGDConfig{Momentum: 0.9}); return o }
	adam := func() Stateful { o, _ := NewAdam(AdamConfig{}); return o }
	slot := func(n int) map[string][]float32 { return map[string][]float32{"w": make([]float32, n)} }
	tests := []struct {
		name string
		opt  Stateful
		st   State
		want string
	}{
		{"negative rate", sgd(), State{LearningRate: -1}, "learning rate"},
		{"negative iterations", sgd(), State{LearningRate: 0.1, Iterations: -1}, "negative"},
		{"momentum into plain SGD", sgd(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"momentum": slot(2)}}, "keeps no slots"},
		{"adam state into SGD", momentum(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": slot(2)}}, `slot "m"`},
		{"m without v", adam(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": slot(2)}}, "second moments (v)"},
		{"v without m", adam(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"v": slot(2)}}, "no first moments"},
		{"NaN momentum", momentum(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"momentum": {"dense/kernel": {0, 1, float32(math.NaN())}}}}, "optimizer slot momentum of dense/kernel holds NaN at index 2"},
		{"infinite v", adam(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": slot(2), "v": {"w": {float32(math.Inf(1)), 0}}}}, "optimizer slot v of w holds +Inf at index 0"},
		{"m and v sizes", adam(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": slot(2), "v": slot(3)}}, "2 first moments"},
		{"negative v", adam(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": slot(2), "v": {"w": {0, -1e-9}}}}, "optimizer slot v of w holds -1e-09 at index 1, but it accumulates squares"},
		{"negative m is fine, negative v is not", adam(), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": {"w": {-1, -2}}, "v": {"w": {-3, 0}}}}, "slot v of w holds -3"},
		{"negative Adagrad accumulator", must(NewAdagrad(AdagradConfig{})), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"accumulator": {"w": {-0.5}}}}, "slot accumulator of w holds -0.5"},
		{"negative RMSprop velocity", must(NewRMSprop(RMSpropConfig{})), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"velocity": {"w": {-0.5}}}}, "slot velocity of w holds -0.5"},
		{"negative Adamax norm", must(NewAdamax(AdamaxConfig{})), State{LearningRate: 0.1, Slots: map[string]map[string][]float32{"m": slot(1), "u": {"w": {-0.5}}}}, "slot u of w holds -0.5"},
		{"iterations 2^63-1", adam(), State{LearningRate: 0.1, Iterations: math.MaxInt64}, "9223372036854775807 iterations is more than the 9007199254740992 any training takes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.opt.State()
			err := tc.opt.SetState(tc.st)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if after := tc.opt.State(); after.LearningRate != before.LearningRate || after.Iterations != before.Iterations {
				t.Errorf("a failed SetState changed the state: %+v -> %+v", before, after)
			}
		})
	}
}

func TestApplyRejectsStateOfAnotherSize(t *testing.T) {
	o, _ := NewAdam(AdamConfig{})
	if err := o.SetState(State{LearningRate: 0.001, Slots: map[string]map[string][]float32{
		"m": {"w": {0, 0}}, "v": {"w": {0, 0}},
	}}); err != nil {
		t.Fatal(err)
	}
	w := []float32{1, 2, 3}
	err := o.Apply([]Variable{{Name: "w", Value: w, Grad: []float32{1, 1, 1}}})
	if err == nil || !strings.Contains(err.Error(), "optimizer state has 2") {
		t.Fatalf("error %v, want a size mismatch", err)
	}
	if !slices.Equal(w, []float32{1, 2, 3}) {
		t.Errorf("a failed Apply changed the weights to %v", w)
	}
}

// must returns an optimizer made without error, as Stateful.
func must[O Stateful](o O, err error) Stateful {
	if err != nil {
		panic(err)
	}
	return o
}
