package nn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// scopeModel is a small model to compile; Compile builds no graph, so it
// costs next to nothing.
func scopeModel(t testing.TB) (*nn.Sequential, optim.Optimizer) {
	t.Helper()
	opt, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(3), layers.Dense(2, layers.Softmax))
	t.Cleanup(func() { m.Close() })
	return m, opt
}

// This test binary has no GPU driver, so /CPU:0 is the default and the only
// device: a scope naming a GPU shows that the scope was consulted (placement
// fails, or soft placement warns about it), and OnDevice("/CPU:0") beating
// such a scope shows the option's precedence.
func TestCompileContextHonoursScope(t *testing.T) {
	tests := []struct {
		name     string
		scope    string // "" for none
		opts     func(warn *bytes.Buffer) []nn.CompileOption
		errIs    error    // nil: the model must land on /CPU:0
		errHas   []string // what the error or the warning must mention
		wantWarn bool
	}{
		{name: "no scope: default", opts: noOpts},
		{name: "scope /CPU:0", scope: "/CPU:0", opts: noOpts},
		{name: "scope spelled another way", scope: "/job:localhost/device:cpu:0", opts: noOpts},
		{name: "scope names a missing GPU", scope: "/GPU:0", opts: noOpts,
			errIs: device.ErrNoSuchDevice, errHas: []string{"compile:", "/GPU:0"}},
		{name: "scope names a missing CPU", scope: "/CPU:1", opts: noOpts,
			errIs: device.ErrNoSuchDevice, errHas: []string{"/CPU:1"}},
		{name: "OnDevice beats the scope", scope: "/GPU:0",
			opts: func(*bytes.Buffer) []nn.CompileOption { return []nn.CompileOption{nn.OnDevice("/CPU:0")} }},
		{name: "soft placement of the scope's device", scope: "/GPU:1",
			opts:     func(w *bytes.Buffer) []nn.CompileOption { return []nn.CompileOption{nn.SoftPlacement(w)} },
			errHas:   []string{"/GPU:1 does not exist", "placing on /CPU:0"},
			wantWarn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, opt := scopeModel(t)
			var warn bytes.Buffer
			compile := func(ctx context.Context) error {
				return m.CompileContext(ctx, opt, losses.CategoricalCrossentropy{}, nil, tt.opts(&warn)...)
			}
			var err error
			if tt.scope == "" {
				err = compile(context.Background())
			} else {
				err = device.With(context.Background(), tt.scope, compile)
			}
			if tt.errIs != nil {
				if !errors.Is(err, tt.errIs) {
					t.Fatalf("CompileContext = %v, want an error wrapping %v", err, tt.errIs)
				}
				mustMention(t, err.Error(), tt.errHas)
				return
			}
			if err != nil {
				t.Fatalf("CompileContext: %v", err)
			}
			got, err := m.Device()
			if err != nil || got != device.NewSpec(device.CPU, 0) {
				t.Errorf("model.Device() = %v, %v; want /CPU:0", got.Short(), err)
			}
			if tt.wantWarn {
				mustMention(t, warn.String(), tt.errHas)
			} else if warn.Len() != 0 {
				t.Errorf("unexpected warning %q", warn.String())
			}
		})
	}
}

func noOpts(*bytes.Buffer) []nn.CompileOption { return nil }

func mustMention(t *testing.T, text string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%q does not mention %q", text, w)
		}
	}
}

func TestCompileContextScopeFromNewContext(t *testing.T) {
	m, opt := scopeModel(t)
	ctx := device.NewContext(context.Background(), device.NewSpec(device.GPU, 3))
	err := m.CompileContext(ctx, opt, losses.CategoricalCrossentropy{}, nil)
	if !errors.Is(err, device.ErrNoSuchDevice) || !strings.Contains(err.Error(), "/GPU:3") {
		t.Errorf("CompileContext in a NewContext /GPU:3 scope = %v, want an error naming /GPU:3", err)
	}
}

func TestCompileContextNilContext(t *testing.T) {
	m, opt := scopeModel(t)
	var noContext context.Context
	if err := m.CompileContext(noContext, opt, losses.CategoricalCrossentropy{}, nil); err != nil {
		t.Fatalf("CompileContext(nil ctx): %v", err)
	}
	if got, _ := m.Device(); got != device.NewSpec(device.CPU, 0) {
		t.Errorf("model.Device() = %v, want the default /CPU:0", got.Short())
	}
}

// Compile takes no context, so a scope around it does not apply: only the
// context handed to CompileContext carries one.
func TestCompileIgnoresScopeItIsNotGiven(t *testing.T) {
	m, opt := scopeModel(t)
	err := device.With(context.Background(), "/GPU:0", func(context.Context) error {
		return m.Compile(opt, losses.CategoricalCrossentropy{}, nil)
	})
	if err != nil {
		t.Fatalf("Compile inside a scope it was not given: %v", err)
	}
	if got, _ := m.Device(); got != device.NewSpec(device.CPU, 0) {
		t.Errorf("model.Device() = %v, want the default /CPU:0", got.Short())
	}
}

// Goroutines compiling side by side each see only their own scope. Even
// goroutines ask for /CPU:0 and must succeed; odd ones ask for a GPU this
// binary does not have and must fail naming that GPU. Run with -race.
func TestCompileContextScopesPerGoroutine(t *testing.T) {
	const goroutines = 8
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		m, opt := scopeModel(t) // here: t.Fatal must not run in the goroutines
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := fmt.Sprintf("/GPU:%d", i)
			if i%2 == 0 {
				spec = "/CPU:0"
			}
			err := device.With(context.Background(), spec, func(ctx context.Context) error {
				return m.CompileContext(ctx, opt, losses.CategoricalCrossentropy{}, nil)
			})
			switch {
			case i%2 == 0 && err != nil:
				errs <- fmt.Errorf("goroutine %d, scope %s: %v", i, spec, err)
			case i%2 == 0:
				if got, _ := m.Device(); got != device.NewSpec(device.CPU, 0) {
					errs <- fmt.Errorf("goroutine %d: model on %v, want /CPU:0", i, got.Short())
				}
			case !errors.Is(err, device.ErrNoSuchDevice) || !strings.Contains(err.Error(), spec+":"):
				errs <- fmt.Errorf("goroutine %d, scope %s: CompileContext = %v, want an error naming %s", i, spec, err, spec)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
