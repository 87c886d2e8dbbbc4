//go:build !amd64 || purego

package avx512

// lnAVX2 and lnHaveAVX2 are false: no kernels for this architecture.
var lnAVX2, lnHaveAVX2 = false, false

func layerNormRows(a *lnArgs) { panic("unreachable: AVX-512 kernels called without Available") }

func layerNormRowsAVX2(a *lnArgs) { panic("unreachable: AVX2 kernels called without lnAVX2") }
