package avx512

import "math"

// The batch-normalization kernels: the passes of package ops' BatchNorm
// ops over a float32 matrix, vectorised across columns. Each handles the
// first cols &^ 7 columns (whole groups of 8) and returns how many it
// did, 0 where the CPU has no AVX-512; the caller does the rest. They
// compute in float64 exactly what the caller's scalar code does, one
// rounding per operation in the same order (no fused multiply-adds), and
// sum each column over the rows in the same order, so they give its bits:
// ColumnSums, ColumnSquares and ColumnGradSums in four chains (row r into
// chain r mod 4, in order; the total (c0+c1)+(c2+c3) added to the sum),
// so that the additions of a few columns do not wait on each other;
// ColumnGammaGrad one row after another.
//
// Each matrix is rows × cols with rows ld values apart (ld ≥ cols); the
// per-column slices hold at least cols values.

// ColumnSums adds the sum of float64(x[r·ld+j]) over the rows, in four
// chains, to sum[j].
func ColumnSums(x []float32, ld, rows, cols int, sum []float64) int {
	g := groups(len(x), ld, rows, cols)
	if g == 0 {
		return 0
	}
	_ = sum[8*g-1]
	columnSums(&x[0], uintptr(4*ld), rows, g, &sum[0])
	return 8 * g
}

// ColumnSquares adds the sum of d·d, d = float64(x[r·ld+j]) - mean[j],
// over the rows, in four chains, to sum[j]: the biased variance's sum.
func ColumnSquares(x []float32, ld, rows, cols int, mean, sum []float64) int {
	g := groups(len(x), ld, rows, cols)
	if g == 0 {
		return 0
	}
	_, _ = mean[8*g-1], sum[8*g-1]
	columnSquares(&x[0], uintptr(4*ld), rows, g, &mean[0], &sum[0])
	return 8 * g
}

// ColumnGradSums adds the sums over the rows, in four chains, of g to
// sumDy[j] and of g·x̂ to sumDyXhat[j], where g = float64(dy[r·ld+j]) and
// x̂ = (float64(x[r·ld+j]) - mean[j])·rstd[j]: the sums of the input
// gradient of a batch normalization with batch statistics.
func ColumnGradSums(x, dy []float32, ld, rows, cols int, mean, rstd, sumDy, sumDyXhat []float64) int {
	g := groups(min(len(x), len(dy)), ld, rows, cols)
	if g == 0 {
		return 0
	}
	_, _, _, _ = mean[8*g-1], rstd[8*g-1], sumDy[8*g-1], sumDyXhat[8*g-1]
	columnGradSums(&x[0], &dy[0], uintptr(4*ld), rows, g, &mean[0], &rstd[0], &sumDy[0], &sumDyXhat[0])
	return 8 * g
}

// ColumnGammaGrad adds g·(float64(x[r·ld+j]) - mean[j])·rstd[j],
// g = float64(dy[r·ld+j]), multiplied left to right, to sum[j] for every
// row r in order: the gradient of gamma.
func ColumnGammaGrad(x, dy []float32, ld, rows, cols int, mean, rstd, sum []float64) int {
	g := groups(min(len(x), len(dy)), ld, rows, cols)
	if g == 0 {
		return 0
	}
	_, _, _ = mean[8*g-1], rstd[8*g-1], sum[8*g-1]
	columnGammaGrad(&x[0], &dy[0], uintptr(4*ld), rows, g, &mean[0], &rstd[0], &sum[0])
	return 8 * g
}

// ScaleShiftRows writes x[r·ld+j]·scale[j] + shift[j], in float32 and
// rounded after each operation, to out[r·ld+j]: the batch normalization
// itself. With relu, it writes the ReLU of that instead: the value where
// it is above 0, else 0 (NaN included).
func ScaleShiftRows(x, out []float32, ld, rows, cols int, scale, shift []float32, relu bool) int {
	g := groups(min(len(x), len(out)), ld, rows, cols)
	if g == 0 {
		return 0
	}
	_, _ = scale[8*g-1], shift[8*g-1]
	r := 0
	if relu {
		r = 1
	}
	scaleShiftRows(&x[0], &out[0], uintptr(4*ld), rows, g, &scale[0], &shift[0], r)
	return 8 * g
}

// NormGrad holds the per-column values of NormGradRows.
type NormGrad struct {
	Mean, Rstd, GammaRstd, SumDy, SumDyXhat []float64
	N                                       float64 // the rows the statistics came from
	BatchStats                              bool
}

// normGradArgs is NormGrad as normGradRows reads it.
type normGradArgs struct {
	mean, rstd, gammaRstd, sumDy, sumDyXhat *float64
	n                                       float64
	batchStats                              int
	reciprocal                              int // n holds 1/n
}

// NormGradRows writes float32(k.GammaRstd[j]·v) to out[r·ld+j], where
// g = float64(dy[r·ld+j]) and, with batch statistics,
// v = g - (k.SumDy[j] + x̂·k.SumDyXhat[j])/k.N with
// x̂ = (float64(x[r·ld+j]) - k.Mean[j])·k.Rstd[j]; v = g without: the input
// gradient of a batch normalization. Without batch statistics x, Mean,
// Rstd and the sums are not read.
func NormGradRows(x, dy, out []float32, ld, rows, cols int, k *NormGrad) int {
	n := min(len(dy), len(out))
	if k.BatchStats {
		n = min(n, len(x))
	}
	g := groups(n, ld, rows, cols)
	if g == 0 {
		return 0
	}
	_ = k.GammaRstd[8*g-1]
	a := normGradArgs{gammaRstd: &k.GammaRstd[0], n: k.N}
	xp := &dy[0]
	if k.BatchStats {
		_, _, _, _ = k.Mean[8*g-1], k.Rstd[8*g-1], k.SumDy[8*g-1], k.SumDyXhat[8*g-1]
		a.mean, a.rstd, a.sumDy, a.sumDyXhat, a.batchStats = &k.Mean[0], &k.Rstd[0], &k.SumDy[0], &k.SumDyXhat[0], 1
		if frac, _ := math.Frexp(k.N); frac == 0.5 {
			// Dividing by a power of 2 is multiplying by its reciprocal,
			// exactly (underflow included: both round the same exact
			// value once).
			a.n, a.reciprocal = 1/k.N, 1
		}
		xp = &x[0]
	}
	normGradRows(xp, &dy[0], &out[0], uintptr(4*ld), rows, g, &a)
	return 8 * g
}

// groups returns the whole groups of 8 columns the kernels can do on a
// rows × cols matrix with rows ld apart held in n values, or 0 without
// the kernels, or if the matrix does not fit (the caller's code then
// does it all, and its bounds checks report the mistake).
func groups(n, ld, rows, cols int) int {
	if !haveKernels || rows <= 0 || cols < 8 || ld < cols || n < (rows-1)*ld+cols {
		return 0
	}
	return cols / 8
}
