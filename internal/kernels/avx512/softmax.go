package avx512

// A softmax's steps and its gradient's, 16 lanes at a time, with the same
// bits as package avx2's (see its softmax.go, which defines them). Each
// reports false, doing nothing, where the kernels are not Available.

// chains is package avx2's Chains: one lane a chain.
const chains = 16

// MaxOf returns the largest value of x, which must not be empty (where x
// holds a NaN, the result is unspecified).
func MaxOf(x []float32) (float32, bool) {
	if !haveKernels {
		return 0, false
	}
	m := x[0]
	done := 0
	if len(x) >= 16 {
		done = len(x) &^ 15
		m = maxOf16(&x[0], done)
	}
	for _, v := range x[done:] {
		if v > m {
			m = v
		}
	}
	return m, true
}

// ExpChains writes exp(-min(m-x[i], 104)) into y[i] and adds it to lane i
// mod 16 of sums; len(x) must be a multiple of 16.
func ExpChains(x, y []float32, m float32, sums *[chains]float32) bool {
	if !haveKernels {
		return false
	}
	n := len(x)
	if n%chains != 0 {
		panic("avx512.ExpChains: the length is not a multiple of 16")
	}
	if n > 0 {
		expChains16(&x[0], &y[:n][0], n, m, &sums[0])
	}
	return true
}

// DotChains adds a[i]·b[i], rounded, into lane i mod 16 of sums; len(a)
// must be a multiple of 16.
func DotChains(a, b []float32, sums *[chains]float32) bool {
	if !haveKernels {
		return false
	}
	n := len(a)
	if n%chains != 0 {
		panic("avx512.DotChains: the length is not a multiple of 16")
	}
	if n > 0 {
		dotChains16(&a[0], &b[:n][0], n, &sums[0])
	}
	return true
}

// ScaleBy sets y[i] = y[i]·s for every value of y.
func ScaleBy(y []float32, s float32) bool {
	if !haveKernels {
		return false
	}
	done := len(y) &^ 15
	if done > 0 {
		scaleBy16(&y[0], done, s)
	}
	for i := done; i < len(y); i++ {
		y[i] *= s
	}
	return true
}

// SoftmaxGrad sets dx[i] = y[i]·(dy[i] - s) for every value of dx, each
// operation rounded.
func SoftmaxGrad(y, dy, dx []float32, s float32) bool {
	if !haveKernels {
		return false
	}
	n := len(dx)
	y, dy = y[:n], dy[:n]
	done := n &^ 15
	if done > 0 {
		softmaxGrad16(&y[0], &dy[0], &dx[0], done, s)
	}
	for i := done; i < n; i++ {
		dx[i] = y[i] * (dy[i] - s)
	}
	return true
}
