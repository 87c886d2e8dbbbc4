//go:build cudavm && cgo && kernelemu

package cuda

import (
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gokeras/gokeras/device/cuda/kernels/emu"
)

// The emulator's race mode: GOKERAS_EMU_RACE=seed (a nonzero number),
// or GOKERAS_EMU_STREAM_RACE=seed for the streams alone (below).
//
// The normal emulator runs the streams in a fixed order, and waiting for
// one stream runs every stream's work: a stream that reads what another
// stream writes, without an event between them, still gets the right data
// there, although a GPU may run the two in either order, or at once. In
// race mode:
//
//   - when work must run, the streams advance one piece of work at a
//     time, the next stream drawn at random (a PCG seeded with the seed
//     and the GPU's index, so a seed replays the same order);
//   - waiting for a stream or an event runs only what it depends on: the
//     stream's work so far and, through its waits for events, the other
//     streams' work before the events' records, transitively. The rest
//     stays queued, as a GPU may not have run it yet. What waits for every
//     stream on a GPU (cuMemFree, the synchronous copies) still does.
//     Destroying a stream runs its work and what that needs, but is no
//     wait of the host's (cuStreamDestroy returns at once);
//   - every piece of work is checked against the device memory it read
//     and wrote (copies, memsets, sgemm's operands, all-reduces, and
//     kernels' launches), with vector clocks: each stream has one, an
//     event's record takes a copy, a stream's wait for an event joins
//     it, and the host's waits join the stream's or the event's
//     into the host's clock, which the work queued afterwards inherits.
//     Work that reads memory that another stream wrote, or writes memory
//     that another stream read or wrote, with neither ordered before the
//     other, is a race: an error of the wait that ran it, naming the two
//     pieces of work (a kernel's name, sgemm, the all-reduce, or the
//     copy's or memset's driver call), their streams (numbered from 1 in
//     the order they were created on the GPU), the number of each piece
//     on its stream, and the bytes of the allocation.
//
// What a launch touched: package emu reads GOKERAS_EMU_RACE too, and then
// runs every launch in its own race mode (a copy of the kernels that
// checks their threads and blocks for races, much slower); a launch then
// reports exactly the global memory it read and wrote
// (emu.LaunchKernelTraced). With GOKERAS_EMU_STREAM_RACE alone (its seed
// is the streams' when both are set), emu runs the kernels as usual, and
// a launch counts
// as touching, for each of its pointer arguments, the allocation from
// that address to its end: read if kernels.cu declares the parameter
// const, else written. That is an over-estimate: two streams touching
// disjoint parts of one allocation, with nothing ordering them, are
// reported as a race.
//
// The synchronous copies and frees wait for every stream, so the host's
// own accesses to device memory never race, and pinned host memory is not
// watched: an asynchronous copy to or from it that the host reads or
// changes too early shows as wrong results, not as a report.
//
// Run a package's tests with several seeds:
//
//	for s in 1 2 3; do GOKERAS_EMU_STREAM_RACE=$s go test -tags 'cudavm kernelemu' ./device/cuda; done
//
// scripts/race-controls-streams.sh checks that race mode catches the
// data-parallel all-reduce's stream not waiting for the gradients.

// emuRaceEnv names the environment variable that turns race mode on.
const emuRaceEnv = "GOKERAS_EMU_RACE"

// emuRaceMaxReports is how many races one wait reports in full.
const emuRaceMaxReports = 8

// emuStreamRaceEnv names the environment variable that turns race mode
// on for the streams alone: package emu's kernels then run as usual, and
// a launch counts as touching its pointer arguments' allocations.
const emuStreamRaceEnv = "GOKERAS_EMU_STREAM_RACE"

