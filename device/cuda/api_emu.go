//go:build cudavm && cgo && kernelemu

package cuda

// #include <stdlib.h>
// #include <string.h>
import "C"

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/device/cuda/kernels/emu"
	"github.com/gokeras/gokeras/device/driver"
)

// Built with the tag kernelemu, the package's GPUs are emulated on the
// host: the same machine, buffers and launches, with device memory in C
// memory, kernels.cu compiled for the host (package kernels/emu) and
// cuBLAS's sgemm computed column-major with package blas. Nothing of CUDA
// is loaded. The emulation is strict where the backend could go wrong
// unseen on a GPU:
//
//   - device memory starts as NaNs (0xFF bytes), as uninitialised memory
//     that happens to hold garbage would;
//   - every copy, memset and sgemm operand must lie inside one
//     allocation, and each allocation is followed by guard bytes that are
//     checked whenever the GPU is waited for, so a kernel that writes past
//     its buffer is an error naming the allocation;
//   - a stream's work runs when the stream is waited for (synchronize, or
//     a synchronous copy or free, which wait for every stream, as streams
//     created blocking do), not when it is queued, so host memory read by
//     an asynchronous copy must stay untouched until then, as on a GPU,
//     and a stream's work after a wait for an event runs after the work
//     before the event's record, on whichever stream (streams that wait
//     for each other for ever are an error);
//   - a launch needs the kernel's exact count of arguments, a block of 1
//     to 1024 threads and at most 48 KiB of shared memory.
//
// GOKERAS_EMU_GPUS sets how many GPUs there are (1 by default).
//
// GOKERAS_EMU_RACE=seed (a nonzero number) turns on race mode
// (race_emu.go): the streams' work runs in an order drawn at random from
// the seed, a wait for a stream or an event runs only the work it depends
// on, and a piece of work that touches device memory another stream
// wrote (or read, when it writes) with no event ordering the two is an
// error of the wait that runs it, naming both. Unset or 0, the emulator
// runs as described above, in the fixed order. GOKERAS_EMU_RACE turns on
// package emu's race mode for the kernels too (slow);
// GOKERAS_EMU_STREAM_RACE=seed turns on the streams' alone.

// emuGPUMemory is each emulated GPU's memory: counted, not reserved.
const emuGPUMemory = 16 << 30

// emuGuard is the guard after each allocation, and the alignment of
// allocations (cuMemAlloc aligns to 256 bytes too).
const emuGuard = 256

const emuGuardByte = 0xA5

// emulatedGPU says whether cudaAPI is the emulated GPU.
const emulatedGPU = true

var cudaAPI gpuAPI = &emuAPI{contexts: map[int]*emuContext{}}

type emuAPI struct {
	mu       sync.Mutex
	contexts map[int]*emuContext
}

func (*emuAPI) numDevices() (int, error) {
	v := os.Getenv("GOKERAS_EMU_GPUS")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("GOKERAS_EMU_GPUS=%q: want the number of emulated GPUs", v)
	}
	return n, nil
}

func (a *emuAPI) describe(i int) (driver.PhysicalDevice, error) {
	n, err := a.numDevices()
	if err != nil {
		return driver.PhysicalDevice{}, err
	}
	if i < 0 || i >= n {
		return driver.PhysicalDevice{}, fmt.Errorf("CUDA device %d: invalid device ordinal (%d emulated GPUs)", i, n)
	}
	return driver.PhysicalDevice{
		Name:              fmt.Sprintf("/physical_device:GPU:%d", i),
		Kind:              driver.GPU,
		Index:             i,
		Description:       "gokeras emulated GPU (host)",
		MemoryBytes:       emuGPUMemory,
		ComputeCapability: [2]int{9, 0},
	}, nil
}

