// Package optim holds the optimizers that update a model's weights from its
// gradients, with the update rules, names and defaults of Keras 2.
//
// An optimizer keeps its own state (momentum, Adam's moments) per variable,
// keyed by the variable's name, so one optimizer serves one model.
package optim

import (
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
type Optimizer interface {
	// Name is the Keras name ("SGD", "Adam").
	Name() string
	// LearningRate is the current learning rate.
	LearningRate() float64
	// SetLearningRate changes it, as Keras callbacks do between epochs.
	SetLearningRate(lr float64)
	// Apply performs one update step on every variable.
	Apply(vars []Variable) error
	// Iterations is the number of Apply calls so far.
	Iterations() int64
}

// SGDConfig holds SGD's hyperparameters. The zero value is Keras' default
// except for the learning rate, which NewSGD defaults to 0.01.
type SGDConfig struct {
	LearningRate float64 // default 0.01
	Momentum     float64 // default 0
	Nesterov     bool
}

// SGD is gradient descent with optional (Nesterov) momentum:
//
//	velocity = momentum·velocity - lr·g
//	w += velocity                          (Nesterov: w += momentum·velocity - lr·g)
type SGD struct {
	cfg        SGDConfig
	velocities map[string][]float32
	iterations int64
}

// NewSGD makes an SGD optimizer; a zero LearningRate means Keras' 0.01.
func NewSGD(cfg SGDConfig) (*SGD, error) {
	if cfg.LearningRate == 0 {
		cfg.LearningRate = 0.01
	}
	if err := checkRate(cfg.LearningRate); err != nil {
		return nil, err
	}
	if cfg.Momentum < 0 || cfg.Momentum > 1 || math.IsNaN(cfg.Momentum) {
		return nil, fmt.Errorf("SGD: momentum must be in [0, 1], got %v", cfg.Momentum)
	}
	return &SGD{cfg: cfg, velocities: map[string][]float32{}}, nil
}

func checkRate(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("learning rate must be a positive number, got %v", lr)
	}
	return nil
}

func (s *SGD) Name() string               { return "SGD" }
func (s *SGD) LearningRate() float64      { return s.cfg.LearningRate }
func (s *SGD) SetLearningRate(lr float64) { s.cfg.LearningRate = lr }
func (s *SGD) Iterations() int64          { return s.iterations }

// Config returns the hyperparameters.
func (s *SGD) Config() SGDConfig { return s.cfg }

func (s *SGD) Apply(vars []Variable) error {
	if err := checkVars(vars, s.velocities); err != nil {
		return fmt.Errorf("SGD: %w", err)
	}
	lr, mom := float32(s.cfg.LearningRate), float32(s.cfg.Momentum)
	for _, v := range vars {
		if mom == 0 {
			for i, g := range v.Grad {
				v.Value[i] -= lr * g
			}
			continue
		}
		vel := s.velocities[v.Name]
		if vel == nil {
			vel = make([]float32, len(v.Value))
			s.velocities[v.Name] = vel
		}
		for i, g := range v.Grad {
			vel[i] = mom*vel[i] - lr*g
			if s.cfg.Nesterov {
				v.Value[i] += mom*vel[i] - lr*g
			} else {
				v.Value[i] += vel[i]
			}
		}
	}
	s.iterations++
	return nil
}

// AdamConfig holds Adam's hyperparameters; zero fields take Keras' defaults.
type AdamConfig struct {
	LearningRate float64 // default 0.001
	Beta1        float64 // default 0.9
	Beta2        float64 // default 0.999
	Epsilon      float64 // default 1e-7
}

// Adam is the Adam optimizer as TensorFlow applies it:
//
//	m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
//	w -= lr·sqrt(1-β2^t)/(1-β1^t) · m / (sqrt(v) + ε)
type Adam struct {
	cfg        AdamConfig
	m, v       map[string][]float32
	iterations int64
}

// NewAdam makes an Adam optimizer.
func NewAdam(cfg AdamConfig) (*Adam, error) {
	if cfg.LearningRate == 0 {
		cfg.LearningRate = 0.001
	}
	if cfg.Beta1 == 0 {
		cfg.Beta1 = 0.9
	}
	if cfg.Beta2 == 0 {
		cfg.Beta2 = 0.999
	}
	if cfg.Epsilon == 0 {
		cfg.Epsilon = 1e-7
	}
	if err := checkRate(cfg.LearningRate); err != nil {
		return nil, fmt.Errorf("Adam: %w", err)
	}
	for _, b := range []float64{cfg.Beta1, cfg.Beta2} {
		if b < 0 || b >= 1 || math.IsNaN(b) {
			return nil, fmt.Errorf("Adam: beta values must be in [0, 1), got %v", b)
		}
	}
	return &Adam{cfg: cfg, m: map[string][]float32{}, v: map[string][]float32{}}, nil
}

func (a *Adam) Name() string               { return "Adam" }
func (a *Adam) LearningRate() float64      { return a.cfg.LearningRate }
func (a *Adam) SetLearningRate(lr float64) { a.cfg.LearningRate = lr }
func (a *Adam) Iterations() int64          { return a.iterations }

// Config returns the hyperparameters.
func (a *Adam) Config() AdamConfig { return a.cfg }

func (a *Adam) Apply(vars []Variable) error {
	if err := checkVars(vars, a.m, a.v); err != nil {
		return fmt.Errorf("Adam: %w", err)
	}
	t := float64(a.iterations + 1)
	lrT := float32(a.cfg.LearningRate * math.Sqrt(1-math.Pow(a.cfg.Beta2, t)) / (1 - math.Pow(a.cfg.Beta1, t)))
	b1, b2, eps := float32(a.cfg.Beta1), float32(a.cfg.Beta2), float32(a.cfg.Epsilon)
	for _, v := range vars {
		m, s := a.m[v.Name], a.v[v.Name]
		if m == nil {
			m, s = make([]float32, len(v.Value)), make([]float32, len(v.Value))
			a.m[v.Name], a.v[v.Name] = m, s
		}
		for i, g := range v.Grad {
			m[i] = b1*m[i] + (1-b1)*g
			s[i] = b2*s[i] + (1-b2)*g*g
			v.Value[i] -= lrT * m[i] / (float32(math.Sqrt(float64(s[i]))) + eps)
		}
	}
	a.iterations++
	return nil
}

// checkVars checks, before anything is updated, that each variable has as
// many gradients as values and that the slots it already has (restored by
// SetState, say) are of its size.
func checkVars(vars []Variable, slots ...map[string][]float32) error {
	for _, v := range vars {
		if len(v.Value) != len(v.Grad) {
			return fmt.Errorf("variable %q has %d values but %d gradients", v.Name, len(v.Value), len(v.Grad))
		}
		for _, slot := range slots {
			if acc, ok := slot[v.Name]; ok && len(acc) != len(v.Value) {
				return fmt.Errorf("variable %q has %d values but its optimizer state has %d (restored from another model?)", v.Name, len(v.Value), len(acc))
			}
		}
	}
	return nil
}

// Get makes an optimizer with Keras' defaults from its name, as
// compile(optimizer="...") does: "sgd" or "adam", in any case.
func Get(name string) (Optimizer, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sgd":
		return NewSGD(SGDConfig{})
	case "adam":
		return NewAdam(AdamConfig{})
	}
	return nil, fmt.Errorf("unknown optimizer %q: known optimizers are sgd, adam", name)
}
