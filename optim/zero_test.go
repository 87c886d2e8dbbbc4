package optim

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

// Nadam's momentum schedule at steps 1 and 2 with Keras' beta_1 0.9:
// μ_t = β1·(1 - 0.5·0.96^t).
const (
	nadamMu1 = 0.9 * (1 - 0.5*0.96)
	nadamMu2 = 0.9 * (1 - 0.5*0.96*0.96)
)

// zeroCases are Keras configs that set a hyperparameter Keras allows to
// be 0 to exactly 0, with the weight and slots one variable w (starting
// at 1) has after the steps of grads, worked out by hand from the rules
// (see Rule) with that hyperparameter 0 and the others Keras' defaults.
var zeroCases = []struct {
	name  string
	class string
	args  map[string]any
	grads []float32
	w     float64
	slots map[string]float64
}{
	{"SGD learning_rate 0", "SGD", map[string]any{"learning_rate": 0.0}, []float32{0.5},
		1, nil},
	{"SGD momentum 0", "SGD", map[string]any{"learning_rate": 0.1, "momentum": 0.0}, []float32{0.5},
		1 - 0.1*0.5, nil},
	// m = g, v = 0.001·g², lr_t = lr·√(1-0.999)/(1-0).
	{"Adam beta_1 0", "Adam", map[string]any{"learning_rate": 0.1, "beta_1": 0.0}, []float32{0.5},
		1 - 0.1*math.Sqrt(0.001)*0.5/(math.Sqrt(0.001*0.25)+1e-7), map[string]float64{"m": 0.5, "v": 0.001 * 0.25}},
	// m = 0.1·g, v = g², lr_t = lr·√1/(1-0.9).
	{"Adam beta_2 0", "Adam", map[string]any{"learning_rate": 0.1, "beta_2": 0.0}, []float32{0.5},
		1 - 0.1/0.1*0.05/(0.5+1e-7), map[string]float64{"m": 0.05, "v": 0.25}},
	// A gradient small enough for ε 1e-7 to matter: √v = √(0.001)·1e-6.
	{"Adam epsilon 0", "Adam", map[string]any{"learning_rate": 0.1, "epsilon": 0.0}, []float32{1e-6},
		1 - 0.1*math.Sqrt(0.001)/0.1*1e-7/math.Sqrt(0.001*1e-12), map[string]float64{"m": 1e-7, "v": 1e-15}},
	// No decay of w before Adam's step (AdamW's default would take
	// w·0.004·lr off first).
	{"AdamW weight_decay 0", "AdamW", map[string]any{"learning_rate": 0.1, "weight_decay": 0.0}, []float32{0.5},
		1 - 0.1*math.Sqrt(0.001)/0.1*0.05/(math.Sqrt(0.001*0.25)+1e-7), map[string]float64{"m": 0.05, "v": 0.001 * 0.25}},
	// r = g².
	{"RMSprop rho 0", "RMSprop", map[string]any{"learning_rate": 0.1, "rho": 0.0}, []float32{0.5},
		1 - 0.1*0.5/math.Sqrt(0.25+1e-7), map[string]float64{"velocity": 0.25}},
	{"RMSprop momentum 0", "RMSprop", map[string]any{"learning_rate": 0.1, "momentum": 0.0}, []float32{0.5},
		1 - 0.1*0.5/math.Sqrt(0.1*0.25+1e-7), map[string]float64{"velocity": 0.1 * 0.25}},
	{"RMSprop epsilon 0", "RMSprop", map[string]any{"learning_rate": 0.1, "epsilon": 0.0}, []float32{1e-6},
		1 - 0.1*1e-6/math.Sqrt(0.1*1e-12), map[string]float64{"velocity": 0.1 * 1e-12}},
	// a = 0 + g².
	{"Adagrad initial_accumulator_value 0", "Adagrad", map[string]any{"learning_rate": 0.1, "initial_accumulator_value": 0.0}, []float32{0.5},
		1 - 0.1*0.5/math.Sqrt(0.25+1e-7), map[string]float64{"accumulator": 0.25}},
	{"Adagrad epsilon 0", "Adagrad", map[string]any{"learning_rate": 0.1, "initial_accumulator_value": 1e-12, "epsilon": 0.0}, []float32{1e-6},
		1 - 0.1*1e-6/math.Sqrt(2e-12), map[string]float64{"accumulator": 2e-12}},
	{"Adagrad learning_rate 0", "Adagrad", map[string]any{"learning_rate": 0.0}, []float32{0.5},
		1, map[string]float64{"accumulator": 0.1 + 0.25}},
	// a = g², δ = -√ε/√(g²+ε)·g, d = δ².
	{"Adadelta rho 0", "Adadelta", map[string]any{"learning_rate": 1.0, "rho": 0.0}, []float32{0.5},
		1 - math.Sqrt(1e-7)/math.Sqrt(0.25+1e-7)*0.5,
		map[string]float64{"accumulated_grad": 0.25, "accumulated_delta_var": 1e-7 / (0.25 + 1e-7) * 0.25}},
	// δ = -√0/√a·g = 0: with ε 0 Adadelta never moves, in Keras too.
	{"Adadelta epsilon 0", "Adadelta", map[string]any{"learning_rate": 1.0, "epsilon": 0.0}, []float32{0.5},
		1, map[string]float64{"accumulated_grad": 0.05 * 0.25, "accumulated_delta_var": 0}},
	// m = g, u = |g|, 1-β1^t = 1.
	{"Adamax beta_1 0", "Adamax", map[string]any{"learning_rate": 0.1, "beta_1": 0.0}, []float32{0.5},
		1 - 0.1*0.5/(0.5+1e-7), map[string]float64{"m": 0.5, "u": 0.5}},
	// Two steps, as u = max(β2·u, |g|) starts at |g| whatever β2: step 2
	// forgets the first gradient, u = max(0·0.5, 0.1).
	{"Adamax beta_2 0", "Adamax", map[string]any{"learning_rate": 0.1, "beta_2": 0.0}, []float32{0.5, 0.1},
		1 - 0.1*0.05/(0.1*(0.5+1e-7)) - 0.1*0.055/(0.19*(0.1+1e-7)), map[string]float64{"m": 0.055, "u": 0.1}},
	{"Adamax epsilon 0", "Adamax", map[string]any{"learning_rate": 0.1, "epsilon": 0.0}, []float32{1e-6},
		1 - 0.1*1e-7/(0.1*1e-6), map[string]float64{"m": 1e-7, "u": 1e-6}},
	// μ_t = 0, so m̂ = g; ŝ = 0.001·g²/(1-0.999) = g².
	{"Nadam beta_1 0", "Nadam", map[string]any{"learning_rate": 0.1, "beta_1": 0.0}, []float32{0.5},
		1 - 0.1*0.5/(0.5+1e-7), map[string]float64{"m": 0.5, "v": 0.001 * 0.25}},
	// v = g² (ŝ is g² at step 1 whatever β2: the slot tells).
	{"Nadam beta_2 0", "Nadam", map[string]any{"learning_rate": 0.1, "beta_2": 0.0}, []float32{0.5},
		1 - 0.1*(nadamMu2*0.05/(1-nadamMu1*nadamMu2)+0.5)/(0.5+1e-7), map[string]float64{"m": 0.05, "v": 0.25}},
	{"Nadam epsilon 0", "Nadam", map[string]any{"learning_rate": 0.1, "epsilon": 0.0}, []float32{1e-6},
		1 - 0.1*(nadamMu2*1e-7/(1-nadamMu1*nadamMu2)+1e-6)/1e-6, map[string]float64{"m": 1e-7, "v": 1e-15}},
}

