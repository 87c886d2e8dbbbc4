//go:build amd64 && !purego

package avx2

import "golang.org/x/sys/cpu"

// haveKernels reports whether this CPU runs the AVX2+FMA kernels.
var haveKernels = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func panel4x24(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, pf, pfb *float32, alpha, beta float32)

//go:noescape
func add(dst, a, b *float32, n int)

//go:noescape
func maskPositive(x, v, out *float32, n int)

//go:noescape
func dot6x16(n int, w *float32, ldw uintptr, bt *float32, tile *float32)

//go:noescape
func gemm6x16(kc int, a *float32, ars, aps uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, pf, pfs uintptr, alpha, beta float32)

//go:noescape
func maxInto(dst, src *float32, n int)

//go:noescape
func maxPoolBack(dimg, img, y, grad *float32, offs *int, noffs, c int)

//go:noescape
func sigmoid8(x, y *float32, n int)

//go:noescape
func tanh8(x, y *float32, n int)

//go:noescape
func sigmoidGrad8(y, dy, dx *float32, n int)

//go:noescape
func tanhGrad8(y, dy, dx *float32, n int)

//go:noescape
func mul(dst, a, b *float32, n int)

//go:noescape
func addProduct(dst, a, b *float32, n int)

//go:noescape
func sub(dst, a, b *float32, n int)

//go:noescape
func maxOf8(x *float32, n int) float32

//go:noescape
func expChains8(x, y *float32, n int, m float32, chains *float32)

//go:noescape
func dotChains8(a, b *float32, n int, chains *float32)

//go:noescape
func scaleBy8(y *float32, n int, s float32)

//go:noescape
func softmaxGrad8(y, dy, dx *float32, n int, s float32)

//go:noescape
func transpose8(x *float32, ldx uintptr, out *float32, ldo uintptr, nr, nc int)

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
