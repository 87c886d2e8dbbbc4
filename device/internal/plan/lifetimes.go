package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Activation memory: a machine's Temp buffers whose lifetimes do not
// overlap share memory. Every list of steps a machine runs (RunAll's
// Plan.Steps, and each training list: TrainingSteps, ReducedTrainingSteps,
// OverlappedTrainingSteps) is the plan's steps in their order, some of
// them replaced by a fused GradUpdate placed later, with steps inserted
// that touch only weights, gradients, the Scale buffer and the moving
// statistics. So the lifetimes are computed once, over the plan's steps:
// a buffer lives from the step that first writes it to the last step
// that reads it, both included, stretched to where a fused GradUpdate
// reads its gradient step's operands. Buffers whose lifetimes share no
// step get parts of one allocation, the arena, that may overlap.
//
// Never shared, each keeping memory of its own:
//   - buffers that are not Temp: Input (copied in before the steps; a
//     started step's second set too), Weight and State (the model's,
//     bound at each run), Const (written once, when the machine is made);
//   - the learnables' gradients: read after the steps (RunAll copies them
//     out; the updates, the all-reduce, GlobalNorm and an overlapped
//     all-reduce, which reads them on another stream or goroutine while
//     the backward pass goes on, read them in the training lists);
//   - the Scale buffer (GlobalNorm writes it after the steps, the
//     updates read it);
//   - the buffers of the Reads, copied out after the steps;
//   - every buffer of the MovingAverage steps (Plan.Moving), which run
//     after the steps, with a Reduce of the statistics before them;
//   - a buffer some step reads before any step writes it, or that no
//     step writes: its value must outlive a run;
//   - buffers of no values.
//
// A reshape's node shares its input's buffer (Plan.BufferOf), so the
// lifetime, over the steps' operands, covers both names; a step that
// writes a buffer it reads (a BiasAct on its Gemm's output) only extends
// that buffer's lifetime. Two buffers used by one step never share, so no
// kernel ever sees its output in its operands' memory.
//
// A machine shares only on a device that can hand out parts of an
// allocation (SubMemory). Before it first runs a list of steps it checks
// the sharing against that very list (layout.check); should the check
// fail, the machine gives every shared buffer memory of its own again,
// as it was before sharing.

// SubMemory is the optional interface of a Device that can hand out part
// of an allocation as memory of its own: a machine then puts its Temp
// buffers whose lifetimes do not overlap into one allocation.
type SubMemory interface {
	// Sub returns the n float32s of m from offset off (in float32s) as
	// memory that steps read and write like any other; it is never
	// freed (m is).
	Sub(m Mem, off, n int) Mem
}

// shareAlign is the alignment of the buffers in an arena, in float32s:
// 256 bytes, cuMemAlloc's.
const shareAlign = 64

// lifetime is the steps of Plan.Steps from the first that writes a buffer
// to the last that reads it, both included; first is -1 for a buffer
// that is not shared.
type lifetime struct{ first, last int }

func (l lifetime) overlaps(o lifetime) bool { return l.first <= o.last && o.first <= l.last }

// layout is where the shared buffers live in the arena.
type layout struct {
	// off is, per buffer, its offset in the arena in float32s, -1 for a
	// buffer with memory of its own.
	off []int
	// size is the arena's, in float32s.
	size int
	// unshared is what the buffers in the arena would take each with
	// memory of its own, in float32s (each rounded up to shareAlign).
	unshared int
}

// pinned says, per buffer, whether it must never be shared, and why.
func (p *Plan) pinned() []string {
	why := make([]string, len(p.Buffers))
	for b, buf := range p.Buffers {
		switch {
		case buf.Role != Temp:
			why[b] = buf.Role.String()
		case buf.Elems <= 0:
			why[b] = "empty"
		}
	}
	pin := func(b int, reason string) {
		if b >= 0 && why[b] == "" {
			why[b] = reason
		}
	}
	for _, g := range p.Grads {
		pin(g, "gradient")
	}
	pin(p.Scale, "scale")
	for _, r := range p.Reads {
		pin(r.Buf, "read")
	}
	for _, s := range p.Moving {
		for _, b := range append(slices.Clone(s.In), s.Out...) {
			pin(b, "moving")
		}
	}
	return why
}

