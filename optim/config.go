package optim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

// Config is an optimizer's or a learning-rate schedule's configuration as
// Keras serializes one: its Keras class name and its arguments by their
// Keras names, values JSON can hold. A schedule is the learning_rate of
// its optimizer's config, as in Keras:
//
//	{"class_name": "SGD", "config": {"learning_rate": {"class_name": "ExponentialDecay",
//	 "config": {"initial_learning_rate": 0.1, "decay_steps": 100, "decay_rate": 0.9, "staircase": false}},
//	 "momentum": 0.9, "nesterov": false, "clipnorm": null, "clipvalue": null, "weight_decay": null}}
//
// It is the Config of packages layers, losses and metrics: ConfigOf and
// ScheduleConfigOf give it, FromConfig and ScheduleFromConfig make the
// optimizer or schedule again, and nn's Save writes it. A config holds the
// settings, not the state: the step count and the slots are State's.
type Config struct {
	ClassName string         `json:"class_name"`
	Config    map[string]any `json:"config"`
}

// ConfigOf returns the configuration of o, one of this package's
// optimizers: its Keras class name ("SGD", "Adam", "AdamW", "RMSprop",
// "Adagrad", "Adadelta", "Adamax", "Nadam") and its hyperparameters with
// the defaults filled in, learning_rate being the current learning rate
// (SetLearningRate's, as Keras' get_config gives it) or the schedule's
// config, and clipnorm, clipvalue, global_clipnorm and weight_decay nil
// (Keras' None) when off, but for AdamW's weight_decay, a number, 0
// included, as Keras' AdamW requires one. Every value is the one the
// optimizer uses: a default that replaced a zero LearningRate or an unset
// Float shows as itself, and a hyperparameter set to 0 as 0. An optimizer
// defined outside this package has none, and neither has a schedule
// defined outside it.
func ConfigOf(o Optimizer) (Config, error) {
	if configargs.IsNil(o) {
		return Config{}, errors.New("no optimizer (nil)")
	}
	var args map[string]any
	var lr float64
	var opts Options
	switch o := o.(type) {
	case *SGD:
		lr, opts = o.cfg.LearningRate, o.cfg.Options
		args = map[string]any{"momentum": o.cfg.Momentum, "nesterov": o.cfg.Nesterov}
	case *Adam:
		lr, opts = o.cfg.LearningRate, o.cfg.Options
		args = map[string]any{"beta_1": o.cfg.Beta1.v, "beta_2": o.cfg.Beta2.v, "epsilon": o.cfg.Epsilon.v, "amsgrad": o.cfg.AMSGrad}
	case *RMSprop:
		lr, opts = o.lr, o.opts
		args = map[string]any{"rho": o.cfg.Rho.v, "momentum": o.cfg.Momentum, "epsilon": o.cfg.Epsilon.v, "centered": o.cfg.Centered}
	case *Adagrad:
		lr, opts = o.lr, o.opts
		args = map[string]any{"initial_accumulator_value": o.cfg.InitialAccumulatorValue.v, "epsilon": o.cfg.Epsilon.v}
	case *Adadelta:
		lr, opts = o.lr, o.opts
		args = map[string]any{"rho": o.cfg.Rho.v, "epsilon": o.cfg.Epsilon.v}
	case *Adamax:
		lr, opts = o.lr, o.opts
		args = map[string]any{"beta_1": o.cfg.Beta1.v, "beta_2": o.cfg.Beta2.v, "epsilon": o.cfg.Epsilon.v}
	case *Nadam:
		lr, opts = o.lr, o.opts
		args = map[string]any{"beta_1": o.cfg.Beta1.v, "beta_2": o.cfg.Beta2.v, "epsilon": o.cfg.Epsilon.v}
	default:
		return Config{}, fmt.Errorf("optimizer %s is a %T, which has no config: use one of package optim to save the model's compile settings", o.Name(), o)
	}
	args["learning_rate"] = lr
	if opts.Schedule != nil {
		s, err := ScheduleConfigOf(opts.Schedule)
		if err != nil {
			return Config{}, fmt.Errorf("%s: learning_rate: %w", o.Name(), err)
		}
		args["learning_rate"] = s
	}
	for k, v := range map[string]float64{"clipnorm": opts.ClipNorm, "clipvalue": opts.ClipValue, "global_clipnorm": opts.GlobalClipNorm, "weight_decay": opts.WeightDecay} {
		args[k] = nil
		if v != 0 || k == "weight_decay" && o.Name() == "AdamW" {
			args[k] = v
		}
	}
	return Config{ClassName: o.Name(), Config: args}, nil
}

// optimizerClasses lists the classes FromConfig knows.
var optimizerClasses = []string{"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam"}

