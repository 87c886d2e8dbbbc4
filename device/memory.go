package device

import "unsafe"

// Allocator is the optional interface of drivers whose devices have their
// own memory, such as the CUDA driver: Copy and Place move tensor data to
// and from such a device through the Buffers it allocates. A driver that
// does not implement Allocator, like the CPU driver, computes on host
// memory, and tensors on its devices are plain Go slices.
type Allocator interface {
	// Alloc reserves bytes bytes on the device with the given index (the
	// index of a device the driver lists in Devices). The contents of the
	// new buffer are undefined.
	Alloc(index int, bytes int64) (Buffer, error)
}

// Buffer is a block of device memory from an Allocator. Copy never hands
// a Buffer to two goroutines at once, so implementations need no locking
// of their own for that. Each method copies synchronously: when it
// returns, the data has arrived (a CUDA implementation synchronises its
// stream), so the time a Copy measures is the time of the transfer.
type Buffer interface {
	// Bytes is the size of the buffer.
	Bytes() int64
	// CopyFromHost fills the buffer from host memory; len(src) == Bytes().
	CopyFromHost(src []byte) error
	// CopyToHost copies the buffer to host memory; len(dst) == Bytes().
	CopyToHost(dst []byte) error
	// Free releases the memory. The buffer must not be used afterwards.
	Free() error
}

// PeerCopier is an optional Buffer interface for drivers that can copy
// from one device buffer to another without a trip through host memory
// (cudaMemcpyPeer between two GPUs, or a device-to-device copy on one).
// Copy calls CopyFromPeer on the destination buffer; if that returns an
// error wrapping errors.ErrUnsupported (src belongs to another driver, say)
// Copy stages the data through host memory instead.
type PeerCopier interface {
	// CopyFromPeer fills the buffer from src; src.Bytes() == Bytes().
	CopyFromPeer(src Buffer) error
}

// allocatorFor returns the Allocator of the driver for kind, and false if
// that kind's devices use host memory (or it has no driver).
func allocatorFor(kind Kind) (Allocator, bool) {
	d, ok := driverFor(kind)
	if !ok {
		return nil, false
	}
	a, ok := d.(Allocator)
	return a, ok
}

// float32Bytes is the size of one element: gokeras devices hold float32.
const float32Bytes = 4

// floatBytes views a float32 slice as its bytes, without copying.
func floatBytes(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*float32Bytes)
}
