//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package blas

import (
	"fmt"
	"runtime"
)

// nativeLib is never made on this platform: gokeras cannot load shared
// libraries here without cgo, so it computes with gonum.
type nativeLib struct {
	name, detail string
	threads      func() int
}

func candidates() []string { return nil }

func openNative(path string) (*nativeLib, error) {
	return nil, fmt.Errorf("blas: cannot load %s: loading a BLAS library is not supported on %s/%s", path, runtime.GOOS, runtime.GOARCH)
}

func (nl *nativeLib) close() {}

func (nl *nativeLib) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	panic("unreachable: no native BLAS on this platform")
}

func (nl *nativeLib) dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	panic("unreachable: no native BLAS on this platform")
}
