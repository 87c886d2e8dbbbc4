package ops

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// u is float32's unit roundoff, 2⁻²⁴.
const u = 0x1p-24

var (
	nan    = math.NaN()
	negZ   = math.Copysign(0, -1)
	inf    = math.Inf(1)
	bigPos = 1e30 // exp of it, or of its negation, over- or underflows
)

// point is one input of an elementwise activation with its value and
// gradient: y = act(x), dx = act'(x)·dy, worked out by hand or, for
// sigmoid and tanh, from the closed forms σ' = e^{-x}/(1+e^{-x})² and
// tanh' = 1/cosh² to double precision (independently of this package).
type point struct{ x, dy, y, dx float64 }

// Each activation against values known independently of its code: the
// forward within 4 units of float32 rounding of the exact value (zeros
// with their sign), the gradient within 8 units plus 2 units of |dy| (the
// rounding of y that 1-y or 1-y² magnifies). ReLU and linear are exact.
// The points repeat to 64 values and more, so that vector code, where a
// CPU has it, computes them too.
func TestActivationsAgainstKnownValues(t *testing.T) {
	cases := []struct {
		act    Activation
		alpha  float64 // ELU's and LeakyReLU's
		exact  bool
		points []point
	}{
		{Linear, 0, true, []point{
			{2.5, 3, 2.5, 3}, {0, -1, 0, -1}, {negZ, 2, negZ, 2}, {nan, 1, nan, 1},
			{bigPos, 0.5, bigPos, 0.5}, {-bigPos, -0.5, -bigPos, -0.5}, {inf, 1, inf, 1},
		}},
		{ReLU, 0, true, []point{
			// No gradient where x ≤ 0, as TensorFlow's ReluGrad; ReLU(NaN)
			// is 0 here, and -0 becomes +0.
			{2.5, 3, 2.5, 3}, {-3, 3, 0, 0}, {0, 1, 0, 0}, {negZ, 1, 0, 0}, {nan, 1, 0, 0},
			{bigPos, -2, bigPos, -2}, {-bigPos, 1, 0, 0}, {inf, 1, inf, 1}, {-inf, 1, 0, 0},
			{float64(math.SmallestNonzeroFloat32), 1, float64(math.SmallestNonzeroFloat32), 1},
		}},
		{Sigmoid, 0, false, []point{
			{0, 1, 0.5, 0.25}, {negZ, 1, 0.5, 0.25},
			{1, 1, 0.7310585786300049, 0.19661193324148188},
			{-2, -2, 0.11920292202211755, -2 * 0.10499358540350652},
			{0.5, 0.5, 0.6224593312018546, 0.5 * 0.2350037122015945},
			{3, 1, 0.9525741268224334, 0.045176659730912144},
			{20, 1, 0.9999999979388463, 2.061153613941849e-09},
			{bigPos, 1, 1, 0}, {-bigPos, 1, 0, 0}, {inf, 1, 1, 0}, {-inf, 1, 0, 0},
			{nan, 1, nan, nan},
		}},
		{Tanh, 0, false, []point{
			{0, 1, 0, 1}, {negZ, 1, negZ, 1},
			{0.5, 1, 0.46211715726000974, 0.7864477329659275},
			{-1, 2, -0.7615941559557649, 2 * 0.4199743416140261},
			{2, -1, 0.9640275800758169, -0.07065082485316447},
			{bigPos, 1, 1, 0}, {-bigPos, 1, -1, 0}, {inf, 1, 1, 0},
			{nan, 1, nan, nan},
		}},
		// x·Φ(x) and Φ(x) + x·φ(x), from Φ(x) = erfc(-x/√2)/2 and
		// φ(x) = e^{-x²/2}/√(2π) (Python's math.erfc, to double
		// precision): GELU(1) = 0.8413447, GELU(-1) = -0.15865526.
		{GELU, 0, false, []point{
			{0, 1, 0, 0.5}, {negZ, 1, negZ, 0.5},
			{1, 1, 0.8413447460685429, 1.0833154705876864},
			{-1, 2, -0.15865525393145707, 2 * -0.08331547058768629},
			{2, -1, 1.9544997361036416, -1.085231801078197},
			{0.5, 1, 0.34573123063700656, 0.8674951246561629},
			{-0.5, 1, -0.15426876936299344, 0.13250487534383712},
			{-3, 1, -0.004049694094890287, -0.011945647204183927},
			{5, 1, 4.99999856674214, 1.0000071469460017},
			{-5, 1, -1.4332578593959731e-06, -7.146946001792295e-06},
			{-10, 1, -7.619853024160593e-23, -7.618400096464813e-22},
			{bigPos, 1, bigPos, 1}, {-bigPos, 1, negZ, 0}, {inf, 1, inf, 1}, {-inf, 1, negZ, 0},
			{nan, 1, nan, nan},
		}},
		// The values and derivatives below are Python's math (float64) on
		// the closed forms: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
		// x·σ(x), expm1, Keras' SELU constants, log1p(eˣ), x/(1+|x|),
		// clip(0.2·x + 0.5, 0, 1), eˣ and max(x, αx).
		{GELUApproximate, 0, false, []point{
			{0, 1, 0, 0.5}, {negZ, 1, negZ, 0.5},
			{1, 1, 0.8411919906082768, 1.0829640838457826}, {-1, 2, -0.15880800939172324, -0.1659281676915651},
			{2, -1, 1.954597694087775, -1.0860992566236183}, {0.5, 1, 0.34571400982514394, 0.8673699035346424},
			{-0.5, 1, -0.15428599017485606, 0.13263009646535764}, {-3, 1, -0.0036373920817729943, -0.011584166630969516},
			{3, 0.5, 2.996362607918227, 0.5057920833154848}, {-10, 1, negZ, 0},
			{bigPos, 1, bigPos, 1}, {-bigPos, 1, negZ, 0}, {inf, 1, inf, 1}, {-inf, 1, negZ, 0},
			{nan, 1, nan, nan},
		}},
		{Swish, 0, false, []point{
			{0, 1, 0, 0.5}, {negZ, 1, negZ, 0.5},
			{1, 1, 0.7310585786300049, 0.9276705118714867}, {-1, 2, -0.2689414213699951, 0.1446589762570265},
			{2, -1, 1.7615941559557646, -1.0907842487848955}, {0.5, 1, 0.3112296656009273, 0.7399611873026518},
			{-0.5, 1, -0.18877033439907273, 0.26003881269734824}, {-3, 1, -0.14227761953270035, -0.08810410601516962},
			{3, 0.5, 2.8577223804673, 0.5440520530075847}, {-10, 1, -0.00045397868702434395, -0.0004085602086570823},
			{bigPos, 1, bigPos, 1}, {-bigPos, 1, negZ, 0}, {inf, 1, inf, 1}, {-inf, 1, negZ, 0},
			{nan, 1, nan, nan},
		}},
		{ELU, 1, false, []point{
			{0, 1, 0, 1}, {negZ, 1, negZ, 1},
			{1, 1, 1, 1}, {-1, 2, -0.6321205588285577, 0.7357588823428847}, {2, -1, 2, -1},
			{-0.5, 1, -0.3934693402873666, 0.6065306597126334}, {-3, 1, -0.950212931632136, 0.049787068367863944},
			{-10, 1, -0.9999546000702375, 4.5399929762484854e-05},
			{bigPos, 1, bigPos, 1}, {-bigPos, 1, -1, 0}, {inf, 1, inf, 1}, {-inf, 1, -1, 0},
			{nan, 1, nan, nan},
		}},
		{ELU, 0.5, false, []point{
			{0, 1, 0, 0.5}, {1, 1, 1, 1}, {-1, 2, -0.31606027941427883, 0.36787944117144233},
			{-3, 1, -0.475106465816068, 0.024893534183931972}, {-bigPos, 1, -0.5, 0}, {nan, 1, nan, nan},
		}},
		{SELU, 0, false, []point{
			{0, 1, 0, 1.0507009873554805}, {negZ, 1, negZ, 1.0507009873554805},
			{1, 1, 1.0507009873554805, 1.0507009873554805}, {-1, 2, -1.1113307378125625, 1.293537206069628},
			{2, -1, 2.101401974710961, -1.0507009873554805}, {-0.5, 1, -0.6917581878028713, 1.0663411530445053},
			{-3, 1, -1.6705687287671118, 0.08753061208026487}, {-10, 1, -1.7580195232607867, 7.981758658994182e-05},
			{bigPos, 1, 1.0507009873554805 * bigPos, 1.0507009873554805}, {-bigPos, 1, -1.7580993408473766, 0},
			{inf, 1, inf, 1.0507009873554805}, {-inf, 1, -1.7580993408473766, 0},
			{nan, 1, nan, nan},
		}},
		{Softplus, 0, false, []point{
			{0, 1, math.Ln2, 0.5}, {negZ, 1, math.Ln2, 0.5},
			{1, 1, 1.3132616875182228, 0.7310585786300049}, {-1, 2, 0.31326168751822286, 0.5378828427399902},
			{2, -1, 2.1269280110429727, -0.8807970779778823}, {-3, 1, 0.04858735157374206, 0.04742587317756679},
			{3, 0.5, 3.048587351573742, 0.4762870634112167}, {-10, 1, 4.539889921686465e-05, 4.5397868702434395e-05},
			{bigPos, 1, bigPos, 1}, {-bigPos, 1, 0, 0}, {inf, 1, inf, 1}, {-inf, 1, 0, 0},
			{nan, 1, nan, nan},
		}},
		{Softsign, 0, false, []point{
			{0, 1, 0, 1}, {negZ, 1, negZ, 1},
			{1, 1, 0.5, 0.25}, {-1, 2, -0.5, 0.5}, {2, -1, 0.6666666666666666, -0.1111111111111111},
			{-3, 1, -0.75, 0.0625}, {-10, 1, -0.9090909090909091, 0.008264462809917356},
			{bigPos, 1, 1, 0}, {-bigPos, 1, -1, 0}, {inf, 1, 1, 0}, {-inf, 1, -1, 0},
			{nan, 1, nan, nan},
		}},
		// Keras 2's clip(0.2·x + 0.5, 0, 1): its gradient passes at the
		// bounds ±2.5 and for NaN, as clip_by_value's.
		{HardSigmoid, 0, false, []point{
			{0, 1, 0.5, 0.2}, {1, 1, 0.7, 0.2}, {-1, 2, 0.3, 0.4}, {2, -1, 0.9, -0.2},
			{2.5, 1, 1, 0.2}, {-2.5, 1, 0, 0.2}, {3, 0.5, 1, 0}, {-3, 1, 0, 0},
			{bigPos, 1, 1, 0}, {-bigPos, 1, 0, 0}, {inf, 1, 1, 0}, {-inf, 1, 0, 0},
			{nan, 1, nan, 0.2},
		}},
		{Exponential, 0, false, []point{
			{0, 1, 1, 1}, {negZ, 1, 1, 1},
			{1, 1, 2.718281828459045, 2.718281828459045}, {-1, 2, 0.36787944117144233, 0.7357588823428847},
			{2, -1, 7.38905609893065, -7.38905609893065}, {3, 0.5, 20.085536923187668, 10.042768461593834},
			{-10, 1, 4.5399929762484854e-05, 4.5399929762484854e-05},
			{bigPos, 1, inf, inf}, {-bigPos, 1, 0, 0}, {inf, 1, inf, inf}, {-inf, 1, 0, 0},
			{nan, 1, nan, nan},
		}},
		// alpha where x ≤ 0, as TensorFlow's LeakyReluGrad (NaN included).
		{LeakyReLU, 0.2, false, []point{
			{0, 1, 0, 0.2}, {negZ, 1, negZ, 0.2},
			{1, 1, 1, 1}, {-1, 2, -0.2, 0.4}, {-3, 1, -0.6000000000000001, 0.2}, {-10, 1, -2, 0.2},
			{bigPos, 1, bigPos, 1}, {-bigPos, 1, -0.2 * bigPos, 0.2}, {inf, 1, inf, 1}, {-inf, 1, -inf, 0.2},
			{nan, 1, nan, 0.2},
		}},
		{LeakyReLU, 0.3, false, []point{{2, 1, 2, 1}, {-1, 2, -0.3, 0.6}, {-3, -1, -0.9, -0.3}}},
	}
	for _, tc := range cases {
		var x, dy, wantY, wantDx []float64
		for len(x) < 64 {
			for _, p := range tc.points {
				x, dy, wantY, wantDx = append(x, p.x), append(dy, p.dy), append(wantY, p.y), append(wantDx, p.dx)
			}
		}
		y := make([]float32, len(x))
		ActivationForward(tc.act, tc.alpha, len(x), to32(x), y)
		check(t, tc.act.String(), x, y, wantY, func(want float64) float64 {
			if tc.exact {
				return 0
			}
			return 4 * u * math.Abs(want)
		})
		// The gradient from the exact y, rounded as a machine holds it.
		dx := make([]float32, len(x))
		ActivationBackward(tc.act, tc.alpha, len(x), to32(x), to32(wantY), to32(dy), dx)
		for i := range dx {
			tol := 0.0
			if !tc.exact {
				tol = 8*u*math.Abs(wantDx[i]) + 2*u*math.Abs(dy[i])
			}
			checkOne(t, tc.act.String()+" gradient", x[i], dx[i], wantDx[i], tol, false)
		}
	}
}

