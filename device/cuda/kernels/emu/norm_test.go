//go:build kernelemu && cgo

package emu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device/cuda/internal/launch"
	"github.com/gokeras/gokeras/ops"
)

// Tolerances of the normalization kernels against package ops, relative
// as opstest.Near: the forward ops sum in double in another order than the
// CPU, which moves a float32 result by an ulp at most; the gradients
// subtract nearly equal terms.
const (
	normForwardTol = 1e-6
	normGradTol    = 1e-5
)

// rowBlock is the block of device/cuda's one-block-per-row kernels: a
// power of two from 32 to 256.
func rowBlock(cols int) int {
	b := 32
	for b < cols && b < 256 {
		b *= 2
	}
	return b
}

// normLaunches are the launches TestNorm runs each shape with: the
// backend's (its row kernel's grid cut to 4 blocks, which the grid-stride
// loop allows, to keep the emulator quick), three
// splits with narrow tiles and small blocks, and one lane per column.
func normLaunches(t *testing.T, rows, cols int) []NormLaunch {
	t.Helper()
	custom := func(tile, block, splits int) launch.Columns {
		c, err := launch.NewColumns(rows, cols, tile, block, splits)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return []NormLaunch{
		{Columns: launch.ForColumns(rows, cols), Rows: Launch{min(rows, 4), rowBlock(cols)}, Finish: Launch{2, 64}},
		{Columns: custom(4, 32, 3), Rows: Launch{3, 64}, Finish: Launch{2, 32}},
		{Columns: custom(32, 32, 1), Rows: Launch{1, 32}, Finish: Launch{1, 1}},
	}
}

// normInputs makes the inputs of kind for rows × cols: x off centre,
// positive variances, and for BatchNormGrad with batch statistics x's
// own column mean and variance, as in training.
func normInputs(rng *rand.Rand, kind ops.NormKind, p ops.NormParams, rows, cols int) [][]float32 {
	x := randn(rng, rows*cols, 2)
	for i := range x {
		x[i] += 3
	}
	mean, variance := randn(rng, cols, 1), randn(rng, cols, 1)
	for i := range variance {
		variance[i] = variance[i]*variance[i] + 0.1
	}
	if p.BatchStats {
		ops.NormForward(ops.ColumnMean, p, rows, cols, [][]float32{x}, mean)
		ops.NormForward(ops.ColumnVariance, p, rows, cols, [][]float32{x, mean}, variance)
	}
	gamma, beta, dy := randn(rng, cols, 1), randn(rng, cols, 1), randn(rng, rows*cols, 1)
	switch kind {
	case ops.ColumnMean:
		return [][]float32{x}
	case ops.ColumnVariance:
		return [][]float32{x, mean}
	case ops.BatchNorm:
		return [][]float32{x, mean, variance, gamma, beta}
	case ops.BatchNormGrad:
		return [][]float32{x, mean, variance, gamma, dy}
	case ops.BatchNormGammaGrad:
		return [][]float32{x, mean, variance, dy}
	case ops.LayerNorm:
		return [][]float32{x, gamma, beta}
	case ops.LayerNormGrad:
		return [][]float32{x, gamma, dy}
	case ops.LayerNormGammaGrad:
		return [][]float32{x, dy}
	}
	panic(fmt.Sprintf("no inputs for %v", kind))
}

func TestNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	shapes := [][2]int{
		{1, 1}, {1, 7}, {9, 1}, {5, 3},
		{33, 17},  // odd sizes, a partial tile
		{70, 40},  // two tiles of 32 columns
		{300, 20}, // the backend's launch splits the rows; a partial tile
		{40, 300}, // rows wider than a row block
	}
	cases := []struct {
		kind ops.NormKind
		p    ops.NormParams
		tol  float64
		// exact: the kernels round as the CPU in the same order, so the
		// results are the CPU's to the bit (where Go does not fuse).
		exact bool
	}{
		{ops.ColumnMean, ops.NormParams{}, normForwardTol, false},
		{ops.ColumnVariance, ops.NormParams{}, normForwardTol, false},
		{ops.BatchNorm, ops.NormParams{Epsilon: 1e-3}, normForwardTol, true},
		{ops.BatchNorm, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, normForwardTol, true},
		{ops.BatchNormGrad, ops.NormParams{Epsilon: 1e-3}, normGradTol, true},
		{ops.BatchNormGrad, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, normGradTol, false},
		{ops.BatchNormGammaGrad, ops.NormParams{Epsilon: 1e-3, BatchStats: true}, normGradTol, false},
		{ops.LayerNorm, ops.NormParams{Epsilon: 1e-3}, normForwardTol, false},
		{ops.LayerNormGrad, ops.NormParams{Epsilon: 1e-3}, normGradTol, false},
		{ops.LayerNormGammaGrad, ops.NormParams{Epsilon: 1e-5}, normGradTol, false},
	}
	for _, tc := range cases {
		name := tc.kind.String()
		if tc.p.BatchStats {
			name += " with batch statistics"
		}
		t.Run(name, func(t *testing.T) {
			for _, shape := range shapes {
				rows, cols := shape[0], shape[1]
				in := normInputs(rng, tc.kind, tc.p, rows, cols)
				n := rows * cols
				if tc.kind == ops.ColumnMean || tc.kind == ops.ColumnVariance || tc.kind == ops.BatchNormGammaGrad || tc.kind == ops.LayerNormGammaGrad {
					n = cols
				}
				want := make([]float32, n)
				ops.NormForward(tc.kind, tc.p, rows, cols, in, want)
				for _, l := range normLaunches(t, rows, cols) {
					got := make([]float32, n)
					for i := range got {
						got[i] = float32(math.NaN()) // every value must be written
					}
					if err := Norm(l, tc.kind, tc.p, rows, cols, in, got); err != nil {
						t.Fatalf("%d×%d: %v", rows, cols, err)
					}
					where := fmt.Sprintf("%d×%d, tiles of %d, %d splits, block %d", rows, cols, l.Columns.Tile, l.Columns.Splits, l.Columns.Block)
					if tc.exact && !goFusesMultiplyAdds {
						sameBits(t, where, got, want)
					} else {
						check(t, where, got, want, tc.tol)
					}
				}
			}
		})
	}
}

