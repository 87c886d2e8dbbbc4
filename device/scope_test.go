package device

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// mustSpec parses s or fails the test.
func mustSpec(t testing.TB, s string) Spec {
	t.Helper()
	spec, err := ParseSpec(s)
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", s, err)
	}
	return spec
}

// scopeOf is FromContext as a string: the short name, or "none".
func scopeOf(ctx context.Context) string {
	if s, ok := FromContext(ctx); ok {
		return s.Short()
	}
	return "none"
}

func TestWithNests(t *testing.T) {
	var seen []string
	record := func(ctx context.Context) { seen = append(seen, scopeOf(ctx)) }

	outside := context.Background()
	record(outside)
	err := With(outside, "/CPU:0", func(ctx context.Context) error {
		record(ctx)
		if err := With(ctx, "/device:GPU:1", func(ctx context.Context) error {
			record(ctx)
			return With(ctx, "gpu", func(ctx context.Context) error { record(ctx); return nil })
		}); err != nil {
			return err
		}
		record(ctx) // the inner scopes were in derived contexts: ctx still says /CPU:0
		return nil
	})
	if err != nil {
		t.Fatalf("With: %v", err)
	}
	record(outside)

	want := []string{"none", "/CPU:0", "/GPU:1", "/GPU:0", "/CPU:0", "none"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("scopes seen = %v, want %v", seen, want)
	}
}

