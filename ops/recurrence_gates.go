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

// The elementwise steps of a cell, on the vector kernels for float32 (the
// same bits as the loops: one rounding an operation, no fused
// multiply-add).

// addInto sets dst[i] = a[i] + b[i] for every value of dst.
func addInto[T float](dst, a, b []T) {
	if d32, ok := any(dst).([]float32); ok {
		avx2.Add(d32, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// mulInto sets dst[i] = a[i]·b[i] for every value of dst.
func mulInto[T float](dst, a, b []T) {
	if d32, ok := any(dst).([]float32); ok {
		avx2.Mul(d32, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// addProductInto adds a[i]·b[i], rounded, to dst[i] for every value of
// dst.
func addProductInto[T float](dst, a, b []T) {
	if d32, ok := any(dst).([]float32); ok {
		avx2.AddProduct(d32, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] += T(a[i] * b[i])
	}
}

// subInto sets dst[i] = a[i] - b[i] for every value of dst.
func subInto[T float](dst, a, b []T) {
	if d32, ok := any(dst).([]float32); ok {
		avx2.Sub(d32, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

// blendInto sets h[i] = cand[i] + z[i]·(prev[i] - cand[i]) for every
// value of h, a GRU's new state (prev nil: a zero state), rounded as that
// expression: h may be none of the others.
func blendInto[T float](h, cand, z, prev []T) {
	if prev == nil {
		clear(h)
		subInto(h, h, cand) // 0 - cand: exact
	} else {
		subInto(h, prev, cand)
	}
	mulInto(h, h, z)
	addInto(h, h, cand)
}