func (a *emuAPI) retain(i int) (gpuContext, error) {
	if _, err := a.describe(i); err != nil {
		return nil, err
	}
	seed, err := emuRaceSetting()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.contexts[i]
	if !ok {
		c = &emuContext{index: i, allocs: map[devicePtr]*emuAlloc{}, host: map[unsafe.Pointer]bool{}}
		if seed != 0 {
			// Exact traces cost what emu's race mode costs anyway.
			c.race = newEmuRace(seed, i, emu.RaceSeed() != 0)
		}
		a.contexts[i] = c
	}
	return c, nil
}

// emuContext is one emulated GPU: its memory and its streams. One lock
// serialises everything on it, as the GPU serialises its streams' work
// here.
type emuContext struct {
	index   int
	mu      sync.Mutex
	allocs  map[devicePtr]*emuAlloc
	used    int64
	host    map[unsafe.Pointer]bool // pinned host memory
	streams []*emuStream
	race    *emuRace // race mode, else nil
}

// emuAlloc is one allocation of device memory.
type emuAlloc struct {
	base  unsafe.Pointer // C memory: bytes, then emuGuard guard bytes
	bytes int64
	// shadow is, in race mode, the accesses of the streams' work to the
	// allocation that later work may race with.
	shadow []emuAccess
}

func (e *emuAlloc) addr() devicePtr { return devicePtr(uintptr(e.base)) }

// do runs f: the emulator needs no current context.
func (c *emuContext) do(f func() error) error { return f() }

func (c *emuContext) memAlloc(bytes int64) (devicePtr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes <= 0 {
		return 0, fmt.Errorf("cuMemAlloc of %d bytes: CUDA_ERROR_INVALID_VALUE", bytes)
	}
	if c.used+bytes > emuGPUMemory {
		return 0, fmt.Errorf("%w: cuMemAlloc of %d bytes with %d of %d in use (emulated)", errDeviceFull, bytes, c.used, int64(emuGPUMemory))
	}
	size := (bytes + 2*emuGuard - 1) / emuGuard * emuGuard
	p := C.aligned_alloc(emuGuard, C.size_t(size))
	if p == nil {
		return 0, fmt.Errorf("%w: the host has no %d bytes for the emulated GPU", errDeviceFull, size)
	}
	C.memset(p, 0xFF, C.size_t(bytes))
	C.memset(unsafe.Add(p, bytes), emuGuardByte, C.size_t(size-bytes))
	a := &emuAlloc{base: p, bytes: bytes}
	c.allocs[a.addr()] = a
	if c.race != nil {
		c.race.raceAlloc(a)
	}
	c.used += bytes
	return a.addr(), nil
}

func (c *emuContext) memInfo() (free, total int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return emuGPUMemory - c.used, emuGPUMemory, nil
}

// memFree waits for every stream first, as cuMemFree does.
func (c *emuContext) memFree(p devicePtr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.flush(); err != nil {
		return err
	}
	a, ok := c.allocs[p]
	if !ok {
		return fmt.Errorf("cuMemFree of %#x, which is not an allocation of /GPU:%d: CUDA_ERROR_INVALID_VALUE", uintptr(p), c.index)
	}
	if err := a.guardIntact(); err != nil {
		return err
	}
	delete(c.allocs, p)
	if c.race != nil {
		c.race.raceFree(a)
	}
	c.used -= a.bytes
	C.free(a.base)
	return nil
}

// guardIntact checks the guard bytes after the allocation.
func (a *emuAlloc) guardIntact() error {
	g := unsafe.Slice((*byte)(unsafe.Add(a.base, a.bytes)), emuGuard)
	if i := slices.IndexFunc(g, func(b byte) bool { return b != emuGuardByte }); i >= 0 {
		return fmt.Errorf("emulated GPU: memory past the end of the %d-byte allocation at %#x was written (byte %d after it): a kernel or copy overran its buffer",
			a.bytes, uintptr(a.base), i)
	}
	return nil
}

