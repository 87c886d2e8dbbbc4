//go:build !amd64 || purego

package avx2

// No kernels for this architecture (or the purego tag asks for none):
// Sgemm returns ErrUnsupported and callers use package blas.
const haveKernels = false

func panel4x24(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, pf, pfb *float32, alpha, beta float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func add(dst, a, b *float32, n int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func maskPositive(x, v, out *float32, n int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func dot6x16(n int, w *float32, ldw uintptr, bt *float32, tile *float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func gemm6x16(kc int, a *float32, ars, aps uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, pf, pfs uintptr, alpha, beta float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func maxInto(dst, src *float32, n int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func maxPoolBack(dimg, img, y, grad *float32, offs *int, noffs, c int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func sigmoid8(x, y *float32, n int) { panic("unreachable: AVX2 kernels called without Available") }

func tanh8(x, y *float32, n int) { panic("unreachable: AVX2 kernels called without Available") }

func sigmoidGrad8(y, dy, dx *float32, n int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func tanhGrad8(y, dy, dx *float32, n int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func mul(dst, a, b *float32, n int) { panic("unreachable: AVX2 kernels called without Available") }

func addProduct(dst, a, b *float32, n int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func sub(dst, a, b *float32, n int) { panic("unreachable: AVX2 kernels called without Available") }

func maxOf8(x *float32, n int) float32 { panic("unreachable: AVX2 kernels called without Available") }

func expChains8(x, y *float32, n int, m float32, chains *float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func dotChains8(a, b *float32, n int, chains *float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func scaleBy8(y *float32, n int, s float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func softmaxGrad8(y, dy, dx *float32, n int, s float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func transpose8(x *float32, ldx uintptr, out *float32, ldo uintptr, nr, nc int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func winogradInput(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr) {
	panic("unreachable: AVX2 kernels called without Available")
}

func winogradOutput(src *float32, plane uintptr, groups, count int, dst *float32, ld uintptr, bias *float32, relu int, mask *float32) {
	panic("unreachable: AVX2 kernels called without Available")
}

func winogradKernel(k *float32, plane uintptr, u *float32, groups int) {
	panic("unreachable: AVX2 kernels called without Available")
}

func winogradOutputGrad(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr) {
	panic("unreachable: AVX2 kernels called without Available")
}

func winogradKernelGrad(src *float32, plane, part uintptr, parts int, dk *float32, groups int) {
	panic("unreachable: AVX2 kernels called without Available")
}