// embeddingIndices returns m indices into rows rows, with repeats, the
// first and last rows and a negative zero (row 0).
func embeddingIndices(rng *rand.Rand, m, rows int) []float32 {
	idx := make([]float32, m)
	for i := range idx {
		idx[i] = float32(rng.IntN(rows))
	}
	idx[0] = float32(rows - 1)
	if m > 2 {
		idx[m-1] = idx[0]
		idx[1] = float32(math.Copysign(0, -1))
	}
	return idx
}

func TestGatherAndScatterAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, tc := range []struct{ m, rows, n int }{
		{1, 1, 1},
		{1, 5, 8},
		{12, 20, 8},  // Embedding(20, 8) on 2 samples of 6
		{50, 7, 33},  // many repeats, odd widths
		{40, 300, 1}, // most rows never indexed
	} {
		what := fmt.Sprintf("%d indices into %d×%d", tc.m, tc.rows, tc.n)
		table, idx, dy := randn(rng, tc.rows*tc.n, 1), embeddingIndices(rng, tc.m, tc.rows), randn(rng, tc.m*tc.n, 1)
		want := make([]float32, tc.m*tc.n)
		if err := ops.GatherForward(tc.rows, tc.n, table, idx, want); err != nil {
			t.Fatal(err)
		}
		wantDt := make([]float32, tc.rows*tc.n)
		if err := ops.ScatterAddForward(tc.rows, tc.n, idx, dy, wantDt); err != nil {
			t.Fatal(err)
		}
		for _, l := range launches {
			got := make([]float32, len(want))
			if err := Gather(l, tc.rows, table, idx, got); err != nil {
				t.Errorf("%s: gather: %v", what, err)
			}
			sameBits(t, what+": gather", got, want)
			dt := make([]float32, len(wantDt))
			for i := range dt {
				dt[i] = float32(math.NaN()) // rows no index names must be zero
			}
			if err := ScatterAdd(l, tc.rows, idx, dy, dt); err != nil {
				t.Errorf("%s: scatter-add: %v", what, err)
			}
			sameBits(t, what+": scatter-add", dt, wantDt)
		}
	}
}

func TestBadIndexIsReported(t *testing.T) {
	const rows, n = 4, 3
	table, dy := make([]float32, rows*n), make([]float32, 6*n)
	for _, tc := range []struct {
		name string
		idx  []float32
	}{
		{"negative", []float32{0, 1, -1, 3, 2, 1}},
		{"too large", []float32{0, 1, 2, 3, 4, 1}},
		{"not an integer", []float32{0, 2.5, 1, 3, 2, 1}},
		{"just above an integer", []float32{0, 1, 2, math.Nextafter32(3, 4), 2, 1}},
		{"NaN", []float32{float32(math.NaN()), 1, 2, 3, 0, 1}},
		{"infinite", []float32{0, 1, 2, 3, 0, float32(math.Inf(1))}},
		{"two bad: the first is reported", []float32{0, 1, 2, 7, -3, 1}},
		{"the last", []float32{0, 1, 2, 3, 0, rows}},
	} {
		wantErr := ops.GatherForward(rows, n, table, tc.idx, make([]float32, len(tc.idx)*n))
		var want *ops.IndexError
		if !errors.As(wantErr, &want) {
			t.Fatalf("%s: the CPU's gather gives %v, want an *ops.IndexError", tc.name, wantErr)
		}
		for _, l := range launches {
			for _, run := range []struct {
				op  string
				err error
			}{
				{"gather", Gather(l, rows, table, tc.idx, make([]float32, len(tc.idx)*n))},
				{"scatter-add", ScatterAdd(l, rows, tc.idx, dy, make([]float32, rows*n))},
			} {
				var got *ops.IndexError
				if !errors.As(run.err, &got) {
					t.Errorf("%s: %s: %v, want an *ops.IndexError", tc.name, run.op, run.err)
					continue
				}
				if got.At != want.At || got.Rows != want.Rows || math.Float64bits(got.Value) != math.Float64bits(want.Value) ||
					got.Error() != want.Error() {
					t.Errorf("%s: %s: %q, the CPU gives %q", tc.name, run.op, got, want)
				}
			}
		}
	}
}
