package ops

import (
	"math"

	"github.com/gokeras/gokeras/internal/kernels/avx512"
)

// rowLanes is the number of partial sums of a row's sums in layer
// normalization: value c of the row is added to lane c mod rowLanes in
// order, and the lanes are added by addLanes, so that the additions do not
// wait on each other one by one. Package avx512's LayerNorm kernels sum
// the same way (a lane of a vector each) and do the same float64
// operations, so either gives the same bits.
const rowLanes = 8

// addLanes is a row's sum from its lanes: ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func addLanes(l *[rowLanes]float64) float64 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// rowMoments returns the mean and 1/√(variance+eps) of a row, its sums in
// lanes (rowLanes).
func rowMoments[T float](row []T, eps float64) (mean, rstd float64) {
	n := float64(len(row))
	mean = rowSum(row) / n
	return mean, 1 / math.Sqrt(rowSquares(row, mean)/n+eps)
}

// The row sums below keep their lanes in variables, 8 values a step, and
// add the last len(row) mod 8 values to the first lanes: the lanes of
// rowLanes. Each product is converted to float64 before it is added, so
// that no multiply and add are fused.

// rowSum is the sum of a row's values.
func rowSum[T float](row []T) float64 {
	var l0, l1, l2, l3, l4, l5, l6, l7 float64
	c := 0
	for ; c+rowLanes <= len(row); c += rowLanes {
		v := (*[rowLanes]T)(row[c:])
		l0, l1, l2, l3 = l0+float64(v[0]), l1+float64(v[1]), l2+float64(v[2]), l3+float64(v[3])
		l4, l5, l6, l7 = l4+float64(v[4]), l5+float64(v[5]), l6+float64(v[6]), l7+float64(v[7])
	}
	l := [rowLanes]float64{l0, l1, l2, l3, l4, l5, l6, l7}
	for i, v := range row[c:] {
		l[i] += float64(v)
	}
	return addLanes(&l)
}

// rowSquares is the sum of (x-mean)·(x-mean) over a row's values x.
func rowSquares[T float](row []T, mean float64) float64 {
	sq := func(v T) float64 {
		d := float64(v) - mean
		return float64(d * d)
	}
	var l0, l1, l2, l3, l4, l5, l6, l7 float64
	c := 0
	for ; c+rowLanes <= len(row); c += rowLanes {
		v := (*[rowLanes]T)(row[c:])
		l0, l1, l2, l3 = l0+sq(v[0]), l1+sq(v[1]), l2+sq(v[2]), l3+sq(v[3])
		l4, l5, l6, l7 = l4+sq(v[4]), l5+sq(v[5]), l6+sq(v[6]), l7+sq(v[7])
	}
	l := [rowLanes]float64{l0, l1, l2, l3, l4, l5, l6, l7}
	for i, v := range row[c:] {
		l[i] += sq(v)
	}
	return addLanes(&l)
}

// rowGradSums are the sums of g = γ·dy and of (g·(x-mean))·rstd over a
// row x, its output gradient dy and gamma.
func rowGradSums[T float](row, dy, gamma []T, mean, rstd float64) (sumG, sumGXhat float64) {
	n := len(row)
	dy, gamma = dy[:n], gamma[:n]
	g := func(c int) float64 { return float64(float64(gamma[c]) * float64(dy[c])) }
	var l0, l1, l2, l3, l4, l5, l6, l7 float64
	c := 0
	for ; c+rowLanes <= n; c += rowLanes {
		l0, l1, l2, l3 = l0+g(c), l1+g(c+1), l2+g(c+2), l3+g(c+3)
		l4, l5, l6, l7 = l4+g(c+4), l5+g(c+5), l6+g(c+6), l7+g(c+7)
	}
	l := [rowLanes]float64{l0, l1, l2, l3, l4, l5, l6, l7}
	for i := range n - c {
		l[i] += g(c + i)
	}
	sumG = addLanes(&l)
	gx := func(c int) float64 { return float64(g(c) * (float64(row[c]) - mean) * rstd) }
	l0, l1, l2, l3, l4, l5, l6, l7 = 0, 0, 0, 0, 0, 0, 0, 0
	for c = 0; c+rowLanes <= n; c += rowLanes {
		l0, l1, l2, l3 = l0+gx(c), l1+gx(c+1), l2+gx(c+2), l3+gx(c+3)
		l4, l5, l6, l7 = l4+gx(c+4), l5+gx(c+5), l6+gx(c+6), l7+gx(c+7)
	}
	l = [rowLanes]float64{l0, l1, l2, l3, l4, l5, l6, l7}
	for i := range n - c {
		l[i] += gx(c + i)
	}
	return sumG, addLanes(&l)
}