// near reports whether a float32 result is want up to float32 rounding.
func near(got float32, want float64) bool {
	return math.Abs(float64(got)-want) <= 2e-6*math.Abs(want)+1e-12
}

// TestZeroFromKerasConfig loads Keras configs that set a hyperparameter to
// 0, which Keras allows: the optimizer must use exactly 0 (not Keras'
// default for a missing argument), report 0 in its config, and save a
// config that loads the same again.
func TestZeroFromKerasConfig(t *testing.T) {
	for _, c := range zeroCases {
		t.Run(c.name, func(t *testing.T) {
			o, err := FromConfig(Config{ClassName: c.class, Config: c.args})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ConfigOf(o)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.args {
				if cfg.Config[k] != v {
					t.Errorf("the optimizer's config has %s %v, want %v", k, cfg.Config[k], v)
				}
			}
			saved, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var read Config
			if err := json.Unmarshal(saved, &read); err != nil {
				t.Fatal(err)
			}
			again, err := FromConfig(read)
			if err != nil {
				t.Fatalf("loading the saved config %s: %v", saved, err)
			}
			cfg2, err := ConfigOf(again)
			if err != nil {
				t.Fatal(err)
			}
			if resaved, _ := json.Marshal(cfg2); string(resaved) != string(saved) {
				t.Errorf("saved\n%s\nloaded and saved again\n%s", saved, resaved)
			}

			w := []float32{1}
			for _, g := range c.grads {
				if err := o.Apply([]Variable{{Name: "w", Value: w, Grad: []float32{g}}}); err != nil {
					t.Fatal(err)
				}
			}
			if !near(w[0], c.w) {
				t.Errorf("w = %.9g after %v, want %.9g", w[0], c.grads, c.w)
			}
			names := SlotNames(o)
			for name, want := range c.slots {
				if !slices.Contains(names, name) {
					t.Errorf("no slot %q (the optimizer keeps %v)", name, names)
					continue
				}
				s, err := o.Slot("w", name, 1)
				if err != nil {
					t.Fatal(err)
				}
				if !near(s[0], want) {
					t.Errorf("slot %s = %.9g, want %.9g", name, s[0], want)
				}
			}
		})
	}
}

