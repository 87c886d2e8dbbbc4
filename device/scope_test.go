package device

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
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

// currentShort is Current as a string: the short name, or "none".
func currentShort() string {
	if s, ok := Current(); ok {
		return s.Short()
	}
	return "none"
}

func TestWithNestsAndPops(t *testing.T) {
	var seen []string
	record := func() { seen = append(seen, currentShort()) }

	record()
	err := With("/CPU:0", func() error {
		record()
		if err := With("/device:GPU:1", func() error {
			record()
			return With("gpu", func() error { record(); return nil })
		}); err != nil {
			return err
		}
		record()
		return nil
	})
	if err != nil {
		t.Fatalf("With: %v", err)
	}
	record()

	want := []string{"none", "/CPU:0", "/GPU:1", "/GPU:0", "/CPU:0", "none"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("scopes seen = %v, want %v", seen, want)
	}
	if n := openScopes(); n != 0 {
		t.Errorf("%d goroutine scope stacks left after With returned, want 0", n)
	}
}

func TestWithReturnsFnError(t *testing.T) {
	sentinel := errors.New("step failed")
	err := With("/CPU:0", func() error { return fmt.Errorf("wrapped: %w", sentinel) })
	if !errors.Is(err, sentinel) {
		t.Errorf("With returned %v, want fn's error", err)
	}
	if _, ok := Current(); ok {
		t.Error("scope still set after With returned an error")
	}
}

func TestWithRejectsBadSpecWithoutCallingFn(t *testing.T) {
	called := false
	err := With("/TPU:0", func() error { called = true; return nil })
	if !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("With(/TPU:0) = %v, want ErrInvalidSpec", err)
	}
	if called {
		t.Error("With called fn despite a bad spec")
	}
	if err := With("/CPU:0", nil); err == nil {
		t.Error("With with a nil function returned no error")
	}
}

func TestWithPopsWhenFnPanics(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic to go through With", r)
			}
		}()
		_ = With("/CPU:0", func() error {
			return With("/GPU:0", func() error { panic("boom") })
		})
	}()
	if s, ok := Current(); ok {
		t.Errorf("after a panic in With, Current() = %v, want no scope", s.Short())
	}
	if n := openScopes(); n != 0 {
		t.Errorf("%d scope stacks left after a panic, want 0", n)
	}
}

func TestWithPopsOnGoexit(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = With("/CPU:0", func() error { runtime.Goexit(); return nil })
	}()
	<-done
	if n := openScopes(); n != 0 {
		t.Errorf("%d scope stacks left after runtime.Goexit inside With, want 0", n)
	}
}

func TestScopesAreGoroutineLocal(t *testing.T) {
	const goroutines = 50
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	start := make(chan struct{})
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start // open all scopes at once
			want := NewSpec(GPU, i)
			errs <- With(want.Short(), func() error {
				for range 100 {
					runtime.Gosched() // let the others run inside their own scopes
					got, ok := Current()
					if !ok || got != want {
						return fmt.Errorf("goroutine %d sees scope %v (set: %v), want %v", i, got.Short(), ok, want.Short())
					}
				}
				// Nest once to check the inner scope is local too.
				return With("/CPU:0", func() error {
					if got, _ := Current(); got != NewSpec(CPU, 0) {
						return fmt.Errorf("goroutine %d nested scope = %v", i, got.Short())
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
	if n := openScopes(); n != 0 {
		t.Errorf("%d scope stacks left after all goroutines finished, want 0", n)
	}
}

func TestNewGoroutineStartsWithoutScope(t *testing.T) {
	err := With("/GPU:0", func() error {
		inner := make(chan string)
		go func() { inner <- currentShort() }()
		if got := <-inner; got != "none" {
			return fmt.Errorf("a goroutine started inside With sees scope %s, want none", got)
		}
		if got := currentShort(); got != "/GPU:0" {
			return fmt.Errorf("the parent lost its scope: %s", got)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

func TestContextCarriesSpecAcrossGoroutines(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Error("FromContext(Background) reported a spec")
	}
	var noContext context.Context
	if _, ok := FromContext(noContext); ok {
		t.Error("FromContext(nil) reported a spec")
	}
	want := mustSpec(t, "/GPU:1")
	ctx := NewContext(context.Background(), want)
	got := make(chan Spec)
	go func() {
		s, _ := FromContext(ctx)
		got <- s
	}()
	if s := <-got; s != want {
		t.Errorf("FromContext in another goroutine = %v, want %v", s, want)
	}
	inner := NewContext(ctx, NewSpec(CPU, 0))
	if s, _ := FromContext(inner); s != NewSpec(CPU, 0) {
		t.Errorf("inner context spec = %v, want /CPU:0", s)
	}
}

func TestParseGoroutineID(t *testing.T) {
	tests := []struct {
		trace string
		want  uint64
		ok    bool
	}{
		{"goroutine 1 [running]:\nmain.main()", 1, true},
		{"goroutine 18446744073709551615 [chan receive]:", 18446744073709551615, true},
		{"goroutine 42 [running, locked to thread]:", 42, true},
		{"", 0, false},
		{"goroutine", 0, false},
		{"goroutine  [running]:", 0, false},
		{"goroutine x1 [running]:", 0, false},
		{"goroutine 12", 0, false},
		{"thread 12 [running]:", 0, false},
	}
	for _, tt := range tests {
		got, err := parseGoroutineID([]byte(tt.trace))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseGoroutineID(%q) = %d, %v; want %d, ok=%v", tt.trace, got, err, tt.want, tt.ok)
		}
	}

	// The live runtime's header parses, and ids differ between goroutines.
	mine, err := currentGoroutineID()
	if err != nil {
		t.Fatalf("currentGoroutineID: %v", err)
	}
	other := make(chan uint64)
	go func() { id, _ := currentGoroutineID(); other <- id }()
	if theirs := <-other; theirs == mine || theirs == 0 {
		t.Errorf("goroutine ids: mine %d, another goroutine's %d", mine, theirs)
	}
}
