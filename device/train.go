package device

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// Trainer is a Machine that runs whole training steps on its device: the
// forward pass, the backward pass and the optimizer's update of every
// learnable, in one call. Weights, gradients and optimizer state then never
// leave the device; only the batch goes in (the graph's input tensors,
// which the caller fills before each step) and the graph's Read nodes bring
// the loss and outputs back, as after RunAll.
//
// After Train the gradients are not readable (they may never have existed
// as tensors: a machine may fold the update into the product that computes
// them). A caller whose optimizer a Trainer cannot express (Train returns
// an error wrapping ErrUpdateUnsupported) uses RunAll, reads the gradients
// with gorgonia's Node.Grad and updates the weights itself.
type Trainer interface {
	Machine
	// Train runs one training step and applies u to every learnable.
	Train(u Update) error
}

// Rule names an optimizer's update rule.
type Rule int

// The update rules machines may apply themselves, with the arithmetic of
// Keras 2 (and package optim) in float32:
//
//	SGD:       v = momentum·v - lr·g;  w += v  (momentum 0: w -= lr·g)
//	           Nesterov: w += momentum·v - lr·g, with the new v
//	Adam:      m = β1·m + (1-β1)·g;  s = β2·s + (1-β2)·g²
//	           w -= lr·√(1-β2^t)/(1-β1^t) · m/(√s + ε)
const (
	SGD Rule = iota + 1
	Adam
)

func (r Rule) String() string {
	switch r {
	case SGD:
		return "SGD"
	case Adam:
		return "Adam"
	}
	return fmt.Sprintf("Rule(%d)", int(r))
}

// Update is one optimizer step as plain data, so that this package needs
// no optimizer package and a machine can apply it wherever the weights live.
type Update struct {
	Rule         Rule
	LearningRate float64
	// Momentum and Nesterov configure SGD.
	Momentum float64
	Nesterov bool
	// Beta1, Beta2 and Epsilon configure Adam.
	Beta1, Beta2, Epsilon float64
	// Step counts updates from 1, this one included: Adam's t.
	Step int64
}

// ErrUpdateUnsupported is wrapped by the error a Trainer returns for an
// update it cannot apply; the caller falls back to RunAll and its own
// optimizer.
var ErrUpdateUnsupported = errors.New("the machine cannot apply this update itself")

// check validates the numbers of an update.
func (u Update) check() error {
	switch u.Rule {
	case SGD, Adam:
	default:
		return fmt.Errorf("device: update rule %v: %w", u.Rule, ErrUpdateUnsupported)
	}
	if !(u.LearningRate >= 0) {
		return fmt.Errorf("device: learning rate %v is not a non-negative number", u.LearningRate)
	}
	if u.Rule == Adam && u.Step < 1 {
		return fmt.Errorf("device: Adam update with step %d: steps count from 1", u.Step)
	}
	return nil
}

// State is what the machines of one model share across its graphs: the
// optimizer's slots (SGD's velocities, Adam's moments) of each weight, and
// for a driver with its own memory whatever else it keeps there between
// steps, such as the device copies of the weights. A model compiles one
// graph per batch size and mode, so the machine for the last, smaller batch
// of an epoch must see the velocities the others built up.
//
// The caller makes one State per model, passes it in MachineOptions.State
// to every NewMachine for that model, and closes it when it closes the
// model's machines. Drivers store values under keys of their own types
// (unexported, like context keys). A State is safe for concurrent use.
type State struct {
	mu     sync.Mutex
	values map[any]any
	order  []any
}

// NewState makes an empty State.
func NewState() *State { return &State{values: map[any]any{}} }

// Value returns the value stored under key, storing the result of create
// first if there is none.
func (s *State) Value(key any, create func() (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.values[key]; ok {
		return v, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	s.values[key] = v
	s.order = append(s.order, key)
	return v, nil
}

// Sync asks every stored value that keeps host data on a device to copy it
// back (the values with a Sync() error method), so that host tensors bound
// to the graphs hold the latest weights. Drivers that compute in host
// memory store nothing that needs it. Call it before reading or saving the
// weights on the host while a model's machines are open.
func (s *State) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, k := range s.order {
		if v, ok := s.values[k].(interface{ Sync() error }); ok {
			errs = append(errs, v.Sync())
		}
	}
	return errors.Join(errs...)
}

// Close releases what the stored values hold (the values that are
// io.Closers) and empties the State.
func (s *State) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for i := len(s.order) - 1; i >= 0; i-- {
		if c, ok := s.values[s.order[i]].(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	s.values, s.order = map[any]any{}, nil
	return errors.Join(errs...)
}