// goZero makes, in Go, the optimizer of each of zeroCases: F(0) for a
// Float, SetLearningRate(0) for a rate of 0, and NewAdam for AdamW's
// weight_decay 0 (the same updates; only FromConfig keeps the name
// AdamW).
var goZero = map[string]func() (Optimizer, error){
	"SGD learning_rate 0": func() (Optimizer, error) {
		o, err := NewSGD(SGDConfig{})
		if err == nil {
			o.SetLearningRate(0)
		}
		return o, err
	},
	"SGD momentum 0":       func() (Optimizer, error) { return NewSGD(SGDConfig{LearningRate: 0.1, Momentum: 0}) },
	"Adam beta_1 0":        func() (Optimizer, error) { return NewAdam(AdamConfig{LearningRate: 0.1, Beta1: F(0)}) },
	"Adam beta_2 0":        func() (Optimizer, error) { return NewAdam(AdamConfig{LearningRate: 0.1, Beta2: F(0)}) },
	"Adam epsilon 0":       func() (Optimizer, error) { return NewAdam(AdamConfig{LearningRate: 0.1, Epsilon: F(0)}) },
	"AdamW weight_decay 0": func() (Optimizer, error) { return NewAdam(AdamConfig{LearningRate: 0.1}) },
	"RMSprop rho 0":        func() (Optimizer, error) { return NewRMSprop(RMSpropConfig{LearningRate: 0.1, Rho: F(0)}) },
	"RMSprop momentum 0":   func() (Optimizer, error) { return NewRMSprop(RMSpropConfig{LearningRate: 0.1, Momentum: 0}) },
	"RMSprop epsilon 0":    func() (Optimizer, error) { return NewRMSprop(RMSpropConfig{LearningRate: 0.1, Epsilon: F(0)}) },
	"Adagrad initial_accumulator_value 0": func() (Optimizer, error) {
		return NewAdagrad(AdagradConfig{LearningRate: 0.1, InitialAccumulatorValue: F(0)})
	},
	"Adagrad epsilon 0": func() (Optimizer, error) {
		return NewAdagrad(AdagradConfig{LearningRate: 0.1, InitialAccumulatorValue: F(1e-12), Epsilon: F(0)})
	},
	"Adagrad learning_rate 0": func() (Optimizer, error) {
		o, err := NewAdagrad(AdagradConfig{})
		if err == nil {
			o.SetLearningRate(0)
		}
		return o, err
	},
	"Adadelta rho 0":     func() (Optimizer, error) { return NewAdadelta(AdadeltaConfig{LearningRate: 1, Rho: F(0)}) },
	"Adadelta epsilon 0": func() (Optimizer, error) { return NewAdadelta(AdadeltaConfig{LearningRate: 1, Epsilon: F(0)}) },
	"Adamax beta_1 0":    func() (Optimizer, error) { return NewAdamax(AdamaxConfig{LearningRate: 0.1, Beta1: F(0)}) },
	"Adamax beta_2 0":    func() (Optimizer, error) { return NewAdamax(AdamaxConfig{LearningRate: 0.1, Beta2: F(0)}) },
	"Adamax epsilon 0":   func() (Optimizer, error) { return NewAdamax(AdamaxConfig{LearningRate: 0.1, Epsilon: F(0)}) },
	"Nadam beta_1 0":     func() (Optimizer, error) { return NewNadam(NadamConfig{LearningRate: 0.1, Beta1: F(0)}) },
	"Nadam beta_2 0":     func() (Optimizer, error) { return NewNadam(NadamConfig{LearningRate: 0.1, Beta2: F(0)}) },
	"Nadam epsilon 0":    func() (Optimizer, error) { return NewNadam(NadamConfig{LearningRate: 0.1, Epsilon: F(0)}) },
}