// span returns the host address of bytes of device memory at p, which
// must lie inside one allocation.
func (c *emuContext) span(what string, p devicePtr, bytes int64) (unsafe.Pointer, error) {
	for _, a := range c.allocs {
		if p >= a.addr() && p < a.addr()+devicePtr(a.bytes) {
			off := int64(p - a.addr())
			if off+bytes > a.bytes {
				return nil, fmt.Errorf("emulated GPU: %s of %d bytes at %#x runs %d bytes past the end of its %d-byte allocation",
					what, bytes, uintptr(p), off+bytes-a.bytes, a.bytes)
			}
			return unsafe.Add(a.base, off), nil
		}
	}
	return nil, fmt.Errorf("emulated GPU: %s of %d bytes at %#x, which is not in device memory of /GPU:%d", what, bytes, uintptr(p), c.index)
}

// flush runs the work queued on every stream, then checks every
// allocation's guard: what a GPU has done once it is waited for. Each
// stream runs in order up to a wait for an event not yet reached, and the
// streams take turns (in the order they were created) until none has work
// left; streams that wait for each other for ever are an error. c.mu is
// held. In race mode the order is drawn at random (raceFlush).
func (c *emuContext) flush() error {
	if c.race != nil {
		return c.raceFlush()
	}
	var errs []error
	for {
		progress, pending := false, false
		for _, s := range c.streams {
			n, err := s.runReady()
			if err != nil {
				errs = append(errs, err)
				s.work = nil // what follows a failed launch does not run
			}
			progress = progress || n > 0
			pending = pending || len(s.work) > 0
		}
		if !pending {
			break
		}
		if !progress {
			errs = append(errs, errors.New("emulated GPU: streams wait for events that no queued work records: a deadlock"))
			for _, s := range c.streams {
				s.work = nil
			}
			break
		}
	}
	for _, a := range c.allocs {
		errs = append(errs, a.guardIntact())
	}
	return errors.Join(errs...)
}

func (c *emuContext) copyHtoD(dst devicePtr, src unsafe.Pointer, bytes int64) error {
	emuCalls.hostCopies.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	d, err := c.waitAndSpan("cuMemcpyHtoD", dst, bytes)
	if err == nil {
		C.memcpy(d, src, C.size_t(bytes))
	}
	return err
}

func (c *emuContext) copyDtoH(dst unsafe.Pointer, src devicePtr, bytes int64) error {
	emuCalls.hostCopies.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.waitAndSpan("cuMemcpyDtoH", src, bytes)
	if err == nil {
		C.memcpy(dst, s, C.size_t(bytes))
	}
	return err
}

// waitAndSpan waits for every stream, as a synchronous copy does, and
// returns the host address of bytes of device memory at p; c.mu is held.
func (c *emuContext) waitAndSpan(what string, p devicePtr, bytes int64) (unsafe.Pointer, error) {
	if err := c.flush(); err != nil {
		return nil, err
	}
	return c.span(what, p, bytes)
}

func (c *emuContext) copyDtoD(dst, src devicePtr, bytes int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.flush(); err != nil {
		return err
	}
	return copySpans("cuMemcpyDtoD", c, dst, c, src, bytes)
}

// copySpans copies bytes of device memory from src, on from, to dst, on
// to; the contexts' locks are held and their streams flushed.
func copySpans(what string, to *emuContext, dst devicePtr, from *emuContext, src devicePtr, bytes int64) error {
	d, err := to.span(what+" destination", dst, bytes)
	if err != nil {
		return err
	}
	s, err := from.span(what+" source", src, bytes)
	if err != nil {
		return err
	}
	C.memmove(d, s, C.size_t(bytes))
	return nil
}

