//go:build !amd64 || purego

package avx512

func layerNormRows(a *lnArgs) { panic("unreachable: AVX-512 kernels called without Available") }