// lifetimes computes every buffer's lifetime over p.Steps; the buffers
// not shared have first -1.
func (p *Plan) lifetimes() []lifetime {
	why := p.pinned()
	life := make([]lifetime, len(p.Buffers))
	for b := range life {
		life[b] = lifetime{-1, -1}
	}
	touch := func(b, si int, write bool) {
		if b < 0 || why[b] != "" {
			return
		}
		if life[b].first < 0 {
			if !write {
				why[b] = "read first"
				return
			}
			life[b].first = si
		}
		life[b].last = si
	}
	for si := range p.Steps {
		s := &p.Steps[si]
		for _, b := range s.In { // reads first: a step that reads b before anything wrote it keeps b apart
			touch(b, si, false)
		}
		if s.Of != nil {
			for _, b := range s.Of.In {
				touch(b, si, false)
			}
		}
		for _, b := range s.Out {
			touch(b, si, true)
		}
	}
	// A training list may fold a learnable's update into its gradient's
	// step (GradUpdate), placed after the last step that reads the
	// weight: that step's operands then live until there.
	for i, g := range p.Grads {
		w, ok := p.BufferOf(p.Learnables[i])
		if g == None || !ok {
			continue
		}
		gradStep, at := -1, -1
		for si := range p.Steps {
			s := &p.Steps[si]
			if slices.Contains(s.Out, g) {
				gradStep = si
			}
			if slices.Contains(s.In, w) || (s.Of != nil && slices.Contains(s.Of.In, w)) {
				at = si
			}
		}
		if gradStep < 0 {
			continue
		}
		at = max(at, gradStep)
		for _, b := range p.Steps[gradStep].In {
			if b >= 0 && life[b].first >= 0 {
				life[b].last = max(life[b].last, at)
			}
		}
	}
	for b := range life {
		if why[b] != "" {
			life[b] = lifetime{-1, -1}
		}
	}
	return life
}

// pack places the buffers with a lifetime in an arena, largest first,
// each at the lowest offset of the smallest gap left by the buffers
// placed before it whose lifetimes overlap its own (best fit), else after
// them.
func (p *Plan) pack(life []lifetime) *layout {
	l := &layout{off: make([]int, len(p.Buffers))}
	var order []int
	for b := range l.off {
		l.off[b] = -1
		if life[b].first >= 0 {
			order = append(order, b)
		}
	}
	size := func(b int) int { return (p.Buffers[b].Elems + shareAlign - 1) / shareAlign * shareAlign }
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(size(b), size(a)), cmp.Compare(life[a].first, life[b].first), cmp.Compare(a, b))
	})
	var placed, busy []int
	for _, b := range order {
		n := size(b)
		busy = busy[:0]
		for _, o := range placed {
			if life[o].overlaps(life[b]) {
				busy = append(busy, o)
			}
		}
		slices.SortFunc(busy, func(x, y int) int { return cmp.Compare(l.off[x], l.off[y]) })
		best, gap, end := -1, 0, 0
		for _, o := range busy {
			if g := l.off[o] - end; g >= n && (best < 0 || g < gap) {
				best, gap = end, g
			}
			end = max(end, l.off[o]+size(o))
		}
		if best < 0 {
			best = end
		}
		l.off[b] = best
		l.size = max(l.size, best+n)
		l.unshared += n
		placed = append(placed, b)
	}
	return l
}

// shareLayout is the layout a machine of p shares its buffers by; tests
// replace it.
var shareLayout = func(p *Plan) *layout { return p.pack(p.lifetimes()) }

// checkLayouts says whether a machine checks its layout against each list
// of steps before running it; only a test that runs a wrong layout on
// purpose turns it off.
var checkLayouts = true

