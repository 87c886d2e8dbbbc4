package optim

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Variable is one weight tensor and its gradient, as flat float32 slices.
type Variable struct {
	// Name identifies the variable across steps, e.g. "dense/kernel".
	Name  string
	Value []float32
	Grad  []float32
}

// Optimizer updates variables in place from their gradients.
//
// Every optimizer describes its next step as data (NextUpdate), so that a
// model's device applies it where the weights live, and keeps its slots
// (momentum, Adam's moments) per variable name, which that device reads
// and writes in place (Slot).
type Optimizer interface {
	// Name is the Keras name ("SGD", "Adam").
	Name() string
	// LearningRate is the current learning rate.
	LearningRate() float64
	// SetLearningRate changes it, as Keras callbacks do between epochs.
	SetLearningRate(lr float64)
	// Apply performs one update step on every variable, on the host.
	Apply(vars []Variable) error
	// Iterations is the number of steps so far.
	Iterations() int64
	// NextUpdate describes the next step: the rule, its numbers, and the
	// iteration it is (Iterations()+1).
	NextUpdate() Update
	// Slot returns the slot named name (one of NextUpdate().SlotNames())
	// of a variable with size values, creating it as zeros the first time.
	// The caller may update it in place: it is the optimizer's state.
	Slot(variable, name string, size int) ([]float32, error)
	// Advance counts a step applied elsewhere (by a device, with
	// NextUpdate and Slot), as Apply counts its own.
	Advance()
}

// slotTable holds an optimizer's per-variable slots: by slot name, then by
// variable name.
type slotTable struct {
	slots map[string]map[string][]float32
	// owner is the model the optimizer is bound to (see Bind), ownerName
	// its name for messages, and sync brings slots living on that model's
	// device back before State reads them.
	owner     any
	ownerName string
	sync      func() error
	// init, when set, gives a new slot's starting value by slot name.
	init func(name string) float32
}

func newSlotTable() slotTable { return slotTable{slots: map[string]map[string][]float32{}} }

// Slot implements Optimizer.Slot.
func (t *slotTable) Slot(variable, name string, size int) ([]float32, error) {
	byVar := t.slots[name]
	if byVar == nil {
		byVar = map[string][]float32{}
		t.slots[name] = byVar
	}
	s, ok := byVar[variable]
	if !ok {
		s = make([]float32, size)
		if t.init != nil {
			if v := t.init(name); v != 0 {
				for i := range s {
					s[i] = v
				}
			}
		}
		byVar[variable] = s
	}
	if len(s) != size {
		return nil, fmt.Errorf("variable %q has %d values but its optimizer slot %q has %d (restored from another model?)", variable, size, name, len(s))
	}
	return s, nil
}

// ErrBound is wrapped by Bind's error for an optimizer that another model
// already uses.
var ErrBound = errors.New("the optimizer is already bound to another model")

// Bind makes the optimizer the optimizer of one model, owner (named name in
// messages; nn's Compile calls it). Its slots are keyed by variable names
// such as "dense/kernel", which every model has, so a second model would
// silently train on the first one's state: Bind fails, wrapping ErrBound and
// naming both models, when another owner holds the optimizer. sync, when not
// nil, is called by State first, so that it returns the values of slots
// living on the model's device. Bind(nil, "", nil) releases the optimizer
// (a model compiled again with another optimizer does).
func (t *slotTable) Bind(owner any, name string, sync func() error) error {
	if owner != nil && t.owner != nil && t.owner != owner {
		return fmt.Errorf("%w: model %q uses it, so model %q cannot: make a new optimizer for each model (optim.NewSGD, optim.NewAdam or optim.Get)", ErrBound, t.ownerName, name)
	}
	t.owner, t.ownerName, t.sync = owner, name, sync
	return nil
}

// apply runs one host step of u over vars with the table's slots.
func (t *slotTable) apply(u Update, vars []Variable) error {
	names := u.SlotNames()
	for _, v := range vars {
		if len(v.Value) != len(v.Grad) {
			return fmt.Errorf("variable %q has %d values but %d gradients", v.Name, len(v.Value), len(v.Grad))
		}
		for _, name := range names {
			if s, ok := t.slots[name][v.Name]; ok && len(s) != len(v.Value) {
				return fmt.Errorf("variable %q has %d values but its optimizer state has %d (restored from another model?)", v.Name, len(v.Value), len(s))
			}
		}
	}
	if u.GlobalClipNorm > 0 {
		grads := make([][]float32, len(vars))
		for i, v := range vars {
			grads[i] = v.Grad
		}
		u.GlobalScale = GlobalScale(u.GlobalClipNorm, grads...)
	}
	slots := make([][]float32, len(names))
	for _, v := range vars {
		for i, name := range names {
			s, err := t.Slot(v.Name, name, len(v.Value))
			if err != nil {
				return err
			}
			slots[i] = s
		}
		u.Apply(v.Value, v.Grad, slots)
	}
	return nil
}