// Softmax works on rows: each case is one row of logits with its
// probabilities, and dy with dx = y ⊙ (dy - y·dy).
func TestSoftmaxAgainstKnownValues(t *testing.T) {
	ln3 := math.Log(3)
	cases := []struct {
		name      string
		x, y      []float64
		dy, dx    []float64
		sameInRow bool // compute all the cases' rows in one call: they have this width
	}{
		{"0, ln 3", []float64{0, ln3}, []float64{0.25, 0.75}, []float64{1, 0}, []float64{0.1875, -0.1875}, true},
		{"equal", []float64{1000, 1000}, []float64{0.5, 0.5}, []float64{1, -1}, []float64{0.5, -0.5}, true},
		{"signed zeros", []float64{0, negZ}, []float64{0.5, 0.5}, []float64{2, 2}, []float64{0, 0}, true},
		{"one dominates", []float64{-1000, 0}, []float64{0, 1}, []float64{1, 1}, []float64{0, 0}, true},
		{"NaN", []float64{nan, 1}, []float64{nan, nan}, []float64{1, 1}, []float64{nan, nan}, true},
		{"1, 2, 3", []float64{1, 2, 3},
			[]float64{0.09003057317038046, 0.24472847105479767, 0.6652409557748219},
			[]float64{0, 0, 1},
			[]float64{-0.059892024544818935, -0.16280340198980445, 0.22269542653462335}, false},
		{"±1e30", []float64{bigPos, 0, -bigPos}, []float64{1, 0, 0}, []float64{1, 2, 3}, []float64{0, 0, 0}, false},
	}
	check1 := func(name string, cols int, x, wantY, dy, wantDx []float64) {
		y := make([]float32, len(x))
		ActivationForward(Softmax, 0, cols, to32(x), y)
		check(t, "softmax "+name, x, y, wantY, func(want float64) float64 { return 4 * u * math.Abs(want) })
		dx := make([]float32, len(x))
		ActivationBackward(Softmax, 0, cols, to32(x), to32(wantY), to32(dy), dx)
		for i := range dx {
			row := dy[i/cols*cols : i/cols*cols+cols]
			tol := 8*u*math.Abs(wantDx[i]) + 4*u*slices.MaxFunc(row, func(a, b float64) int { return cmp.Compare(math.Abs(a), math.Abs(b)) })
			checkOne(t, "softmax gradient "+name, x[i], dx[i], wantDx[i], math.Abs(tol), false)
		}
	}
	// Row by row, then the two-wide rows together: each row is its own
	// distribution.
	var x, y, dy, dx []float64
	for _, tc := range cases {
		check1(tc.name, len(tc.x), tc.x, tc.y, tc.dy, tc.dx)
		if tc.sameInRow {
			x, y, dy, dx = append(x, tc.x...), append(y, tc.y...), append(dy, tc.dy...), append(dx, tc.dx...)
		}
	}
	check1("rows together", 2, x, y, dy, dx)
}

