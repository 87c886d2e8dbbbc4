package avx512

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// chainSums is each of cols columns' sum of term(r, c) over the rows as the
// sum kernels compute it: row r added to chain r mod 4 in order, the
// chains added (c0+c1)+(c2+c3), then added to start[c].
func chainSums(rows, cols int, start []float64, term func(r, c int) float64) []float64 {
	var chains [4][]float64
	for i := range chains {
		chains[i] = make([]float64, cols)
	}
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			chains[r%4][c] += term(r, c)
		}
	}
	sum := make([]float64, cols)
	for c := range sum {
		sum[c] = start[c] + ((chains[0][c] + chains[1][c]) + (chains[2][c] + chains[3][c]))
	}
	return sum
}

// TestColumnSumKernels checks ColumnSums, ColumnSquares and ColumnGradSums
// against chainSums bit for bit, in float64 (where any other order of the
// additions shows), on rows that are and are not multiples of the four
// chains, one group of 8 columns, pairs of them and a pair and one, rows
// further apart than the columns, sums that start from a value.
func TestColumnSumKernels(t *testing.T) {
	if !Available() {
		t.Skip("no AVX-512 on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, sh := range [][3]int{{1, 8, 8}, {2, 16, 16}, {3, 24, 24}, {4, 16, 20}, {5, 8, 8}, {7, 40, 40}, {33, 16, 16}, {1026, 64, 72}, {4099, 24, 24}} {
		rows, cols, ld := sh[0], sh[1], sh[2]
		t.Run(fmt.Sprintf("%dx%d-ld%d", rows, cols, ld), func(t *testing.T) {
			x, dy := make([]float32, rows*ld), make([]float32, rows*ld)
			for i := range x {
				// Magnitudes 2^±30 apart: float64 sums of float32s are
				// then rounded, so the order of the additions shows.
				x[i], dy[i] = float32(rng.NormFloat64()*math.Exp(rng.NormFloat64()*10)), float32(rng.NormFloat64())
			}
			vec := func(lo, hi float64) []float64 {
				v := make([]float64, cols)
				for i := range v {
					v[i] = lo + (hi-lo)*rng.Float64()
				}
				return v
			}
			mean, rstd, start, start2 := vec(-1, 1), vec(0.2, 2), vec(-5, 5), vec(-5, 5)
			xv := func(r, c int) float64 { return float64(x[r*ld+c]) }
			g := func(r, c int) float64 { return float64(dy[r*ld+c]) }
			check := func(what string, got, want []float64) {
				t.Helper()
				for c := range want {
					if math.Float64bits(got[c]) != math.Float64bits(want[c]) {
						t.Fatalf("%s: column %d is %v, want %v", what, c, got[c], want[c])
					}
				}
			}

			sum := append([]float64(nil), start...)
			if n := ColumnSums(x, ld, rows, cols, sum); n != cols {
				t.Fatalf("ColumnSums did %d columns of %d", n, cols)
			}
			check("ColumnSums", sum, chainSums(rows, cols, start, xv))

			sum = append([]float64(nil), start...)
			ColumnSquares(x, ld, rows, cols, mean, sum)
			check("ColumnSquares", sum, chainSums(rows, cols, start, func(r, c int) float64 {
				d := xv(r, c) - mean[c]
				return d * d
			}))

			sd, sdx := append([]float64(nil), start...), append([]float64(nil), start2...)
			ColumnGradSums(x, dy, ld, rows, cols, mean, rstd, sd, sdx)
			check("ColumnGradSums' dy sums", sd, chainSums(rows, cols, start, g))
			check("ColumnGradSums' dy·x̂ sums", sdx, chainSums(rows, cols, start2, func(r, c int) float64 {
				xhat := (xv(r, c) - mean[c]) * rstd[c]
				return g(r, c) * xhat
			}))
		})
	}
}
