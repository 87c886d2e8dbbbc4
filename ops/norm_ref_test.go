package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// refSums is each of cols columns' sum of term(r, c) over the rows: the
// rows in rowParts(rows, cols) parts of consecutive rows, split as evenly
// as integers allow; in each, its row r0+r added to chain r mod 4 in
// order, the chains added (c0+c1)+(c2+c3); the parts' sums added in
// order.
func refSums(rows, cols int, term func(r, c int) float64) []float64 {
	return refParts(rows, cols, func(r0, r1 int) []float64 { return refChains(r0, r1, cols, term) })
}

// refChains is each of cols columns' sum of term(r, c) over the rows
// [r0, r1): row r0+r added to chain r mod 4 in order, the chains added
// (c0+c1)+(c2+c3).
func refChains(r0, r1, cols int, term func(r, c int) float64) []float64 {
	var chains [4][]float64
	for i := range chains {
		chains[i] = make([]float64, cols)
	}
	for r := r0; r < r1; r++ {
		for c := 0; c < cols; c++ {
			chains[(r-r0)%4][c] += term(r, c)
		}
	}
	sum := make([]float64, cols)
	for c := range sum {
		sum[c] = (chains[0][c] + chains[1][c]) + (chains[2][c] + chains[3][c])
	}
	return sum
}

// refParts adds part(r0, r1), the columns' sums over the rows [r0, r1),
// over the parts of the rows that rowParts gives, in order.
func refParts(rows, cols int, part func(r0, r1 int) []float64) []float64 {
	parts := rowParts(rows, cols)
	var sum []float64
	for k := 0; k < parts; k++ {
		s := part(k*rows/parts, (k+1)*rows/parts)
		if sum == nil {
			sum = s
			continue
		}
		for c := range sum {
			sum[c] += s[c]
		}
	}
	return sum
}