// emuRaceSetting is race mode's seed, from GOKERAS_EMU_STREAM_RACE, else
// GOKERAS_EMU_RACE; 0 is off.
var emuRaceSetting = sync.OnceValues(func() (uint64, error) {
	name := emuStreamRaceEnv
	v := os.Getenv(name)
	if v == "" {
		name = emuRaceEnv
		v = os.Getenv(name)
	}
	if v == "" {
		return 0, nil
	}
	seed, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a seed, a number (0 or unset: no race mode)", name, v)
	}
	return seed, nil
})

// emuClock is a vector clock: for each stream of a context (by id; 0 is
// the host), the last piece of its work ordered before. A clock that work
// or an event holds is never changed: joins make new ones.
type emuClock []uint64

func (v emuClock) at(i int) uint64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// join returns v joined with w, and whether that is not v: v itself if
// w adds nothing.
func (v emuClock) join(w emuClock) (emuClock, bool) {
	grow := false
	for i, x := range w {
		if x > v.at(i) {
			grow = true
			break
		}
	}
	if !grow {
		return v, false
	}
	out := make(emuClock, max(len(v), len(w)))
	copy(out, v)
	for i, x := range w {
		out[i] = max(out[i], x)
	}
	return out, true
}

// with returns a copy of v with stream id's entry set to epoch.
func (v emuClock) with(id int, epoch uint64) emuClock {
	out := make(emuClock, max(len(v), id+1))
	copy(out, v)
	out[id] = epoch
	return out
}

// emuRange is a half-open range of host addresses of device memory.
type emuRange struct{ lo, hi uintptr }

// emuTouch is the device memory a piece of work reads and writes.
type emuTouch struct{ reads, writes []emuRange }

func (t *emuTouch) read(p devicePtr, bytes int64) {
	if bytes > 0 {
		t.reads = append(t.reads, emuRange{uintptr(p), uintptr(p) + uintptr(bytes)})
	}
}

func (t *emuTouch) write(p devicePtr, bytes int64) {
	if bytes > 0 {
		t.writes = append(t.writes, emuRange{uintptr(p), uintptr(p) + uintptr(bytes)})
	}
}

// emuAccess is an access in an allocation's shadow: bytes [lo, hi) read
// or written by piece epoch of stream's work, op.
type emuAccess struct {
	lo, hi uintptr
	stream int
	epoch  uint64
	write  bool
	op     string
}

// emuRecAt is where a queued record of an event is: its stream's piece
// of work seq.
type emuRecAt struct {
	s   *emuStream
	seq uint64
}

// emuRace is a context's race mode.
type emuRace struct {
	rng *rand.Rand
	// host is the host's clock, changed (hostGen counts the changes) when
	// the host waits for a stream or an event.
	host    emuClock
	hostGen int
	// ids counts the streams created: a stream's id is its index in the
	// clocks.
	ids int
	// allocs are the allocations by address.
	allocs []*emuAlloc
	// races counts the races found by the wait now running.
	races int
	// traced says whether launches report exactly what they touched
	// (launchTouch).
	traced bool
}

// newEmuRace is race mode for GPU index; kernels are traced exactly when
// traced.
func newEmuRace(seed uint64, index int, traced bool) *emuRace {
	return &emuRace{rng: rand.New(rand.NewPCG(seed, uint64(index))), host: emuClock{}, traced: traced}
}

// raceAlloc and raceFree keep r.allocs sorted.
func (r *emuRace) raceAlloc(a *emuAlloc) {
	i := sort.Search(len(r.allocs), func(i int) bool { return uintptr(r.allocs[i].base) > uintptr(a.base) })
	r.allocs = slices.Insert(r.allocs, i, a)
}

func (r *emuRace) raceFree(a *emuAlloc) {
	r.allocs = slices.DeleteFunc(r.allocs, func(b *emuAlloc) bool { return b == a })
}

// allocAt is the allocation holding address p, or nil.
func (r *emuRace) allocAt(p uintptr) *emuAlloc {
	i := sort.Search(len(r.allocs), func(i int) bool { return uintptr(r.allocs[i].base) > p }) - 1
	if i < 0 {
		return nil
	}
	a := r.allocs[i]
	if p >= uintptr(a.base)+uintptr(a.bytes) {
		return nil
	}
	return a
}

