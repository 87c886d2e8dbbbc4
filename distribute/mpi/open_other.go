//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package mpi

import (
	"fmt"
	"runtime"
)

func candidates() []string { return []string{"libmpi.so.40"} }

func open(path string) (*Lib, error) {
	return nil, fmt.Errorf("%s: %w: gokeras loads Open MPI on Linux, macOS and FreeBSD on amd64 and arm64, not on %s/%s",
		path, ErrUnsupported, runtime.GOOS, runtime.GOARCH)
}
