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
