//go:build cudavm && cgo && amd64 && !amd64.v3

package cuda

// goFusesMultiplyAdds: at GOAMD64 v1 and v2 the Go compiler rounds every
// multiplication and addition, as the kernels' _rn operations do.
const goFusesMultiplyAdds = false