// commonArgs are the arguments every optimizer takes.
type commonArgs struct {
	LearningRate   json.RawMessage `json:"learning_rate"`
	ClipNorm       float64         `json:"clipnorm"`
	ClipValue      float64         `json:"clipvalue"`
	GlobalClipNorm float64         `json:"global_clipnorm"`
	WeightDecay    *float64        `json:"weight_decay"`
}

// common is what commonArgs say: the learning rate (0 when left out,
// which the New functions take as Keras' default), whether it is exactly
// 0, the Options, and whether weight_decay is exactly 0 (AdamW's default
// is not).
type common struct {
	lr                  float64
	zeroRate, zeroDecay bool
	opts                Options
}

// read reads the common arguments.
func (a commonArgs) read() (common, error) {
	c := common{opts: Options{ClipNorm: a.ClipNorm, ClipValue: a.ClipValue, GlobalClipNorm: a.GlobalClipNorm}}
	if a.WeightDecay != nil {
		c.opts.WeightDecay, c.zeroDecay = *a.WeightDecay, *a.WeightDecay == 0
	}
	raw := bytes.TrimSpace(a.LearningRate)
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	if raw[0] == '{' {
		var sc Config
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // decay steps and boundaries are integers: keep every digit
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc); err != nil {
			return c, fmt.Errorf("learning_rate is not a schedule's config: %w", err)
		}
		s, err := ScheduleFromConfig(sc)
		if err != nil {
			return c, fmt.Errorf("learning_rate: %w", err)
		}
		c.opts.Schedule = s
		return c, nil
	}
	if err := json.Unmarshal(raw, &c.lr); err != nil {
		return c, fmt.Errorf("learning_rate is %s: want a number or a schedule's config", raw)
	}
	c.zeroRate = c.lr == 0
	return c, nil
}

// FromConfig makes an optimizer from its configuration, with no state, as
// Keras' optimizers.deserialize does; arguments left out (or null) take
// Keras' defaults, and an argument given takes its value, 0 included: a
// learning_rate of 0 is SetLearningRate(0)'s, a beta_1 of 0 F(0)'s. An
// unknown class, an unknown argument, a value of the wrong type or one the
// optimizer refuses is an error that names it; the unknown class's error
// lists the known ones.
func FromConfig(c Config) (Optimizer, error) {
	if !slices.Contains(optimizerClasses, c.ClassName) {
		return nil, fmt.Errorf("unknown optimizer class %q: the known optimizer classes are %s", c.ClassName, strings.Join(optimizerClasses, ", "))
	}
	o, err := fromConfig(c)
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", c.ClassName, err)
	}
	return o, nil
}

func fromConfig(c Config) (Optimizer, error) {
	var (
		o   Optimizer
		cm  common
		err error
	)
	switch c.ClassName {
	case "SGD":
		var a struct {
			commonArgs
			Momentum float64 `json:"momentum"`
			Nesterov bool    `json:"nesterov"`
		}
		if cm, err = readArgs(c.Config, &a, &a.commonArgs); err != nil {
			return nil, err
		}
		o, err = NewSGD(SGDConfig{LearningRate: cm.lr, Momentum: a.Momentum, Nesterov: a.Nesterov, Options: cm.opts})
	case "Adam", "AdamW":
		var a struct {
			commonArgs
			Beta1   *float64 `json:"beta_1"`
			Beta2   *float64 `json:"beta_2"`
			Epsilon *float64 `json:"epsilon"`
			AMSGrad bool     `json:"amsgrad"`
		}
		if cm, err = readArgs(c.Config, &a, &a.commonArgs); err != nil {
			return nil, err
		}
		cfg := AdamConfig{LearningRate: cm.lr, Beta1: optional(a.Beta1), Beta2: optional(a.Beta2), Epsilon: optional(a.Epsilon),
			AMSGrad: a.AMSGrad, Options: cm.opts}
		if c.ClassName == "AdamW" {
			o, err = newAdamW(cfg, cm.zeroDecay)
		} else {
			o, err = NewAdam(cfg)
		}
	case "RMSprop":
		var a struct {
			commonArgs
			Rho      *float64 `json:"rho"`
			Momentum float64  `json:"momentum"`
			Epsilon  *float64 `json:"epsilon"`
			Centered bool     `json:"centered"`
		}
		if cm, err = readArgs(c.Config, &a, &a.commonArgs); err != nil {
			return nil, err
		}
		o, err = NewRMSprop(RMSpropConfig{LearningRate: cm.lr, Rho: optional(a.Rho), Momentum: a.Momentum, Epsilon: optional(a.Epsilon),
			Centered: a.Centered, Options: cm.opts})
	case "Adagrad":
		var a struct {
			commonArgs
			InitialAccumulatorValue *float64 `json:"initial_accumulator_value"`
			Epsilon                 *float64 `json:"epsilon"`
		}
		if cm, err = readArgs(c.Config, &a, &a.commonArgs); err != nil {
			return nil, err
		}
		o, err = NewAdagrad(AdagradConfig{LearningRate: cm.lr, InitialAccumulatorValue: optional(a.InitialAccumulatorValue),
			Epsilon: optional(a.Epsilon), Options: cm.opts})
	case "Adadelta":
		var a struct {
			commonArgs
			Rho     *float64 `json:"rho"`
			Epsilon *float64 `json:"epsilon"`
		}
		if cm, err = readArgs(c.Config, &a, &a.commonArgs); err != nil {
			return nil, err
		}
		o, err = NewAdadelta(AdadeltaConfig{LearningRate: cm.lr, Rho: optional(a.Rho), Epsilon: optional(a.Epsilon), Options: cm.opts})
	case "Adamax", "Nadam":
		var a struct {
			commonArgs
			Beta1   *float64 `json:"beta_1"`
			Beta2   *float64 `json:"beta_2"`
			Epsilon *float64 `json:"epsilon"`
		}
		if cm, err = readArgs(c.Config, &a, &a.commonArgs); err != nil {
			return nil, err
		}
		cfg := AdamaxConfig{LearningRate: cm.lr, Beta1: optional(a.Beta1), Beta2: optional(a.Beta2), Epsilon: optional(a.Epsilon), Options: cm.opts}
		if c.ClassName == "Nadam" {
			o, err = NewNadam(cfg)
		} else {
			o, err = NewAdamax(cfg)
		}
	default:
		return nil, errors.New("unknown optimizer class")
	}
	if err != nil {
		return nil, err
	}
	if cm.zeroRate {
		// The New functions read a zero LearningRate as Keras' default.
		o.SetLearningRate(0)
	}
	return o, nil
}

