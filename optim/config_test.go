package optim

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// settings returns an optimizer's Config() struct, which every optimizer
// of this package has.
func settings(o Optimizer) any {
	return reflect.ValueOf(o).MethodByName("Config").Call(nil)[0].Interface()
}

// TestConfigRoundTrips checks every optimizer's config, and that
// FromConfig makes of its JSON an optimizer of the same settings.
func TestConfigRoundTrips(t *testing.T) {
	must := func(o Optimizer, err error) Optimizer {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cases := []struct {
		opt  Optimizer
		want string
	}{
		{must(NewSGD(SGDConfig{})), `{"class_name":"SGD","config":{"clipnorm":null,"clipvalue":null,"global_clipnorm":null,"learning_rate":0.01,"momentum":0,"nesterov":false,"weight_decay":null}}`},
		{must(NewSGD(SGDConfig{LearningRate: 0.5, Momentum: 0.9, Nesterov: true, Options: Options{ClipNorm: 1, ClipValue: 2, WeightDecay: 0.1}})),
			`{"class_name":"SGD","config":{"clipnorm":1,"clipvalue":2,"global_clipnorm":null,"learning_rate":0.5,"momentum":0.9,"nesterov":true,"weight_decay":0.1}}`},
		{must(NewSGD(SGDConfig{Options: Options{GlobalClipNorm: 5}})),
			`{"class_name":"SGD","config":{"clipnorm":null,"clipvalue":null,"global_clipnorm":5,"learning_rate":0.01,"momentum":0,"nesterov":false,"weight_decay":null}}`},
		{must(NewAdam(AdamConfig{})), `{"class_name":"Adam","config":{"amsgrad":false,"beta_1":0.9,"beta_2":0.999,"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"learning_rate":0.001,"weight_decay":null}}`},
		{must(NewAdam(AdamConfig{Beta1: F(0.5), AMSGrad: true, Options: Options{Schedule: ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 10, DecayRate: 0.5, Staircase: true}}})),
			`{"class_name":"Adam","config":{"amsgrad":true,"beta_1":0.5,"beta_2":0.999,"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"learning_rate":{"class_name":"ExponentialDecay","config":{"decay_rate":0.5,"decay_steps":10,"initial_learning_rate":0.1,"staircase":true}},"weight_decay":null}}`},
		{must(NewAdamW(AdamConfig{})), `{"class_name":"AdamW","config":{"amsgrad":false,"beta_1":0.9,"beta_2":0.999,"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"learning_rate":0.001,"weight_decay":0.004}}`},
		{must(NewRMSprop(RMSpropConfig{Momentum: 0.5, Centered: true})),
			`{"class_name":"RMSprop","config":{"centered":true,"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"learning_rate":0.001,"momentum":0.5,"rho":0.9,"weight_decay":null}}`},
		{must(NewAdagrad(AdagradConfig{InitialAccumulatorValue: F(0.5), Options: Options{Schedule: InverseTimeDecay{InitialLearningRate: 0.1, DecaySteps: 5, DecayRate: 2}}})),
			`{"class_name":"Adagrad","config":{"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"initial_accumulator_value":0.5,"learning_rate":{"class_name":"InverseTimeDecay","config":{"decay_rate":2,"decay_steps":5,"initial_learning_rate":0.1,"staircase":false}},"weight_decay":null}}`},
		{must(NewAdadelta(AdadeltaConfig{Rho: F(0.5), Options: Options{Schedule: PiecewiseConstantDecay{Boundaries: []int64{10, 20}, Values: []float64{1, 0.5, 0.1}}}})),
			`{"class_name":"Adadelta","config":{"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"learning_rate":{"class_name":"PiecewiseConstantDecay","config":{"boundaries":[10,20],"values":[1,0.5,0.1]}},"rho":0.5,"weight_decay":null}}`},
		{must(NewAdamax(AdamaxConfig{Epsilon: F(1e-3), Options: Options{Schedule: PolynomialDecay{InitialLearningRate: 0.1, DecaySteps: 100}}})),
			`{"class_name":"Adamax","config":{"beta_1":0.9,"beta_2":0.999,"clipnorm":null,"clipvalue":null,"epsilon":0.001,"global_clipnorm":null,"learning_rate":{"class_name":"PolynomialDecay","config":{"cycle":false,"decay_steps":100,"end_learning_rate":0,"initial_learning_rate":0.1,"power":1}},"weight_decay":null}}`},
		{must(NewNadam(NadamConfig{Beta2: F(0.9), Options: Options{Schedule: CosineDecay{InitialLearningRate: 0.1, DecaySteps: 100, Alpha: 0.1, WarmupTarget: 0.2, WarmupSteps: 5}}})),
			`{"class_name":"Nadam","config":{"beta_1":0.9,"beta_2":0.9,"clipnorm":null,"clipvalue":null,"epsilon":1e-7,"global_clipnorm":null,"learning_rate":{"class_name":"CosineDecay","config":{"alpha":0.1,"decay_steps":100,"initial_learning_rate":0.1,"warmup_steps":5,"warmup_target":0.2}},"weight_decay":null}}`},
		{must(NewSGD(SGDConfig{Options: Options{Schedule: CosineDecayRestarts{InitialLearningRate: 0.1, FirstDecaySteps: 10}}})),
			`{"class_name":"SGD","config":{"clipnorm":null,"clipvalue":null,"global_clipnorm":null,"learning_rate":{"class_name":"CosineDecayRestarts","config":{"alpha":0,"first_decay_steps":10,"initial_learning_rate":0.1,"m_mul":1,"t_mul":2}},"momentum":0,"nesterov":false,"weight_decay":null}}`},
	}
	classes := map[string]bool{}
	for _, c := range cases {
		cfg, err := ConfigOf(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		classes[cfg.ClassName] = true
		if s, ok := cfg.Config["learning_rate"].(Config); ok {
			classes[s.ClassName] = true
		}
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if string(js) != c.want {
			t.Errorf("%s: config\n%s\nwant\n%s", c.opt.Name(), js, c.want)
		}
		var read Config
		if err := json.Unmarshal(js, &read); err != nil {
			t.Fatal(err)
		}
		got, err := FromConfig(read)
		if err != nil {
			t.Errorf("%s: %v", js, err)
			continue
		}
		if got.Name() != c.opt.Name() || got.LearningRate() != c.opt.LearningRate() {
			t.Errorf("made %s at learning rate %v, want %s at %v", got.Name(), got.LearningRate(), c.opt.Name(), c.opt.LearningRate())
		}
		want := settings(c.opt)
		if p, ok := want.(SGDConfig); ok { // CosineDecayRestarts' zero TMul and MMul read back as Keras' defaults
			if s, ok := p.Schedule.(CosineDecayRestarts); ok {
				s.TMul, s.MMul = 2, 1
				p.Schedule = s
				want = p
			}
		}
		if p, ok := want.(AdamaxConfig); ok { // PolynomialDecay's zero Power reads back as 1
			if s, ok := p.Schedule.(PolynomialDecay); ok {
				s.Power = 1
				p.Schedule = s
				want = p
			}
		}
		if !reflect.DeepEqual(settings(got), want) {
			t.Errorf("%s: made settings %+v, want %+v", c.opt.Name(), settings(got), want)
		}
	}
	for _, class := range append(slices.Clone(optimizerClasses), scheduleClasses...) {
		if !classes[class] {
			t.Errorf("no case of class %s", class)
		}
	}
}

// TestConfigLearningRate checks that the config holds the learning rate
// SetLearningRate set, which replaces a schedule, as Keras' get_config
// holds the current one.
func TestConfigLearningRate(t *testing.T) {
	s, err := NewRMSprop(RMSpropConfig{Options: Options{Schedule: ExponentialDecay{InitialLearningRate: 0.1, DecaySteps: 1, DecayRate: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetLearningRate(0.25)
	cfg, err := ConfigOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config["learning_rate"]; got != 0.25 {
		t.Errorf("learning_rate %v, want 0.25", got)
	}
	o, err := FromConfig(cfg)
	if err != nil || o.LearningRate() != 0.25 {
		t.Errorf("made an optimizer at %v (%v), want 0.25", o.LearningRate(), err)
	}
}

type opaqueOptimizer struct{ Optimizer }

type opaqueSchedule struct{ Schedule }

// TestConfigErrors checks that each way a config can be wrong, and an
// optimizer or schedule without a config, is an error that names it.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		config Config
		want   []string
	}{
		{Config{"Lion", nil}, []string{`unknown optimizer class "Lion"`, "SGD, Adam, AdamW"}},
		{Config{"SGD", map[string]any{"decay": 0.1}}, []string{"SGD config", `unknown argument "decay"`}},
		{Config{"SGD", map[string]any{"momentum": "high"}}, []string{`argument "momentum" is a JSON string where a number is wanted`}},
		{Config{"SGD", map[string]any{"momentum": 2}}, []string{"momentum must be in [0, 1], got 2"}},
		{Config{"Adam", map[string]any{"learning_rate": -1}}, []string{"learning rate must be a positive number, got -1"}},
		{Config{"Adam", map[string]any{"learning_rate": "fast"}}, []string{`learning_rate is "fast": want a number or a schedule's config`}},
		{Config{"Adam", map[string]any{"learning_rate": map[string]any{"class_name": "StepDecay"}}}, []string{"learning_rate", `unknown schedule class "StepDecay"`, "CosineDecayRestarts"}},
		{Config{"Adam", map[string]any{"learning_rate": map[string]any{"class_name": "ExponentialDecay", "config": map[string]any{"initial_learning_rate": 0.1, "decay_rate": 0.5}}}},
			[]string{"learning_rate", "ExponentialDecay config", `argument "decay_steps" is missing`}},
		{Config{"Adam", map[string]any{"learning_rate": map[string]any{"class_name": "ExponentialDecay", "config": map[string]any{}, "module": "keras"}}},
			[]string{"learning_rate is not a schedule's config", `unknown field "module"`}},
		{Config{"RMSprop", map[string]any{"clipnorm": -1}}, []string{"clipnorm must be a finite number >= 0"}},
	} {
		_, err := FromConfig(c.config)
		if err == nil {
			t.Errorf("%v: no error", c.config)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: the error does not say %q:\n%v", c.config, w, err)
			}
		}
	}
	for _, c := range []struct {
		config Config
		want   []string
	}{
		{Config{"PiecewiseConstantDecay", map[string]any{"boundaries": []int{1}}}, []string{`argument "values" is missing`}},
		{Config{"PiecewiseConstantDecay", map[string]any{"boundaries": []int{1}, "values": []float64{1}}}, []string{"values must have one more entry than boundaries"}},
		{Config{"CosineDecay", map[string]any{"initial_learning_rate": 0.1, "decay_steps": 0}}, []string{"decay_steps must be positive"}},
		{Config{"CosineDecayRestarts", map[string]any{"initial_learning_rate": 0.1}}, []string{`argument "first_decay_steps" is missing`}},
		{Config{"PolynomialDecay", map[string]any{"decay_steps": 3}}, []string{`argument "initial_learning_rate" is missing`}},
		{Config{"InverseTimeDecay", map[string]any{"initial_learning_rate": 0.1, "decay_steps": 2.5, "decay_rate": 1}}, []string{`argument "decay_steps" is a JSON number 2.5 where an integer is wanted`}},
	} {
		_, err := ScheduleFromConfig(c.config)
		if err == nil {
			t.Errorf("%v: no error", c.config)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: the error does not say %q:\n%v", c.config, w, err)
			}
		}
	}
	sgd, err := NewSGD(SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigOf(opaqueOptimizer{sgd}); err == nil || !strings.Contains(err.Error(), "optim.opaqueOptimizer, which has no config") {
		t.Errorf("ConfigOf of another package's optimizer: %v", err)
	}
	sgd.cfg.Schedule = opaqueSchedule{ExponentialDecay{InitialLearningRate: 1, DecaySteps: 1, DecayRate: 1}}
	if _, err := ConfigOf(sgd); err == nil || !strings.Contains(err.Error(), "learning_rate") || !strings.Contains(err.Error(), "optim.opaqueSchedule") {
		t.Errorf("ConfigOf of an optimizer with another package's schedule: %v", err)
	}
	for _, o := range []Optimizer{nil, (*SGD)(nil), (*Nadam)(nil)} {
		if _, err := ConfigOf(o); err == nil || !strings.Contains(err.Error(), "no optimizer") {
			t.Errorf("ConfigOf(%#v): %v", o, err)
		}
	}
	if _, err := ScheduleConfigOf((*CosineDecay)(nil)); err == nil || !strings.Contains(err.Error(), "no schedule") {
		t.Errorf("ScheduleConfigOf of a nil *CosineDecay: %v", err)
	}
	if c, err := ScheduleConfigOf(&ExponentialDecay{InitialLearningRate: 1, DecaySteps: 2, DecayRate: 0.5}); err != nil || c.ClassName != "ExponentialDecay" {
		t.Errorf("ScheduleConfigOf of a pointer: %v, %v", c, err)
	}
}
