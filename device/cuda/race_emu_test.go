//go:build cudavm && cgo && kernelemu

package cuda

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// These tests check the emulator's race mode (race_emu.go) through the
// emulator's API, on a context of their own in race mode whatever
// GOKERAS_EMU_RACE says.

// raceSeed is a seed for a test's race mode, and whether its kernels are
// traced exactly (emu.LaunchKernelTraced) or by their parameters.
type raceSeed struct {
	seed   uint64
	traced bool
}

func (s raceSeed) String() string {
	if s.traced {
		return fmt.Sprintf("%v, kernels traced", s.seed)
	}
	return fmt.Sprintf("%v", s.seed)
}

// raceSeeds are the seeds each test runs with, with kernels traced and
// not.
var raceSeeds = func() []raceSeed {
	var seeds []raceSeed
	for s := range uint64(12) {
		seeds = append(seeds, raceSeed{s + 1, false}, raceSeed{s + 1, true})
	}
	return seeds
}()

// raceRig is an emulated GPU in race mode with two streams.
type raceRig struct {
	t    *testing.T
	c    *emuContext
	a, b *emuStream
	mod  gpuModule
}

func newRaceRig(t *testing.T, seed raceSeed) *raceRig {
	t.Helper()
	c := &emuContext{allocs: map[devicePtr]*emuAlloc{}, host: map[unsafe.Pointer]bool{}, race: newEmuRace(seed.seed, 0, seed.traced)}
	r := &raceRig{t: t, c: c}
	r.a, r.b = r.stream(), r.stream()
	mod, err := c.loadModule("", []string{kAdd})
	if err != nil {
		t.Fatal(err)
	}
	r.mod = mod
	t.Cleanup(func() {
		for _, s := range c.streams {
			s.work = nil // what a test left queued on purpose
		}
		for p := range c.allocs {
			if err := c.memFree(p); err != nil {
				t.Error(err)
			}
		}
	})
	return r
}

func (r *raceRig) stream() *emuStream {
	s, err := r.c.newStream()
	if err != nil {
		r.t.Fatal(err)
	}
	return s.(*emuStream)
}

func (r *raceRig) event() *emuEvent {
	e, err := r.c.newEvent()
	if err != nil {
		r.t.Fatal(err)
	}
	return e.(*emuEvent)
}

