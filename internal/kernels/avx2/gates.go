package avx2

import "math"

// The logistic sigmoid and tanh in float32, as recurrent layers' gates
// need them, with their gradients. The kernels and the Go code below
// compute the same formulas:
//
//   - exp(u) for u in [-104, 0]: u = n·ln2 + r with n = round(u·log2 e)
//     and |r| <= ln2/2 (ln2 in two parts, each subtracted with one
//     rounding), exp(r) as its Taylor polynomial of degree 7 (truncation
//     below 0.1 ulp), times 2^n in two factors so that results below the
//     smallest normal float32 round once, as subnormals;
//   - sigmoid(x) = 1/(1+e) for x >= 0 and e/(1+e) below, e = exp(-|x|)
//     (|x| clamped to 104, where sigmoid's float32 value is 0 or 1): one
//     division, no cancellation;
//   - tanh(x) for |x| < 0.625 is x + x³·Q(x²), Q a degree-5 polynomial
//     fitted to (tanh(x)/x - 1)/x² (gengates.go), and above it
//     sign(x)·(1-e)/(1+e) with e = exp(-2|x|), where 1-e >= 0.71 loses
//     nothing to cancellation.
//
// Against float64 over float32 values across [-120, 120] (gates_test.go):
// sigmoid within 2.5 ulp (2.26 at worst, where e/(1+e) rounds three
// times), tanh within 2 ulp (1.50 at worst). NaN gives
// NaN (the input's bits), ±Inf gives 0 and 1 (sigmoid) and ±1 (tanh),
// -0 gives 0.5 and -0.
const (
	expLog2E float32 = math.Log2E
	expLn2Hi float32 = math.Ln2
	expLn2Lo float32 = float32(math.Ln2 - float64(expLn2Hi))
	expClamp float32 = 104   // exp(-104) is below half the smallest subnormal float32
	tanhCut  float32 = 0.625 // tanh's polynomial below, its exp formula above
)

// tanhQ is Q(s), s = x², low degree first (gengates.go fits it).
var tanhQ = [6]float32{-3.333333135e-01, 1.333321184e-01, -5.394748226e-02, 2.170435153e-02, -8.185821585e-03, 2.150215674e-03}

// expTaylor are exp's Taylor coefficients 1/k!, k = 7 down to 0.
var expTaylor = [8]float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1}

// Sigmoid writes 1/(1+exp(-x[i])) into y[i] for every value of x; y may be
// x. With the kernel (AVX2 and FMA) every value goes through it, the last
// partial vector through a copy.
func Sigmoid(x, y []float32) { gate(x, y, sigmoid8, sigmoidGo) }

// Tanh writes tanh(x[i]) into y[i] for every value of x; y may be x.
func Tanh(x, y []float32) { gate(x, y, tanh8, tanhGo) }

func gate(x, y []float32, kernel func(x, y *float32, n int), slow func(float32) float32) {
	n := len(x)
	y = y[:n]
	if !haveKernels {
		for i, v := range x {
			y[i] = slow(v)
		}
		return
	}
	done := n &^ 7
	if done > 0 {
		kernel(&x[0], &y[0], done)
	}
	if done < n {
		var buf [8]float32
		copy(buf[:], x[done:])
		kernel(&buf[0], &buf[0], 8)
		copy(y[done:], buf[:])
	}
}

// SigmoidGrad writes dy[i]·y[i]·(1-y[i]) into dx[i] for every value of
// dx, y = sigmoid(x): the same bits as that Go expression.
func SigmoidGrad(y, dy, dx []float32) {
	n := len(dx)
	y, dy = y[:n], dy[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		sigmoidGrad8(&y[0], &dy[0], &dx[0], done)
	}
	for i := done; i < n; i++ {
		dx[i] = dy[i] * y[i] * (1 - y[i])
	}
}

// TanhGrad writes dy[i]·(1-y[i]·y[i]) into dx[i] for every value of dx,
// y = tanh(x): the same bits as that Go expression.
func TanhGrad(y, dy, dx []float32) {
	n := len(dx)
	y, dy = y[:n], dy[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		tanhGrad8(&y[0], &dy[0], &dx[0], done)
	}
	for i := done; i < n; i++ {
		dx[i] = dy[i] * (1 - y[i]*y[i])
	}
}

// fma32 is a·b+c with one rounding to float32 but for the rare ties that
// rounding first to float64 breaks differently (a·b is exact in float64).
func fma32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

// expNeg is exp(u) for u in [-104, 0], as the kernels compute it.
func expNeg(u float32) float32 {
	n := float32(math.RoundToEven(float64(u * expLog2E)))
	r := fma32(-n, expLn2Hi, u)
	r = fma32(-n, expLn2Lo, r)
	p := expTaylor[0]
	for _, c := range expTaylor[1:] {
		p = fma32(p, r, c)
	}
	ni := int32(n)
	n1 := ni >> 1
	n2 := ni - n1
	p *= math.Float32frombits(uint32(n2+127) << 23)
	return p * math.Float32frombits(uint32(n1+127)<<23)
}

// sigmoidGo is the kernels' sigmoid in Go.
func sigmoidGo(x float32) float32 {
	if x != x {
		return x
	}
	e := expNeg(-min(float32(math.Abs(float64(x))), expClamp))
	num := e
	if x >= 0 {
		num = 1
	}
	return num / (1 + e)
}

// tanhGo is the kernels' tanh in Go.
func tanhGo(x float32) float32 {
	if x != x {
		return x
	}
	a := float32(math.Abs(float64(x)))
	var y float32
	if a < tanhCut {
		s := a * a
		q := tanhQ[5]
		for i := 4; i >= 0; i-- {
			q = fma32(q, s, tanhQ[i])
		}
		y = fma32(a*s, q, a)
	} else {
		e := expNeg(-min(a+a, expClamp))
		y = (1 - e) / (1 + e)
	}
	return float32(math.Copysign(float64(y), float64(x)))
}

// Mul sets dst[i] = a[i]·b[i] for every value of dst (one rounding each:
// the same bits with or without the kernel). dst may be a or b.
func Mul(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		mul(&dst[0], &a[0], &b[0], done)
	}
	for i := done; i < n; i++ {
		dst[i] = a[i] * b[i]
	}
}

// AddProduct adds a[i]·b[i] to dst[i] for every value of dst, the product
// rounded before the sum (dst[i] += float32(a[i]*b[i]), which Go does not
// fuse): the same bits with or without the kernel. dst may be a or b.
func AddProduct(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		addProduct(&dst[0], &a[0], &b[0], done)
	}
	for i := done; i < n; i++ {
		dst[i] += float32(a[i] * b[i]) // the conversion rounds: no fused multiply-add
	}
}

// Sub sets dst[i] = a[i] - b[i] for every value of dst (one rounding each:
// the same bits with or without the kernel). dst may be a or b.
func Sub(dst, a, b []float32) {
	n := len(dst)
	a, b = a[:n], b[:n]
	done := 0
	if haveKernels && n >= 8 {
		done = n &^ 7
		sub(&dst[0], &a[0], &b[0], done)
	}
	for i := done; i < n; i++ {
		dst[i] = a[i] - b[i]
	}
}
