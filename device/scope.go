package device

import (
	"context"
	"fmt"
)

// With runs fn inside a device scope, like TensorFlow's
// `with tf.device(spec):`. It calls fn with a context derived from ctx
// whose innermost scope is the device spec names; inside fn,
// FromContext(ctx) returns that device, and Resolve(ctx, nil, opts) and
// nn's CompileContext place work on it when nothing more explicit is asked
// for. Scopes nest: a With inside fn, given fn's context, wins within its
// own function.
//
// The scope lives in the context only, so it goes wherever the context is
// passed, to any goroutine, and ends with fn: code holding ctx itself, or
// a context not derived from fn's, never sees it. A nil ctx means
// context.Background().
//
// With returns fn's error. If spec does not parse it returns an error
// wrapping ErrInvalidSpec without calling fn, and a nil fn is an error. It
// does not check that the device exists; Resolve does.
func With(ctx context.Context, spec string, fn func(ctx context.Context) error) error {
	s, err := ParseSpec(spec)
	if err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("device: With(ctx, %q, fn) was given a nil fn: pass the function to run inside the scope", spec)
	}
	return fn(NewContext(ctx, s))
}

// contextKey is the key under which NewContext stores a Spec. Being an
// unexported type, it cannot collide with another package's keys.
type contextKey struct{}

// NewContext returns a copy of ctx whose innermost device scope is s, as
// With does for fn. Use it to set a scope for code that takes a context
// without wrapping that code in a function. A nil ctx means
// context.Background().
func NewContext(ctx context.Context, s Spec) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, contextKey{}, s)
}

// FromContext returns the innermost device scope carried by ctx, set by
// With or NewContext, and false if ctx carries none (or is nil).
func FromContext(ctx context.Context) (Spec, bool) {
	if ctx == nil {
		return Spec{}, false
	}
	s, ok := ctx.Value(contextKey{}).(Spec)
	return s, ok
}
