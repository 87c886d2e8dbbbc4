// Package launch holds what the CUDA backend (device/cuda) and the kernel
// emulator (device/cuda/kernels/emu) must agree on beyond kernels.cu
// itself: the launch shapes of the column-tiled kernels, the scratch
// memory they use between launches, and how the gather kernels report a
// bad index. It needs neither cgo nor CUDA, so both sides, and tests
// without a GPU, use the same code.
package launch

import (
	"fmt"
	"math"

	"github.com/gokeras/gokeras/ops"
)

// Columns is the launch of a column-tiled kernel of kernels.cu
// (gk_norm_col_sums, gk_batch_norm, gk_batch_norm_grad) over a
// rows × cols matrix. The columns are cut into Tiles tiles of Tile
// consecutive columns and the rows into Splits splits of RowsPerSplit
// consecutive rows (the last may be shorter); the grid has one block per
// (tile, split), Block threads each. Thread t of a block takes column
// t % Tile of its tile and every Lanes()-th row of its split from row
// t / Tile: consecutive threads read consecutive columns of a row.
//
// The shape depends on rows and cols only, never on the GPU, so the sums
// the kernels form, and hence their rounding, are the same on every GPU.
type Columns struct {
	Tile, Block        int
	Tiles, Splits      int
	RowsPerSplit, Rows int
	Cols               int
}

// Grid is the number of blocks.
func (c Columns) Grid() int { return c.Tiles * c.Splits }

// Lanes is the number of threads per column in a block.
func (c Columns) Lanes() int { return c.Block / c.Tile }

// SharedBytes is the shared memory gk_norm_col_sums needs: two doubles
// per thread.
func (c Columns) SharedBytes() int { return 2 * 8 * c.Block }

// SumDoubles is the scratch, in doubles, that gk_norm_col_sums writes
// and gk_norm_col_finish reads: two per column per split.
func (c Columns) SumDoubles() int { return 2 * c.Splits * c.Cols }

const (
	// ColumnBlock is the block of the column-tiled kernels.
	ColumnBlock = 256
	// maxTile is the widest tile: a warp reads 32 consecutive columns.
	maxTile = 32
	// targetBlocks is about the number of blocks the splits aim for: two
	// per SM of the largest GPUs.
	targetBlocks = 256
	// minRowsPerLane is the fewest rows each thread of a split sums.
	minRowsPerLane = 16
)

// ForColumns is the launch the CUDA backend uses over rows × cols
// (rows and cols positive): tiles of the smallest power of two that
// holds cols, up to 32 columns, blocks of ColumnBlock threads, and the rows
// split so that the grid has about 256 blocks while each thread sums at
// least 16 rows.
func ForColumns(rows, cols int) Columns {
	tile := 1
	for tile < cols && tile < maxTile {
		tile *= 2
	}
	tiles := (cols + tile - 1) / tile
	lanes := ColumnBlock / tile
	splits := max(1, min(targetBlocks/tiles, rows/(lanes*minRowsPerLane)))
	c, err := NewColumns(rows, cols, tile, ColumnBlock, splits)
	if err != nil {
		panic(err) // tile and block are powers of two, splits positive
	}
	return c
}

// NewColumns is the launch over rows × cols with the given tile and block
// (powers of two, tile at most block) and about splits splits (at least
// 1): the rows are cut into splits of ⌈rows/splits⌉, and Splits counts
// the splits that hold a row (1 when rows is 0).
func NewColumns(rows, cols, tile, block, splits int) (Columns, error) {
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	if !pow2(tile) || !pow2(block) || tile > block || splits < 1 || rows < 0 || cols < 1 {
		return Columns{}, fmt.Errorf("column launch over %d×%d: tile %d and block %d must be powers of two, the tile at most the block, and %d splits at least 1",
			rows, cols, tile, block, splits)
	}
	per := max(1, (rows+splits-1)/splits)
	return Columns{Tile: tile, Block: block, Tiles: (cols + tile - 1) / tile, Splits: max(1, (rows+per-1)/per),
		RowsPerSplit: per, Rows: rows, Cols: cols}, nil
}

// NoBadIndex is the word gk_gather and gk_scatter_add find no bad index
// in: the host sets the word to it before the first such kernel.
const NoBadIndex = ^uint64(0)

// IndexError decodes the word in which gk_gather and gk_scatter_add keep
// the first bad index they met (the position in the high 32 bits, the
// float32 found there in the low ones; atomicMin keeps the smallest
// position) as the error package ops returns for it on the CPU, for a
// table of rows rows; nil when the word is NoBadIndex.
func IndexError(word uint64, rows int) *ops.IndexError {
	if word == NoBadIndex {
		return nil
	}
	return &ops.IndexError{At: int(word >> 32), Value: float64(math.Float32frombits(uint32(word))), Rows: rows}
}

// NormOperands are the operands of a Norm step by role, absent ones T's
// zero value (a NULL device pointer, a nil slice).
type NormOperands[T any] struct {
	X, Mean, Variance, Gamma, Beta, DY T
}

// NormInputs places the inputs of a Norm step of kind, in the order
// ops.NormKind lists them, by role.
func NormInputs[T any](kind ops.NormKind, in []T) (NormOperands[T], error) {
	var o NormOperands[T]
	var roles []*T
	switch kind {
	case ops.ColumnMean:
		roles = []*T{&o.X}
	case ops.ColumnVariance:
		roles = []*T{&o.X, &o.Mean}
	case ops.BatchNorm:
		roles = []*T{&o.X, &o.Mean, &o.Variance, &o.Gamma, &o.Beta}
	case ops.BatchNormGrad:
		roles = []*T{&o.X, &o.Mean, &o.Variance, &o.Gamma, &o.DY}
	case ops.BatchNormGammaGrad:
		roles = []*T{&o.X, &o.Mean, &o.Variance, &o.DY}
	case ops.LayerNorm:
		roles = []*T{&o.X, &o.Gamma, &o.Beta}
	case ops.LayerNormGrad:
		roles = []*T{&o.X, &o.Gamma, &o.DY}
	case ops.LayerNormGammaGrad:
		roles = []*T{&o.X, &o.DY}
	default:
		return o, fmt.Errorf("no CUDA kernel for the normalization %v", kind)
	}
	if len(in) != len(roles) {
		return o, fmt.Errorf("%v normalization: %d inputs, want %d", kind, len(in), len(roles))
	}
	for i, r := range roles {
		*r = in[i]
	}
	return o, nil
}
