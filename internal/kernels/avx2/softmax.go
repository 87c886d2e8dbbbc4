package avx2

// The steps of a softmax over a row of float32 values and of its
// gradient, which package ops puts together (its softmaxRow32):
//
//	m = MaxOf(x)
//	y[i] = ExpShift(x[i], m) = exp(-min(m-x[i], 104)), each rounded once
//	       (gates.go's exp), and their sum in Chains partial sums
//	       (ExpChains, FoldChains)
//	y[i] = y[i]·(1/sum) (ScaleBy)
//
// and for the gradient, s = Σ y[i]·dy[i] in Chains partial sums, each
// product rounded before it is added (DotChains, FoldChains), dx[i] =
// y[i]·(dy[i] - s) (SoftmaxGrad). No step fuses a multiply and an add, so
// Go computes the same bits without FMA instructions. Value i of a run goes into chain i mod Chains, in order;
// FoldChains adds chain j+w into chain j for w = 8, 4, 2, 1. Package
// avx512's kernels compute every step with the same bits, and the Go code
// below is their definition where neither set of kernels runs.

// Chains is the number of partial sums ExpChains and DotChains keep.
const Chains = 16

// MaxOf returns the largest value of x, which must not be empty. Where x
// holds a NaN the result is unspecified (NaN or one of x's values); a
// caller finds the NaN again in the sum after ExpChains.
func MaxOf(x []float32) float32 {
	if haveKernels && len(x) >= 8 {
		done := len(x) &^ 7
		return maxOfGo(x[done:], maxOf8(&x[0], done))
	}
	return maxOfGo(x, x[0])
}

// maxOfGo is the largest of m and x's values.
func maxOfGo(x []float32, m float32) float32 {
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

// ExpShift is exp(v - m) for v <= m, as the kernels compute it: the
// difference m - v rounded to float32, clamped to 104 (where exp's
// float32 value is 0), its exp within 1 ulp; NaN where v or m is NaN or
// both are the same infinity.
func ExpShift(v, m float32) float32 {
	return expNeg(0 - min(m-v, expClamp))
}

// ExpChains writes ExpShift(x[i], m) into y[i] and adds it to chain i mod
// Chains of chains; len(x) must be a multiple of Chains.
func ExpChains(x, y []float32, m float32, chains *[Chains]float32) {
	n := len(x)
	if n%Chains != 0 {
		panic("avx2.ExpChains: the length is not a multiple of Chains")
	}
	if n == 0 {
		return
	}
	y = y[:n]
	if haveKernels {
		expChains8(&x[0], &y[0], n, m, &chains[0])
		return
	}
	expChainsGo(x, y, m, chains)
}

func expChainsGo(x, y []float32, m float32, chains *[Chains]float32) {
	for i, v := range x {
		e := ExpShift(v, m)
		y[i] = e
		chains[i%Chains] += e
	}
}

// DotChains adds a[i]·b[i], rounded, into chain i mod Chains of chains;
// len(a) must be a multiple of Chains.
func DotChains(a, b []float32, chains *[Chains]float32) {
	n := len(a)
	if n%Chains != 0 {
		panic("avx2.DotChains: the length is not a multiple of Chains")
	}
	if n == 0 {
		return
	}
	b = b[:n]
	if haveKernels {
		dotChains8(&a[0], &b[0], n, &chains[0])
		return
	}
	dotChainsGo(a, b, chains)
}

func dotChainsGo(a, b []float32, chains *[Chains]float32) {
	for i, v := range a {
		chains[i%Chains] += float32(v * b[i]) // the conversion rounds the product: no fused multiply-add
	}
}

// FoldChains returns the sum of the chains: chain j+w added into chain j
// for w = 8, 4, 2 and 1, then chain 0. It overwrites chains.
func FoldChains(chains *[Chains]float32) float32 {
	for w := Chains / 2; w > 0; w /= 2 {
		for j := range w {
			chains[j] += chains[j+w]
		}
	}
	return chains[0]
}

// ScaleBy sets y[i] = y[i]·s for every value of y.
func ScaleBy(y []float32, s float32) {
	done := 0
	if haveKernels && len(y) >= 8 {
		done = len(y) &^ 7
		scaleBy8(&y[0], done, s)
	}
	scaleByGo(y[done:], s)
}

func scaleByGo(y []float32, s float32) {
	for i := range y {
		y[i] *= s
	}
}

// SoftmaxGrad sets dx[i] = y[i]·(dy[i] - s) for every value of dx, each
// operation rounded (no fused multiply-add): the gradient of a softmax's
// input given its output y, the output's gradient dy and s = Σ y·dy.
func SoftmaxGrad(y, dy, dx []float32, s float32) {
	n := len(dx)
	y, dy = y[:n], dy[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		softmaxGrad8(&y[0], &dy[0], &dx[0], done, s)
	}
	softmaxGradGo(y[done:], dy[done:], dx[done:], s)
}

func softmaxGradGo(y, dy, dx []float32, s float32) {
	for i := range dx {
		dx[i] = y[i] * (dy[i] - s)
	}
}