// ActivationForward and Backward run ReLU on MaskPositive, which has an
// AVX-512 path: bit for bit what the op's Do computes, over enough values
// for the vector code.
func TestReLUKernelMatchesOp(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 7, 13
	x := make([]float32, rows*cols)
	dy := make([]float32, rows*cols)
	for i := range x {
		x[i] = rng.Float32()*4 - 2
		dy[i] = rng.Float32()*2 - 1
	}
	x[0], x[1], x[2] = 0, float32(math.Copysign(0, -1)), float32(math.NaN())
	want, got := make([]float32, len(x)), make([]float32, len(x))
	activate(ReLU, 0, cols, x, want)
	ActivationForward(ReLU, 0, cols, x, got)
	sameBits(t, "relu", got, want)
	wantDx, gotDx := make([]float32, len(x)), make([]float32, len(x))
	activateGrad(ReLU, 0, cols, x, want, dy, wantDx)
	ActivationBackward(ReLU, 0, cols, x, got, dy, gotDx)
	sameBits(t, "relu gradient", gotDx, wantDx)
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
			t.Fatalf("%s: value %d is %v, the op computes %v", what, i, got[i], want[i])
		}
	}
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// check compares each got with its want within tol(want); a zero want
// must come with its sign.
func check(t *testing.T, what string, x []float64, got []float32, want []float64, tol func(float64) float64) {
	t.Helper()
	for i := range got {
		checkOne(t, what, x[i], got[i], want[i], tol(want[i]), true)
	}
}

