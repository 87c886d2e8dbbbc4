package device

import (
	"fmt"
	"github.com/gokeras/gokeras/device/driver"

	"gorgonia.org/tensor"
)

// Tensor is a float32 tensor that lives on one device: in host memory for
// the CPU (and any device whose driver is not an driver.Allocator), in a device
// driver.Buffer for a GPU. Make one with Place and move it with Copy.
//
// A Tensor holding device memory must be freed with Free; host memory is
// left to the garbage collector (Free only drops it early). A Tensor is not
// safe for use by several goroutines while one of them frees it.
type Tensor struct {
	device Spec
	shape  []int
	size   int           // number of elements
	host   []float32     // the data, for host-memory devices
	buf    driver.Buffer // the data, for devices with their own memory
	freed  bool
}

// Device returns the device the tensor lives on.
func (t *Tensor) Device() Spec { return t.device }

// Shape returns a copy of the tensor's shape; a scalar's shape is empty.
func (t *Tensor) Shape() []int { return append([]int(nil), t.shape...) }

// Bytes returns the size of the tensor's data in bytes.
func (t *Tensor) Bytes() int64 { return int64(t.size) * float32Bytes }

// String describes the tensor, e.g. "Tensor(float32 [2 3] on /GPU:0)".
func (t *Tensor) String() string {
	if t == nil {
		return "Tensor(nil)"
	}
	state := ""
	if t.freed {
		state = ", freed"
	}
	return fmt.Sprintf("Tensor(float32 %v on %s%s)", t.shape, t.device.Short(), state)
}

// Dense returns the tensor's data as a *tensor.Dense that shares the
// tensor's host memory: no copy is made, so writes through either are seen
// by both. It is an error if the tensor lives in device memory (copy it to
// /CPU:0 first) or was freed.
func (t *Tensor) Dense() (*tensor.Dense, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	if t.buf != nil {
		return nil, fmt.Errorf("device: the tensor lives on %s, not in host memory: copy it to /CPU:0 first (device.Copy(t, %q))",
			t.device.Short(), "/CPU:0")
	}
	return tensor.New(tensor.WithShape(t.shape...), tensor.WithBacking(t.host)), nil
}

// Free releases the tensor's device memory (or drops its host memory).
// Freeing a freed tensor does nothing; using one is an error.
func (t *Tensor) Free() error {
	if t == nil || t.freed {
		return nil
	}
	t.freed = true
	t.host = nil
	if t.buf == nil {
		return nil
	}
	buf := t.buf
	t.buf = nil
	if err := buf.Free(); err != nil {
		return fmt.Errorf("device: freeing %d bytes on %s: %w", buf.Bytes(), t.device.Short(), err)
	}
	return nil
}

func (t *Tensor) usable() error {
	if t == nil {
		return fmt.Errorf("device: nil *Tensor")
	}
	if t.freed {
		return fmt.Errorf("device: the tensor on %s was freed", t.device.Short())
	}
	return nil
}

// hostView wraps d's data as a Tensor on /CPU:0 without copying; views and
// transposes are materialised first so the data is contiguous and in
// order. Only float32 is supported.
func hostView(d *tensor.Dense) (view *Tensor, err error) {
	if d == nil {
		return nil, fmt.Errorf("device: nil *tensor.Dense")
	}
	// The tensor package panics on malformed values (a zero Dense, say);
	// report that as an error rather than crash the caller.
	defer func() {
		if r := recover(); r != nil {
			view, err = nil, fmt.Errorf("device: reading the tensor: %v", r)
		}
	}()
	dt := d.Dtype()
	if dt.Type == nil {
		return nil, fmt.Errorf("device: reading the tensor: it has no dtype (a zero tensor.Dense?)")
	}
	if dt != tensor.Float32 {
		return nil, fmt.Errorf("device: tensors of dtype %v are not supported: gokeras devices hold float32 only", dt)
	}
	if d.IsMaterializable() {
		m, ok := d.Materialize().(*tensor.Dense)
		if !ok {
			return nil, fmt.Errorf("device: materialising a %T view gave no *tensor.Dense", d)
		}
		d = m
	}
	shape := []int(d.Shape().Clone())
	size := d.Shape().TotalSize()
	var data []float32
	switch v := d.Data().(type) {
	case []float32:
		data = v
	case float32: // a scalar
		data = []float32{v}
	default:
		return nil, fmt.Errorf("device: a float32 tensor holds %T", v)
	}
	if len(data) != size {
		return nil, fmt.Errorf("device: a tensor of shape %v holds %d values, want %d", shape, len(data), size)
	}
	return &Tensor{device: NewSpec(CPU, 0), shape: shape, size: size, host: data}, nil
}
