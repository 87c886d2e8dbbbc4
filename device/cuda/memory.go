//go:build cudavm && cgo

package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gokeras/gokeras/device/driver"
)

// ErrOutOfMemory is wrapped by the error of an allocation that does not fit
// in the GPU's free memory. The error says how much was asked for and how
// much was free.
var ErrOutOfMemory = errors.New("out of GPU memory")

// oomError is an allocation that did not fit.
type oomError struct {
	gpu                string // "/GPU:0 (NVIDIA H100 80GB HBM3)"
	asked, free, total int64
}

func (e *oomError) Error() string {
	return fmt.Sprintf("%v on %s: asked for %s, %s free of %s: use a smaller batch size or model, "+
		"free device tensors you no longer need (Tensor.Free) or close models you are done with (Close)",
		ErrOutOfMemory, e.gpu, formatBytes(e.asked), formatBytes(e.free), formatBytes(e.total))
}

func (e *oomError) Unwrap() error { return ErrOutOfMemory }

// alloc reserves bytes of device memory; call it inside g.do. Zero bytes
// give the null pointer, which free accepts.
func (g *gpu) alloc(bytes int64) (devicePtr, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("%s: cannot allocate %d bytes", g.short(), bytes)
	}
	if bytes == 0 {
		return 0, nil
	}
	ptr, err := g.ctx.memAlloc(bytes)
	if err == nil {
		return ptr, nil
	}
	if errors.Is(err, errDeviceFull) {
		free, total, infoErr := g.ctx.memInfo()
		if infoErr != nil {
			free, total = -1, g.desc.MemoryBytes
		}
		return 0, &oomError{gpu: fmt.Sprintf("%s (%s)", g.short(), g.desc.Description), asked: bytes, free: free, total: total}
	}
	return 0, fmt.Errorf("%s: allocating %s: %w", g.short(), formatBytes(bytes), err)
}

// free releases memory from alloc; call it inside g.do.
func (g *gpu) free(ptr devicePtr) error {
	if ptr == 0 {
		return nil
	}
	return g.ctx.memFree(ptr)
}

// buffer is device memory handed to package device (driver.Buffer): the
// storage of a device.Tensor on a GPU.
type buffer struct {
	gpu   *gpu
	ptr   devicePtr
	bytes int64
	freed bool
}

var (
	_ driver.Buffer     = (*buffer)(nil)
	_ driver.PeerCopier = (*buffer)(nil)
)

func (b *buffer) Bytes() int64 { return b.bytes }

func (b *buffer) usable(n int, what string) error {
	if b.freed {
		return fmt.Errorf("%s: the buffer was freed", b.gpu.short())
	}
	if int64(n) != b.bytes {
		return fmt.Errorf("%s: %s %d bytes into a buffer of %d", b.gpu.short(), what, n, b.bytes)
	}
	return nil
}

// CopyFromHost copies src to the device and waits until it has arrived.
func (b *buffer) CopyFromHost(src []byte) error {
	if err := b.usable(len(src), "copying"); err != nil {
		return err
	}
	if b.bytes == 0 {
		return nil
	}
	return b.gpu.do(func() error {
		if err := b.gpu.ctx.copyHtoD(b.ptr, unsafe.Pointer(unsafe.SliceData(src)), b.bytes); err != nil {
			return fmt.Errorf("copying %s to %s: %w", formatBytes(b.bytes), b.gpu.short(), err)
		}
		return nil
	})
}

// CopyToHost copies the buffer into dst; cuMemcpyDtoH returns when the
// data is there.
func (b *buffer) CopyToHost(dst []byte) error {
	if err := b.usable(len(dst), "copying"); err != nil {
		return err
	}
	if b.bytes == 0 {
		return nil
	}
	return b.gpu.do(func() error {
		if err := b.gpu.ctx.copyDtoH(unsafe.Pointer(unsafe.SliceData(dst)), b.ptr, b.bytes); err != nil {
			return fmt.Errorf("copying %s from %s: %w", formatBytes(b.bytes), b.gpu.short(), err)
		}
		return nil
	})
}

// CopyFromPeer copies another GPU buffer into b without going through host
// memory: device to device on one GPU, peer to peer between two.
func (b *buffer) CopyFromPeer(src driver.Buffer) error {
	s, ok := src.(*buffer)
	if !ok {
		return fmt.Errorf("%s: copying from a %T: %w", b.gpu.short(), src, errors.ErrUnsupported)
	}
	if s.freed {
		return fmt.Errorf("%s: the source buffer was freed", s.gpu.short())
	}
	if err := b.usable(int(s.bytes), "copying"); err != nil {
		return err
	}
	if b.bytes == 0 {
		return nil
	}
	return b.gpu.do(func() error {
		var err error
		if s.gpu == b.gpu {
			err = b.gpu.ctx.copyDtoD(b.ptr, s.ptr, b.bytes)
		} else {
			err = b.gpu.ctx.copyPeer(b.ptr, s.gpu.ctx, s.ptr, b.bytes)
		}
		if err != nil {
			return fmt.Errorf("copying %s %s -> %s: %w", formatBytes(b.bytes), s.gpu.short(), b.gpu.short(), err)
		}
		return nil
	})
}

// Free releases the device memory; freeing twice does nothing.
func (b *buffer) Free() error {
	if b.freed {
		return nil
	}
	b.freed = true
	return b.gpu.do(func() error { return b.gpu.free(b.ptr) })
}

// pinned is page-locked host memory (cuMemAllocHost). Copies between it
// and the device run at the bus's full speed and can be asynchronous; the
// step's inputs and outputs are staged through it.
type pinned struct {
	ctx gpuContext
	p   unsafe.Pointer
	n   int // float32s
}

// allocPinned reserves n float32s of pinned memory; call it inside g.do.
func (g *gpu) allocPinned(n int) (pinned, error) {
	if n == 0 {
		return pinned{}, nil
	}
	p, err := g.ctx.hostAlloc(int64(n) * 4)
	if err != nil {
		return pinned{}, fmt.Errorf("allocating %s of pinned host memory: %w", formatBytes(int64(n)*4), err)
	}
	return pinned{ctx: g.ctx, p: p, n: n}, nil
}

// floats views the memory as float32s.
func (p pinned) floats() []float32 {
	if p.p == nil {
		return nil
	}
	return unsafe.Slice((*float32)(p.p), p.n)
}

// free releases the memory; call it inside g.do.
func (p pinned) free() error {
	if p.p == nil {
		return nil
	}
	return p.ctx.hostFree(p.p)
}

// formatBytes writes a byte count with a decimal unit, as package device
// reports copies ("4.0 MB").
func formatBytes(b int64) string {
	if b < 0 {
		return "an unknown amount"
	}
	v := float64(b)
	if v < 1000 {
		return fmt.Sprintf("%d B", b)
	}
	unit := ""
	for _, unit = range []string{"kB", "MB", "GB", "TB"} {
		v /= 1000
		if v < 1000 {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
