package plan

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/optim"
)

// store holds what the machines of one model share on one device, kept in
// the model's driver.State: the device copy of each weight and the
// optimizer's slots for it. A model compiles one graph per batch size and
// mode; every one of them trains and reads the same weights.
type store struct {
	dev     Device
	mu      sync.Mutex
	weights map[*float32]*entry // by the first element of the host copy
	order   []*entry
}

// entry is one weight.
type entry struct {
	host  []float32 // the host copy the graphs bind
	mem   Mem
	elems int
	// upload: the host copy may be ahead, copy it over before use.
	// deviceAhead: the device copy is ahead (Train without WriteBack);
	// Sync copies it back.
	upload, deviceAhead bool
	slots               map[string]*slot
}

// slot is one optimizer slot of a weight: the optimizer's host copy and,
// on a device with memory of its own, the device copy.
type slot struct {
	host []float32
	mem  Mem
	// ahead: the device copy has been updated since it was copied in.
	ahead bool
}

type storeKey struct{ dev Device }

// storeFor returns the store of state for dev, making it the first time.
func storeFor(state *driver.State, dev Device) (*store, error) {
	v, err := state.Value(storeKey{dev}, func() (any, error) {
		return &store{dev: dev, weights: map[*float32]*entry{}}, nil
	})
	if err != nil {
		return nil, err
	}
	s, ok := v.(*store)
	if !ok {
		return nil, fmt.Errorf("the model's device state holds a %T for this device", v)
	}
	return s, nil
}

func hostKey(host []float32) *float32 {
	if len(host) == 0 {
		return nil
	}
	return unsafe.SliceData(host)
}

// weight returns the entry of the weight whose host copy is host,
// allocating its device copy the first time (to be uploaded), or wrapping
// the host copy on a device that computes on host memory. Call it inside
// dev.Do.
func (s *store) weight(m *Machine, host []float32) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := hostKey(host)
	if e, ok := s.weights[k]; ok && k != nil {
		if len(host) != e.elems {
			return nil, fmt.Errorf("the host copy holds %d values, the device copy %d", len(host), e.elems)
		}
		return e, nil
	}
	var e *entry
	if m.host != nil {
		e = &entry{host: host, mem: m.host.Host(host), elems: len(host)}
	} else {
		mem, err := m.dev.Alloc(len(host))
		if err != nil {
			return nil, err
		}
		e = &entry{host: host, mem: mem, elems: len(host), upload: true}
	}
	if k != nil {
		s.weights[k] = e
	}
	s.order = append(s.order, e)
	return e, nil
}

// lookup returns the entry of host, nil if it is no weight of the store.
func (s *store) lookup(host []float32) *entry {
	k := hostKey(host)
	if k == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.weights[k]; ok && e.elems == len(host) {
		return e
	}
	return nil
}

// slots returns the optimizer's slots of weight w (variable name) for u,
// in the order of u.SlotNames(): the optimizer's host copies themselves on
// a device that computes on host memory, else device copies made from them
// the first time and marked as ahead of them from then on. Call it inside
// dev.Do.
func (s *store) slots(m *Machine, w *entry, variable string, u optim.Update) ([]Mem, error) {
	names := u.SlotNames()
	if len(names) == 0 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Mem, len(names))
	for i, name := range names {
		sl, ok := w.slots[name]
		if !ok {
			host, err := m.slots(variable, name, w.elems)
			if err != nil {
				return nil, err
			}
			sl = &slot{host: host}
			if m.host != nil {
				sl.mem = m.host.Host(host)
			} else {
				if sl.mem, err = m.dev.Alloc(w.elems); err != nil {
					return nil, fmt.Errorf("slot %q: %w", name, err)
				}
				if err := m.be.Upload(sl.mem, host); err != nil {
					return nil, errors.Join(fmt.Errorf("copying slot %q to the device: %w", name, err), m.dev.Free(sl.mem))
				}
			}
			if w.slots == nil {
				w.slots = map[string]*slot{}
			}
			w.slots[name] = sl
		}
		sl.ahead = m.host == nil
		out[i] = sl.mem
	}
	return out, nil
}

// Sync copies the weights and optimizer slots whose device copy is ahead
// back to the host (driver.State.Sync calls it).
func (s *store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dev.Do(func() error {
		for _, e := range s.order {
			if e.deviceAhead {
				if err := s.dev.CopyOut(e.host, e.mem); err != nil {
					return fmt.Errorf("copying a weight back to the host: %w", err)
				}
				e.deviceAhead = false
			}
			for name, sl := range e.slots {
				if !sl.ahead {
					continue
				}
				if err := s.dev.CopyOut(sl.host, sl.mem); err != nil {
					return fmt.Errorf("copying optimizer slot %q back to the host: %w", name, err)
				}
				sl.ahead = false
			}
		}
		return nil
	})
}

// Close frees the device copies and slots (driver.State.Close calls it).
// On a device that computes on host memory there is nothing to free.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, host := s.dev.(HostMemory); host {
		s.weights, s.order = map[*float32]*entry{}, nil
		return nil
	}
	err := s.dev.Do(func() error {
		var errs []error
		for _, e := range s.order {
			errs = append(errs, s.dev.Free(e.mem))
			for _, sl := range e.slots {
				errs = append(errs, s.dev.Free(sl.mem))
			}
		}
		return errors.Join(errs...)
	})
	s.weights, s.order = map[*float32]*entry{}, nil
	return err
}
