package ops

import (
	"math"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// Softmax over rows of float32 values runs on vector kernels (package
// avx2's softmax.go defines each step; package avx512 computes the same
// bits), the rows split over the cores:
//
//   - m is the row's maximum; each value becomes exp(x - m) in float32,
//     within 1 ulp of the exponential of the rounded difference;
//   - their sum runs in 16 chains (value i into chain i mod 16), folded
//     in halves, then the last len mod 16 values in order;
//   - each exponential is multiplied by 1/sum, as TensorFlow's CPU kernel
//     does.
//
// A row that holds a NaN or an infinity becomes NaN throughout, as the
// float64 definition (softmaxRow) makes it. The gradient's Σ y·dy runs in
// the same chains. float64 rows keep softmaxRow's float64 arithmetic.

// softmaxRows writes the softmax of each row of cols values of x into y.
func softmaxRows[T float](cols int, x, y []T) {
	x32, ok := any(x).([]float32)
	if !ok {
		for r := 0; r+cols <= len(x); r += cols {
			softmaxRow(x[r:r+cols], y[r:r+cols])
		}
		return
	}
	y32 := any(y).([]float32)
	parallel(len(x)/cols, cols, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			softmaxRow32(x32[r*cols:(r+1)*cols], y32[r*cols:(r+1)*cols])
		}
	})
}

// softmaxRow32 writes softmax(x) into y (which may be x).
func softmaxRow32(x, y []float32) {
	n := len(x)
	y = y[:n]
	m, ok := avx512.MaxOf(x)
	if !ok {
		m = avx2.MaxOf(x)
	}
	whole := n &^ (avx2.Chains - 1)
	var chains [avx2.Chains]float32
	if !avx512.ExpChains(x[:whole], y, m, &chains) {
		avx2.ExpChains(x[:whole], y, m, &chains)
	}
	sum := avx2.FoldChains(&chains)
	for i := whole; i < n; i++ {
		e := avx2.ExpShift(x[i], m)
		y[i] = e
		sum += e
	}
	// The maximum's exponential is 1, so the sum is at least 1 unless a
	// NaN or an infinity made it NaN.
	if !(sum >= 1) {
		nan := float32(math.NaN())
		for i := range y {
			y[i] = nan
		}
		return
	}
	if inv := 1 / sum; !avx512.ScaleBy(y, inv) {
		avx2.ScaleBy(y, inv)
	}
}

// softmaxGradRows writes the gradient of each row's softmax input given
// its output y and the output's gradient dy: y·(dy - Σ y·dy).
func softmaxGradRows[T float](cols int, y, dy, dx []T) {
	y32, ok := any(y).([]float32)
	if !ok {
		for r := 0; r+cols <= len(y); r += cols {
			yr, dyr, dxr := y[r:r+cols], dy[r:r+cols], dx[r:r+cols]
			var dot T
			for j := range yr {
				dot += yr[j] * dyr[j]
			}
			for j := range yr {
				dxr[j] = yr[j] * (dyr[j] - dot)
			}
		}
		return
	}
	dy32, dx32 := any(dy).([]float32), any(dx).([]float32)
	parallel(len(y)/cols, cols, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			softmaxGradRow32(y32[r*cols:(r+1)*cols], dy32[r*cols:(r+1)*cols], dx32[r*cols:(r+1)*cols])
		}
	})
}

// softmaxGradRow32 writes y·(dy - Σ y·dy) into dx.
func softmaxGradRow32(y, dy, dx []float32) {
	n := len(y)
	whole := n &^ (avx2.Chains - 1)
	var chains [avx2.Chains]float32
	if !avx512.DotChains(y[:whole], dy, &chains) {
		avx2.DotChains(y[:whole], dy, &chains)
	}
	s := avx2.FoldChains(&chains)
	for i := whole; i < n; i++ {
		s += float32(y[i] * dy[i]) // the conversion rounds the product: no fused multiply-add
	}
	if !avx512.SoftmaxGrad(y, dy, dx[:n], s) {
		avx2.SoftmaxGrad(y, dy, dx[:n], s)
	}
}
