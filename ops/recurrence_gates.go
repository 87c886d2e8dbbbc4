package ops

import (
	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// gateActivate is activate for a recurrent cell: on float32 values the
// sigmoid and tanh go through the vector kernels (within 2.5 and 2 ulp of
// float64, see internal/kernels/avx2's gates.go), everything else through
// activate.
func gateActivate[T float](act Activation, alpha float64, cols int, x, y []T) {
	if x32, ok := any(x).([]float32); ok {
		y32 := any(y).([]float32)
		switch act {
		case Sigmoid:
			if !avx512.Sigmoid(x32, y32) {
				avx2.Sigmoid(x32, y32)
			}
			return
		case Tanh:
			if !avx512.Tanh(x32, y32) {
				avx2.Tanh(x32, y32)
			}
			return
		}
	}
	activate(act, alpha, cols, x, y)
}

// gateActivateGrad is activateGrad for a recurrent cell: the same bits,
// the sigmoid's and tanh's float32 gradients on the vector kernels.
func gateActivateGrad[T float](act Activation, alpha float64, cols int, x, y, dy, dx []T) {
	if y32, ok := any(y).([]float32); ok {
		dy32, dx32 := any(dy).([]float32), any(dx).([]float32)
		switch act {
		case Sigmoid:
			if !avx512.SigmoidGrad(y32, dy32, dx32) {
				avx2.SigmoidGrad(y32, dy32, dx32)
			}
			return
		case Tanh:
			if !avx512.TanhGrad(y32, dy32, dx32) {
				avx2.TanhGrad(y32, dy32, dx32)
			}
			return
		}
	}
	activateGrad(act, alpha, cols, x, y, dy, dx)
}