// refNormalize is normalize as it was before its columns were split over
// the cores (commit 5072d1b), kept as the bit-exact reference, its batch
// statistics and their gradient's sums since summed in sumChains chains
// of rows (refSums), and since issue 26 in parts of rows (refParts: the
// gradient of gamma too), layer normalization's sums since issue 30 in
// lanes of a row and blocks of rows (refLayerNorm).
// refNormalize computes every NormKind; sums are kept in float64.
func refNormalize[T float](kind NormKind, p NormParams, rows, cols int, in [][]T, out []T) {
	x := in[0]
	n := float64(rows)
	rstd := func(v T) float64 { return 1 / math.Sqrt(float64(v)+p.Epsilon) }
	switch kind {
	case ColumnMean:
		sum := refSums(rows, cols, func(r, c int) float64 { return float64(x[r*cols+c]) })
		for c := range out[:cols] {
			out[c] = T(sum[c] / n)
		}
	case ColumnVariance:
		// Each part's squares about its own mean (sum/rows), plus
		// rows·d·d for d its mean less the mean given; the parts' added
		// in order.
		mean := in[1]
		parts := rowParts(rows, cols)
		m2 := make([]float64, cols)
		for k := 0; k < parts; k++ {
			r0, r1 := k*rows/parts, (k+1)*rows/parts
			nk := float64(r1 - r0)
			sum := refChains(r0, r1, cols, func(r, c int) float64 { return float64(x[r*cols+c]) })
			sq := refChains(r0, r1, cols, func(r, c int) float64 {
				d := float64(x[r*cols+c]) - sum[c]/nk
				return d * d
			})
			for c := range m2 {
				d := sum[c]/nk - float64(mean[c])
				if t := sq[c] + nk*d*d; k == 0 {
					m2[c] = t
				} else {
					m2[c] += t
				}
			}
		}
		for c := range out[:cols] {
			out[c] = T(m2[c] / n)
		}
	case BatchNorm:
		mean, variance, gamma, beta := in[1], in[2], in[3], in[4]
		scale, shift := make([]T, cols), make([]T, cols)
		for c := range scale {
			s := float64(gamma[c]) * rstd(variance[c])
			scale[c], shift[c] = T(s), T(float64(beta[c])-s*float64(mean[c]))
		}
		for r := 0; r < rows; r++ {
			o := out[r*cols : (r+1)*cols]
			for c, v := range x[r*cols : (r+1)*cols] {
				o[c] = T(v*scale[c]) + shift[c] // the product rounded before the sum
			}
		}
	case BatchNormGrad:
		mean, variance, gamma, dy := in[1], in[2], in[3], in[4]
		// dx = γ·r·(dy - [Σdy + x̂·Σ(dy·x̂)]/n) with batch statistics,
		// γ·r·dy with fixed ones.
		sumDy, sumDyXhat := make([]float64, cols), make([]float64, cols)
		if p.BatchStats {
			sumDy = refSums(rows, cols, func(r, c int) float64 { return float64(dy[r*cols+c]) })
			sumDyXhat = refSums(rows, cols, func(r, c int) float64 {
				xhat := (float64(x[r*cols+c]) - float64(mean[c])) * rstd(variance[c])
				return float64(float64(dy[r*cols+c]) * xhat) // rounded before the sum
			})
		}
		for r := 0; r < rows; r++ {
			o := out[r*cols : (r+1)*cols]
			for c, g := range dy[r*cols : (r+1)*cols] {
				rs := rstd(variance[c])
				v := float64(g)
				if p.BatchStats {
					xhat := (float64(x[r*cols+c]) - float64(mean[c])) * rs
					v -= (sumDy[c] + float64(xhat*sumDyXhat[c])) / n // the product rounded before the sum
				}
				o[c] = T(float64(gamma[c]) * rs * v)
			}
		}
	case BatchNormGammaGrad:
		mean, variance, dy := in[1], in[2], in[3]
		sum := refParts(rows, cols, func(r0, r1 int) []float64 {
			sum := make([]float64, cols)
			for r := r0; r < r1; r++ {
				for c, g := range dy[r*cols : (r+1)*cols] {
					sum[c] += float64(float64(g) * (float64(x[r*cols+c]) - float64(mean[c])) * rstd(variance[c])) // rounded before the sum
				}
			}
			return sum
		})
		for c := range out[:cols] {
			out[c] = T(sum[c])
		}
	case LayerNorm, LayerNormGrad, LayerNormGammaGrad:
		refLayerNorm(kind, p.Epsilon, rows, cols, in, out)
	}
}