// check says whether l holds for a run of steps: no buffer in the arena
// is one the machine reads after the steps (a gradient, a Read) or one
// pinned for another reason, each is written before it is read, and no
// two buffers whose memory overlaps are used at one step, lifetimes
// counted over steps as they are.
func (l *layout) check(p *Plan, steps []Step) error {
	why := p.pinned()
	life := make([]lifetime, len(p.Buffers))
	for b := range life {
		life[b] = lifetime{-1, -1}
	}
	var errs []error
	touch := func(b, si int, write bool) {
		if b < 0 || l.off[b] < 0 {
			return
		}
		if life[b].first < 0 {
			if !write {
				errs = append(errs, fmt.Errorf("step %d (%v) reads shared buffer %d before any step writes it", si, steps[si].Kind, b))
			}
			life[b].first = si
		}
		life[b].last = si
	}
	for si := range steps {
		s := &steps[si]
		for _, b := range s.In {
			touch(b, si, false)
		}
		if s.Of != nil {
			for _, b := range s.Of.In {
				touch(b, si, false)
			}
		}
		for _, b := range s.Out {
			touch(b, si, true)
		}
	}
	var in []int
	for b, off := range l.off {
		if off < 0 {
			continue
		}
		if why[b] != "" {
			errs = append(errs, fmt.Errorf("buffer %d (%s) is shared", b, why[b]))
		}
		if life[b].first >= 0 {
			in = append(in, b)
		}
	}
	slices.SortFunc(in, func(x, y int) int { return cmp.Compare(l.off[x], l.off[y]) })
	for i, a := range in {
		end := l.off[a] + p.Buffers[a].Elems
		for _, b := range in[i+1:] {
			if l.off[b] >= end {
				break
			}
			if life[a].overlaps(life[b]) {
				errs = append(errs, fmt.Errorf("buffers %d (steps %d–%d) and %d (steps %d–%d) share memory", a, life[a].first, life[a].last, b, life[b].first, life[b].last))
			}
		}
	}
	if len(errs) > 8 {
		errs = append(errs[:8], fmt.Errorf("and %d more", len(errs)-8))
	}
	return errors.Join(errs...)
}

// share puts the buffers of the machine's layout into one allocation, the
// arena, when the device can hand out parts of it, and returns which
// buffers it placed; inside Do.
func (m *Machine) share() ([]bool, error) {
	sub, ok := m.dev.(SubMemory)
	if !ok {
		return nil, nil
	}
	l := shareLayout(m.plan)
	if l == nil || l.size == 0 || l.size >= l.unshared {
		return nil, nil // nothing to gain
	}
	if checkLayouts && l.check(m.plan, m.plan.Steps) != nil {
		return nil, nil // kept apart, as shareAgainst would
	}
	arena, err := m.dev.Alloc(l.size)
	if err != nil {
		return nil, fmt.Errorf("allocating %d bytes of activations: %w", 4*int64(l.size), err)
	}
	m.arena, m.layout = arena, l
	placed := make([]bool, len(m.plan.Buffers))
	for b, off := range l.off {
		if off >= 0 {
			m.bufs[b] = sub.Sub(arena, off, m.plan.Buffers[b].Elems)
			placed[b] = true
		}
	}
	return placed, nil
}

// shareAgainst checks the machine's sharing against steps, a list it is
// about to run for the first time, and when it does not hold gives every
// shared buffer memory of its own (the arena stays until Close: a started
// step may still use it).
func (m *Machine) shareAgainst(steps []Step) error {
	if m.layout == nil || !checkLayouts || m.layout.check(m.plan, steps) == nil {
		return nil
	}
	return m.dev.Do(func() error {
		for b, off := range m.layout.off {
			if off < 0 {
				continue
			}
			mem, err := m.dev.Alloc(m.plan.Buffers[b].Elems)
			if err != nil {
				return fmt.Errorf("allocating a buffer of its own for %d values: %w", m.plan.Buffers[b].Elems, err)
			}
			m.own[b], m.bufs[b] = mem, mem
		}
		m.layout, m.unshared = nil, true
		return nil
	})
}
