package device

import (
	"errors"
	"io"
	"sync"

	"github.com/gokeras/gokeras/optim"
)

// Trainer is a Machine that runs whole training steps on its device: the
// forward pass, the backward pass and the optimizer's update of every
// learnable, in one call. Weights, gradients and optimizer slots then never
// leave the device; only the batch goes in (the graph's input tensors,
// which the caller fills before each step) and the graph's Read nodes bring
// the loss and outputs back, as after RunAll.
//
// After Train the gradients are not readable (they may never have existed
// as tensors: a machine may fold the update into the product that computes
// them). Train fails with an error wrapping ErrUpdateUnsupported for a
// graph that computes no gradients.
type Trainer interface {
	Machine
	// Train runs one training step and applies u to every learnable, with
	// the optimizer's slots from MachineOptions.Slots.
	Train(u optim.Update) error
}

// ErrUpdateUnsupported is wrapped by the error a Trainer returns for a
// graph it cannot train: one without the gradient of every learnable.
var ErrUpdateUnsupported = errors.New("the machine cannot train this graph")

// State is what the machines of one model share across its graphs: the
// optimizer's slots (SGD's momentum, Adam's moments) of each weight, and
// for a driver with its own memory whatever else it keeps there between
// steps, such as the device copies of the weights. A model compiles one
// graph per batch size and mode, so the machine for the last, smaller batch
// of an epoch must see the momentum the others built up.
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
