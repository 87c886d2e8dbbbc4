//go:build !amd64 || purego

package avx512

// No kernels for this architecture (or the purego tag asks for none):
// Sgemm returns ErrUnsupported and callers use package blas.
const haveKernels = false

func panel8x48(kc int, a *float32, lda uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, rows int, masks uint64, pf *float32, alpha, beta float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func dot12x32(n int, w *float32, ldw uintptr, bt *float32, tile *float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func maskPositive(x, v, out *float32, n int) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func columnSums(x *float32, ld uintptr, rows, groups int, sum *float64) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func columnSquares(x *float32, ld uintptr, rows, groups int, mean, sum *float64) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func columnGradSums(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sumDy, sumDyXhat *float64) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func columnGammaGrad(x, dy *float32, ld uintptr, rows, groups int, mean, rstd, sum *float64) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func scaleShiftRows(x, out *float32, ld uintptr, rows, groups int, scale, shift *float32, relu int) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func normGradRows(x, dy, out *float32, ld uintptr, rows, groups int, k *normGradArgs) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func dropoutPhilox(x, y *float32, groups int, block, step, key uint64, t uint32, scale float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func sumRows(a *float32, rows, cols int, out *float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func sigmoid16(x, y *float32, n int) { panic("unreachable: AVX-512 kernels called without Available") }

func tanh16(x, y *float32, n int) { panic("unreachable: AVX-512 kernels called without Available") }

func sigmoidGrad16(y, dy, dx *float32, n int) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func tanhGrad16(y, dy, dx *float32, n int) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func maxOf16(x *float32, n int) float32 {
	panic("unreachable: AVX-512 kernels called without Available")
}

func expChains16(x, y *float32, n int, m float32, sums *float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func dotChains16(a, b *float32, n int, sums *float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func scaleBy16(y *float32, n int, s float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func softmaxGrad16(y, dy, dx *float32, n int, s float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func winogradInput(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func winogradOutput(src *float32, plane uintptr, groups, count int, dst *float32, ld uintptr, bias *float32, relu int, mask *float32) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func winogradKernel(k *float32, plane uintptr, u *float32, groups int) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func winogradOutputGrad(src *float32, ld, cb uintptr, groups, count int, dst *float32, plane uintptr) {
	panic("unreachable: AVX-512 kernels called without Available")
}

func winogradKernelGrad(src *float32, plane, part uintptr, parts int, dk *float32, groups int) {
	panic("unreachable: AVX-512 kernels called without Available")
}