func (c *emuContext) copyPeer(dst devicePtr, from gpuContext, src devicePtr, bytes int64) error {
	f, ok := from.(*emuContext)
	if !ok || f == c {
		return fmt.Errorf("emulated GPU: a peer copy from %T", from)
	}
	// Two locks in a fixed order.
	first, second := c, f
	if f.index < c.index {
		first, second = f, c
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()
	if err := errors.Join(c.flush(), f.flush()); err != nil {
		return err
	}
	return copySpans("cuMemcpyPeer", c, dst, f, src, bytes)
}

func (c *emuContext) hostAlloc(bytes int64) (unsafe.Pointer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := C.malloc(C.size_t(bytes))
	if p == nil {
		return nil, fmt.Errorf("cuMemAllocHost of %d bytes: out of host memory", bytes)
	}
	C.memset(p, 0xFF, C.size_t(bytes))
	c.host[p] = true
	return p, nil
}

func (c *emuContext) hostFree(p unsafe.Pointer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.host[p] {
		return fmt.Errorf("cuMemFreeHost of %p, which cuMemAllocHost did not return", p)
	}
	delete(c.host, p)
	C.free(p)
	return nil
}

func (c *emuContext) newStream() (gpuStream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &emuStream{ctx: c}
	if c.race != nil {
		c.race.ids++
		s.id = c.race.ids
	}
	c.streams = append(c.streams, s)
	return s, nil
}

// emuCalls counts the work given to the emulated GPUs since the program
// started: kernel launches, cuBLAS products and copies between the host
// and a device (synchronous or queued), so that tests can count what a
// step asks of a GPU.
var emuCalls struct{ launches, products, hostCopies atomic.Int64 }

// emuModule launches the kernels of kernels.cu compiled for the host.
type emuModule struct{ names map[string]bool }

func (c *emuContext) loadModule(_ string, names []string) (gpuModule, error) {
	m := emuModule{names: map[string]bool{}}
	for _, n := range names {
		m.names[n] = true
	}
	return m, nil
}

// emuSharedLimit is the dynamic shared memory a launch may ask for
// without opting in to more, on every GPU since Volta (sm_70).
const emuSharedLimit = 48 << 10

func (m emuModule) launch(s gpuStream, name string, grid, block, shared int, args []uint64) error {
	if !m.names[name] {
		return fmt.Errorf("kernel %s was not loaded", name)
	}
	es, ok := s.(*emuStream)
	if !ok {
		return fmt.Errorf("launching %s on a %T", name, s)
	}
	if grid < 1 || grid > 1<<31-1 || block < 1 || block > 1024 {
		return fmt.Errorf("a grid of %d blocks of %d threads: CUDA_ERROR_INVALID_VALUE", grid, block)
	}
	if shared < 0 || shared > emuSharedLimit {
		return fmt.Errorf("%d bytes of dynamic shared memory, more than %d: CUDA_ERROR_INVALID_VALUE", shared, emuSharedLimit)
	}
	args = slices.Clone(args)
	emuCalls.launches.Add(1)
	if es.ctx.race != nil {
		var t emuTouch
		return es.add(emuWork{op: name, traced: &t, f: func() error {
			var err error
			t, err = es.ctx.race.launchTouch(name, grid, block, shared, args)
			return err
		}})
	}
	return es.queue(func() error { return emu.LaunchKernel(name, grid, block, shared, args) })
}

// emuStream is a stream's queued work, run when it is waited for.
type emuStream struct {
	ctx       *emuContext
	work      []emuWork
	destroyed bool
	// In race mode: the stream's index in the clocks (1 on, in the order
	// the streams were created), how many pieces of work were queued on it,
	// the clock of the latest, and the host clock's generation it has
	// joined.
	id      int
	seq     uint64
	clk     emuClock
	hostGen int
}

// emuWork is a stream's next piece of work: f, or when ev is not nil a
// wait until ev's record number target has run.
type emuWork struct {
	f      func() error
	ev     *emuEvent
	target int
	// recEv and recN are, for the record of an event, the event and the
	// record's number.
	recEv *emuEvent
	recN  int
	// In race mode: the work's number on its stream (its epoch) and its
	// clock, what it is (for reports) and the device memory it touches,
	// known when queued (touch) or once run (traced, when not nil).
	seq    uint64
	clk    emuClock
	op     string
	touch  emuTouch
	traced *emuTouch
}

// emuEvent counts its records: queued when record is called, done when
// the stream reaches it.
type emuEvent struct {
	ctx          *emuContext
	queued, done int
	// In race mode: the clock of the latest record, and where the records
	// not yet run are queued, by number.
	snap emuClock
	recs map[int]emuRecAt
}

func (*emuEvent) destroy() error { return nil }

func (c *emuContext) newEvent() (gpuEvent, error) { return &emuEvent{ctx: c}, nil }

// synchronize runs the streams' work, one piece at a time and taking
// turns, only until the event's latest record is reached: the work
// queued after it stays queued, as it may still be on a GPU, so that a
// host that changes what that work reads too early gets wrong results
// here too. Then it checks the guards.
func (e *emuEvent) synchronize() error {
	c := e.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.race != nil {
		return e.raceSync()
	}
	target := e.queued
	var errs []error
	for e.done < target {
		progress := false
		for _, s := range c.streams {
			ran, err := s.runOne()
			if err != nil {
				errs = append(errs, err)
				s.work = nil
			}
			progress = progress || ran
		}
		if !progress {
			errs = append(errs, errors.New("emulated GPU: an event waited for is never reached: a deadlock"))
			break
		}
	}
	for _, a := range c.allocs {
		errs = append(errs, a.guardIntact())
	}
	return errors.Join(errs...)
}

// queue adds f to the stream's work.
func (s *emuStream) queue(f func() error) error { return s.add(emuWork{f: f}) }

// queueTouching adds f, op, which touches t, to the stream's work.
func (s *emuStream) queueTouching(op string, t emuTouch, f func() error) error {
	return s.add(emuWork{f: f, op: op, touch: t})
}

func (s *emuStream) add(w emuWork) error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	return s.addLocked(w)
}