// buf is a device buffer holding data.
func (r *raceRig) buf(data ...float32) devicePtr {
	r.t.Helper()
	p, err := r.c.memAlloc(int64(len(data)) * 4)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.c.copyHtoD(p, unsafe.Pointer(&data[0]), int64(len(data))*4); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// add queues out = x + y on s.
func (r *raceRig) add(s *emuStream, x, y, out devicePtr, n int) {
	r.t.Helper()
	if err := r.mod.launch(s, kAdd, 1, 32, 0, []uint64{ptrArg(x), ptrArg(y), ptrArg(out), intArg(n)}); err != nil {
		r.t.Fatal(err)
	}
}

// peek reads n float32s of device memory without waiting for anything.
func (r *raceRig) peek(p devicePtr, n int) []float32 {
	r.t.Helper()
	h, err := r.c.span("peek", p, int64(n)*4)
	if err != nil {
		r.t.Fatal(err)
	}
	return slices.Clone(unsafe.Slice((*float32)(h), n))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A kernel on stream a writes a buffer that a copy on stream b reads with
// no event between them: a race, whichever runs first, and whether b or
// a is waited for first.
func TestRaceModeReportsAnUnorderedRead(t *testing.T) {
	for _, seed := range raceSeeds {
		for _, bFirst := range []bool{true, false} {
			r := newRaceRig(t, seed)
			x, y, out := r.buf(1, 2), r.buf(10, 20), r.buf(0, 0)
			host := make([]float32, 2)
			r.add(r.a, x, y, out, 2)
			must(t, r.b.copyDtoH(unsafe.Pointer(&host[0]), out, 8))
			first, second := r.a, r.b
			if bFirst {
				first, second = r.b, r.a
			}
			err := errors.Join(first.synchronize(), second.synchronize())
			if err == nil || !strings.Contains(err.Error(), "a race on bytes [0, 8) of the 8-byte allocation") ||
				!strings.Contains(err.Error(), "gk_add (stream 1's work 1) wrote them") ||
				!strings.Contains(err.Error(), "cuMemcpyDtoHAsync (stream 2's work 1) read them") {
				t.Errorf("%v, b waited for first %t: %v, want the race of gk_add on stream 1 and the copy on stream 2", seed, bFirst, err)
			}
		}
	}
}

// Two streams writing the same buffer with no event between them race;
// so does a write after another stream's read.
func TestRaceModeReportsUnorderedWrites(t *testing.T) {
	for _, seed := range raceSeeds {
		r := newRaceRig(t, seed)
		out := r.buf(0, 0, 0, 0)
		must(t, r.a.memsetD32(out+4, 1, 2))
		must(t, r.b.memsetD32(out+8, 2, 2))
		err := r.c.flush()
		if err == nil || !strings.Contains(err.Error(), "a race on bytes [8, 12) of the 16-byte allocation") {
			t.Errorf("%v: two memsets overlapping at one word: %v, want a race on it", seed, err)
		}

		x := r.buf(1, 2)
		host := make([]float32, 2)
		must(t, r.a.copyDtoH(unsafe.Pointer(&host[0]), x, 8))
		r.add(r.b, x, x, x, 2)
		err = r.c.flush()
		if err == nil || !strings.Contains(err.Error(), "gk_add (stream 2's work 2) wrote them") {
			t.Errorf("%v: a kernel writing what another stream's copy reads: %v, want a race", seed, err)
		}
	}
}

// Reads on two streams of what the host wrote before do not race: a
// kernel's arguments count as what it really read and wrote.
func TestRaceModeAllowsConcurrentReads(t *testing.T) {
	for _, seed := range raceSeeds {
		r := newRaceRig(t, seed)
		x, y, o1 := r.buf(1, 2, 3, 4), r.buf(1, 0, 0, 1), r.buf(0, 0, 0, 0)
		h, err := r.c.newBLAS(r.a)
		must(t, err)
		must(t, h.sgemm(false, false, 2, 2, 2, 1, x, 2, y, 2, 0, o1, 2))
		host := make([]float32, 4)
		must(t, r.b.copyDtoH(unsafe.Pointer(&host[0]), x, 16))
		must(t, r.b.copyDtoH(unsafe.Pointer(&host[0]), y, 16))
		if err := r.c.flush(); err != nil {
			t.Errorf("%v: sgemm and copies reading the same buffers: %v", seed, err)
		}
		o2, o3 := r.buf(0, 0), r.buf(0, 0)
		r.add(r.a, x, y, o2, 2)
		r.add(r.b, x, y, o3, 2)
		if err := r.c.flush(); err != nil {
			t.Errorf("%v: two kernels reading the same buffers: %v", seed, err)
		}
	}
}

// With an event recorded after the kernel on a and waited for on b
// before the copy, nothing races, and the copy reads the sum.
func TestRaceModeEventsOrderStreams(t *testing.T) {
	for _, seed := range raceSeeds {
		r := newRaceRig(t, seed)
		ev := r.event()
		x, y, out := r.buf(1, 2), r.buf(10, 20), r.buf(0, 0)
		host := make([]float32, 2)
		r.add(r.a, x, y, out, 2)
		must(t, r.a.record(ev))
		must(t, r.b.wait(ev))
		must(t, r.b.copyDtoH(unsafe.Pointer(&host[0]), out, 8))
		r.add(r.a, x, x, x, 2) // after the record: unordered with b's copy, but b reads no x
		if err := r.b.synchronize(); err != nil {
			t.Errorf("%v: %v", seed, err)
		}
		if host[0] != 11 || host[1] != 22 {
			t.Errorf("%v: b's copy after the wait read %v, want [11 22]", seed, host)
		}
		if err := r.a.synchronize(); err != nil {
			t.Errorf("%v: %v", seed, err)
		}
	}
}

// What the host waited for is ordered before what it queues afterwards,
// on any stream.
func TestRaceModeHostWaitsOrderStreams(t *testing.T) {
	for _, seed := range raceSeeds {
		r := newRaceRig(t, seed)
		x, y, out := r.buf(1, 2), r.buf(10, 20), r.buf(0, 0)
		r.add(r.a, x, y, out, 2)
		must(t, r.a.synchronize())
		r.add(r.b, out, out, out, 2)
		ev := r.event()
		r.add(r.a, x, y, y, 2)
		must(t, r.a.record(ev))
		must(t, ev.synchronize())
		r.add(r.b, y, y, y, 2)
		if err := r.b.synchronize(); err != nil {
			t.Errorf("%v: work queued after the host waited for what it reads: %v", seed, err)
		}
		if got := r.peek(out, 2); got[0] != 22 || got[1] != 44 {
			t.Errorf("%v: out = %v, want [22 44]", seed, got)
		}
	}
}

// Waiting for stream b runs b's work and what it waits for, not a's other
// work, which stays queued until a is waited for.
func TestRaceModeSyncRunsOnlyWhatItNeeds(t *testing.T) {
	for _, seed := range raceSeeds {
		r := newRaceRig(t, seed)
		x, y, z, out, other := r.buf(1, 2), r.buf(10, 20), r.buf(5, 6), r.buf(0, 0), r.buf(0, 0)
		third := r.stream()
		ev := r.event()
		r.add(r.a, x, y, out, 2) // b needs this...
		must(t, r.a.record(ev))
		r.add(r.a, x, x, x, 2)   // ...not this
		r.add(third, z, z, z, 2) // nor this
		must(t, r.b.wait(ev))
		r.add(r.b, out, out, other, 2)
		must(t, r.b.synchronize())
		if got := r.peek(other, 2); got[0] != 22 || got[1] != 44 {
			t.Errorf("%v: other = %v, want [22 44]", seed, got)
		}
		if len(r.a.work) != 1 || len(third.work) != 1 {
			t.Errorf("%v: after waiting for b, a has %d pieces of work left and the third stream %d, want 1 each", seed, len(r.a.work), len(third.work))
		}
		if got := r.peek(x, 2); got[0] != 1 || got[1] != 2 {
			t.Errorf("%v: x = %v before a is waited for, want [1 2]", seed, got)
		}
		must(t, errors.Join(r.a.synchronize(), ev.synchronize()))
		if got := r.peek(x, 2); got[0] != 2 || got[1] != 4 {
			t.Errorf("%v: x = %v once a is waited for, want [2 4]", seed, got)
		}
		if len(third.work) != 1 {
			t.Errorf("%v: the third stream ran when nothing waited for it", seed)
		}
		must(t, third.destroy())
		if got := r.peek(z, 2); got[0] != 10 || got[1] != 12 {
			t.Errorf("%v: z = %v once the third stream is destroyed, want [10 12]", seed, got)
		}
	}
}

// The streams take turns in an order drawn from the seed: the same for a
// seed, different for some two seeds.
func TestRaceModeOrderComesFromTheSeed(t *testing.T) {
	order := func(seed raceSeed) string {
		r := newRaceRig(t, seed)
		var log []byte
		for i := range 8 {
			for j, s := range []*emuStream{r.a, r.b} {
				must(t, s.queue(func() error { log = append(log, byte('a'+j), byte('0'+i)); return nil }))
			}
		}
		must(t, r.c.flush())
		return string(log)
	}
	seen := map[string]bool{}
	for _, seed := range raceSeeds {
		o := order(seed)
		if again := order(seed); again != o {
			t.Errorf("%v ran %s, then %s", seed, o, again)
		}
		seen[o] = true
	}
	if len(seen) < 2 {
		t.Errorf("%d seeds ran the streams in one order", len(raceSeeds))
	}
	if seen["a0b0a1b1a2b2a3b3a4b4a5b5a6b6a7b7"] && len(seen) == 1 {
		t.Error("race mode ran the streams in turn")
	}
}

// A wait for a record that never comes is still a deadlock.
func TestRaceModeReportsDeadlocks(t *testing.T) {
	r := newRaceRig(t, raceSeed{1, false})
	ev := r.event()
	ev.queued++ // a record that is never queued
	must(t, r.a.wait(ev))
	err := errors.Join(r.a.synchronize(), ev.synchronize())
	if err == nil || !strings.Contains(err.Error(), "deadlock") {
		t.Errorf("a wait for a record that never comes: %v, want a deadlock", err)
	}
}

// sgemm's operands are checked too: its C written on one stream and read
// by a copy on another races.
func TestRaceModeChecksSgemm(t *testing.T) {
	for _, seed := range raceSeeds[:4] {
		r := newRaceRig(t, seed)
		a, b, c := r.buf(1, 2, 3, 4), r.buf(1, 0, 0, 1), r.buf(0, 0, 0, 0)
		h, err := r.c.newBLAS(r.a)
		must(t, err)
		must(t, h.sgemm(false, false, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2))
		host := make([]float32, 4)
		must(t, r.b.copyDtoH(unsafe.Pointer(&host[0]), c, 16))
		err = r.c.flush()
		if err == nil || !strings.Contains(err.Error(), "sgemm (stream 1's work 1) wrote them") {
			t.Errorf("%v: %v, want sgemm's race with the copy", seed, err)
		}
	}
}

// Outside race mode streams run in turn, each as far as it can, and
// waiting for one stream runs them all, as before.
func TestNormalModeRunsEveryStream(t *testing.T) {
	c := &emuContext{allocs: map[devicePtr]*emuAlloc{}, host: map[unsafe.Pointer]bool{}}
	var ss [2]gpuStream
	for i := range ss {
		s, err := c.newStream()
		must(t, err)
		ss[i] = s
	}
	var log []byte
	for i := range 3 {
		for j, s := range ss {
			must(t, s.(*emuStream).queue(func() error { log = append(log, byte('a'+j), byte('0'+i)); return nil }))
		}
	}
	must(t, ss[1].synchronize())
	if got := string(log); got != "a0a1a2b0b1b2" {
		t.Errorf("normal mode ran %s, want a0a1a2b0b1b2", got)
	}
}

// GOKERAS_EMU_RACE=seed puts the package's GPUs in race mode; unset or 0,
// they run in the fixed order.
func TestRaceModeFollowsTheEnvironment(t *testing.T) {
	h := newHarness(t)
	seed, err := emuRaceSetting()
	must(t, err)
	if c := h.g.ctx.(*emuContext); (c.race != nil) != (seed != 0) {
		t.Errorf("%s=%q, %s=%q, but race mode is %t", emuStreamRaceEnv, os.Getenv(emuStreamRaceEnv), emuRaceEnv, os.Getenv(emuRaceEnv), c.race != nil)
	}
	t.Logf("race mode seed: %d", seed)
}

// Without exact traces, a launch's pointer arguments are read or written
// as kernels.cu declares them: every kernel the machine loads is found
// there, with a parameter for each argument it is launched with.
func TestRaceModeReadsKernelSignatures(t *testing.T) {
	params := emuKernelParams()
	for _, name := range kernelNames {
		if _, ok := params[name]; !ok {
			t.Errorf("kernel %s: no signature found in kernels.cu", name)
		}
	}
	want := []emuParam{emuConstParam, emuConstParam, emuPtrParam, emuValueParam}
	if got := params[kAdd]; !slices.Equal(got, want) {
		t.Errorf("gk_add's parameters %v, want %v (a, b read, out written, n)", got, want)
	}
	// gk_add's out, one allocation on from its address, is written; a and
	// b are read.
	r := newRaceRig(t, raceSeed{1, false})
	a, b, out := r.buf(1, 2), r.buf(3, 4), r.buf(0, 0, 0, 0)
	touch, err := r.c.race.launchTouch(kAdd, 1, 32, 0, []uint64{ptrArg(a), ptrArg(b), ptrArg(out + 8), intArg(2)})
	must(t, err)
	wantTouch := emuTouch{
		reads:  []emuRange{{uintptr(a), uintptr(a) + 8}, {uintptr(b), uintptr(b) + 8}},
		writes: []emuRange{{uintptr(out) + 8, uintptr(out) + 16}},
	}
	if !slices.Equal(touch.reads, wantTouch.reads) || !slices.Equal(touch.writes, wantTouch.writes) {
		t.Errorf("gk_add touched %+v, want %+v", touch, wantTouch)
	}
	if got := r.peek(out, 4); got[2] != 4 || got[3] != 6 {
		t.Errorf("gk_add wrote %v, want [0 0 4 6]", got)
	}
}