// refLanes is the sum of term(c) for c < n as layer normalization sums a
// row: term c added to lane c mod 8 in order, the lanes added
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func refLanes(n int, term func(c int) float64) float64 {
	var l [8]float64
	for c := 0; c < n; c++ {
		l[c%8] += term(c)
	}
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// refLayerNorm is layer normalization as defined since issue 30 (before,
// each row's sums ran over the row in order, seqLayerNorm): each row's
// sums in lanes (refLanes), in float64, each operation rounded (the
// products converted before they are added: no fused multiply-adds), the
// input gradient's two sums divided by cols before they are used; the
// gradient of gamma summed over blocks of 64 rows in order, the blocks'
// sums then added in order.
func refLayerNorm[T float](kind NormKind, eps float64, rows, cols int, in [][]T, out []T) {
	x := in[0]
	n := float64(cols)
	at := func(s []T, r, c int) float64 { return float64(s[r*cols+c]) }
	moments := func(r int) (mean, rstd float64) {
		mean = refLanes(cols, func(c int) float64 { return at(x, r, c) }) / n
		ss := refLanes(cols, func(c int) float64 {
			d := at(x, r, c) - mean
			return float64(d * d)
		})
		return mean, 1 / math.Sqrt(ss/n+eps)
	}
	if kind == LayerNormGammaGrad {
		dy := in[1]
		total := make([]float64, cols)
		for b := 0; b*64 < rows; b++ {
			block := make([]float64, cols)
			for r := b * 64; r < min(rows, (b+1)*64); r++ {
				mean, rs := moments(r)
				for c := range block {
					block[c] += float64(at(dy, r, c) * (at(x, r, c) - mean) * rs)
				}
			}
			for c := range total {
				total[c] += block[c]
			}
		}
		for c := range out[:cols] {
			out[c] = T(total[c])
		}
		return
	}
	gamma := in[1]
	for r := 0; r < rows; r++ {
		mean, rs := moments(r)
		o := out[r*cols : (r+1)*cols]
		if kind == LayerNorm {
			for c := range o {
				o[c] = T(float64(float64(gamma[c])*(at(x, r, c)-mean)*rs) + float64(in[2][c]))
			}
			continue
		}
		dy := in[2]
		g := func(c int) float64 { return float64(float64(gamma[c]) * at(dy, r, c)) }
		meanG := refLanes(cols, g) / n
		meanGXhat := refLanes(cols, func(c int) float64 { return float64(g(c) * (at(x, r, c) - mean) * rs) }) / n
		for c := range o {
			xhat := (at(x, r, c) - mean) * rs
			o[c] = T(rs * (g(c) - (meanG + float64(xhat*meanGXhat))))
		}
	}
}

// seqLayerNorm is layer normalization as it was before issue 30, its sums
// over a row and over all rows in order, in float64: the float64
// definition the lane sums are checked against, within rounding.
func seqLayerNorm[T float](kind NormKind, eps float64, rows, cols int, in [][]T, out []T) {
	x := in[0]
	moments := func(row []T) (mean, rstd float64) {
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(len(row))
		var ss float64
		for _, v := range row {
			d := float64(v) - mean
			ss += d * d
		}
		return mean, 1 / math.Sqrt(ss/float64(len(row))+eps)
	}
	if kind == LayerNormGammaGrad {
		dy := in[1]
		sum := make([]float64, cols)
		for r := 0; r < rows; r++ {
			row := x[r*cols : (r+1)*cols]
			mean, rs := moments(row)
			for c, g := range dy[r*cols : (r+1)*cols] {
				sum[c] += float64(g) * (float64(row[c]) - mean) * rs
			}
		}
		for c := range out[:cols] {
			out[c] = T(sum[c])
		}
		return
	}
	gamma := in[1]
	for r := 0; r < rows; r++ {
		row, o := x[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
		mean, rs := moments(row)
		if kind == LayerNorm {
			beta := in[2]
			for c, v := range row {
				o[c] = T(float64(gamma[c])*(float64(v)-mean)*rs + float64(beta[c]))
			}
			continue
		}
		dy := in[2][r*cols : (r+1)*cols]
		var sumG, sumGXhat float64
		for c, d := range dy {
			g := float64(gamma[c]) * float64(d)
			sumG += g
			sumGXhat += g * (float64(row[c]) - mean) * rs
		}
		for c, d := range dy {
			g := float64(gamma[c]) * float64(d)
			xhat := (float64(row[c]) - mean) * rs
			o[c] = T(rs * (g - (sumG+xhat*sumGXhat)/float64(cols)))
		}
	}
}

// TestNormalizeBitIdenticalToReference checks every NormKind of normalize
// against refNormalize, the single-goroutine code it replaced, bit for bit,
// in float32 and float64, on shapes with odd sizes, one-row batches, more
// columns than a block (normBlock) and large enough to run on several cores.
func TestNormalizeBitIdenticalToReference(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	rng := rand.New(rand.NewPCG(7, 11))
	shapes := [][2]int{{1, 1}, {1, 7}, {1, 3000}, {1, 40000}, {2, 3}, {3, 1}, {5, 17}, {31, 64}, {33, 65},
		{129, 130}, {2048, 16}, {1025, 33}, {4096, 64}, {513, 129}, {32768, 3}, {40000, 1}, {700, 200},
		{8193, 16}, {30001, 17}, {70003, 16}, {1500, 300}, {140003, 16}}
	for i := 0; i < 6; i++ {
		shapes = append(shapes, [2]int{1 + rng.IntN(3000), 1 + rng.IntN(150)})
	}
	kinds := []NormKind{ColumnMean, ColumnVariance, BatchNorm, BatchNormGrad, BatchNormGammaGrad,
		LayerNorm, LayerNormGrad, LayerNormGammaGrad}
	for _, sh := range shapes {
		rows, cols := sh[0], sh[1]
		for _, kind := range kinds {
			for _, batchStats := range []bool{true, false} {
				p := NormParams{Epsilon: 1e-3, BatchStats: batchStats}
				if !batchStats {
					p.Epsilon = 1e-5
				}
				checkNormBits[float32](t, rng, kind, p, rows, cols)
				checkNormBits[float64](t, rng, kind, p, rows, cols)
			}
		}
	}
}

// normInputs returns random inputs of kind for a rows×cols x: matrices
// for x and dy, a vector otherwise; variances are positive and gammas
// and means of either sign, as the op takes them.
func normInputs[T float](rng *rand.Rand, kind NormKind, rows, cols int) [][]T {
	vec := func(lo, hi float64) []T {
		v := make([]T, cols)
		for i := range v {
			v[i] = T(lo + (hi-lo)*rng.Float64())
		}
		return v
	}
	mat := func() []T {
		m := make([]T, rows*cols)
		for i := range m {
			m[i] = T(rng.NormFloat64()*3 + 0.5)
		}
		return m
	}
	x := mat()
	switch kind {
	case ColumnMean:
		return [][]T{x}
	case ColumnVariance:
		return [][]T{x, vec(-1, 1)}
	case BatchNorm:
		return [][]T{x, vec(-1, 1), vec(0, 4), vec(-2, 2), vec(-1, 1)}
	case BatchNormGrad:
		return [][]T{x, vec(-1, 1), vec(0, 4), vec(-2, 2), mat()}
	case BatchNormGammaGrad:
		return [][]T{x, vec(-1, 1), vec(0, 4), mat()}
	case LayerNorm:
		return [][]T{x, vec(-2, 2), vec(-1, 1)}
	case LayerNormGrad:
		return [][]T{x, vec(-2, 2), mat()}
	default: // LayerNormGammaGrad
		return [][]T{x, mat()}
	}
}

func checkNormBits[T float](t *testing.T, rng *rand.Rand, kind NormKind, p NormParams, rows, cols int) {
	t.Helper()
	in := normInputs[T](rng, kind, rows, cols)
	size := rows * cols
	if kind.perColumn() {
		size = cols
	}
	want, got := make([]T, size), make([]T, size)
	refNormalize(kind, p, rows, cols, in, want)
	// got starts as garbage: the kernel must write every value.
	for i := range got {
		got[i] = T(math.NaN())
	}
	normalize(kind, p, rows, cols, in, got)
	for i := range want {
		if !equalBits(want[i], got[i]) {
			t.Fatalf("%v %T batchStats=%t %dx%d: value %d is %v, the reference gives %v (bits differ)",
				kind, want[i], p.BatchStats, rows, cols, i, got[i], want[i])
		}
	}
}

func equalBits[T float](a, b T) bool {
	switch a := any(a).(type) {
	case float32:
		return math.Float32bits(a) == math.Float32bits(any(b).(float32))
	case float64:
		return math.Float64bits(a) == math.Float64bits(any(b).(float64))
	}
	return false
}

// BenchmarkNormalize times the kernels of one BatchNormalization of
// ResNet-20's first stage at batch 32 (32·32·32 rows, 16 channels) and
// of its last (32·8·8 rows, 64 channels): the new kernels (normalize)
// and the reference.
func BenchmarkNormalize(b *testing.B) {
	for _, sh := range [][2]int{{32 * 32 * 32, 16}, {32 * 8 * 8, 64}} {
		rows, cols := sh[0], sh[1]
		for _, kind := range []NormKind{ColumnMean, ColumnVariance, BatchNorm, BatchNormGrad, BatchNormGammaGrad} {
			rng := rand.New(rand.NewPCG(1, 2))
			in := normInputs[float32](rng, kind, rows, cols)
			out := make([]float32, rows*cols)
			p := NormParams{Epsilon: 1e-3, BatchStats: true}
			for _, impl := range []struct {
				name string
				f    func(NormKind, NormParams, int, int, [][]float32, []float32)
			}{{"new", normalize[float32]}, {"ref", refNormalize[float32]}} {
				b.Run(fmt.Sprintf("%v/%dx%d/%s", kind, rows, cols, impl.name), func(b *testing.B) {
					b.SetBytes(int64(4 * rows * cols * len(in)))
					for b.Loop() {
						impl.f(kind, p, rows, cols, in, out)
					}
				})
			}
		}
	}
}

// BenchmarkLayerNorm times LayerNormalization's three kernels on the rows
// of issue 30's transformer benchmark (batch 32 · sequence 128 rows of
// d_model 128), with package avx512's kernels where the CPU has them and
// with the Go code.
func BenchmarkLayerNorm(b *testing.B) {
	rows, cols := 32*128, 128
	for _, kind := range []NormKind{LayerNorm, LayerNormGrad, LayerNormGammaGrad} {
		rng := rand.New(rand.NewPCG(1, 2))
		in := normInputs[float32](rng, kind, rows, cols)
		out := make([]float32, rows*cols)
		p := NormParams{Epsilon: 1e-3}
		for _, kernels := range []bool{true, false} {
			name := "go"
			if kernels {
				name = "kernels"
			}
			b.Run(fmt.Sprintf("%v/%dx%d/%s", kind, rows, cols, name), func(b *testing.B) {
				defer func(k bool) { layerNormKernels = k }(layerNormKernels)
				layerNormKernels = kernels
				b.SetBytes(int64(4 * rows * cols * len(in)))
				for b.Loop() {
					normalize(kind, p, rows, cols, in, out)
				}
			})
		}
	}
}

// TestColumnMeanVariance checks the one-pass ColumnMeanVariance against
// ColumnMean then ColumnVariance, bit for bit, and the variance against
// float64's sum of squares about the mean, in one chain, on columns far
// from zero (mean 1000, deviation 1: where a sum of squares less the
// square of the sum would lose every digit), within 1e-6 relative.
func TestColumnMeanVariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, sh := range [][2]int{{1, 1}, {7, 3}, {2048, 16}, {8193, 16}, {30001, 17}, {70003, 16}, {1500, 300}, {140003, 16}} {
		rows, cols := sh[0], sh[1]
		for _, offset := range []float64{0.5, 1000} {
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(offset + rng.NormFloat64())
			}
			wantMean, wantVar := make([]float32, cols), make([]float32, cols)
			normalize(ColumnMean, NormParams{}, rows, cols, [][]float32{x}, wantMean)
			normalize(ColumnVariance, NormParams{}, rows, cols, [][]float32{x, wantMean}, wantVar)
			mean, variance := make([]float32, cols), make([]float32, cols)
			ColumnMeanVariance(rows, cols, x, mean, variance)
			for c := range mean {
				if !equalBits(mean[c], wantMean[c]) || !equalBits(variance[c], wantVar[c]) {
					t.Fatalf("%dx%d, offset %g, column %d: mean %v and variance %v in one pass, %v and %v in two",
						rows, cols, offset, c, mean[c], variance[c], wantMean[c], wantVar[c])
				}
				var v float64 // about the mean given, as ColumnVariance
				for r := 0; r < rows; r++ {
					d := float64(x[r*cols+c]) - float64(mean[c])
					v += d * d
				}
				v /= float64(rows)
				if e := math.Abs(float64(variance[c])-v) / max(v, 1e-30); e > 1e-6 {
					t.Errorf("%dx%d, offset %g, column %d: variance %v, float64's two passes give %v (%.2g relative)", rows, cols, offset, c, variance[c], v, e)
				}
			}
		}
	}
}
