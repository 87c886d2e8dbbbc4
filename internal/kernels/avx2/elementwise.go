package avx2

import "math"

// MaskPositive writes v[i] into out[i] where x[i] > 0 and +0 elsewhere
// (NaN counts as not positive): the ReLU and its gradient. v and out may
// be x. Its results are the same bits with or without the kernel.
func MaskPositive(x, v, out []float32) {
	n := len(x)
	v, out = v[:n], out[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
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

// AddTo adds src into dst, value by value (dst[i] += src[i], one rounding
// each: the same bits with or without the kernel).
func AddTo(dst, src []float32) {
	n := len(src)
	dst = dst[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		addTo(&dst[0], &src[0], done)
	}
	for i := done; i < n; i++ {
		dst[i] += src[i]
	}
}
