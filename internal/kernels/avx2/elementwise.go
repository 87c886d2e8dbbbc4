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
func AddTo(dst, src []float32) { Add(dst[:len(src)], dst, src) }

// Add sets dst[i] = a[i] + b[i] for every value of dst (one rounding
// each: the same bits with or without the kernel). dst may be a or b.
func Add(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		add(&dst[0], &a[0], &b[0], done)
	}
	for i := done; i < n; i++ {
		dst[i] = a[i] + b[i]
	}
}

// MaxInto sets dst[i] to src[i] where src[i] > dst[i], value by value: a
// NaN in src never replaces dst[i], a NaN in dst[i] stays, and of two
// zeros dst[i] keeps its own sign. It is max pooling's step, the same bits
// with or without the kernel (VMAXPS returns its second operand, dst[i],
// unless the first is greater).
func MaxInto(dst, src []float32) {
	n := len(src)
	dst = dst[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		maxInto(&dst[0], &src[0], done)
	}
	for i := done; i < n; i++ {
		if src[i] > dst[i] {
			dst[i] = src[i]
		}
	}
}

// MaxPoolBack is max pooling's gradient for one window: for each channel c
// of the first len(y) &^ 7, it adds g[c] to dimg[off+c] at the first off of
// offs (the window's positions, in order) where img[off+c] == y[c] (the
// window's maximum; a NaN matches nothing). It returns how many channels
// it did, 0 without the kernel; the caller does the rest. The same bits as
// the loop that tries the positions in order.
func MaxPoolBack(dimg, img, y, g []float32, offs []int) int {
	c := len(y) &^ 7
	if !haveKernels || c == 0 || len(offs) == 0 || len(g) < c {
		return 0
	}
	for _, off := range offs {
		if off < 0 || off+c > len(img) || off+c > len(dimg) {
			return 0 // out of range: the caller's loop reports it
		}
	}
	maxPoolBack(&dimg[0], &img[0], &y[0], &g[0], &offs[0], len(offs), c)
	return c
}
