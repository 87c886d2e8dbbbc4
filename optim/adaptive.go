package optim

import "fmt"

// rule is what the optimizers built on it share: a name, a learning rate
// (or a schedule), the Options, the update template of its rule, the
// slots and the step count. Each Keras optimizer after SGD and Adam is a
// rule with its own config.
type rule struct {
	name string
	lr   float64
	opts Options
	tmpl Update
	slotTable
	iterations int64
}

func newRule(name string, lr float64, opts Options, tmpl Update) (rule, error) {
	if err := checkRate(lr); err != nil {
		return rule{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := opts.check(); err != nil {
		return rule{}, fmt.Errorf("%s: %w", name, err)
	}
	r := rule{name: name, lr: lr, opts: opts, tmpl: tmpl, slotTable: newSlotTable()}
	r.slotTable.init = tmpl.SlotInit
	return r, nil
}

func (r *rule) Name() string { return r.name }

// LearningRate is the learning rate of the next step: the schedule's
// value when there is one.
func (r *rule) LearningRate() float64 { return r.opts.rate(r.lr, r.iterations) }

// SetLearningRate sets a constant learning rate, replacing the schedule if
// there is one (as a callback changing the rate asks for).
func (r *rule) SetLearningRate(lr float64) { r.lr, r.opts.Schedule = lr, nil }

func (r *rule) Iterations() int64 { return r.iterations }
func (r *rule) Advance()          { r.iterations++ }

// NextUpdate describes the next step.
func (r *rule) NextUpdate() Update {
	u := r.tmpl
	u.LearningRate = r.LearningRate()
	u.Iteration = r.iterations + 1
	r.opts.fill(&u)
	return u
}

func (r *rule) Apply(vars []Variable) error {
	if err := r.apply(r.NextUpdate(), vars); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.iterations++
	return nil
}

// State returns a deep copy of the state (see SGD.State).
func (r *rule) State() State {
	slots, _ := r.state(SlotNames(r))
	if slots == nil {
		slots = cloneTable(r.slots)
	}
	return State{Iterations: r.iterations, LearningRate: r.LearningRate(), Slots: slots}
}

// SetState replaces the state with a copy of st. With a schedule, the
// learning rate comes from the schedule at the restored step.
func (r *rule) SetState(st State) error {
	names := SlotNames(r)
	slots, err := checkState(r.name, st, r.NextUpdate())
	if err != nil {
		return err
	}
	for i := 1; i < len(names); i++ {
		for v, values := range slots[0] {
			if len(slots[i][v]) != len(values) {
				return fmt.Errorf("%s: state for %q has %d values of %s but %d of %s", r.name, v, len(values), names[0], len(slots[i][v]), names[i])
			}
		}
	}
	r.iterations = st.Iterations
	if r.opts.Schedule == nil {
		r.lr = st.LearningRate
	}
	r.setSlots(names, slots)
	return nil
}

// RMSpropConfig holds RMSprop's hyperparameters,
// keras.optimizers.RMSprop's arguments. Its zero value is Keras' defaults:
// a zero LearningRate means 0.001 (a rate of exactly 0 is
// SetLearningRate(0)'s), an unset Float its default below (F sets any
// value, 0 included), and Momentum's default is 0, so 0 there is 0.
type RMSpropConfig struct {
	LearningRate float64 // 0: Keras' default 0.001
	Rho          Float   // in [0, 1); unset: 0.9
	Momentum     float64 // in [0, 1]; default 0
	Epsilon      Float   // unset: 1e-7
	Centered     bool
	Options
}

// RMSprop divides each step by a moving root mean square of the gradient
// (see RuleRMSprop).
type RMSprop struct {
	rule
	cfg RMSpropConfig
}

// NewRMSprop makes an RMSprop optimizer, keras.optimizers.RMSprop; a zero
// LearningRate and the unset Floats of cfg take Keras' defaults, which
// Config then reports.
func NewRMSprop(cfg RMSpropConfig) (*RMSprop, error) {
	cfg.LearningRate = orDefault(cfg.LearningRate, 0.001)
	cfg.Rho = cfg.Rho.withDefault(0.9)
	cfg.Epsilon = cfg.Epsilon.withDefault(1e-7)
	if err := inUnit("RMSprop", "rho", cfg.Rho.v, false); err != nil {
		return nil, err
	}
	if err := inUnit("RMSprop", "momentum", cfg.Momentum, true); err != nil {
		return nil, err
	}
	r, err := newRule("RMSprop", cfg.LearningRate, cfg.Options, Update{Rule: RuleRMSprop, Rho: cfg.Rho.v, Momentum: cfg.Momentum,
		Epsilon: cfg.Epsilon.v, Centered: cfg.Centered})
	if err != nil {
		return nil, err
	}
	return &RMSprop{rule: r, cfg: cfg}, nil
}

// Config returns the hyperparameters in use, Keras' defaults filled in
// (every Float set).
func (r *RMSprop) Config() RMSpropConfig { return r.cfg }

// AdagradConfig holds Adagrad's hyperparameters,
// keras.optimizers.Adagrad's arguments. Its zero value is Keras' defaults:
// a zero LearningRate means 0.001 (a rate of exactly 0 is
// SetLearningRate(0)'s) and an unset Float its default below; F sets any
// value, 0 included.
type AdagradConfig struct {
	LearningRate            float64 // 0: Keras' default 0.001
	InitialAccumulatorValue Float   // >= 0; unset: 0.1
	Epsilon                 Float   // unset: 1e-7
	Options
}

// Adagrad divides each step by the root of the gradient's squares summed
// over all steps (see RuleAdagrad).
type Adagrad struct {
	rule
	cfg AdagradConfig
}

// NewAdagrad makes an Adagrad optimizer, keras.optimizers.Adagrad; a zero
// LearningRate and the unset Floats of cfg take Keras' defaults, which
// Config then reports.
func NewAdagrad(cfg AdagradConfig) (*Adagrad, error) {
	cfg.LearningRate = orDefault(cfg.LearningRate, 0.001)
	cfg.InitialAccumulatorValue = cfg.InitialAccumulatorValue.withDefault(0.1)
	cfg.Epsilon = cfg.Epsilon.withDefault(1e-7)
	if !(cfg.InitialAccumulatorValue.v >= 0) {
		return nil, fmt.Errorf("Adagrad: initial_accumulator_value must be >= 0, got %v", cfg.InitialAccumulatorValue.v)
	}
	r, err := newRule("Adagrad", cfg.LearningRate, cfg.Options, Update{Rule: RuleAdagrad, Epsilon: cfg.Epsilon.v,
		InitialAccumulator: cfg.InitialAccumulatorValue.v})
	if err != nil {
		return nil, err
	}
	return &Adagrad{rule: r, cfg: cfg}, nil
}

// Config returns the hyperparameters in use, Keras' defaults filled in
// (every Float set).
func (a *Adagrad) Config() AdagradConfig { return a.cfg }

// AdadeltaConfig holds Adadelta's hyperparameters,
// keras.optimizers.Adadelta's arguments. Its zero value is Keras'
// defaults: a zero LearningRate means 0.001 (a rate of exactly 0 is
// SetLearningRate(0)'s) and an unset Float its default below; F sets any
// value, 0 included.
type AdadeltaConfig struct {
	LearningRate float64 // 0: Keras' default 0.001
	Rho          Float   // in [0, 1); unset: 0.95
	Epsilon      Float   // unset: 1e-7 (with 0, Adadelta never moves, as in Keras)
	Options
}

// Adadelta scales each step by the ratio of moving roots of past steps and
// past gradients (see RuleAdadelta).
type Adadelta struct {
	rule
	cfg AdadeltaConfig
}

// NewAdadelta makes an Adadelta optimizer, keras.optimizers.Adadelta; a
// zero LearningRate and the unset Floats of cfg take Keras' defaults,
// which Config then reports.
func NewAdadelta(cfg AdadeltaConfig) (*Adadelta, error) {
	cfg.LearningRate = orDefault(cfg.LearningRate, 0.001)
	cfg.Rho = cfg.Rho.withDefault(0.95)
	cfg.Epsilon = cfg.Epsilon.withDefault(1e-7)
	if err := inUnit("Adadelta", "rho", cfg.Rho.v, false); err != nil {
		return nil, err
	}
	r, err := newRule("Adadelta", cfg.LearningRate, cfg.Options, Update{Rule: RuleAdadelta, Rho: cfg.Rho.v, Epsilon: cfg.Epsilon.v})
	if err != nil {
		return nil, err
	}
	return &Adadelta{rule: r, cfg: cfg}, nil
}

// Config returns the hyperparameters in use, Keras' defaults filled in
// (every Float set).
func (a *Adadelta) Config() AdadeltaConfig { return a.cfg }

// AdamaxConfig holds Adamax's (and Nadam's) hyperparameters, the
// arguments of keras.optimizers.Adamax and Nadam. Its zero value is Keras'
// defaults: a zero LearningRate means 0.001 (a rate of exactly 0 is
// SetLearningRate(0)'s) and an unset Float its default below; F sets any
// value, 0 included.
type AdamaxConfig struct {
	LearningRate float64 // 0: Keras' default 0.001
	Beta1        Float   // in [0, 1); unset: 0.9
	Beta2        Float   // in [0, 1); unset: 0.999
	Epsilon      Float   // unset: 1e-7
	Options
}

// NadamConfig holds Nadam's hyperparameters, Adamax's.
type NadamConfig = AdamaxConfig

// Adamax is Adam with the infinity norm (see RuleAdamax).
type Adamax struct {
	rule
	cfg AdamaxConfig
}

// NewAdamax makes an Adamax optimizer, keras.optimizers.Adamax; a zero
// LearningRate and the unset Floats of cfg take Keras' defaults, which
// Config then reports.
func NewAdamax(cfg AdamaxConfig) (*Adamax, error) {
	r, cfg, err := newAdamLike("Adamax", RuleAdamax, cfg)
	if err != nil {
		return nil, err
	}
	return &Adamax{rule: r, cfg: cfg}, nil
}

// Config returns the hyperparameters in use, Keras' defaults filled in
// (every Float set).
func (a *Adamax) Config() AdamaxConfig { return a.cfg }

// Nadam is Adam with Nesterov momentum (see RuleNadam).
type Nadam struct {
	rule
	cfg NadamConfig
}

// NewNadam makes a Nadam optimizer, keras.optimizers.Nadam; a zero
// LearningRate and the unset Floats of cfg take Keras' defaults, which
// Config then reports.
func NewNadam(cfg NadamConfig) (*Nadam, error) {
	r, cfg, err := newAdamLike("Nadam", RuleNadam, cfg)
	if err != nil {
		return nil, err
	}
	return &Nadam{rule: r, cfg: cfg}, nil
}

// Config returns the hyperparameters in use, Keras' defaults filled in
// (every Float set).
func (n *Nadam) Config() NadamConfig { return n.cfg }

func newAdamLike(name string, r Rule, cfg AdamaxConfig) (rule, AdamaxConfig, error) {
	cfg.LearningRate = orDefault(cfg.LearningRate, 0.001)
	cfg.Beta1 = cfg.Beta1.withDefault(0.9)
	cfg.Beta2 = cfg.Beta2.withDefault(0.999)
	cfg.Epsilon = cfg.Epsilon.withDefault(1e-7)
	for _, b := range []struct {
		name string
		v    float64
	}{{"beta_1", cfg.Beta1.v}, {"beta_2", cfg.Beta2.v}} {
		if err := inUnit(name, b.name, b.v, false); err != nil {
			return rule{}, cfg, err
		}
	}
	ru, err := newRule(name, cfg.LearningRate, cfg.Options, Update{Rule: r, Beta1: cfg.Beta1.v, Beta2: cfg.Beta2.v, Epsilon: cfg.Epsilon.v})
	return ru, cfg, err
}

// orDefault is v, or def when v is 0: the zero value of a float64 field
// whose Keras default is not 0 (LearningRate, AdamW's WeightDecay).
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// inUnit checks that v is in [0, 1), or [0, 1] when closed.
func inUnit(opt, name string, v float64, closed bool) error {
	if v >= 0 && (v < 1 || closed && v == 1) {
		return nil
	}
	interval := "[0, 1)"
	if closed {
		interval = "[0, 1]"
	}
	return fmt.Errorf("%s: %s must be in %s, got %v", opt, name, interval, v)
}
