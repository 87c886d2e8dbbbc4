package optim

import (
	"math"
	"testing"
)

// step applies one update to a single-element variable and returns its value.
func step(t *testing.T, o Optimizer, w *[]float32, g float32) float32 {
	t.Helper()
	if err := o.Apply([]Variable{{Name: "w", Value: *w, Grad: []float32{g}}}); err != nil {
		t.Fatal(err)
	}
	return (*w)[0]
}

func TestUpdatesByHand(t *testing.T) {
	// Gradients 1 then 2 on w = 1.
	tests := []struct {
		name string
		opt  func() (Optimizer, error)
		want [2]float64
	}{
		// w -= 0.1·g
		{"sgd", func() (Optimizer, error) { return NewSGD(SGDConfig{LearningRate: 0.1}) }, [2]float64{0.9, 0.7}},
		// v = 0.9v - 0.1g: v1=-0.1, w=0.9; v2=-0.09-0.2=-0.29, w=0.61
		{"momentum", func() (Optimizer, error) { return NewSGD(SGDConfig{LearningRate: 0.1, Momentum: 0.9}) }, [2]float64{0.9, 0.61}},
		// w += 0.9v - 0.1g: 1-0.09-0.1=0.81; 0.81-0.261-0.2=0.349
		{"nesterov", func() (Optimizer, error) {
			return NewSGD(SGDConfig{LearningRate: 0.1, Momentum: 0.9, Nesterov: true})
		}, [2]float64{0.81, 0.349}},
		// t=1: m=0.1, v=0.001, lr_t=0.1·sqrt(0.001)/0.1, w -= lr_t·m/(sqrt(v)+1e-7) ≈ 1-0.1
		// t=2: m=0.29, v=0.004999, lr_t=0.1·sqrt(1-0.999²)/(1-0.9²)
		{"adam", func() (Optimizer, error) { return NewAdam(AdamConfig{LearningRate: 0.1}) }, [2]float64{
			1 - 0.1*math.Sqrt(0.001)/0.1*0.1/(math.Sqrt(0.001)+1e-7),
			1 - 0.1*math.Sqrt(0.001)/0.1*0.1/(math.Sqrt(0.001)+1e-7) -
				0.1*math.Sqrt(1-0.999*0.999)/(1-0.81)*0.29/(math.Sqrt(0.999*0.001+0.001*4)+1e-7),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.opt()
			if err != nil {
				t.Fatal(err)
			}
			w := []float32{1}
			for i, g := range []float32{1, 2} {
				if got := step(t, o, &w, g); math.Abs(float64(got)-tc.want[i]) > 5e-6 { // float32 state
					t.Errorf("after step %d: w = %.7f, want %.7f", i+1, got, tc.want[i])
				}
			}
			if o.Iterations() != 2 {
				t.Errorf("Iterations = %d, want 2", o.Iterations())
			}
		})
	}
}

func TestDefaultsAndBadConfigs(t *testing.T) {
	sgd, err := NewSGD(SGDConfig{})
	if err != nil || sgd.LearningRate() != 0.01 {
		t.Errorf("NewSGD defaults: lr %v, err %v; want Keras' 0.01", sgd.LearningRate(), err)
	}
	adam, err := NewAdam(AdamConfig{})
	if err != nil || adam.Config() != (AdamConfig{LearningRate: 0.001, Beta1: F(0.9), Beta2: F(0.999), Epsilon: F(1e-7)}) {
		t.Errorf("NewAdam defaults: %+v, %v", adam.Config(), err)
	}
	for _, bad := range []SGDConfig{{LearningRate: -1}, {LearningRate: math.NaN()}, {Momentum: 1.5}} {
		if _, err := NewSGD(bad); err == nil {
			t.Errorf("NewSGD(%+v) accepted a bad config", bad)
		}
	}
	if _, err := NewAdam(AdamConfig{Beta1: F(1)}); err == nil {
		t.Error("NewAdam accepted beta1 = 1")
	}
	if err := sgd.Apply([]Variable{{Name: "w", Value: make([]float32, 2), Grad: make([]float32, 3)}}); err == nil {
		t.Error("Apply accepted a gradient of the wrong length")
	}
}

