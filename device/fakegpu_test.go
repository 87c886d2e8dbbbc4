package device

import (
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/device/driver"
	"sync"
	"testing"

	"gorgonia.org/gorgonia"
)

// fakeGPU is a test-only GPU driver: it lists n GPUs, runs graphs on the
// host, and implements driver.Allocator with host memory so the host<->device
// copy path can run without CUDA.
type fakeGPU struct {
	mu         sync.Mutex
	n          int
	devicesErr error
	live       int   // buffers allocated and not freed
	bound      []int // device indices NewMachine bound graphs to
	peerCopies int   // CopyFromPeer calls that copied directly
	noPeer     bool  // CopyFromPeer reports errors.ErrUnsupported
	failAlloc  error
}

func (f *fakeGPU) Kind() Kind { return GPU }

func (f *fakeGPU) Devices() ([]PhysicalDevice, error) {
	if f.devicesErr != nil {
		return nil, f.devicesErr
	}
	devs := make([]PhysicalDevice, f.n)
	for i := range devs {
		devs[i] = PhysicalDevice{
			Name:              fmt.Sprintf("/physical_device:GPU:%d", i),
			Kind:              GPU,
			Index:             i,
			Description:       "Fake GPU",
			MemoryBytes:       1 << 30,
			ComputeCapability: [2]int{9, 0},
		}
	}
	return devs, nil
}

func (f *fakeGPU) NewMachine(index int, g *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	if index < 0 || index >= f.n {
		return nil, fmt.Errorf("fake GPU %d does not exist", index)
	}
	f.mu.Lock()
	f.bound = append(f.bound, index)
	f.mu.Unlock()
	return tapeMachine{gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(opts.Learnables...))}, nil
}

// tapeMachine runs the fake GPU's graphs on gorgonia's tape machine.
type tapeMachine struct{ vm gorgonia.VM }

func (m tapeMachine) RunAll() error { return m.vm.RunAll() }
func (m tapeMachine) Reset()        { m.vm.Reset() }
func (m tapeMachine) Close() error  { return m.vm.Close() }

func (f *fakeGPU) Alloc(index int, bytes int64) (driver.Buffer, error) {
	if f.failAlloc != nil {
		return nil, f.failAlloc
	}
	if index < 0 || index >= f.n {
		return nil, fmt.Errorf("fake GPU %d does not exist", index)
	}
	f.mu.Lock()
	f.live++
	f.mu.Unlock()
	return &fakeBuffer{gpu: f, index: index, mem: make([]byte, bytes)}, nil
}

func (f *fakeGPU) liveBuffers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live
}

type fakeBuffer struct {
	gpu   *fakeGPU
	index int
	mem   []byte
	freed bool
}

func (b *fakeBuffer) Bytes() int64 { return int64(len(b.mem)) }

func (b *fakeBuffer) CopyFromHost(src []byte) error {
	if b.freed {
		return errors.New("use after free")
	}
	if len(src) != len(b.mem) {
		return fmt.Errorf("CopyFromHost: %d bytes into a %d-byte buffer", len(src), len(b.mem))
	}
	copy(b.mem, src)
	return nil
}

func (b *fakeBuffer) CopyToHost(dst []byte) error {
	if b.freed {
		return errors.New("use after free")
	}
	if len(dst) != len(b.mem) {
		return fmt.Errorf("CopyToHost: %d-byte buffer into %d bytes", len(b.mem), len(dst))
	}
	copy(dst, b.mem)
	return nil
}

func (b *fakeBuffer) CopyFromPeer(src driver.Buffer) error {
	peer, ok := src.(*fakeBuffer)
	if b.gpu.noPeer || !ok {
		return fmt.Errorf("fake peer copy: %w", errors.ErrUnsupported)
	}
	copy(b.mem, peer.mem)
	b.gpu.mu.Lock()
	b.gpu.peerCopies++
	b.gpu.mu.Unlock()
	return nil
}

func (b *fakeBuffer) Free() error {
	if b.freed {
		return errors.New("double free")
	}
	b.freed = true
	b.gpu.mu.Lock()
	b.gpu.live--
	b.gpu.mu.Unlock()
	return nil
}

// withFakeGPU registers a fake GPU driver that sees n GPUs for the rest of
// the test and removes it afterwards. Tests using it must not run in
// parallel with tests that expect a build without a GPU driver.
func withFakeGPU(t *testing.T, n int) *fakeGPU {
	t.Helper()
	f := &fakeGPU{n: n}
	if err := Register(f); err != nil {
		t.Fatalf("registering the fake GPU driver: %v", err)
	}
	t.Cleanup(func() { unregister(GPU) })
	return f
}

// unregister removes the driver for kind; Register has no inverse in the
// public API, since real drivers register once for the life of the process.
func unregister(kind Kind) {
	driversMu.Lock()
	defer driversMu.Unlock()
	delete(drivers, kind)
}