// SGDConfig holds SGD's hyperparameters, keras.optimizers.SGD's
// arguments. Its zero value is Keras' defaults: a zero LearningRate means
// 0.01 (a rate of exactly 0, which Keras allows and which leaves the
// weights alone, is SetLearningRate(0)'s), and Momentum's default is 0,
// so 0 there is 0.
type SGDConfig struct {
	LearningRate float64 // 0: Keras' default 0.01
	Momentum     float64 // in [0, 1]; default 0
	Nesterov     bool
	Options
}

// SGD is gradient descent with optional (Nesterov) momentum:
//
//	velocity = momentum·velocity - lr·g
//	w += velocity                          (Nesterov: w += momentum·velocity - lr·g)
type SGD struct {
	cfg SGDConfig
	slotTable
	iterations int64
}

// NewSGD makes an SGD optimizer, keras.optimizers.SGD; a zero
// LearningRate means Keras' 0.01, which Config then reports. It fails on a
// learning rate or momentum that is not a valid number for SGD.
func NewSGD(cfg SGDConfig) (*SGD, error) {
	cfg.LearningRate = orDefault(cfg.LearningRate, 0.01)
	if err := checkRate(cfg.LearningRate); err != nil {
		return nil, fmt.Errorf("SGD: %w", err)
	}
	if cfg.Momentum < 0 || cfg.Momentum > 1 || math.IsNaN(cfg.Momentum) {
		return nil, fmt.Errorf("SGD: momentum must be in [0, 1], got %v", cfg.Momentum)
	}
	if err := cfg.Options.check(); err != nil {
		return nil, fmt.Errorf("SGD: %w", err)
	}
	return &SGD{cfg: cfg, slotTable: newSlotTable()}, nil
}

func checkRate(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("learning rate must be a positive number, got %v", lr)
	}
	return nil
}

func (s *SGD) Name() string { return "SGD" }

// LearningRate is the learning rate of the next step: the schedule's value
// when there is one.
func (s *SGD) LearningRate() float64 { return s.cfg.rate(s.cfg.LearningRate, s.iterations) }

// SetLearningRate sets a constant learning rate, replacing the schedule if
// there is one.
func (s *SGD) SetLearningRate(lr float64) { s.cfg.LearningRate, s.cfg.Schedule = lr, nil }
func (s *SGD) Iterations() int64          { return s.iterations }
func (s *SGD) Advance()                   { s.iterations++ }

// Config returns the hyperparameters in use, Keras' defaults filled in.
func (s *SGD) Config() SGDConfig { return s.cfg }

// NextUpdate describes the next step.
func (s *SGD) NextUpdate() Update {
	u := Update{Rule: RuleSGD, LearningRate: s.LearningRate(), Momentum: s.cfg.Momentum, Iteration: s.iterations + 1}
	s.cfg.fill(&u)
	switch {
	case s.cfg.Momentum != 0 && s.cfg.Nesterov:
		u.Rule = RuleNesterov
	case s.cfg.Momentum != 0:
		u.Rule = RuleMomentum
	}
	return u
}

func (s *SGD) Apply(vars []Variable) error {
	if err := s.apply(s.NextUpdate(), vars); err != nil {
		return fmt.Errorf("SGD: %w", err)
	}
	s.iterations++
	return nil
}

// AdamConfig holds Adam's and AdamW's hyperparameters,
// keras.optimizers.Adam's arguments. Its zero value is Keras' defaults: a
// zero LearningRate means 0.001 (a rate of exactly 0 is
// SetLearningRate(0)'s), and an unset Float its default below; F sets one
// to any value Keras allows, 0 included:
//
//	optim.AdamConfig{LearningRate: 0.01, Beta1: optim.F(0)} // m = g: no momentum
type AdamConfig struct {
	LearningRate float64 // 0: Keras' default 0.001
	Beta1        Float   // in [0, 1); unset: 0.9
	Beta2        Float   // in [0, 1); unset: 0.999
	Epsilon      Float   // unset: 1e-7
	// AMSGrad keeps the largest second moment so far (Keras' amsgrad).
	AMSGrad bool
	Options
}

// Adam is the Adam optimizer as TensorFlow applies it:
//
//	m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
//	w -= lr·sqrt(1-β2^t)/(1-β1^t) · m / (sqrt(v) + ε)
type Adam struct {
	name string
	cfg  AdamConfig
	slotTable
	iterations int64
}

