//go:build cudavm && cgo && !kernelemu

package cuda

/*
#include <stdlib.h>
#include <cuda.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/gokeras/gokeras/device/driver"
	// cuinit must initialise before gorgonia.org/cu: see its documentation.
	_ "github.com/gokeras/gokeras/device/cuda/internal/cuinit"
	"gorgonia.org/cu"
)

// cudaAPI is the CUDA driver, through gorgonia.org/cu, and cuBLAS.
// emulatedGPU says whether cudaAPI is the emulated GPU.
const emulatedGPU = false

var cudaAPI gpuAPI = cuDriverAPI{}

type cuDriverAPI struct{}

func (cuDriverAPI) numDevices() (int, error) { return cu.NumDevices() }

func (cuDriverAPI) describe(i int) (driver.PhysicalDevice, error) {
	d, err := cu.GetDevice(i)
	if err != nil {
		return driver.PhysicalDevice{}, fmt.Errorf("CUDA device %d: %w", i, err)
	}
	name, err := d.Name()
	if err != nil {
		return driver.PhysicalDevice{}, fmt.Errorf("CUDA device %d: name: %w", i, err)
	}
	mem, err := d.TotalMem()
	if err != nil {
		return driver.PhysicalDevice{}, fmt.Errorf("CUDA device %d (%s): total memory: %w", i, name, err)
	}
	major, minor, err := d.ComputeCapability()
	if err != nil {
		return driver.PhysicalDevice{}, fmt.Errorf("CUDA device %d (%s): compute capability: %w", i, name, err)
	}
	return driver.PhysicalDevice{
		Name:              fmt.Sprintf("/physical_device:GPU:%d", i),
		Kind:              driver.GPU,
		Index:             i,
		Description:       name,
		MemoryBytes:       mem,
		ComputeCapability: [2]int{major, minor},
	}, nil
}

// retain takes the GPU's primary context: the one the CUDA runtime (and
// so cuBLAS) uses too, one context per GPU for the whole process.
func (cuDriverAPI) retain(i int) (gpuContext, error) {
	dev, err := cu.GetDevice(i)
	if err != nil {
		return nil, fmt.Errorf("CUDA device %d: %w", i, err)
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, err
	}
	return cuContext{ctx}, nil
}

// cuContext is a GPU's primary context.
type cuContext struct{ ctx cu.CUContext }

// do locks the goroutine to its OS thread: CUDA contexts are per thread
// and goroutines move between threads.
// The context current before is current again after, so that a do for
// one GPU inside a do for another leaves the outer one's context current.
func (c cuContext) do(f func() error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := cu.CurrentContext()
	if err != nil {
		return fmt.Errorf("reading the current CUDA context: %w", err)
	}
	if prev != c.ctx {
		if err := cu.SetCurrentContext(c.ctx); err != nil {
			return fmt.Errorf("making its CUDA context current: %w", err)
		}
		defer func() {
			if rerr := cu.SetCurrentContext(prev); rerr != nil {
				err = errors.Join(err, fmt.Errorf("making the CUDA context current before current again: %w", rerr))
			}
		}()
	}
	return f()
}

func (cuContext) memAlloc(bytes int64) (devicePtr, error) {
	p, err := cu.MemAlloc(bytes)
	if errors.Is(err, cu.OutOfMemory) {
		return 0, fmt.Errorf("%w: %w", errDeviceFull, err)
	}
	return devicePtr(p), err
}

func (cuContext) memInfo() (free, total int64, err error) { return cu.MemInfo() }

func (cuContext) memFree(p devicePtr) error { return cu.MemFree(cu.DevicePtr(p)) }

func (cuContext) copyHtoD(dst devicePtr, src unsafe.Pointer, bytes int64) error {
	if err := cu.MemcpyHtoD(cu.DevicePtr(dst), src, bytes); err != nil {
		return err
	}
	// From pageable memory cuMemcpyHtoD may return once the data is
	// staged; the null stream's sync waits for the DMA itself.
	return check(C.cuStreamSynchronize(nil))
}

func (cuContext) copyDtoH(dst unsafe.Pointer, src devicePtr, bytes int64) error {
	return cu.MemcpyDtoH(dst, cu.DevicePtr(src), bytes)
}

func (cuContext) copyDtoD(dst, src devicePtr, bytes int64) error {
	if err := cu.MemcpyDtoD(cu.DevicePtr(dst), cu.DevicePtr(src), bytes); err != nil {
		return err
	}
	return check(C.cuStreamSynchronize(nil))
}

func (c cuContext) copyPeer(dst devicePtr, from gpuContext, src devicePtr, bytes int64) error {
	f, ok := from.(cuContext)
	if !ok {
		return fmt.Errorf("copying from a %T: %w", from, errors.ErrUnsupported)
	}
	if err := cu.MemcpyPeer(cu.DevicePtr(dst), c.ctx, cu.DevicePtr(src), f.ctx, bytes); err != nil {
		return err
	}
	// cuMemcpyPeer is asynchronous to the host: wait for the context.
	return check(C.cuCtxSynchronize())
}

// hostAlloc is cuMemAllocHost, which gorgonia.org/cu does not wrap.
func (cuContext) hostAlloc(bytes int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := check(C.cuMemAllocHost(&p, C.size_t(bytes))); err != nil {
		return nil, err
	}
	return p, nil
}

func (cuContext) hostFree(p unsafe.Pointer) error { return check(C.cuMemFreeHost(p)) }

// newStream creates a stream that waits for the legacy default stream
// and that it waits for.
func (cuContext) newStream() (gpuStream, error) {
	s, err := cu.MakeStream(cu.DefaultStream)
	if err != nil {
		return nil, err
	}
	return &cuStream{s}, nil
}

func (cuContext) newEvent() (gpuEvent, error) {
	e, err := cu.MakeEvent(cu.DisableTiming)
	if err != nil {
		return nil, err
	}
	return &cuEvent{e}, nil
}

// cuEvent is a CUDA event.
type cuEvent struct{ e cu.Event }

func (e *cuEvent) synchronize() error { return e.e.Synchronize() }

func (e *cuEvent) destroy() error { return cu.DestroyEvent(&e.e) }

func (cuContext) newBLAS(s gpuStream) (gpuBLAS, error) {
	cs, ok := s.(*cuStream)
	if !ok {
		return nil, fmt.Errorf("a cuBLAS handle on a %T", s)
	}
	return newBLASHandle(cs.s)
}

// loadModule loads a module image (a fatbin, or PTX text, which the driver
// JIT-compiles for the current context's GPU). cu copies the image into C
// memory whole, NUL bytes included.
func (cuContext) loadModule(image string, names []string) (gpuModule, error) {
	// The log buffer is C memory: cu hands its address to the driver as an
	// integer among the option values, where cgo's rules cannot see it, and
	// the driver writes to it.
	const logSize = 8192
	buf := C.calloc(logSize, 1)
	if buf == nil {
		return nil, fmt.Errorf("allocating the JIT log buffer")
	}
	defer C.free(buf)
	log := &cu.JITErrorLogBuffer{Buffer: unsafe.Slice((*byte)(buf), logSize)}
	mod, err := cu.LoadDataEx(image, log)
	if err != nil {
		msg := strings.TrimSpace(strings.TrimRight(string(log.Buffer), "\x00"))
		if msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Errorf("%w%s", err, msg)
	}
	m := cuModule{}
	for _, name := range names {
		f, err := mod.Function(name)
		if err != nil {
			return nil, fmt.Errorf("the PTX has no kernel %s (regenerate it: go generate ./device/cuda): %w", name, err)
		}
		m[name] = f
	}
	return m, nil
}

// cuModule is the loaded kernels by name.
type cuModule map[string]cu.Function

// launch: cu's Launch copies 8 bytes per parameter; the kernel reads the
// low bytes of each, which on the little-endian machines CUDA runs on are
// the value itself.
func (m cuModule) launch(s gpuStream, name string, grid, block, shared int, args []uint64) error {
	f, ok := m[name]
	if !ok {
		return fmt.Errorf("kernel %s was not loaded", name)
	}
	cs, ok := s.(*cuStream)
	if !ok {
		return fmt.Errorf("launching %s on a %T", name, s)
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	return f.Launch(grid, 1, 1, block, 1, 1, shared, cs.s, params)
}

// cuStream is a CUDA stream.
type cuStream struct{ s cu.Stream }

func (s *cuStream) copyHtoD(dst devicePtr, src unsafe.Pointer, bytes int64) error {
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, bytes, s.s)
}

func (s *cuStream) copyDtoH(dst unsafe.Pointer, src devicePtr, bytes int64) error {
	return cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), bytes, s.s)
}

func (s *cuStream) memsetD32(p devicePtr, v uint32, n int64) error {
	return cu.MemsetD32Async(cu.DevicePtr(p), uint(v), n, s.s)
}

// allReduce hands the reducer (NCCL) the stream itself: the sum is queued
// after the gradients' kernels, and the host never sees the values.
func (s *cuStream) allReduce(r driver.DeviceAllReducer, p devicePtr, n int) error {
	return r.AllReduceSumDevice(uintptr(p), n, uintptr(unsafe.Pointer(s.s.C())))
}

func (s *cuStream) record(e gpuEvent) error {
	ce, ok := e.(*cuEvent)
	if !ok {
		return fmt.Errorf("recording a %T", e)
	}
	return ce.e.Record(s.s)
}

func (s *cuStream) wait(e gpuEvent) error {
	ce, ok := e.(*cuEvent)
	if !ok {
		return fmt.Errorf("waiting for a %T", e)
	}
	return s.s.Wait(ce.e, 0)
}

func (s *cuStream) synchronize() error { return s.s.Synchronize() }

func (s *cuStream) destroy() error { return s.s.Destroy() }

// cuError is a CUresult from a driver call made here rather than through cu.
type cuError struct {
	code       int
	name, text string
}

func (e cuError) Error() string { return fmt.Sprintf("%s (%d): %s", e.name, e.code, e.text) }

// check turns a CUresult into an error, nil for CUDA_SUCCESS.
func check(r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	var name, text *C.char
	e := cuError{code: int(r), name: "unknown CUDA error"}
	if C.cuGetErrorName(r, &name) == C.CUDA_SUCCESS {
		e.name = C.GoString(name)
	}
	if C.cuGetErrorString(r, &text) == C.CUDA_SUCCESS {
		e.text = C.GoString(text)
	}
	return e
}
