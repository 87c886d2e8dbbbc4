package cpu

import (
	"runtime"

	mat "github.com/gokeras/gokeras/internal/kernels/matrix"
	"github.com/gokeras/gokeras/ops"
)

// transposeTile is the side of the square blocks a batch of transposes
// moves at a time: a block's rows read and its columns written stay in
// the L1 cache (two 32×32 blocks of float32, 8 KiB).
const transposeTile = 32

// parallelPermute is the fewest values a permutation splits between the
// cores: fewer move faster on one than they take to hand out.
const parallelPermute = 1 << 15

// permute writes x with its axes reordered by p into out (the values of
// ops.PermuteForward): a batch of transposes (p.Transposes) block by
// block, the blocks split between the cores; any other permutation by
// ops.PermuteForward.
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
			transposeBlock(x[b*rows*cols:(b+1)*rows*cols], out[b*rows*cols:(b+1)*rows*cols], rows, cols,
				r0, min(r0+transposeTile, rows), c0, min(c0+transposeTile, cols))
		}
	})
}

// transposeBlock writes rows r0..r1 and columns c0..c1 of the rows×cols
// matrix x into out, the cols×rows matrix of its transpose: out's rows
// written one after another, each from a column of the block.
func transposeBlock(x, out []float32, rows, cols, r0, r1, c0, c1 int) {
	for c := c0; c < c1; c++ {
		dst := out[c*rows+r0 : c*rows+r1]
		src := x[r0*cols+c:]
		for i := range dst {
			dst[i] = src[i*cols]
		}
	}
}
