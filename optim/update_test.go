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
	if err != nil || adam.Config() != (AdamConfig{LearningRate: 0.001, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7}) {
		t.Errorf("NewAdam defaults: %+v, %v", adam.Config(), err)
	}
	for _, bad := range []SGDConfig{{LearningRate: -1}, {LearningRate: math.NaN()}, {Momentum: 1.5}} {
		if _, err := NewSGD(bad); err == nil {
			t.Errorf("NewSGD(%+v) accepted a bad config", bad)
		}
	}
	if _, err := NewAdam(AdamConfig{Beta1: 1}); err == nil {
		t.Error("NewAdam accepted beta1 = 1")
	}
	if err := sgd.Apply([]Variable{{Name: "w", Value: make([]float32, 2), Grad: make([]float32, 3)}}); err == nil {
		t.Error("Apply accepted a gradient of the wrong length")
	}
}
