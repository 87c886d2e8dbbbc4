//go:build linux && (amd64 || arm64)

package nccl

import (
	"fmt"

	"github.com/ebitengine/purego"
	"github.com/gokeras/gokeras/internal/sys/dynlib"
)

// open loads one library and looks up the functions gokeras calls.
func open(path string) (*Lib, error) {
	h, err := dynlib.Open(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, err
	}
	l := &Lib{path: path, call: syscallN}
	for _, f := range []struct {
		name string
		addr *uintptr
	}{
		{"ncclGetVersion", &l.getVersion},
		{"ncclGetUniqueId", &l.getUniqueID},
		{"ncclCommInitRank", &l.commInitRank},
		{"ncclAllReduce", &l.allReduce},
		{"ncclCommDestroy", &l.commDestroy},
		{"ncclGetErrorString", &l.getErrorString},
	} {
		p, err := purego.Dlsym(h, f.name)
		if err != nil || p == 0 {
			_ = purego.Dlclose(h)
			return nil, fmt.Errorf("%s exports no %s: not NCCL 2", path, f.name)
		}
		*f.addr = p
	}
	return l, nil
}

func syscallN(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
