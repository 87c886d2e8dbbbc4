package cpu

import (
	"runtime"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	mat "github.com/gokeras/gokeras/internal/kernels/matrix"
	"github.com/gokeras/gokeras/ops"
)

// transposeTile is the side of the square tiles a batch of transposes
// moves at a time: a tile's rows read and its columns written stay in
// the L1 cache (two 32×32 tiles of float32, 8 KiB).
const transposeTile = 32

// parallelPermute is the fewest values a permutation splits between the
// cores: fewer move faster on one than they take to hand out.
const parallelPermute = 1 << 15

// permute writes x with its axes reordered by p into out (the values of
// ops.PermuteForward): a batch of transposes (p.Transposes) tile by tile,
// the tiles split between the cores, each by avx2.Transpose (8×8 blocks
// through AVX2 registers where the CPU has them); any other permutation
// by ops.PermuteForward.
func permute(p ops.PermuteParams, x, out []float32) {
	batch, rows, cols, ok := p.Transposes()
	if !ok {
		ops.PermuteForward(p, x, out)
		return
	}
	n := batch * rows * cols
	if rows == 1 || cols == 1 {
		copy(out[:n], x[:n])
		return
	}
	tilesR := (rows + transposeTile - 1) / transposeTile
	tilesC := (cols + transposeTile - 1) / transposeTile
	perMatrix := tilesR * tilesC
	workers := 1
	if n >= parallelPermute {
		workers = runtime.GOMAXPROCS(0)
	}
	mat.Parallel(workers, batch*perMatrix, 1, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			b, r := t/perMatrix, t%perMatrix
			r0, c0 := (r/tilesC)*transposeTile, (r%tilesC)*transposeTile
			r1, c1 := min(r0+transposeTile, rows), min(c0+transposeTile, cols)
			base := b * rows * cols
			avx2.Transpose(x[base+r0*cols+c0:], cols, out[base+c0*rows+r0:], rows, r1-r0, c1-c0)
		}
	})
}
