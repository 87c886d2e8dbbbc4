package avx512

// The logistic sigmoid and tanh of recurrent layers' gates, and their
// gradients: package avx2's formulas (see its gates.go), 16 lanes at a
// time, the same bits as avx2's kernels. Each reports false, doing
// nothing, where the kernels are not Available; the last partial vector
// goes through a copy.

// Sigmoid writes 1/(1+exp(-x[i])) into y[i] for every value of x; y may be
// x.
func Sigmoid(x, y []float32) bool { return gate(x, y, sigmoid16) }

// Tanh writes tanh(x[i]) into y[i] for every value of x; y may be x.
func Tanh(x, y []float32) bool { return gate(x, y, tanh16) }

func gate(x, y []float32, kernel func(x, y *float32, n int)) bool {
	if !haveKernels {
		return false
	}
	n := len(x)
	y = y[:n]
	done := n &^ 15
	if done > 0 {
		kernel(&x[0], &y[0], done)
	}
	if done < n {
		var buf [16]float32
		copy(buf[:], x[done:])
		kernel(&buf[0], &buf[0], 16)
		copy(y[done:], buf[:])
	}
	return true
}

// SigmoidGrad writes dy[i]·y[i]·(1-y[i]) into dx[i] for every value of
// dx, y = sigmoid(x): the same bits as that Go expression.
func SigmoidGrad(y, dy, dx []float32) bool { return gateGrad(y, dy, dx, sigmoidGrad16) }

// TanhGrad writes dy[i]·(1-y[i]·y[i]) into dx[i] for every value of dx,
// y = tanh(x): the same bits as that Go expression.
func TanhGrad(y, dy, dx []float32) bool { return gateGrad(y, dy, dx, tanhGrad16) }

func gateGrad(y, dy, dx []float32, kernel func(y, dy, dx *float32, n int)) bool {
	if !haveKernels {
		return false
	}
	n := len(dx)
	y, dy = y[:n], dy[:n]
	done := n &^ 15
	if done > 0 {
		kernel(&y[0], &dy[0], &dx[0], done)
	}
	if done < n {
		var by, bdy [16]float32
		copy(by[:], y[done:])
		copy(bdy[:], dy[done:])
		kernel(&by[0], &bdy[0], &bdy[0], 16)
		copy(dx[done:], bdy[:])
	}
	return true
}
