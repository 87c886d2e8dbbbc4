//go:build amd64 && !purego

package avx512

import "golang.org/x/sys/cpu"

// haveKernels reports whether this CPU runs the AVX-512 kernels.
var haveKernels = cpu.X86.HasAVX512F

//go:noescape
func panel8x48(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, rows int, masks uint64, pf *float32, alpha, beta float32)

//go:noescape
func dot12x32(n int, w *float32, ldw uintptr, bt *float32, tile *float32)

//go:noescape
func maskPositive(x, v, out *float32, n int)