// addLocked adds w to the stream's work; c.mu is held.
func (s *emuStream) addLocked(w emuWork) error {
	if s.destroyed {
		return errors.New("emulated GPU: work queued on a destroyed stream")
	}
	if s.ctx.race != nil {
		s.ctx.race.stamp(s, &w)
	}
	s.work = append(s.work, w)
	return nil
}

// runReady does the queued work in order up to a wait that cannot pass
// yet, and returns how many pieces it did; it stops at the first error.
// c.mu is held.
func (s *emuStream) runReady() (int, error) {
	n := 0
	for {
		ran, err := s.runOne()
		if ran {
			n++
		}
		if !ran || err != nil {
			return n, err
		}
	}
}

// runOne does the stream's next piece of work if it can run, and says
// whether it did. c.mu is held.
func (s *emuStream) runOne() (bool, error) {
	if len(s.work) == 0 {
		return false, nil
	}
	w := s.work[0]
	if w.ev != nil && w.ev.done < w.target {
		return false, nil
	}
	s.work = s.work[1:]
	if w.f != nil {
		return true, w.f()
	}
	return true, nil
}

func (s *emuStream) record(e gpuEvent) error {
	ev, ok := e.(*emuEvent)
	if !ok {
		return fmt.Errorf("recording a %T", e)
	}
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	ev.queued++
	target := ev.queued
	return s.addLocked(emuWork{recEv: ev, recN: target, f: func() error { ev.done = max(ev.done, target); return nil }})
}

func (s *emuStream) wait(e gpuEvent) error {
	ev, ok := e.(*emuEvent)
	if !ok {
		return fmt.Errorf("waiting for a %T", e)
	}
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	return s.addLocked(emuWork{ev: ev, target: ev.queued})
}