func TestWithAndNewContextNest(t *testing.T) {
	tests := []struct {
		name   string
		outer  func(context.Context) context.Context // sets the outer scope
		inner  string                                // With's spec inside it
		outerW string                                // scope of the outer context
	}{
		{"NewContext then With",
			func(ctx context.Context) context.Context { return NewContext(ctx, NewSpec(GPU, 2)) },
			"/CPU:0", "/GPU:2"},
		{"no scope then With",
			func(ctx context.Context) context.Context { return ctx },
			"/GPU:3", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.outer(context.Background())
			if got := scopeOf(ctx); got != tt.outerW {
				t.Fatalf("outer scope = %s, want %s", got, tt.outerW)
			}
			err := With(ctx, tt.inner, func(inner context.Context) error {
				if got := scopeOf(inner); got != mustSpec(t, tt.inner).Short() {
					return fmt.Errorf("inside With(%q) the scope is %s", tt.inner, got)
				}
				// NewContext inside With wins over With, as any inner scope does.
				if got := scopeOf(NewContext(inner, NewSpec(GPU, 7))); got != "/GPU:7" {
					return fmt.Errorf("NewContext inside With gives scope %s, want /GPU:7", got)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			if got := scopeOf(ctx); got != tt.outerW {
				t.Errorf("outer scope after With = %s, want %s", got, tt.outerW)
			}
		})
	}
}

func TestWithReturnsFnError(t *testing.T) {
	sentinel := errors.New("step failed")
	err := With(context.Background(), "/CPU:0", func(context.Context) error { return fmt.Errorf("wrapped: %w", sentinel) })
	if !errors.Is(err, sentinel) {
		t.Errorf("With returned %v, want fn's error", err)
	}
}

func TestWithRejectsBadSpecWithoutCallingFn(t *testing.T) {
	for _, spec := range []string{"/TPU:0", "", "/GPU:x", "/GPU:-1", "/job:worker/device:GPU:0", "/CPU:0/GPU:0"} {
		t.Run(spec, func(t *testing.T) {
			called := false
			err := With(context.Background(), spec, func(context.Context) error { called = true; return nil })
			if !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("With(%q) = %v, want an error wrapping ErrInvalidSpec", spec, err)
			}
			if called {
				t.Errorf("With(%q) called fn despite the bad spec", spec)
			}
		})
	}
}

func TestWithNilFn(t *testing.T) {
	err := With(context.Background(), "/CPU:0", nil)
	if err == nil {
		t.Fatal("With with a nil fn returned no error")
	}
	for _, w := range []string{`"/CPU:0"`, "nil fn"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	// A bad spec is reported first: it is the caller's first mistake.
	if err := With(context.Background(), "/TPU:0", nil); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("With(/TPU:0, nil fn) = %v, want ErrInvalidSpec", err)
	}
}

func TestWithNilContext(t *testing.T) {
	var noContext context.Context
	err := With(noContext, "/GPU:1", func(ctx context.Context) error {
		if ctx == nil {
			return errors.New("fn got a nil context")
		}
		if got := scopeOf(ctx); got != "/GPU:1" {
			return fmt.Errorf("scope = %s, want /GPU:1", got)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

func TestWithKeepsParentContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "kept"))
	err := With(parent, "/CPU:0", func(ctx context.Context) error {
		if ctx.Value(key{}) != "kept" {
			return errors.New("fn's context lost the parent's values")
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("cancelling the parent did not cancel fn's context")
		}
	})
	if err != nil {
		t.Error(err)
	}
}

// TestScopesPerGoroutine runs goroutines side by side, each inside its own
// scope, and checks that each sees only its own: the scope travels in the
// context, not in shared state. Run with -race.
func TestScopesPerGoroutine(t *testing.T) {
	const goroutines = 8
	withFakeGPU(t, goroutines) // so that Resolve can place on every /GPU:i
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	start := make(chan struct{})
	root := context.Background()
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start // open all scopes at once
			want := NewSpec(GPU, i)
			if i%2 == 0 {
				want = NewSpec(CPU, 0)
			}
			errs <- With(root, want.Short(), func(ctx context.Context) error {
				for range 100 {
					runtime.Gosched() // let the others run inside their own scopes
					if got, ok := FromContext(ctx); !ok || got != want {
						return fmt.Errorf("goroutine %d sees scope %v (set: %v), want %v", i, got.Short(), ok, want.Short())
					}
				}
				if got, err := Resolve(ctx, nil, PlaceOptions{}); err != nil || got != want {
					return fmt.Errorf("goroutine %d: Resolve = %v, %v; want %v", i, got.Short(), err, want.Short())
				}
				// Nest once to check that the inner scope is this goroutine's too.
				return With(ctx, "/GPU:7", func(ctx context.Context) error {
					if got := scopeOf(ctx); got != "/GPU:7" {
						return fmt.Errorf("goroutine %d: nested scope = %s, want /GPU:7", i, got)
					}
					return nil
				})
			})
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := scopeOf(root); got != "none" {
		t.Errorf("the root context has scope %s after the goroutines, want none", got)
	}
}

func TestScopeGoesWhereTheContextGoes(t *testing.T) {
	outside := context.Background()
	err := With(outside, "/GPU:0", func(ctx context.Context) error {
		got := make(chan [2]string)
		go func() { got <- [2]string{scopeOf(ctx), scopeOf(outside)} }()
		seen := <-got
		if seen[0] != "/GPU:0" {
			return fmt.Errorf("a goroutine given fn's context sees scope %s, want /GPU:0", seen[0])
		}
		if seen[1] != "none" {
			return fmt.Errorf("a goroutine given the outer context sees scope %s, want none", seen[1])
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

func TestFromContext(t *testing.T) {
	var noContext context.Context
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"nil", noContext, "none"},
		{"background", context.Background(), "none"},
		{"NewContext", NewContext(context.Background(), NewSpec(GPU, 1)), "/GPU:1"},
		{"NewContext on nil", NewContext(noContext, NewSpec(CPU, 0)), "/CPU:0"},
		{"innermost wins", NewContext(NewContext(context.Background(), NewSpec(GPU, 1)), NewSpec(CPU, 0)), "/CPU:0"},
	}
	for _, tt := range tests {
		if got := scopeOf(tt.ctx); got != tt.want {
			t.Errorf("%s: FromContext = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestResolvePrecedence(t *testing.T) {
	withFakeGPU(t, 2) // the default is /GPU:0
	tests := []struct {
		name      string
		requested *Spec
		scope     string // "" for none
		want      Spec
	}{
		{name: "default", want: NewSpec(GPU, 0)},
		{name: "scope beats the default", scope: "/CPU:0", want: NewSpec(CPU, 0)},
		{name: "scope names another GPU", scope: "/GPU:1", want: NewSpec(GPU, 1)},
		{name: "request beats the scope", requested: specPtr(NewSpec(GPU, 1)), scope: "/CPU:0", want: NewSpec(GPU, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Spec
			resolve := func(ctx context.Context) (err error) {
				got, err = Resolve(ctx, tt.requested, PlaceOptions{})
				return err
			}
			var err error
			if tt.scope != "" {
				err = With(context.Background(), tt.scope, resolve)
			} else {
				err = resolve(context.Background())
			}
			if err != nil || got != tt.want {
				t.Errorf("Resolve = %v, %v; want %v", got.Short(), err, tt.want.Short())
			}
		})
	}
	var noContext context.Context
	if got, err := Resolve(noContext, nil, PlaceOptions{}); err != nil || got != NewSpec(GPU, 0) {
		t.Errorf("Resolve(nil ctx) = %v, %v; want the default /GPU:0", got.Short(), err)
	}
}