// stamp gives w, queued on s, its place and clock. c.mu is held.
func (r *emuRace) stamp(s *emuStream, w *emuWork) {
	if s.hostGen != r.hostGen {
		s.clk, _ = s.clk.join(r.host)
		s.hostGen = r.hostGen
	}
	if w.ev != nil && w.target > 0 && w.target == w.ev.queued && w.ev.snap != nil {
		s.clk, _ = s.clk.join(w.ev.snap)
	}
	s.seq++
	w.seq, w.clk = s.seq, s.clk
	if w.recEv != nil {
		w.recEv.snap = s.clk.with(s.id, s.seq)
		if w.recEv.recs == nil {
			w.recEv.recs = map[int]emuRecAt{}
		}
		w.recEv.recs[w.recN] = emuRecAt{s, s.seq}
	}
}

// latest is the clock of s's latest queued work.
func (s *emuStream) latest() emuClock { return s.clk.with(s.id, s.seq) }

// hostJoins makes the host's clock include v.
func (r *emuRace) hostJoins(v emuClock) {
	if j, grew := r.host.join(v); grew {
		r.host, r.hostGen = j, r.hostGen+1
	}
}

// emuNeed is, for the streams of a context, how far each stream's work
// must run: up to its piece seq.
type emuNeed map[*emuStream]uint64

// raise makes need include s's work up to seq, and what that work waits
// for, transitively.
func (need emuNeed) raise(s *emuStream, seq uint64) {
	type job struct {
		s    *emuStream
		from uint64
		to   uint64
	}
	var todo []job
	add := func(s *emuStream, seq uint64) {
		if len(s.work) == 0 {
			return
		}
		first := s.work[0].seq
		seq = min(seq, s.work[len(s.work)-1].seq)
		from, ok := need[s]
		if !ok {
			from = first - 1
		}
		if seq <= from {
			return
		}
		need[s] = seq
		todo = append(todo, job{s, from + 1, seq})
	}
	add(s, seq)
	for len(todo) > 0 {
		j := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		first := j.s.work[0].seq
		for _, w := range j.s.work[j.from-first : j.to-first+1] {
			if w.ev == nil || w.ev.done >= w.target {
				continue
			}
			if at, ok := w.ev.recs[w.target]; ok {
				add(at.s, at.seq)
			}
		}
	}
}

// runNeeded runs the work need names, drawing at random which stream
// goes next, and checks each piece for races. c.mu is held.
func (c *emuContext) runNeeded(need emuNeed) []error {
	var errs []error
	c.race.races = 0
	for {
		var pending, ready []*emuStream
		for _, s := range c.streams {
			if len(s.work) == 0 || s.work[0].seq > need[s] {
				continue
			}
			pending = append(pending, s)
			if w := s.work[0]; w.ev == nil || w.ev.done >= w.target {
				ready = append(ready, s)
			}
		}
		if len(pending) == 0 {
			break
		}
		if len(ready) == 0 {
			errs = append(errs, errors.New("emulated GPU: streams wait for events that no queued work records: a deadlock"))
			for _, s := range c.streams {
				s.work = nil
			}
			break
		}
		s := ready[c.race.rng.IntN(len(ready))]
		if err := c.runRacing(s); err != nil {
			errs = append(errs, err)
		}
	}
	if n := c.race.races - emuRaceMaxReports; n > 0 {
		errs = append(errs, fmt.Errorf("emulated GPU: and %d more races", n))
	}
	for _, a := range c.allocs {
		errs = append(errs, a.guardIntact())
	}
	return errs
}

