//go:build (linux || darwin || freebsd) && (amd64 || arm64)

// Package dynlib opens shared libraries at run time (purego's dlopen)
// the one way gokeras does: with the goroutine kept on one OS thread
// between dlopen and dlerror. dlerror is per thread; purego makes the two
// calls one after the other, and a goroutine moved to another thread in
// between reads that thread's dlerror, an empty message: a missing
// library then failed with "cannot load libx.so: " and no cause, now and
// then (seen in CI).
package dynlib

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// Open loads the library at path (a path, or a name the dynamic loader
// searches for) with dlopen's mode, as purego.Dlopen does, and returns
// its handle or dlerror's message for this call.
func Open(path string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, mode)
}
