//go:build cudavm && cgo

package cuda

import "github.com/gokeras/gokeras/device/internal/plan"

var _ plan.SubMemory = (*gpu)(nil)

// Sub is part of an allocation, at its address plus off float32s: a plan
// machine's activations that share memory are parts of one allocation.
// The emulator finds the allocation of any address inside it.
func (g *gpu) Sub(m plan.Mem, off, n int) plan.Mem { return m.(devicePtr) + devicePtr(off)*4 }
