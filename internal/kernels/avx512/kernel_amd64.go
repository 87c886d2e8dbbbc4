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

//go:noescape
func columnSums(x *float32, ld uintptr, rows, groups int, sum *float64)

//go:noescape
func columnSquares(x *float32, ld uintptr, rows, groups int, mean, sum *float64)

//go:noescape
func columnGradSums(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sumDy, sumDyXhat *float64)

//go:noescape
func columnGammaGrad(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sum *float64)

//go:noescape
func scaleShiftRows(x, out *float32, ld uintptr, rows, groups int, scale, shift *float32, relu int)

//go:noescape
func normGradRows(x, dy, out *float32, ld uintptr, rows, groups int, k *normGradArgs)

//go:noescape
func dropoutPhilox(x, y *float32, groups int, block, step, key uint64, t uint32, scale float32)

//go:noescape
func sumRows(a *float32, rows, cols int, out *float32)

//go:noescape
func sigmoid16(x, y *float32, n int)

//go:noescape
func tanh16(x, y *float32, n int)

//go:noescape
func sigmoidGrad16(y, dy, dx *float32, n int)

//go:noescape
func tanhGrad16(y, dy, dx *float32, n int)

//go:noescape
func maxOf16(x *float32, n int) float32

//go:noescape
func expChains16(x, y *float32, n int, m float32, sums *float32)

//go:noescape
func dotChains16(a, b *float32, n int, sums *float32)

//go:noescape
func scaleBy16(y *float32, n int, s float32)

//go:noescape
func softmaxGrad16(y, dy, dx *float32, n int, s float32)

//go:noescape
func winogradInput(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr)

//go:noescape
func winogradOutput(src *float32, plane uintptr, groups, count int, dst *float32, ld uintptr, bias *float32, relu int, mask *float32)

//go:noescape
func winogradKernel(k *float32, plane uintptr, u *float32, groups int)

//go:noescape
func winogradOutputGrad(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr)

//go:noescape
func winogradKernelGrad(src *float32, plane, part uintptr, parts int, dk *float32, groups int)