// readArgs decodes an optimizer's arguments into dst, whose common
// arguments are args, and reads those.
func readArgs(config map[string]any, dst any, args *commonArgs) (common, error) {
	if err := configargs.Decode(config, dst); err != nil {
		return common{}, err
	}
	return args.read()
}

// ScheduleConfigOf returns the configuration of a learning-rate schedule
// of this package (a pointer to one too), with Keras' argument names; the
// fields whose zero value means a Keras default hold that default
// (PolynomialDecay's power 1, CosineDecayRestarts' t_mul 2 and m_mul 1).
func ScheduleConfigOf(s Schedule) (Config, error) {
	if configargs.IsNil(s) {
		return Config{}, errors.New("no schedule (nil)")
	}
	if v := reflect.ValueOf(s); v.Kind() == reflect.Pointer && !v.IsNil() {
		if e, ok := v.Elem().Interface().(Schedule); ok {
			s = e
		}
	}
	var args map[string]any
	switch s := s.(type) {
	case ExponentialDecay:
		args = map[string]any{"initial_learning_rate": s.InitialLearningRate, "decay_steps": s.DecaySteps, "decay_rate": s.DecayRate, "staircase": s.Staircase}
	case InverseTimeDecay:
		args = map[string]any{"initial_learning_rate": s.InitialLearningRate, "decay_steps": s.DecaySteps, "decay_rate": s.DecayRate, "staircase": s.Staircase}
	case PiecewiseConstantDecay:
		args = map[string]any{"boundaries": append([]int64{}, s.Boundaries...), "values": append([]float64{}, s.Values...)}
	case PolynomialDecay:
		power := s.Power
		if power == 0 {
			power = 1
		}
		args = map[string]any{"initial_learning_rate": s.InitialLearningRate, "decay_steps": s.DecaySteps,
			"end_learning_rate": s.EndLearningRate, "power": power, "cycle": s.Cycle}
	case CosineDecay:
		args = map[string]any{"initial_learning_rate": s.InitialLearningRate, "decay_steps": s.DecaySteps, "alpha": s.Alpha,
			"warmup_target": s.WarmupTarget, "warmup_steps": s.WarmupSteps}
	case CosineDecayRestarts:
		tMul, mMul := s.TMul, s.MMul
		if tMul == 0 {
			tMul = 2
		}
		if mMul == 0 {
			mMul = 1
		}
		args = map[string]any{"initial_learning_rate": s.InitialLearningRate, "first_decay_steps": s.FirstDecaySteps,
			"t_mul": tMul, "m_mul": mMul, "alpha": s.Alpha}
	default:
		return Config{}, fmt.Errorf("schedule %s is a %T, which has no config: use one of package optim to save the model's compile settings", s.Name(), s)
	}
	return Config{ClassName: s.Name(), Config: args}, nil
}

// scheduleClasses lists the classes ScheduleFromConfig knows.
var scheduleClasses = []string{"ExponentialDecay", "InverseTimeDecay", "PiecewiseConstantDecay", "PolynomialDecay", "CosineDecay", "CosineDecayRestarts"}