func (s *emuStream) copyHtoD(dst devicePtr, src unsafe.Pointer, bytes int64) error {
	emuCalls.hostCopies.Add(1)
	var t emuTouch
	if s.ctx.race != nil { // what the race mode checks
		t.write(dst, bytes)
	}
	return s.queueTouching("cuMemcpyHtoDAsync", t, func() error {
		d, err := s.ctx.span("cuMemcpyHtoDAsync", dst, bytes)
		if err != nil {
			return err
		}
		C.memcpy(d, src, C.size_t(bytes))
		return nil
	})
}

func (s *emuStream) copyDtoH(dst unsafe.Pointer, src devicePtr, bytes int64) error {
	emuCalls.hostCopies.Add(1)
	var t emuTouch
	if s.ctx.race != nil { // what the race mode checks
		t.read(src, bytes)
	}
	return s.queueTouching("cuMemcpyDtoHAsync", t, func() error {
		p, err := s.ctx.span("cuMemcpyDtoHAsync", src, bytes)
		if err != nil {
			return err
		}
		C.memcpy(dst, p, C.size_t(bytes))
		return nil
	})
}

func (s *emuStream) memsetD32(p devicePtr, v uint32, n int64) error {
	var t emuTouch
	if s.ctx.race != nil { // what the race mode checks
		t.write(p, n*4)
	}
	return s.queueTouching("cuMemsetD32Async", t, func() error {
		d, err := s.ctx.span("cuMemsetD32Async", p, n*4)
		if err != nil {
			return err
		}
		w := unsafe.Slice((*uint32)(d), n)
		for i := range w {
			w[i] = v
		}
		return nil
	})
}

// allReduce queues the reducer's host all-reduce (AllReduceSum), run
// when the stream is waited for: the emulated device memory is the
// host's, and there is no NCCL to call.
func (s *emuStream) allReduce(r driver.DeviceAllReducer, p devicePtr, n int) error {
	var t emuTouch
	if s.ctx.race != nil { // what the race mode checks
		t.read(p, int64(n)*4)
		t.write(p, int64(n)*4)
	}
	return s.queueTouching("the all-reduce", t, func() error {
		h, err := s.ctx.span("the all-reduce", p, int64(n)*4)
		if err != nil {
			return err
		}
		return r.AllReduceSum(unsafe.Slice((*float32)(h), n))
	})
}

// synchronize runs every stream's work, as the GPU would have by the
// time this stream is done; in race mode, only the work this stream's
// depends on.
func (s *emuStream) synchronize() error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	if s.ctx.race != nil {
		return s.ctx.raceSync(s, true)
	}
	return s.ctx.flush()
}

// destroy runs the stream's work first (in race mode, only with what it
// depends on: cuStreamDestroy does not wait, but the work still runs).
func (s *emuStream) destroy() error {
	s.ctx.mu.Lock()
	defer s.ctx.mu.Unlock()
	var err error
	if s.ctx.race != nil {
		err = s.ctx.raceSync(s, false)
	} else {
		err = s.ctx.flush()
	}
	s.destroyed = true
	s.ctx.streams = slices.DeleteFunc(s.ctx.streams, func(t *emuStream) bool { return t == s })
	return err
}

// emuBLAS is a cuBLAS handle: sgemm with cuBLAS's column-major arguments.
type emuBLAS struct{ s *emuStream }

func (c *emuContext) newBLAS(s gpuStream) (gpuBLAS, error) {
	es, ok := s.(*emuStream)
	if !ok {
		return nil, fmt.Errorf("a cuBLAS handle on a %T", s)
	}
	return &emuBLAS{es}, nil
}

func (*emuBLAS) close() error { return nil }

