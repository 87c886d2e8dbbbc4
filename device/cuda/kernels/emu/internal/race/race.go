//go:build kernelemu && cgo

// Package race is the race copy of the CUDA kernels for package emu:
// kernels.cu compiled with GCC's ThreadSanitizer instrumentation
// (-fsanitize=thread, without its library), whose calls at every load,
// store and atomic operation its own runtime (runtime.c) answers: it
// switches between the CUDA threads of a block at random accesses, detects
// two threads of a block (or two blocks of a launch) that touch a word
// without a barrier between them, one of them writing, and records the
// global memory a launch reads and writes. It is a package of its own
// because cgo's flags are a package's: emu's copy of the kernels stays
// uninstrumented, and as fast as before. Package emu is its API.
package race

// #cgo CXXFLAGS: -std=c++20 -O1 -Wno-sign-compare -fsanitize=thread
// #cgo LDFLAGS: -lstdc++ -lpthread
// #include <stdint.h>
// #include <stdlib.h>
// typedef struct { uintptr_t lo, hi; } emu_race_range;
// typedef struct { const emu_race_range *reads, *writes; size_t nreads, nwrites; } emu_race_trace;
// int emu_race_launch(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args, uint64_t seed, int detect, int trace, char *report, size_t report_len);
// int emu_race_direct(const char *name, int grid, int block, int shared, int nargs, const uint64_t *args, uint64_t seed, char *report, size_t report_len);
// emu_race_trace emu_race_traced(void);
// void emu_race_lock(void);
// void emu_race_unlock(void);
import "C"

import "unsafe"

// Range is [Lo, Hi) of host addresses.
type Range struct{ Lo, Hi uintptr }

// Result is what a launch gave: Code is emu.cc's emu_launch's (0, -1 no
// such kernel, -2 a wrong count of arguments, -3 shared memory written
// past the launch's bytes) or -4, a race, which Report describes. Reads
// and Writes are the global memory the launch read and wrote, sorted and
// merged, when it was traced.
type Result struct {
	Code          int
	Report        string
	Reads, Writes []Range
}

// Launch runs kernel name of the race copy over grid blocks of block
// threads, as emu.LaunchKernel does. seed 0 runs the CUDA threads in emu's
// fixed order; another seed switches them at random accesses and runs the
// blocks in a random order. detect looks for races; trace records the
// global memory read and written.
func Launch(name string, grid, block, shared int, args []uint64, seed uint64, detect, trace bool) Result {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var a *C.uint64_t
	if len(args) > 0 {
		a = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	var report [512]C.char
	C.emu_race_lock()
	defer C.emu_race_unlock()
	code := C.emu_race_launch(cname, C.int(grid), C.int(block), C.int(shared), C.int(len(args)), a, C.uint64_t(seed),
		cbool(detect), cbool(trace), &report[0], C.size_t(len(report)))
	r := Result{Code: int(code)}
	if code == -4 {
		r.Report = C.GoString(&report[0])
	}
	if trace && code != -1 && code != -2 { // the kernel ran
		t := C.emu_race_traced()
		r.Reads = ranges(t.reads, t.nreads)
		r.Writes = ranges(t.writes, t.nwrites)
	}
	return r
}

func ranges(p *C.emu_race_range, n C.size_t) []Range {
	if n == 0 {
		return nil
	}
	rs := make([]Range, n)
	for i, r := range unsafe.Slice(p, n) {
		rs[i] = Range{uintptr(r.lo), uintptr(r.hi)}
	}
	return rs
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Direct is the C function emu.cc's typed launchers call in race mode:
// int emu_race_direct(const char *name, int grid, int block, int shared,
// int nargs, const uint64_t *args, uint64_t seed, char *report, size_t
// report_len).
func Direct() unsafe.Pointer { return unsafe.Pointer(C.emu_race_direct) }
