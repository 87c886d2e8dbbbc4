package device

import (
	"unsafe"

	"github.com/gokeras/gokeras/device/driver"
)

// allocatorFor returns the Allocator of the driver for kind, and false if
// that kind's devices use host memory (or it has no driver).
func allocatorFor(kind Kind) (driver.Allocator, bool) {
	d, ok := driverFor(kind)
	if !ok {
		return nil, false
	}
	a, ok := d.(driver.Allocator)
	return a, ok
}

// float32Bytes is the size of one element: gokeras devices hold float32.
const float32Bytes = 4

// floatBytes views a float32 slice as its bytes, without copying.
func floatBytes(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*float32Bytes)
}