// layerNormKernels says whether layer normalization on float32 uses
// package avx512's kernels where the CPU has them; the tests turn it off
// to check the Go code on such CPUs.
var layerNormKernels = true

// gammaRowBlock is the number of rows whose gamma gradient one partial sum
// holds: LayerNormGammaGrad sums each block of rows in order, the blocks
// on every core, then adds the blocks' sums in order, so that the result
// does not depend on the number of cores.
const gammaRowBlock = 64

func layerNorm[T float](kind NormKind, eps float64, rows, cols int, in [][]T, out []T) {
	if kind != LayerNormGammaGrad {
		parallel(rows, cols, func(lo, hi int) { layerNormRows(kind, eps, lo, hi, cols, in, out) })
		return
	}
	x, dy := in[0], in[1]
	blocks := (rows + gammaRowBlock - 1) / gammaRowBlock
	buf := normScratchT[float64](blocks * cols)
	defer normScratchPoolT[float64]().Put(buf)
	part := *buf
	clear(part)
	parallel(blocks, gammaRowBlock*cols, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			r0, r1 := b*gammaRowBlock, min(rows, (b+1)*gammaRowBlock)
			sum := part[b*cols : (b+1)*cols]
			if xf, ok := asFloat32(x[r0*cols : r1*cols]); ok && layerNormKernels &&
				avx512.LayerNormGammaGradRows(xf, any(dy[r0*cols:r1*cols]).([]float32), r1-r0, cols, eps, sum) {
				continue
			}
			for r := r0; r < r1; r++ {
				row := x[r*cols : (r+1)*cols]
				mean, rs := rowMoments(row, eps)
				for c, g := range dy[r*cols : (r+1)*cols] {
					sum[c] += float64(float64(g) * (float64(row[c]) - mean) * rs)
				}
			}
		}
	})
	for c := range out[:cols] {
		s := 0.0
		for b := range blocks {
			s += part[b*cols+c]
		}
		out[c] = T(s)
	}
}

// layerNormRows computes LayerNorm or LayerNormGrad for rows [lo, hi):
// each row is independent of the others.
func layerNormRows[T float](kind NormKind, eps float64, lo, hi, cols int, in [][]T, out []T) {
	x, gamma := in[0], in[1]
	if xf, ok := asFloat32(x[lo*cols : hi*cols]); ok && layerNormKernels {
		o, g, b := any(out[lo*cols:hi*cols]).([]float32), any(gamma).([]float32), any(in[2]).([]float32)
		if kind == LayerNorm && avx512.LayerNormRows(xf, g, b, o, hi-lo, cols, eps) {
			return
		}
		if kind == LayerNormGrad && avx512.LayerNormGradRows(xf, g, b[lo*cols:hi*cols], o, hi-lo, cols, eps) {
			return
		}
	}
	n := float64(cols)
	for r := lo; r < hi; r++ {
		row, o := x[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
		mean, rs := rowMoments(row, eps)
		if kind == LayerNorm {
			beta := in[2]
			for c, v := range row {
				o[c] = T(float64(float64(gamma[c])*(float64(v)-mean)*rs) + float64(beta[c]))
			}
			continue
		}
		// dx = r·(g - [Σg/cols + x̂·(Σ(g·x̂)/cols)]) with g = γ·dy, the sums in
		// lanes.
		dy := in[2][r*cols : (r+1)*cols]
		sumG, sumGXhat := rowGradSums(row, dy, gamma, mean, rs)
		meanG, meanGXhat := sumG/n, sumGXhat/n
		for c, d := range dy {
			g := float64(float64(gamma[c]) * float64(d))
			xhat := (float64(row[c]) - mean) * rs
			o[c] = T(rs * (g - (meanG + float64(xhat*meanGXhat))))
		}
	}
}
