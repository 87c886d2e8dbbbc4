package avx512

import "math"

// MaskPositive writes v[i] where x[i] > 0 and +0 elsewhere (NaN included)
// into out, for i < len(x): ReLU (v = x) and its gradient (v = dy) in one
// pass. v and out must be at least as long as x.
func MaskPositive(x, v, out []float32) {
	n := len(x)
	v, out = v[:n], out[:n]
	done := 0
	if haveKernels && n >= 32 {
		done = n &^ 31
		maskPositive(&x[0], &v[0], &out[0], done)
	}
	for i := done; i < n; i++ {
		mask := uint32(0)
		if x[i] > 0 {
			mask = math.MaxUint32
		}
		out[i] = math.Float32frombits(math.Float32bits(v[i]) & mask)
	}
}

// SumRows adds the rows×cols matrix a's rows into out (cols values), row
// after row: out[c] += a[r·cols+c] in the order of r, the same bits as
// that loop. It reports false, doing nothing, where the kernels are not
// Available.
func SumRows(rows, cols int, a, out []float32) bool {
	if !haveKernels || rows <= 0 || cols <= 0 {
		return haveKernels
	}
	_, _ = a[rows*cols-1], out[cols-1]
	sumRows(&a[0], rows, cols, &out[0])
	return true
}
