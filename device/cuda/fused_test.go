//go:build cudavm && cgo && !(amd64 && !amd64.v3)

package cuda

// goFusesMultiplyAdds: the Go compiler may fuse x*y + z into one rounding
// here (arm64, or amd64 at GOAMD64=v3 and up), so package ops' arithmetic
// need not round as the kernels' separate operations do.
const goFusesMultiplyAdds = true