// NewAdam makes an Adam optimizer, keras.optimizers.Adam; a zero
// LearningRate and the unset Floats of cfg take Keras' defaults, which
// Config then reports. It fails on a learning rate or betas that are not
// valid numbers for Adam.
func NewAdam(cfg AdamConfig) (*Adam, error) {
	cfg.LearningRate = orDefault(cfg.LearningRate, 0.001)
	cfg.Beta1 = cfg.Beta1.withDefault(0.9)
	cfg.Beta2 = cfg.Beta2.withDefault(0.999)
	cfg.Epsilon = cfg.Epsilon.withDefault(1e-7)
	if err := checkRate(cfg.LearningRate); err != nil {
		return nil, fmt.Errorf("Adam: %w", err)
	}
	for _, b := range []float64{cfg.Beta1.v, cfg.Beta2.v} {
		if b < 0 || b >= 1 || math.IsNaN(b) {
			return nil, fmt.Errorf("Adam: beta values must be in [0, 1), got %v", b)
		}
	}
	if err := cfg.Options.check(); err != nil {
		return nil, fmt.Errorf("Adam: %w", err)
	}
	return &Adam{name: "Adam", cfg: cfg, slotTable: newSlotTable()}, nil
}

// NewAdamW makes an AdamW optimizer, keras.optimizers.AdamW: Adam with
// decoupled weight decay, a zero Options.WeightDecay meaning Keras' 0.004.
// Keras' AdamW(weight_decay=0.0) makes Adam's updates under AdamW's name:
// FromConfig makes it from a config with weight_decay 0, and NewAdam
// makes the same updates.
func NewAdamW(cfg AdamConfig) (*Adam, error) { return newAdamW(cfg, false) }

// newAdamW is NewAdamW, with a WeightDecay of exactly 0 when zeroDecay.
func newAdamW(cfg AdamConfig, zeroDecay bool) (*Adam, error) {
	if !zeroDecay {
		cfg.WeightDecay = orDefault(cfg.WeightDecay, 0.004)
	}
	a, err := NewAdam(cfg)
	if err != nil {
		return nil, fmt.Errorf("AdamW: %w", errors.Unwrap(err))
	}
	a.name = "AdamW"
	return a, nil
}

// Name is "Adam", or "AdamW" for an optimizer from NewAdamW.
func (a *Adam) Name() string { return a.name }

// LearningRate is the learning rate of the next step: the schedule's value
// when there is one.
func (a *Adam) LearningRate() float64 { return a.cfg.rate(a.cfg.LearningRate, a.iterations) }

// SetLearningRate sets a constant learning rate, replacing the schedule if
// there is one.
func (a *Adam) SetLearningRate(lr float64) { a.cfg.LearningRate, a.cfg.Schedule = lr, nil }
func (a *Adam) Iterations() int64          { return a.iterations }
func (a *Adam) Advance()                   { a.iterations++ }

// Config returns the hyperparameters in use, Keras' defaults filled in
// (every Float set).
func (a *Adam) Config() AdamConfig { return a.cfg }

// NextUpdate describes the next step.
func (a *Adam) NextUpdate() Update {
	u := Update{Rule: RuleAdam, LearningRate: a.LearningRate(), Beta1: a.cfg.Beta1.v, Beta2: a.cfg.Beta2.v,
		Epsilon: a.cfg.Epsilon.v, AMSGrad: a.cfg.AMSGrad, Iteration: a.iterations + 1}
	a.cfg.fill(&u)
	return u
}

func (a *Adam) Apply(vars []Variable) error {
	if err := a.apply(a.NextUpdate(), vars); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	a.iterations++
	return nil
}

// Get makes an optimizer with Keras' defaults from the name
// compile(optimizer="...") takes, in any case: "sgd", "adam", "adamw",
// "rmsprop", "adagrad", "adadelta", "adamax" or "nadam" (the class names,
// such as "RMSprop", too).
func Get(name string) (Optimizer, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sgd":
		return NewSGD(SGDConfig{})
	case "adam":
		return NewAdam(AdamConfig{})
	case "adamw":
		return NewAdamW(AdamConfig{})
	case "rmsprop":
		return NewRMSprop(RMSpropConfig{})
	case "adagrad":
		return NewAdagrad(AdagradConfig{})
	case "adadelta":
		return NewAdadelta(AdadeltaConfig{})
	case "adamax":
		return NewAdamax(AdamaxConfig{})
	case "nadam":
		return NewNadam(NadamConfig{})
	}
	return nil, fmt.Errorf("unknown optimizer %q: known optimizers are %s (make one with other settings with its New function, such as NewSGD)", name, strings.Join(Names, ", "))
}

// Names lists the names Get knows, as Keras spells them in compile.
var Names = []string{"sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam"}