// TestZeroFromGo checks that every zero of zeroCases can be set in Go and
// makes the same steps, and that the config the optimizer reports holds
// the 0 (and Keras' defaults for the rest) as a loaded one does.
func TestZeroFromGo(t *testing.T) {
	for _, c := range zeroCases {
		t.Run(c.name, func(t *testing.T) {
			newOpt := goZero[c.name]
			if newOpt == nil {
				t.Fatal("no way to make it in Go")
			}
			o, err := newOpt()
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ConfigOf(o)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.args {
				if k == "weight_decay" { // NewAdam's: null, which is Adam's 0
					continue
				}
				if cfg.Config[k] != v {
					t.Errorf("the optimizer's config has %s %v, want %v", k, cfg.Config[k], v)
				}
			}
			w := []float32{1}
			for _, g := range c.grads {
				if err := o.Apply([]Variable{{Name: "w", Value: w, Grad: []float32{g}}}); err != nil {
					t.Fatal(err)
				}
			}
			if !near(w[0], c.w) {
				t.Errorf("w = %.9g after %v, want %.9g", w[0], c.grads, c.w)
			}
		})
	}
}

// TestConfigReportsValuesInUse checks that Config returns every Float set,
// to F's value or to Keras' default, and the update uses those numbers.
func TestConfigReportsValuesInUse(t *testing.T) {
	adam, err := NewAdam(AdamConfig{Beta1: F(0), Epsilon: F(1e-3)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := adam.Config(), (AdamConfig{LearningRate: 0.001, Beta1: F(0), Beta2: F(0.999), Epsilon: F(1e-3)}); got != want {
		t.Errorf("Adam config %+v, want %+v", got, want)
	}
	if u := adam.NextUpdate(); u.Beta1 != 0 || u.Beta2 != 0.999 || u.Epsilon != 1e-3 {
		t.Errorf("Adam update has beta_1 %v, beta_2 %v, epsilon %v; want 0, 0.999, 0.001", u.Beta1, u.Beta2, u.Epsilon)
	}
	rms, err := NewRMSprop(RMSpropConfig{Rho: F(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rms.Config(), (RMSpropConfig{LearningRate: 0.001, Rho: F(0), Epsilon: F(1e-7)}); got != want {
		t.Errorf("RMSprop config %+v, want %+v", got, want)
	}
	if u := rms.NextUpdate(); u.Rho != 0 {
		t.Errorf("RMSprop update has rho %v, want 0", u.Rho)
	}
	ada, err := NewAdadelta(AdadeltaConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ada.Config(), (AdadeltaConfig{LearningRate: 0.001, Rho: F(0.95), Epsilon: F(1e-7)}); got != want {
		t.Errorf("Adadelta config %+v, want %+v", got, want)
	}
	grad, err := NewAdagrad(AdagradConfig{InitialAccumulatorValue: F(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := grad.Config(), (AdagradConfig{LearningRate: 0.001, InitialAccumulatorValue: F(0), Epsilon: F(1e-7)}); got != want {
		t.Errorf("Adagrad config %+v, want %+v", got, want)
	}
	nadam, err := NewNadam(NadamConfig{Beta2: F(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := nadam.Config(), (NadamConfig{LearningRate: 0.001, Beta1: F(0.9), Beta2: F(0), Epsilon: F(1e-7)}); got != want {
		t.Errorf("Nadam config %+v, want %+v", got, want)
	}
	// A Float set out of range is refused, 0 is not: the checks see the
	// value, not a default.
	for _, bad := range []func() error{
		func() error { _, err := NewAdam(AdamConfig{Beta1: F(-0.1)}); return err },
		func() error { _, err := NewRMSprop(RMSpropConfig{Rho: F(1)}); return err },
		func() error { _, err := NewAdadelta(AdadeltaConfig{Rho: F(-1)}); return err },
		func() error { _, err := NewAdagrad(AdagradConfig{InitialAccumulatorValue: F(-1)}); return err },
		func() error { _, err := NewAdamax(AdamaxConfig{Beta2: F(1)}); return err },
	} {
		if bad() == nil {
			t.Error("a hyperparameter out of range was accepted")
		}
	}
}

// TestAdamWZeroDecayFromConfig checks the one zero that has no Float:
// AdamW's weight_decay of 0 keeps the name AdamW through a save, where a
// missing weight_decay is Keras' 0.004.
func TestAdamWZeroDecayFromConfig(t *testing.T) {
	for _, c := range []struct {
		args map[string]any
		want float64
	}{
		{map[string]any{"weight_decay": 0.0}, 0},
		{map[string]any{}, 0.004},
		{map[string]any{"weight_decay": nil}, 0.004},
		{map[string]any{"weight_decay": 0.1}, 0.1},
	} {
		o, err := FromConfig(Config{ClassName: "AdamW", Config: c.args})
		if err != nil {
			t.Fatal(err)
		}
		a := o.(*Adam)
		if o.Name() != "AdamW" || a.Config().WeightDecay != c.want || o.NextUpdate().WeightDecay != c.want {
			t.Errorf("%v: made %s with weight decay %v, want AdamW with %v", c.args, o.Name(), a.Config().WeightDecay, c.want)
		}
		cfg, err := ConfigOf(o)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Config["weight_decay"] != c.want {
			t.Errorf("%v: config has weight_decay %v, want %v", c.args, cfg.Config["weight_decay"], c.want)
		}
	}
}

func TestFloat(t *testing.T) {
	var unset Float
	if v, ok := unset.Get(); v != 0 || ok || unset.IsSet() || unset.Or(0.9) != 0.9 || unset.String() != "unset" {
		t.Errorf("the zero Float: Get %v %v, IsSet %v, Or(0.9) %v, String %q", v, ok, unset.IsSet(), unset.Or(0.9), unset)
	}
	zero := F(0)
	if v, ok := zero.Get(); v != 0 || !ok || !zero.IsSet() || zero.Or(0.9) != 0 || zero.String() != "0" {
		t.Errorf("F(0): Get %v %v, IsSet %v, Or(0.9) %v, String %q", v, ok, zero.IsSet(), zero.Or(0.9), zero)
	}
	if s := F(1e-7).String(); s != "1e-07" {
		t.Errorf("F(1e-7) prints %q", s)
	}
	if zero == unset || F(0.5) != F(0.5) {
		t.Error("Floats compare by value and whether set")
	}
}
