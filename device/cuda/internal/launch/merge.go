package launch

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
)

// BroadcastArgs are the nineteen ints of kernels.cu's GK_BCAST_PARAMS for
// the layout l (gk_binary, gk_binary_grad): the count of merged axes, their
// sizes, then A's strides and B's, each padded to ops.MaxBroadcastDims
// with 1 (sizes) and 0 (strides). It fails for a layout of more axes than
// the kernels take or of more values than their 32-bit indexing.
func BroadcastArgs(l ops.BroadcastLayout) ([]int, error) {
	nd := len(l.Dims)
	if nd == 0 || nd > ops.MaxBroadcastDims || len(l.StrideA) != nd || len(l.StrideB) != nd {
		return nil, fmt.Errorf("a broadcast layout of %d axes (%d and %d strides); the kernels take 1 to %d", nd, len(l.StrideA), len(l.StrideB), ops.MaxBroadcastDims)
	}
	if l.Size() > math.MaxInt32 {
		return nil, fmt.Errorf("a binary op of %d values, more than the CUDA kernels' 32-bit indexing allows (%d): use a smaller batch", l.Size(), math.MaxInt32)
	}
	const m = ops.MaxBroadcastDims
	args := make([]int, 1+3*m)
	args[0] = nd
	for k := range m {
		args[1+k] = 1
	}
	copy(args[1:], l.Dims)
	copy(args[1+m:], l.StrideA)
	copy(args[1+2*m:], l.StrideB)
	return args, nil
}