// runRacing runs s's next piece of work, which can run, and checks what
// it touched against what other streams touched. A piece that fails
// drops the stream's work after it. c.mu is held.
func (c *emuContext) runRacing(s *emuStream) error {
	w := s.work[0]
	s.work = s.work[1:]
	if w.recEv != nil {
		delete(w.recEv.recs, w.recN)
	}
	if w.f == nil {
		return nil
	}
	if err := w.f(); err != nil {
		s.work = nil
		return err
	}
	t := w.touch
	if w.traced != nil {
		t = *w.traced
	}
	var errs []error
	for _, rg := range t.reads {
		errs = append(errs, c.race.access(s, &w, rg, false)...)
	}
	for _, rg := range t.writes {
		errs = append(errs, c.race.access(s, &w, rg, true)...)
	}
	return errors.Join(errs...)
}

// access checks w's access to rg against the shadows of the allocations
// it lies in, and records it there.
func (r *emuRace) access(s *emuStream, w *emuWork, rg emuRange, write bool) []error {
	var errs []error
	for p := rg.lo; p < rg.hi; {
		a := r.allocAt(p)
		if a == nil {
			// Not device memory (or a guard): the span checks and the
			// guards report it; look for the next allocation.
			i := sort.Search(len(r.allocs), func(i int) bool { return uintptr(r.allocs[i].base) > p })
			if i == len(r.allocs) {
				break
			}
			p = uintptr(r.allocs[i].base)
			continue
		}
		end := min(rg.hi, uintptr(a.base)+uintptr(a.bytes))
		if err := r.accessIn(a, s, w, p, end, write); err != nil {
			errs = append(errs, err)
		}
		p = end
	}
	return errs
}

// accessIn checks and records w's access to [lo, hi) of a: racing with
// an access of another stream that is not ordered before it (a write, or
// a read when w writes) is an error. Accesses ordered before it that it
// covers (all of them when it writes, the reads when it reads) leave the
// shadow: whatever is not ordered after w is not ordered after them.
func (r *emuRace) accessIn(a *emuAlloc, s *emuStream, w *emuWork, lo, hi uintptr, write bool) error {
	var race *emuAccess
	kept := a.shadow[:0:0]
	for _, e := range a.shadow {
		if e.hi <= lo || e.lo >= hi {
			kept = append(kept, e)
			continue
		}
		ordered := e.stream == s.id || e.epoch <= w.clk.at(e.stream)
		if !ordered && (e.write || write) && race == nil {
			race = &e
		}
		if !ordered || (e.write && !write) {
			kept = append(kept, e)
			continue
		}
		if e.lo < lo {
			kept = append(kept, emuAccess{e.lo, lo, e.stream, e.epoch, e.write, e.op})
		}
		if e.hi > hi {
			kept = append(kept, emuAccess{hi, e.hi, e.stream, e.epoch, e.write, e.op})
		}
	}
	a.shadow = append(kept, emuAccess{lo, hi, s.id, w.seq, write, w.op})
	if race == nil {
		return nil
	}
	r.races++
	if r.races > emuRaceMaxReports {
		return nil
	}
	verb := func(write bool) string {
		if write {
			return "wrote"
		}
		return "read"
	}
	from, to := max(lo, race.lo)-uintptr(a.base), min(hi, race.hi)-uintptr(a.base)
	return fmt.Errorf("emulated GPU: a race on bytes [%d, %d) of the %d-byte allocation at %#x: %s (stream %d's work %d) %s them, and %s (stream %d's work %d) %s them, with no event ordering the two",
		from, to, a.bytes, uintptr(a.base), race.op, race.stream, race.epoch, verb(race.write), w.op, s.id, w.seq, verb(write))
}

// raceSync runs what s's work so far needs, and s's work, for a wait for
// the stream; the host then knows it done unless destroying. c.mu is
// held.
func (c *emuContext) raceSync(s *emuStream, hostWaits bool) error {
	need := emuNeed{}
	need.raise(s, s.seq)
	errs := c.runNeeded(need)
	if hostWaits {
		c.race.hostJoins(s.latest())
	}
	return errors.Join(errs...)
}