// sgemm checks the arguments as cublasSgemm does (CUBLAS_STATUS_INVALID_VALUE)
// and queues the product: column-major C (m×n, ldc) is, read row-major,
// Cᵀ, and Cᵀ = op(B)ᵀ·op(A)ᵀ, where op(A)ᵀ is A's storage read row-major,
// transposed when transA; so package blas's row-major sgemm computes it
// with the operands swapped.
func (h *emuBLAS) sgemm(transA, transB bool, m, n, k int, alpha float32, a devicePtr, lda int, b devicePtr, ldb int,
	beta float32, c devicePtr, ldc int) error {
	if err := sgemmArgsValid(transA, transB, m, n, k, lda, ldb, ldc); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	emuCalls.products.Add(1)
	var t emuTouch
	if h.s.ctx.race != nil {
		t = sgemmTouch(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	return h.s.queueTouching("sgemm", t, func() error {
		ctx := h.s.ctx
		cm, err := floats(ctx, "sgemm's C", c, colMajorSpan(m, n, ldc))
		if err != nil {
			return err
		}
		if k == 0 || alpha == 0 {
			for j := range n {
				col := cm[j*ldc : j*ldc+m]
				for i := range col {
					if beta == 0 {
						col[i] = 0 // NaNs too, as cuBLAS does
					} else {
						col[i] *= beta
					}
				}
			}
			return nil
		}
		aRows, aCols := m, k // A as stored, column-major
		if transA {
			aRows, aCols = k, m
		}
		bRows, bCols := k, n
		if transB {
			bRows, bCols = n, k
		}
		am, err := floats(ctx, "sgemm's A", a, colMajorSpan(aRows, aCols, lda))
		if err != nil {
			return err
		}
		bm, err := floats(ctx, "sgemm's B", b, colMajorSpan(bRows, bCols, ldb))
		if err != nil {
			return err
		}
		return blas.Default().Sgemm(transB, transA, n, m, k, alpha, bm, ldb, am, lda, beta, cm, ldc)
	})
}

// sgemmTouch is the device memory an sgemm touches: its operands' spans,
// A and B read unless the product is skipped (k or alpha 0), C read too
// unless beta is 0.
func sgemmTouch(transA, transB bool, m, n, k int, alpha float32, a devicePtr, lda int, b devicePtr, ldb int,
	beta float32, c devicePtr, ldc int) emuTouch {
	var t emuTouch
	cBytes := int64(colMajorSpan(m, n, ldc)) * 4
	if k != 0 && alpha != 0 {
		aRows, aCols := m, k
		if transA {
			aRows, aCols = k, m
		}
		bRows, bCols := k, n
		if transB {
			bRows, bCols = n, k
		}
		t.read(a, int64(colMajorSpan(aRows, aCols, lda))*4)
		t.read(b, int64(colMajorSpan(bRows, bCols, ldb))*4)
	}
	if beta != 0 {
		t.read(c, cBytes)
	}
	t.write(c, cBytes)
	return t
}

// sgemmArgsValid is cublasSgemm's check of its sizes.
func sgemmArgsValid(transA, transB bool, m, n, k, lda, ldb, ldc int) error {
	aRows, bRows := m, k
	if transA {
		aRows = k
	}
	if transB {
		bRows = n
	}
	if m < 0 || n < 0 || k < 0 || lda < max(1, aRows) || ldb < max(1, bRows) || ldc < max(1, m) {
		return fmt.Errorf("cuBLAS status 7 (CUBLAS_STATUS_INVALID_VALUE): m=%d n=%d k=%d lda=%d ldb=%d ldc=%d transA=%t transB=%t",
			m, n, k, lda, ldb, ldc, transA, transB)
	}
	return nil
}

// colMajorSpan is the float32s a column-major rows×cols matrix with
// leading dimension ld covers.
func colMajorSpan(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (cols-1)*ld + rows
}

// floats views n float32s of device memory at p as a Go slice.
func floats(c *emuContext, what string, p devicePtr, n int) ([]float32, error) {
	if n == 0 {
		return nil, nil
	}
	h, err := c.span(what, p, int64(n)*4)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(h), n), nil
}