// ScheduleFromConfig makes a learning-rate schedule from its
// configuration; arguments Keras requires (initial_learning_rate,
// decay_steps, ...) must be there, the others take Keras' defaults. The
// schedule's numbers are checked as an optimizer checks them.
func ScheduleFromConfig(c Config) (Schedule, error) {
	if !slices.Contains(scheduleClasses, c.ClassName) {
		return nil, fmt.Errorf("unknown schedule class %q: the known schedule classes are %s", c.ClassName, strings.Join(scheduleClasses, ", "))
	}
	s, err := scheduleFromConfig(c)
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", c.ClassName, err)
	}
	if err := checkSchedule(s); err != nil {
		return nil, err
	}
	return s, nil
}

// decayArgs are the arguments of ExponentialDecay and InverseTimeDecay.
type decayArgs struct {
	InitialLearningRate *float64 `json:"initial_learning_rate"`
	DecaySteps          *int64   `json:"decay_steps"`
	DecayRate           *float64 `json:"decay_rate"`
	Staircase           bool     `json:"staircase"`
}

func scheduleFromConfig(c Config) (Schedule, error) {
	switch c.ClassName {
	case "ExponentialDecay", "InverseTimeDecay":
		var a decayArgs
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, err
		}
		if err := required("initial_learning_rate", a.InitialLearningRate, "decay_steps", a.DecaySteps, "decay_rate", a.DecayRate); err != nil {
			return nil, err
		}
		if c.ClassName == "InverseTimeDecay" {
			return InverseTimeDecay{*a.InitialLearningRate, *a.DecaySteps, *a.DecayRate, a.Staircase}, nil
		}
		return ExponentialDecay{*a.InitialLearningRate, *a.DecaySteps, *a.DecayRate, a.Staircase}, nil
	case "PiecewiseConstantDecay":
		var a struct {
			Boundaries []int64   `json:"boundaries"`
			Values     []float64 `json:"values"`
		}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, err
		}
		if err := required("boundaries", a.Boundaries, "values", a.Values); err != nil {
			return nil, err
		}
		return PiecewiseConstantDecay{Boundaries: a.Boundaries, Values: a.Values}, nil
	case "PolynomialDecay":
		a := struct {
			InitialLearningRate *float64 `json:"initial_learning_rate"`
			DecaySteps          *int64   `json:"decay_steps"`
			EndLearningRate     float64  `json:"end_learning_rate"`
			Power               float64  `json:"power"`
			Cycle               bool     `json:"cycle"`
		}{EndLearningRate: 0.0001, Power: 1}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, err
		}
		if err := required("initial_learning_rate", a.InitialLearningRate, "decay_steps", a.DecaySteps); err != nil {
			return nil, err
		}
		return PolynomialDecay{*a.InitialLearningRate, *a.DecaySteps, a.EndLearningRate, a.Power, a.Cycle}, nil
	case "CosineDecay":
		var a struct {
			InitialLearningRate *float64 `json:"initial_learning_rate"`
			DecaySteps          *int64   `json:"decay_steps"`
			Alpha               float64  `json:"alpha"`
			WarmupTarget        float64  `json:"warmup_target"`
			WarmupSteps         int64    `json:"warmup_steps"`
		}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, err
		}
		if err := required("initial_learning_rate", a.InitialLearningRate, "decay_steps", a.DecaySteps); err != nil {
			return nil, err
		}
		return CosineDecay{*a.InitialLearningRate, *a.DecaySteps, a.Alpha, a.WarmupTarget, a.WarmupSteps}, nil
	case "CosineDecayRestarts":
		a := struct {
			InitialLearningRate *float64 `json:"initial_learning_rate"`
			FirstDecaySteps     *int64   `json:"first_decay_steps"`
			TMul                float64  `json:"t_mul"`
			MMul                float64  `json:"m_mul"`
			Alpha               float64  `json:"alpha"`
		}{TMul: 2, MMul: 1}
		if err := configargs.Decode(c.Config, &a); err != nil {
			return nil, err
		}
		if err := required("initial_learning_rate", a.InitialLearningRate, "first_decay_steps", a.FirstDecaySteps); err != nil {
			return nil, err
		}
		return CosineDecayRestarts{*a.InitialLearningRate, *a.FirstDecaySteps, a.TMul, a.MMul, a.Alpha}, nil
	}
	return nil, errors.New("unknown schedule class")
}

// required fails on the first of the (name, value) pairs whose value is a
// nil pointer or slice: an argument without a default left out.
func required(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := reflect.ValueOf(pairs[i+1]); v.IsNil() {
			return fmt.Errorf("argument %q is missing: it has no default", pairs[i])
		}
	}
	return nil
}
