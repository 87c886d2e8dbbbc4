package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// layerNormKinds are the three layer-normalization kinds.
var layerNormKinds = []NormKind{LayerNorm, LayerNormGrad, LayerNormGammaGrad}

// wideInputs returns the inputs of a layer-normalization kind whose x and
// dy values span magnitudes 2^±30 or so: float64 sums of their float32s
// are then rounded, so that any other order of the additions shows in the
// bits.
func wideInputs(rng *rand.Rand, kind NormKind, rows, cols int) [][]float32 {
	in := normInputs[float32](rng, kind, rows, cols)
	for _, i := range []int{0, len(in) - 1} {
		if len(in[i]) == rows*cols {
			for j := range in[i] {
				in[i][j] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*7))
			}
		}
	}
	return in
}

// TestLayerNormKernelsAndGoCodeGiveTheReferenceBits checks the three
// layer-normalization kinds on float32, with package avx512's kernels
// (where the CPU has them: rows of a multiple of 8 values) and with the Go
// code, against refLayerNorm bit for bit: rows of 5 to 136 values, no rows,
// one to several blocks of the gamma gradient's rows (64), on one goroutine and
// several, inputs of ordinary and of widely spread magnitudes.
func TestLayerNormKernelsAndGoCodeGiveTheReferenceBits(t *testing.T) {
	defer func(k bool) { layerNormKernels = k }(layerNormKernels)
	rng := rand.New(rand.NewPCG(30, 1))
	shapes := [][2]int{{1, 8}, {3, 16}, {64, 24}, {65, 128}, {200, 72}, {1, 136}, {4096, 128}, {300, 7}, {129, 13}, {0, 16}, {0, 5}}
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		for _, sh := range shapes {
			rows, cols := sh[0], sh[1]
			for _, kind := range layerNormKinds {
				for _, wide := range []bool{false, true} {
					var in [][]float32
					if wide {
						in = wideInputs(rng, kind, rows, cols)
					} else {
						in = normInputs[float32](rng, kind, rows, cols)
					}
					size := rows * cols
					if kind.perColumn() {
						size = cols
					}
					want := make([]float32, size)
					refLayerNorm(kind, 1e-3, rows, cols, in, want)
					for _, kernels := range []bool{true, false} {
						layerNormKernels = kernels
						got := make([]float32, size)
						for i := range got {
							got[i] = float32(math.NaN())
						}
						normalize(kind, NormParams{Epsilon: 1e-3}, rows, cols, in, got)
						for i := range want {
							if !equalBits(got[i], want[i]) {
								t.Fatalf("%v %dx%d, wide %t, kernels %t, GOMAXPROCS %d: value %d is %v, want %v",
									kind, rows, cols, wide, kernels, procs, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestLayerNormWithinRoundingOfSequentialSums checks the lane sums against
// sums over each row in order (seqLayerNorm, the code before issue 30), in
// float32 and float64: both are the same float64 arithmetic but for the
// order of the additions, so they agree within a few roundings of the
// output type, relative to the largest output value (the gradients
// subtract nearly equal values).
func TestLayerNormWithinRoundingOfSequentialSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	for _, sh := range [][2]int{{5, 8}, {70, 128}, {33, 13}, {130, 256}} {
		for _, kind := range layerNormKinds {
			t.Run(fmt.Sprintf("%v/%dx%d", kind, sh[0], sh[1]), func(t *testing.T) {
				checkNearSequential[float32](t, rng, kind, sh[0], sh[1], 1e-6)
				checkNearSequential[float64](t, rng, kind, sh[0], sh[1], 1e-13)
			})
		}
	}
}

func checkNearSequential[T float](t *testing.T, rng *rand.Rand, kind NormKind, rows, cols int, tol float64) {
	t.Helper()
	in := normInputs[T](rng, kind, rows, cols)
	size := rows * cols
	if kind.perColumn() {
		size = cols
	}
	want, got := make([]T, size), make([]T, size)
	seqLayerNorm(kind, 1e-3, rows, cols, in, want)
	normalize(kind, NormParams{Epsilon: 1e-3}, rows, cols, in, got)
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= tol*scale) {
			t.Fatalf("%T value %d is %v, the sequential sums give %v: off by %.3g, more than %g·%.3g",
				want[i], i, got[i], want[i], d, tol, scale)
		}
	}
}
