package optim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// State is an optimizer's mutable state: what a checkpoint must hold, with
// the weights, for training to go on exactly as if it had never stopped.
type State struct {
	// Iterations is the number of updates applied so far (Adam's step t).
	Iterations int64
	// LearningRate is the current learning rate, which callbacks such as
	// ReduceLROnPlateau may have changed since the optimizer was made.
	LearningRate float64
	// Slots holds the per-variable accumulators by slot name, then by
	// variable name, as Keras names them: Slots["momentum"]["dense/kernel"]
	// for SGD with momentum, Slots["m"] and Slots["v"] for Adam. A variable
	// that has not been updated yet has no entry.
	Slots map[string]map[string][]float32
}

// Stateful is implemented by optimizers whose state can be saved and
// restored: every optimizer of this package (SGD, Adam and AdamW, RMSprop,
// Adagrad, Adadelta, Adamax, Nadam).
type Stateful interface {
	Optimizer
	// State returns a deep copy of the state.
	State() State
	// SetState replaces the state with a copy of s. It fails, changing
	// nothing, if s does not fit the optimizer: unknown or missing slots,
	// a learning rate that is not a positive number, or a slot value that
	// is NaN or infinite.
	SetState(s State) error
}

// SlotNames lists the slots an optimizer keeps per variable, as Keras
// names them: none for plain SGD, "momentum" for SGD with momentum, "m"
// and "v" for Adam.
func SlotNames(o Optimizer) []string { return o.NextUpdate().SlotNames() }

// state returns a deep copy of the table's slots for names, after the sync
// hook; a slot no variable has yet is left out.
func (t *slotTable) state(names []string) (map[string]map[string][]float32, error) {
	if t.sync != nil {
		if err := t.sync(); err != nil {
			return nil, fmt.Errorf("copying the optimizer's slots from the device: %w", err)
		}
	}
	out := map[string]map[string][]float32{}
	for _, name := range names {
		if len(t.slots[name]) > 0 {
			out[name] = cloneSlot(t.slots[name])
		}
	}
	return out, nil
}

// State returns a deep copy of the state. The slots come from the model's
// device when they live there; should that copy fail, State returns the
// host's last copy of them (SaveCheckpoint reports such errors itself).
func (s *SGD) State() State {
	slots, _ := s.state(SlotNames(s))
	if slots == nil {
		slots = cloneTable(s.slots)
	}
	return State{Iterations: s.iterations, LearningRate: s.LearningRate(), Slots: slots}
}

func (s *SGD) SetState(st State) error {
	slots, err := checkState("SGD", st, s.NextUpdate())
	if err != nil {
		return err
	}
	s.iterations = st.Iterations
	if s.cfg.Schedule == nil {
		s.cfg.LearningRate = st.LearningRate
	}
	s.setSlots(SlotNames(s), slots)
	return nil
}

func (a *Adam) State() State {
	slots, _ := a.state(SlotNames(a))
	if slots == nil {
		slots = cloneTable(a.slots)
	}
	return State{Iterations: a.iterations, LearningRate: a.LearningRate(), Slots: slots}
}

func (a *Adam) SetState(st State) error {
	slots, err := checkState(a.name, st, a.NextUpdate())
	if err != nil {
		return err
	}
	m, v := slots[0], slots[1]
	for name, mv := range m {
		if len(v[name]) != len(mv) {
			return fmt.Errorf("Adam: state for %q has %d first moments (m) but %d second moments (v)", name, len(mv), len(v[name]))
		}
	}
	for name := range v {
		if _, ok := m[name]; !ok {
			return fmt.Errorf("Adam: state for %q has second moments (v) but no first moments (m)", name)
		}
	}
	a.iterations = st.Iterations
	if a.cfg.Schedule == nil {
		a.cfg.LearningRate = st.LearningRate
	}
	a.setSlots(SlotNames(a), slots)
	return nil
}

// setSlots replaces the table with copies already made by checkState.
func (t *slotTable) setSlots(names []string, slots []map[string][]float32) {
	t.slots = map[string]map[string][]float32{}
	for i, name := range names {
		t.slots[name] = slots[i]
	}
}

func cloneTable(t map[string]map[string][]float32) map[string]map[string][]float32 {
	out := make(map[string]map[string][]float32, len(t))
	for name, slot := range t {
		if len(slot) > 0 {
			out[name] = cloneSlot(slot)
		}
	}
	return out
}

// MaxIterations is the most steps a State may count: 2^53, where float64
// (in which the rules raise their betas to the step's power) stops
// counting exactly, and far from int64's end, past which the count would
// wrap to negative. More is damage, not training.
const MaxIterations = 1 << 53

// checkState validates st against the slots an optimizer, whose next
// update is u, keeps and returns copies of those slots, in the order of
// u.SlotNames().
func checkState(opt string, st State, u Update) ([]map[string][]float32, error) {
	names := u.SlotNames()
	// 0 is allowed: a learning-rate schedule may have decayed to it.
	if !(st.LearningRate >= 0) || math.IsInf(st.LearningRate, 0) {
		return nil, fmt.Errorf("%s: state: the learning rate must be a finite number >= 0, got %v", opt, st.LearningRate)
	}
	if st.Iterations < 0 {
		return nil, fmt.Errorf("%s: state: iterations must not be negative, got %d", opt, st.Iterations)
	}
	if st.Iterations > MaxIterations {
		return nil, fmt.Errorf("%s: state: %d iterations is more than the %d any training takes: the state is damaged", opt, st.Iterations, int64(MaxIterations))
	}
	for name, slot := range st.Slots {
		if len(slot) > 0 && !slices.Contains(names, name) {
			keeps := "no slots"
			if len(names) > 0 {
				keeps = "slots " + strings.Join(names, ", ")
			}
			return nil, fmt.Errorf("%s: state has slot %q but this optimizer keeps %s (was it saved by another optimizer, or with other settings such as momentum?)", opt, name, keeps)
		}
	}
	for _, name := range names {
		for _, v := range slices.Sorted(maps.Keys(st.Slots[name])) {
			values := st.Slots[name][v]
			for i, x := range values {
				if x-x != 0 { // NaN or ±Inf
					return nil, fmt.Errorf("%s: state: optimizer slot %s of %s holds %v at index %d: restore a state saved before training diverged, or start again with a lower learning rate", opt, name, v, x, i)
				}
				if x < 0 && u.SlotNonNegative(name) {
					return nil, fmt.Errorf("%s: state: optimizer slot %s of %s holds %v at index %d, but it accumulates squares or magnitudes and is never negative: the state is damaged", opt, name, v, x, i)
				}
			}
		}
	}
	out := make([]map[string][]float32, len(names))
	for i, name := range names {
		out[i] = cloneSlot(st.Slots[name])
	}
	return out, nil
}

func cloneSlot(slot map[string][]float32) map[string][]float32 {
	out := make(map[string][]float32, len(slot))
	for name, values := range slot {
		out[name] = slices.Clone(values)
	}
	return out
}
