package cpu_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gokeras/gokeras/applications"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// TestResNet20MemoryReport measures the device memory of the machines of
// one epoch of cmd/train's ResNet-20 at batch 128 on the CPU (one
// training step, then an evaluation of 128+16 samples: a full and a last
// partial batch), each machine's own buffers by role and by the kind of
// the step that writes them, before and after sharing. It runs only with
// GOKERAS_MEMORY_REPORT set (a file to write the report to, or - for the
// test log): it takes a training step of a real model.
func TestResNet20MemoryReport(t *testing.T) {
	out := os.Getenv("GOKERAS_MEMORY_REPORT")
	if out == "" {
		t.Skip("set GOKERAS_MEMORY_REPORT=FILE (or -) to measure ResNet-20's machines")
	}
	const batch = 128
	var mu sync.Mutex
	var machines []*plan.Machine
	plan.Observe = func(m *plan.Machine) { mu.Lock(); machines = append(machines, m); mu.Unlock() }
	defer func() { plan.Observe = nil }()

	model, err := applications.ResNetV1(20, []int{32, 32, 3}, 10)
	if err != nil {
		t.Fatal(err)
	}
	model.SetSeed(1)
	opt, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Compile(opt, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	ds := cifar10.Synthetic(batch, batch+16, 1)
	ctx := context.Background()
	if _, err := model.Fit(ctx, ds.Train.OneHot(), nn.Epochs(1), nn.BatchSize(batch), nn.StepsPerEpoch(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Evaluate(ctx, ds.Test.OneHot(), nn.BatchSize(batch), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	if len(machines) != 3 {
		t.Fatalf("%d machines, want 3: the training program and two evaluation programs", len(machines))
	}
	var b strings.Builder
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	var total, totalShared int64
	for i, m := range machines {
		r := m.Memory()
		name := [...]string{"training program, batch 128", "evaluation program, batch 128", "evaluation program, batch 16 (the last, partial)"}[i]
		fmt.Fprintf(&b, "%s: %d steps, %d buffers: %s unshared, %s allocated (arena %s holding %d buffers)\n",
			name, r.Steps, r.Buffers, mb(r.Unshared), mb(r.Allocated), mb(r.Arena), r.Shared)
		for _, what := range []struct {
			title string
			m     map[string]int64
		}{{"by role", r.ByRole}, {"temp by step kind", r.ByKind}} {
			keys := slices.SortedFunc(maps.Keys(what.m), func(a, c string) int { return int(what.m[c] - what.m[a]) })
			fmt.Fprintf(&b, "  %s:", what.title)
			for _, k := range keys {
				fmt.Fprintf(&b, " %s %s;", k, mb(what.m[k]))
			}
			b.WriteString("\n")
		}
		total += r.Unshared
		totalShared += r.Allocated
	}
	fmt.Fprintf(&b, "all three machines: %s unshared, %s allocated\n", mb(total), mb(totalShared))
	if out == "-" {
		t.Log("\n" + b.String())
		return
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
