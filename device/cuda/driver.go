//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"sync"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"gorgonia.org/gorgonia"
)

// gpuDriver is the driver this package registers, as database/sql drivers
// register one value each.
var gpuDriver = &cudaDriver{}

func init() {
	if err := device.Register(gpuDriver); err != nil {
		panic(err) // only reachable if two GPU drivers are linked in: a build error
	}
}

// cudaDriver is the driver.Driver for NVIDIA GPUs. It opens each GPU (retains
// its primary context) the first time something is allocated or bound on
// it, and keeps it open for the life of the process.
type cudaDriver struct {
	mu   sync.Mutex
	gpus map[int]*gpu
}

var (
	_ driver.Driver    = (*cudaDriver)(nil)
	_ driver.Allocator = (*cudaDriver)(nil)
)

func (*cudaDriver) Kind() driver.Kind { return driver.GPU }

// Devices lists the GPUs the driver sees, with their names, memory and
// compute capability.
func (*cudaDriver) Devices() ([]driver.PhysicalDevice, error) {
	n, err := cudaAPI.numDevices()
	if err != nil {
		return nil, fmt.Errorf("counting CUDA devices: %w", err)
	}
	devs := make([]driver.PhysicalDevice, 0, n)
	for i := 0; i < n; i++ {
		d, err := cudaAPI.describe(i)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// open returns GPU index, retaining its primary context the first time.
func (drv *cudaDriver) open(index int) (*gpu, error) {
	drv.mu.Lock()
	defer drv.mu.Unlock()
	if g, ok := drv.gpus[index]; ok {
		return g, nil
	}
	n, err := cudaAPI.numDevices()
	if err != nil {
		return nil, fmt.Errorf("counting CUDA devices: %w", err)
	}
	if index < 0 || index >= n {
		return nil, fmt.Errorf("there is no /GPU:%d: the CUDA driver sees %d GPUs", index, n)
	}
	desc, err := cudaAPI.describe(index)
	if err != nil {
		return nil, err
	}
	ctx, err := cudaAPI.retain(index)
	if err != nil {
		return nil, fmt.Errorf("/GPU:%d (%s): creating its CUDA context: %w", index, desc.Description, err)
	}
	g := &gpu{index: index, desc: desc, ctx: ctx}
	if drv.gpus == nil {
		drv.gpus = map[int]*gpu{}
	}
	drv.gpus[index] = g
	return g, nil
}

// Alloc implements driver.Allocator: bytes of device memory on /GPU:index.
func (drv *cudaDriver) Alloc(index int, bytes int64) (driver.Buffer, error) {
	g, err := drv.open(index)
	if err != nil {
		return nil, err
	}
	var buf *buffer
	err = g.do(func() error {
		ptr, err := g.alloc(bytes)
		buf = &buffer{gpu: g, ptr: ptr, bytes: bytes}
		return err
	})
	if err != nil {
		return nil, err
	}
	return buf, nil
}

// NewMachine binds the graph g to /GPU:index; see Machine.
func (drv *cudaDriver) NewMachine(index int, g *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	gp, err := drv.open(index)
	if err != nil {
		return nil, err
	}
	return newMachine(gp, g, opts)
}

// gpu is one opened device.
type gpu struct {
	index int
	desc  driver.PhysicalDevice
	ctx   gpuContext

	// The kernels module, loaded into the context on first use by a
	// machine and shared by every machine on this GPU.
	kernOnce sync.Once
	kernErr  error
	kern     *kernels
}

// do runs f on an OS thread with the GPU's context current. CUDA contexts
// are per thread and goroutines move between threads, so every call into
// the driver goes through do.
func (g *gpu) do(f func() error) error {
	var ran bool
	err := g.ctx.do(func() error { ran = true; return f() })
	if err != nil && !ran {
		return fmt.Errorf("%s: %w", g.short(), err)
	}
	return err
}

// kernels loads the PTX kernels into the GPU's context once. Call it
// inside do.
func (g *gpu) kernels() (*kernels, error) {
	g.kernOnce.Do(func() {
		if g.kern, g.kernErr = loadKernels(g.ctx); g.kernErr != nil {
			g.kernErr = fmt.Errorf("%s (%s, compute capability %d.%d): %w", g.short(), g.desc.Description,
				g.desc.ComputeCapability[0], g.desc.ComputeCapability[1], g.kernErr)
		}
	})
	return g.kern, g.kernErr
}

func (g *gpu) short() string { return fmt.Sprintf("/GPU:%d", g.index) }
