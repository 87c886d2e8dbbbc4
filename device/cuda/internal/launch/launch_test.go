package launch

import (
	"errors"
	"math"
	"testing"

	"github.com/gokeras/gokeras/ops"
)

func TestForColumns(t *testing.T) {
	for _, tc := range []struct {
		rows, cols                 int
		tile, tiles, splits, perSp int
	}{
		{1, 1, 1, 1, 1, 1},
		{64, 16, 16, 1, 1, 64},
		{32768, 32, 32, 1, 256, 128}, // a conv layer's channels over batch × pixels
		{8192, 64, 32, 2, 64, 128},
		{2100, 3, 4, 1, 2, 1050},
		{2101, 3, 4, 1, 2, 1051},
		{100, 10000, 32, 313, 1, 100}, // more tiles than the blocks aimed for: no split
	} {
		c := ForColumns(tc.rows, tc.cols)
		if c.Tile != tc.tile || c.Tiles != tc.tiles || c.Splits != tc.splits || c.RowsPerSplit != tc.perSp ||
			c.Block != ColumnBlock || c.Rows != tc.rows || c.Cols != tc.cols {
			t.Errorf("ForColumns(%d, %d) = %+v, want tiles of %d, %d tiles, %d splits of %d rows", tc.rows, tc.cols, c,
				tc.tile, tc.tiles, tc.splits, tc.perSp)
		}
		if c.Grid() != c.Tiles*c.Splits || c.Lanes()*c.Tile != c.Block {
			t.Errorf("ForColumns(%d, %d): grid %d, %d lanes for %+v", tc.rows, tc.cols, c.Grid(), c.Lanes(), c)
		}
	}
}

func TestNewColumns(t *testing.T) {
	for _, tc := range []struct {
		rows, splits, wantSplits, perSplit int
	}{
		{10, 3, 3, 4}, // 4, 4, 2
		{9, 3, 3, 3},
		{4, 3, 2, 2}, // ⌈4/3⌉ = 2 rows a split: two splits hold them all
		{2, 5, 2, 1},
		{0, 4, 1, 1},
	} {
		c, err := NewColumns(tc.rows, 5, 4, 32, tc.splits)
		if err != nil {
			t.Fatal(err)
		}
		if c.Splits != tc.wantSplits || c.RowsPerSplit != tc.perSplit || c.Tiles != 2 || c.SumDoubles() != 2*c.Splits*5 {
			t.Errorf("NewColumns(%d rows, %d splits) = %+v, want %d splits of %d rows", tc.rows, tc.splits, c, tc.wantSplits, tc.perSplit)
		}
		if tc.rows > 0 && ((c.Splits-1)*c.RowsPerSplit >= tc.rows || c.Splits*c.RowsPerSplit < tc.rows) {
			t.Errorf("NewColumns(%d rows, %d splits): %d splits of %d rows leave one empty or a row out", tc.rows, tc.splits, c.Splits, c.RowsPerSplit)
		}
	}
	for _, bad := range [][3]int{{3, 32, 1}, {64, 32, 1}, {4, 48, 1}, {4, 32, 0}, {0, 32, 1}} {
		if _, err := NewColumns(10, 10, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("NewColumns with tile %d, block %d, %d splits: no error", bad[0], bad[1], bad[2])
		}
	}
}

func TestNormInputs(t *testing.T) {
	in := []string{"a", "b", "c", "d", "e"}
	for _, tc := range []struct {
		kind ops.NormKind
		want NormOperands[string]
	}{
		{ops.ColumnMean, NormOperands[string]{X: "a"}},
		{ops.ColumnVariance, NormOperands[string]{X: "a", Mean: "b"}},
		{ops.BatchNorm, NormOperands[string]{X: "a", Mean: "b", Variance: "c", Gamma: "d", Beta: "e"}},
		{ops.BatchNormGrad, NormOperands[string]{X: "a", Mean: "b", Variance: "c", Gamma: "d", DY: "e"}},
		{ops.BatchNormGammaGrad, NormOperands[string]{X: "a", Mean: "b", Variance: "c", DY: "d"}},
		{ops.LayerNorm, NormOperands[string]{X: "a", Gamma: "b", Beta: "c"}},
		{ops.LayerNormGrad, NormOperands[string]{X: "a", Gamma: "b", DY: "c"}},
		{ops.LayerNormGammaGrad, NormOperands[string]{X: "a", DY: "b"}},
	} {
		n := 0
		for _, s := range []string{tc.want.X, tc.want.Mean, tc.want.Variance, tc.want.Gamma, tc.want.Beta, tc.want.DY} {
			if s != "" {
				n++
			}
		}
		got, err := NormInputs(tc.kind, in[:n])
		if err != nil || got != tc.want {
			t.Errorf("NormInputs(%v, %q) = %+v, %v; want %+v", tc.kind, in[:n], got, err, tc.want)
		}
		for _, wrong := range []int{n - 1, n + 1} {
			if wrong > len(in) {
				continue
			}
			if _, err := NormInputs(tc.kind, in[:wrong]); err == nil {
				t.Errorf("NormInputs(%v) with %d inputs, not %d: no error", tc.kind, wrong, n)
			}
		}
	}
	if _, err := NormInputs(ops.NormKind(0), in[:1]); err == nil {
		t.Error("NormInputs of NormKind(0): no error")
	}
}

func TestIndexError(t *testing.T) {
	if e := IndexError(NoBadIndex, 5); e != nil {
		t.Errorf("IndexError(NoBadIndex) = %v, want nil", e)
	}
	for _, tc := range []struct {
		at int
		v  float32
	}{{0, -1}, {7, 2.5}, {1<<31 - 1, 5}, {3, float32(math.Inf(-1))}} {
		word := uint64(tc.at)<<32 | uint64(math.Float32bits(tc.v))
		got := IndexError(word, 5)
		want := &ops.IndexError{At: tc.at, Value: float64(tc.v), Rows: 5}
		if got == nil || *got != *want {
			t.Errorf("IndexError(%#x) = %v, want %v", word, got, want)
			continue
		}
		var ie *ops.IndexError
		if !errors.As(error(got), &ie) || ie.Error() != want.Error() {
			t.Errorf("IndexError(%#x) as an error: %v", word, ie)
		}
	}
}
