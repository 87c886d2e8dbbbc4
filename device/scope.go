package device

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
)

// scopes holds the device scopes opened by With, one stack per goroutine,
// keyed by goroutine id. It is the package's only mutable global state
// besides the driver registry. A goroutine's entry exists only while it is
// inside With: the last pop deletes it, so finished goroutines leave
// nothing behind.
var scopes = struct {
	sync.Mutex
	stacks map[uint64][]Spec
}{stacks: map[uint64][]Spec{}}

// With runs fn with the device named by spec as the device scope of the
// calling goroutine, like TensorFlow's `with tf.device(spec):`. Inside fn,
// Current returns that device, and Resolve places work on it when nothing
// more explicit is asked for. Scopes nest: an inner With wins until it
// returns. The scope is popped when fn returns, and also when fn panics
// (the panic then goes on up the stack).
//
// The scope belongs to the calling goroutine only: goroutines that fn
// starts begin with no scope, as a new thread does in TensorFlow. See the
// package documentation for how to hand a device to a goroutine.
//
// With returns fn's error, or an error wrapping ErrInvalidSpec (without
// calling fn) if spec does not parse. It does not check that the device
// exists; placement does that.
func With(spec string, fn func() error) error {
	s, err := ParseSpec(spec)
	if err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("device: With(%q) called with a nil function", spec)
	}
	gid, err := currentGoroutineID()
	if err != nil {
		return fmt.Errorf("device: With(%q): %w", spec, err)
	}
	pushScope(gid, s)
	defer popScope(gid)
	return fn()
}

// Current returns the innermost device scope of the calling goroutine, and
// false if the goroutine is not inside With.
func Current() (Spec, bool) {
	gid, err := currentGoroutineID()
	if err != nil {
		return Spec{}, false // With could not have pushed a scope either
	}
	scopes.Lock()
	defer scopes.Unlock()
	stack := scopes.stacks[gid]
	if len(stack) == 0 {
		return Spec{}, false
	}
	return stack[len(stack)-1], true
}

func pushScope(gid uint64, s Spec) {
	scopes.Lock()
	defer scopes.Unlock()
	scopes.stacks[gid] = append(scopes.stacks[gid], s)
}

func popScope(gid uint64) {
	scopes.Lock()
	defer scopes.Unlock()
	stack := scopes.stacks[gid]
	if len(stack) <= 1 {
		delete(scopes.stacks, gid)
		return
	}
	scopes.stacks[gid] = stack[:len(stack)-1]
}

// openScopes reports how many goroutines are inside With (for tests).
func openScopes() int {
	scopes.Lock()
	defer scopes.Unlock()
	return len(scopes.stacks)
}

// currentGoroutineID returns the id of the calling goroutine, read from the
// header of its stack trace. Ids are never reused while a process runs.
// The runtime has begun traces with "goroutine N [" since Go 1.0; should
// that change, the error makes With fail instead of mixing goroutines'
// scopes.
func currentGoroutineID() (uint64, error) {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	return parseGoroutineID(buf[:n])
}

// parseGoroutineID reads N from a stack trace that starts "goroutine N [".
func parseGoroutineID(trace []byte) (uint64, error) {
	const prefix = "goroutine "
	rest, ok := bytes.CutPrefix(trace, []byte(prefix))
	if !ok {
		return 0, fmt.Errorf("device: stack trace %q does not start with %q", clip(trace), prefix)
	}
	digits, _, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return 0, fmt.Errorf("device: stack trace %q has no space after the goroutine id", clip(trace))
	}
	id, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("device: goroutine id in stack trace %q: %w", clip(trace), err)
	}
	return id, nil
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

type contextKey struct{}

// NewContext returns a copy of ctx that carries s, the way to hand a device
// to code that runs in other goroutines (a scope set by With does not
// cross goroutines; a context does).
func NewContext(ctx context.Context, s Spec) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, contextKey{}, s)
}

// FromContext returns the device NewContext stored in ctx, and false if
// there is none.
func FromContext(ctx context.Context) (Spec, bool) {
	if ctx == nil {
		return Spec{}, false
	}
	s, ok := ctx.Value(contextKey{}).(Spec)
	return s, ok
}
