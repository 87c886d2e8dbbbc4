package vm

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gokeras/gokeras/device"
)

// store holds what the machines of one model share on one device, kept in
// the model's device.State: the device copy of each weight and the
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
	slots               map[string]Mem
}

type storeKey struct{ dev Device }

// storeFor returns the store of state for dev, making it the first time.
func storeFor(state *device.State, dev Device) (*store, error) {
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
// allocating its device copy the first time (to be uploaded). Call it
// inside dev.Do.
func (s *store) weight(dev Device, host []float32) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := hostKey(host)
	if e, ok := s.weights[k]; ok && k != nil {
		if len(host) != e.elems {
			return nil, fmt.Errorf("the host copy holds %d values, the device copy %d", len(host), e.elems)
		}
		return e, nil
	}
	mem, err := dev.Alloc(len(host))
	if err != nil {
		return nil, err
	}
	e := &entry{host: host, mem: mem, elems: len(host), upload: true}
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

// slotNames are the optimizer's slots for update u, as optim names them.
func slotNames(u device.Update) []string {
	switch {
	case u.Rule == device.Adam:
		return []string{"m", "v"}
	case u.Rule == device.SGD && u.Momentum != 0:
		return []string{"velocity"}
	}
	return nil
}

// slots returns w's optimizer slots for u, zeroed the first time. Call it
// inside dev.Do.
func (s *store) slots(dev Device, be Backend, w *entry, u device.Update) ([]Mem, error) {
	names := slotNames(u)
	if len(names) == 0 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Mem, len(names))
	for i, name := range names {
		mem, ok := w.slots[name]
		if !ok {
			var err error
			if mem, err = dev.Alloc(w.elems); err != nil {
				return nil, fmt.Errorf("optimizer slot %q: %w", name, err)
			}
			if err := be.Zero(mem, w.elems); err != nil {
				return nil, errors.Join(err, dev.Free(mem))
			}
			if w.slots == nil {
				w.slots = map[string]Mem{}
			}
			w.slots[name] = mem
		}
		out[i] = mem
	}
	return out, nil
}

// Sync copies the weights whose device copy is ahead back to the host
// (device.State.Sync calls it).
func (s *store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dev.Do(func() error {
		for _, e := range s.order {
			if !e.deviceAhead {
				continue
			}
			if err := s.dev.CopyOut(e.host, e.mem); err != nil {
				return fmt.Errorf("copying a weight back to the host: %w", err)
			}
			e.deviceAhead = false
		}
		return nil
	})
}

// Close frees the device copies and slots (device.State.Close calls it).
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.dev.Do(func() error {
		var errs []error
		for _, e := range s.order {
			errs = append(errs, s.dev.Free(e.mem))
			for _, m := range e.slots {
				errs = append(errs, s.dev.Free(m))
			}
		}
		return errors.Join(errs...)
	})
	s.weights, s.order = map[*float32]*entry{}, nil
	return err
}