func checkOne(t *testing.T, what string, x float64, got32 float32, want, tol float64, signedZero bool) {
	t.Helper()
	got := float64(got32)
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		if math.IsNaN(want) != math.IsNaN(got) {
			t.Errorf("%s(%v) = %v, want %v", what, x, got, want)
		}
	case tol == 0 || want == 0 && signedZero:
		if math.Float32bits(got32) != math.Float32bits(float32(want)) {
			t.Errorf("%s(%v) = %v (bits %#x), want exactly %v (bits %#x)", what, x, got, math.Float32bits(got32), want, math.Float32bits(float32(want)))
		}
	case math.IsInf(want, 0):
		if got != want {
			t.Errorf("%s(%v) = %v, want %v", what, x, got, want)
		}
	case !(math.Abs(got-want) <= tol):
		t.Errorf("%s(%v) = %v, want %v within %.3g", what, x, got, want, tol)
	}
}

func TestLossKernels(t *testing.T) {
	// Softmax cross-entropy of logits (0, ln 3) against class 1:
	// softmax = (1/4, 3/4), loss = -ln(3/4); gradient = softmax - y.
	p := []float32{0, float32(math.Log(3))}
	y := []float32{0, 1}
	loss, err := LossValue(SoftmaxCrossEntropy, 1, 2, p, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := -math.Log(0.75); math.Abs(loss-want) > 1e-6 {
		t.Errorf("loss %v, want %v", loss, want)
	}
	g := make([]float32, 2)
	if err := LossGradient(SoftmaxCrossEntropy, 1, 2, p, y, 2, g); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(g[0])-0.5) > 1e-6 || math.Abs(float64(g[1])+0.5) > 1e-6 {
		t.Errorf("gradient with seed 2: %v, want [0.5 -0.5]", g)
	}
	out := []float32{1, 1}
	SumRows(2, 2, []float32{1, 2, 3, 4}, out)
	if out[0] != 5 || out[1] != 7 {
		t.Errorf("SumRows added %v, want [5 7]", out)
	}
}