// raceFlush runs every stream's work, in a random order, as flush does.
// Everything queued is then ordered before what is queued next, so the
// shadows are cleared. c.mu is held.
func (c *emuContext) raceFlush() error {
	need := emuNeed{}
	for _, s := range c.streams {
		need.raise(s, s.seq)
	}
	errs := c.runNeeded(need)
	for _, s := range c.streams {
		c.race.hostJoins(s.latest())
	}
	for _, a := range c.allocs {
		a.shadow = nil
	}
	return errors.Join(errs...)
}

// raceEventSync runs what the event's latest record needs. c.mu is held.
func (e *emuEvent) raceSync() error {
	c := e.ctx
	target := e.queued
	if e.done >= target {
		return nil
	}
	need := emuNeed{}
	at, ok := e.recs[target]
	if ok {
		need.raise(at.s, at.seq)
	}
	errs := c.runNeeded(need)
	if e.done < target {
		errs = append(errs, errors.New("emulated GPU: an event waited for is never reached: a deadlock"))
	} else if e.snap != nil {
		c.race.hostJoins(e.snap)
	}
	return errors.Join(errs...)
}

// launchTouch runs a launch of kernel name with args and says what
// global memory it read and wrote: exactly (emu.LaunchKernelTraced, which
// in emu's race mode also checks the kernel's threads and blocks for
// races) when r.traced, else each pointer argument into an allocation
// from its address to the allocation's end, read if kernels.cu declares
// the parameter const, else written (unknown kernels: written). c.mu is
// held.
func (r *emuRace) launchTouch(name string, grid, block, shared int, args []uint64) (emuTouch, error) {
	var t emuTouch
	if r.traced {
		a, err := emu.LaunchKernelTraced(name, grid, block, shared, args)
		for _, rg := range a.Reads {
			t.reads = append(t.reads, emuRange{rg.Lo, rg.Hi})
		}
		for _, rg := range a.Writes {
			t.writes = append(t.writes, emuRange{rg.Lo, rg.Hi})
		}
		return t, err
	}
	params, known := emuKernelParams()[name]
	for i, v := range args {
		if known && (i >= len(params) || params[i] == emuValueParam) {
			continue
		}
		a := r.allocAt(uintptr(v))
		if a == nil {
			continue
		}
		rg := emuRange{uintptr(v), uintptr(a.base) + uintptr(a.bytes)}
		if known && params[i] == emuConstParam {
			t.reads = append(t.reads, rg)
		} else {
			t.writes = append(t.writes, rg)
		}
	}
	return t, emu.LaunchKernel(name, grid, block, shared, args)
}

// kernelsCU is kernels.cu, whose kernels' parameters say which pointers
// a kernel only reads.
//
//go:embed kernels/kernels.cu
var kernelsCU string

// emuParam is what a kernel's parameter is.
type emuParam uint8

const (
	emuValueParam emuParam = iota // not a pointer
	emuConstParam                 // a pointer to const: read
	emuPtrParam                   // a pointer: read and written
)

// emuKernelParams is, for each kernel of kernels.cu, its parameters.
var emuKernelParams = sync.OnceValue(func() map[string][]emuParam {
	kernels := map[string][]emuParam{}
	for _, m := range regexp.MustCompile(`__global__\s+void\s+(\w+)\s*\(([^)]*)\)`).FindAllStringSubmatch(kernelsCU, -1) {
		var params []emuParam
		for _, p := range strings.Split(m[2], ",") {
			p = strings.TrimSpace(p)
			switch {
			case !strings.Contains(p, "*"):
				params = append(params, emuValueParam)
			case strings.HasPrefix(p, "const "):
				params = append(params, emuConstParam)
			default:
				params = append(params, emuPtrParam)
			}
		}
		kernels[m[1]] = params
	}
	return kernels
})
