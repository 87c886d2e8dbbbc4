package nccl

import (
	"fmt"

	"github.com/gokeras/gokeras/internal/sys/nvlib"
)

// Load finds and opens NCCL: $GOKERAS_NCCL alone when it is set; else
// libnccl.so.2 on the loader's path, then in a CUDA toolkit, then in
// python3's site-packages (pip's nvidia-nccl-cu12/cu13 wheels). The first
// that loads, exports what gokeras calls and answers ncclGetVersion wins;
// an error lists every candidate and says what to install or set.
func Load() (*Lib, error) { return load(nvlib.DefaultLookup(spec), open) }

func load(lk nvlib.Lookup, open func(path string) (*Lib, error)) (*Lib, error) {
	l, c, err := nvlib.Choose(spec, lk, func(c nvlib.Candidate) (*Lib, error) {
		l, err := open(c.Path)
		if err != nil {
			return nil, err
		}
		if _, err := l.Version(); err != nil {
			return nil, fmt.Errorf("loads, but %w", err)
		}
		return l, nil
	})
	if err != nil {
		return nil, fmt.Errorf("nccl: %w", err)
	}
	l.path, l.where = c.Path, c.Where
	return l, nil
}