// TestApplySplitsExactly checks that Update.Apply gives the same bits as
// the plain Go loops on one goroutine, whether it splits a long slice over
// several goroutines and whatever share the vector kernels take (AVX2 on
// amd64), for every rule; and that CheckSlots catches slots that do not fit.
func TestApplySplitsExactly(t *testing.T) {
	const n = 300_001 // several chunks, and a ragged end
	for _, u := range []Update{
		{Rule: RuleSGD, LearningRate: 0.01, Iteration: 1},
		{Rule: RuleMomentum, LearningRate: 0.01, Momentum: 0.9, Iteration: 1},
		{Rule: RuleNesterov, LearningRate: 0.01, Momentum: 0.9, Iteration: 1},
		{Rule: RuleAdam, LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 3},
		{Rule: RuleAdam, LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 3, AMSGrad: true},
		{Rule: RuleRMSprop, LearningRate: 0.001, Rho: 0.9, Epsilon: 1e-7, Iteration: 2},
		{Rule: RuleRMSprop, LearningRate: 0.001, Rho: 0.9, Epsilon: 1e-7, Momentum: 0.5, Centered: true, Iteration: 2},
		{Rule: RuleAdagrad, LearningRate: 0.01, Epsilon: 1e-7, Iteration: 2},
		{Rule: RuleAdadelta, LearningRate: 1, Rho: 0.95, Epsilon: 1e-7, Iteration: 2},
		{Rule: RuleAdamax, LearningRate: 0.002, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 4},
		{Rule: RuleNadam, LearningRate: 0.002, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 4},
		{Rule: RuleAdam, LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 3, WeightDecay: 0.004, ClipValue: 0.2},
		{Rule: RuleAdam, LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 3, WeightDecay: 0.004},
		{Rule: RuleSGD, LearningRate: 0.01, Iteration: 1, WeightDecay: 0.01},
	} {
		t.Run(u.Rule.String(), func(t *testing.T) {
			if err := u.Check(); err != nil {
				t.Fatal(err)
			}
			mk := func() ([]float32, [][]float32) {
				w := make([]float32, n)
				slots := make([][]float32, len(u.SlotNames()))
				for i := range slots {
					slots[i] = make([]float32, n)
				}
				for i := range w {
					w[i] = float32(i%97) / 97
					for j := range slots {
						slots[j][i] = float32((i+j)%13) / 130
					}
				}
				return w, slots
			}
			g := make([]float32, n)
			for i := range g {
				g[i] = float32(i%31)/31 - 0.5
			}
			w1, s1 := mk()
			w2, s2 := mk()
			if err := u.CheckSlots(w1, g, s1); err != nil {
				t.Fatal(err)
			}
			u.Apply(w1, g, s1)
			scalar := u
			scalar.scalarOnly = true
			scalar.apply(w2, g, s2)
			for i := range w1 {
				if math.Float32bits(w1[i]) != math.Float32bits(w2[i]) {
					t.Fatalf("w[%d]: Apply %v, Go loops %v (vector kernels: %t)", i, w1[i], w2[i], haveVector)
				}
				for j := range s1 {
					if math.Float32bits(s1[j][i]) != math.Float32bits(s2[j][i]) {
						t.Fatalf("slot %d [%d]: Apply %v, Go loops %v (vector kernels: %t)", j, i, s1[j][i], s2[j][i], haveVector)
					}
				}
			}
			if len(s1) > 0 {
				if err := u.CheckSlots(w1, g, [][]float32{s1[0][:10]}); err == nil {
					t.Error("CheckSlots accepted a short slot")
				}
			}
		})
	}
	if err := (Update{Rule: 99}).Check(); err == nil {
		t.Error("Check accepted an unknown rule")
	}
	if err := (Update{Rule: RuleAdam, LearningRate: 0.1}).Check(); err == nil {
		t.Error("Check accepted Adam at iteration 0")
	}
}

// TestAdamaxVectorKeepsNaN checks the vector kernel's maximum against Go's
// max where a gradient or a slot is NaN: both must give NaN, as Go does.
func TestAdamaxVectorKeepsNaN(t *testing.T) {
	u := Update{Rule: RuleAdamax, LearningRate: 0.002, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Iteration: 2}
	mk := func() ([]float32, []float32, [][]float32) {
		w, g := make([]float32, 16), make([]float32, 16)
		slots := [][]float32{make([]float32, 16), make([]float32, 16)}
		for i := range w {
			w[i], g[i], slots[1][i] = 1, float32(i)-8, 0.5
		}
		g[3] = float32(math.NaN())
		slots[1][10] = float32(math.NaN())
		return w, g, slots
	}
	w1, g1, s1 := mk()
	w2, g2, s2 := mk()
	u.Apply(w1, g1, s1)
	scalar := u
	scalar.scalarOnly = true
	scalar.apply(w2, g2, s2)
	for i := range w1 {
		for _, pair := range [][2]float32{{w1[i], w2[i]}, {s1[0][i], s2[0][i]}, {s1[1][i], s2[1][i]}} {
			a, b := pair[0], pair[1]
			if a != b && !(a != a && b != b) {
				t.Fatalf("index %d: vector %v, Go loops %v", i, a, b)
			}
		}
	}
	if s1[1][3] == s1[1][3] || s1[1][10] == s1[1][10] {
		t.Errorf("a NaN gradient or slot did not give a NaN maximum: %v, %v", s1[1][3], s1[1][10])
	}
}
