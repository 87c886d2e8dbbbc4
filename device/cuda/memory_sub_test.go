//go:build cudavm && cgo

package cuda

import (
	"sync"
	"testing"

	"github.com/gokeras/gokeras/device/internal/plan"
	"github.com/gokeras/gokeras/internal/modeltest"
)

// TestMachinesShareActivations fits the CNN pipelined on the GPU, with a
// validation, and checks that each of its machines (training and
// evaluation, full and last partial batches) puts activations in one
// allocation and allocates less than its buffers apart would take. That
// the results are right with the sharing is what every other test of the
// package checks, the stream race mode (GOKERAS_EMU_STREAM_RACE) included.
func TestMachinesShareActivations(t *testing.T) {
	needGPU(t)
	var mu sync.Mutex
	var machines []*plan.Machine
	plan.Observe = func(m *plan.Machine) { mu.Lock(); machines = append(machines, m); mu.Unlock() }
	defer func() { plan.Observe = nil }()
	fitRecorded(t, cnnModel, modeltest.Blobs(t, 200, []int{32, 32, 3}, 1), 32, true)
	if len(machines) < 3 {
		t.Fatalf("%d machines, want at least 3", len(machines))
	}
	for i, m := range machines {
		r := m.Memory()
		t.Logf("machine %d: %d buffers, %d shared in an arena of %d bytes: %d bytes allocated, %d apart", i, r.Buffers, r.Shared, r.Arena, r.Allocated, r.Unshared)
		if r.Shared == 0 || r.Allocated >= r.Unshared {
			t.Errorf("machine %d shares nothing", i)
		}
	}
}
