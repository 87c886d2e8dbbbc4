//go:build cudavm && cgo

package cuda

import (
	"errors"
	"unsafe"

	"github.com/gokeras/gokeras/device/driver"
)

// The calls into CUDA that the machine makes, as interfaces with two
// implementations: the CUDA driver and cuBLAS (api_cu.go, through
// gorgonia.org/cu), and, built with the tag kernelemu as well, an emulated
// GPU that serves them on the host (api_emu.go), with kernels.cu compiled
// for the host and a column-major sgemm, so that the backend's own code
// (its launches and their arguments, its copies and staging, its cuBLAS
// arguments) runs in tests on machines without a GPU.

// devicePtr is an address in device memory (a CUdeviceptr); 0 is none.
type devicePtr uintptr

// gpuAPI finds and opens GPUs: cudaAPI is the one the package uses.
type gpuAPI interface {
	numDevices() (int, error)
	// describe reads GPU i's name, memory and compute capability.
	describe(i int) (driver.PhysicalDevice, error)
	// retain opens GPU i, its primary context.
	retain(i int) (gpuContext, error)
}

// errDeviceFull is wrapped by gpuContext.memAlloc's error when the memory
// asked for is more than is free.
var errDeviceFull = errors.New("out of device memory")

// gpuContext is one opened GPU. Every method but do must be called inside
// do.
type gpuContext interface {
	// do runs f on a locked OS thread with the context current.
	do(f func() error) error
	memAlloc(bytes int64) (devicePtr, error)
	memInfo() (free, total int64, err error)
	memFree(p devicePtr) error
	// The synchronous copies run on the legacy default stream, after the
	// work queued on every stream of the context, and return when the
	// data has arrived.
	copyHtoD(dst devicePtr, src unsafe.Pointer, bytes int64) error
	copyDtoH(dst unsafe.Pointer, src devicePtr, bytes int64) error
	copyDtoD(dst, src devicePtr, bytes int64) error
	// copyPeer copies from device memory of another GPU's context.
	copyPeer(dst devicePtr, from gpuContext, src devicePtr, bytes int64) error
	// hostAlloc reserves page-locked host memory, from which copies can be
	// asynchronous.
	hostAlloc(bytes int64) (unsafe.Pointer, error)
	hostFree(p unsafe.Pointer) error
	newStream() (gpuStream, error)
	newEvent() (gpuEvent, error)
	// loadModule loads the kernels of a module image (a fatbin or PTX
	// text) and finds the named ones.
	loadModule(image string, names []string) (gpuModule, error)
	// newBLAS creates a cuBLAS handle that queues its work on s.
	newBLAS(s gpuStream) (gpuBLAS, error)
}

// gpuStream is a queue of work on one GPU; its methods return once the
// work is queued.
type gpuStream interface {
	copyHtoD(dst devicePtr, src unsafe.Pointer, bytes int64) error
	copyDtoH(dst unsafe.Pointer, src devicePtr, bytes int64) error
	// memsetD32 sets n 32-bit words at p to v.
	memsetD32(p devicePtr, v uint32, n int64) error
	// allReduce queues r's in-place sum over the replicas of n float32s
	// at p.
	allReduce(r driver.DeviceAllReducer, p devicePtr, n int) error
	// record marks e at this point of the stream's work; wait makes the
	// stream's later work wait until the work before e's latest record
	// (latest when wait is called) is done, on whichever stream.
	record(e gpuEvent) error
	wait(e gpuEvent) error
	// synchronize waits until the queued work is done.
	synchronize() error
	destroy() error
}

// gpuEvent is a point in a stream's work that other streams, or the
// host, can wait for.
type gpuEvent interface {
	// synchronize waits until the work before the event's latest record
	// is done.
	synchronize() error
	destroy() error
}

// gpuModule is loaded kernels.
type gpuModule interface {
	// launch queues kernel name on s with a 1-D grid of grid blocks of
	// block threads and shared bytes of dynamic shared memory; each
	// argument is an 8-byte slot (ptrArg, intArg, floatArg, doubleArg).
	launch(s gpuStream, name string, grid, block, shared int, args []uint64) error
}

// gpuBLAS is a cuBLAS handle bound to a stream.
type gpuBLAS interface {
	// sgemm is cublasSgemm: column-major C = alpha·op(A)·op(B) + beta·C,
	// op(A) m×k, op(B) k×n, queued on the handle's stream.
	sgemm(transA, transB bool, m, n, k int, alpha float32, a devicePtr, lda int, b devicePtr, ldb int,
		beta float32, c devicePtr, ldc int) error
	close() error
}
