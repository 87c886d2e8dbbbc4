package cpu

import "github.com/gokeras/gokeras/device/internal/plan"

var _ plan.SubMemory = host{}

// Sub is part of a buffer: a plan machine's activations that share
// memory are parts of one buffer.
func (host) Sub(m plan.Mem, off, n int) plan.Mem {
	return &buffer{n: n, data: m.(*buffer).values()[off : off+n : off+n]}
}
