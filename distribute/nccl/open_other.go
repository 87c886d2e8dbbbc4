//go:build !(linux && (amd64 || arm64))

package nccl

import (
	"errors"
	"runtime"
)

func open(string) (*Lib, error) {
	return nil, errors.New("gokeras loads NCCL on linux/amd64 and linux/arm64 only, not " + runtime.GOOS + "/" + runtime.GOARCH)
}
