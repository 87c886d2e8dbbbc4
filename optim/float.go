package optim

import "strconv"

// Float is a hyperparameter that may be left unset: the type of the
// config fields whose Keras default is not 0 but which Keras lets be 0
// (Beta1, Beta2, Rho, Epsilon, InitialAccumulatorValue; LearningRate stays
// a float64, see the package documentation). Its zero value is unset,
// which the New functions read as Keras' default, and F sets it to a
// value, 0 included:
//
//	optim.AdamConfig{}                   // beta_1 0.9, Keras' default
//	optim.AdamConfig{Beta1: optim.F(0)}  // beta_1 0: m = g
//
// The optimizers' Config methods return their configs with every Float
// set, to the value in use.
type Float struct {
	v   float64
	set bool
}

// F returns a Float set to v.
func F(v float64) Float { return Float{v: v, set: true} }

// Get returns the value and whether f is set; unset, the value is 0.
func (f Float) Get() (v float64, ok bool) { return f.v, f.set }

// IsSet reports whether f holds a value (F made it).
func (f Float) IsSet() bool { return f.set }

// Or returns f's value, or def when f is unset.
func (f Float) Or(def float64) float64 {
	if f.set {
		return f.v
	}
	return def
}

// String is the value as strconv formats a float64 ('g', shortest), or
// "unset".
func (f Float) String() string {
	if !f.set {
		return "unset"
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

// withDefault is f when set, F(def) when not.
func (f Float) withDefault(def float64) Float {
	if f.set {
		return f
	}
	return F(def)
}

// optional is the Float of an argument decoded from a config: unset when
// the config left it out (or gave null).
func optional(p *float64) Float {
	if p == nil {
		return Float{}
	}
	return F(*p)
}
