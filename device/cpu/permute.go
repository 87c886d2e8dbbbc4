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
// matrix x into out, the cols×rows matrix of its transpose: 4×4 blocks,
// four rows of x read and four of out written at a time, the values
// passing through registers; the rows and columns that are left over one
// row of x at a time.
func transposeBlock(x, out []float32, rows, cols, r0, r1, c0, c1 int) {
	r := r0
	for ; r+4 <= r1; r += 4 {
		c := c0
		for ; c+4 <= c1; c += 4 {
			a := x[r*cols+c : r*cols+c+4 : r*cols+c+4]
			b := x[(r+1)*cols+c : (r+1)*cols+c+4 : (r+1)*cols+c+4]
			d := x[(r+2)*cols+c : (r+2)*cols+c+4 : (r+2)*cols+c+4]
			e := x[(r+3)*cols+c : (r+3)*cols+c+4 : (r+3)*cols+c+4]
			o0 := out[c*rows+r : c*rows+r+4 : c*rows+r+4]
			o1 := out[(c+1)*rows+r : (c+1)*rows+r+4 : (c+1)*rows+r+4]
			o2 := out[(c+2)*rows+r : (c+2)*rows+r+4 : (c+2)*rows+r+4]
			o3 := out[(c+3)*rows+r : (c+3)*rows+r+4 : (c+3)*rows+r+4]
			o0[0], o0[1], o0[2], o0[3] = a[0], b[0], d[0], e[0]
			o1[0], o1[1], o1[2], o1[3] = a[1], b[1], d[1], e[1]
			o2[0], o2[1], o2[2], o2[3] = a[2], b[2], d[2], e[2]
			o3[0], o3[1], o3[2], o3[3] = a[3], b[3], d[3], e[3]
		}
		transposeRows(x, out, rows, cols, r, r+4, c, c1)
	}
	transposeRows(x, out, rows, cols, r, r1, c0, c1)
}

// transposeRows is transposeBlock one row of x at a time.
func transposeRows(x, out []float32, rows, cols, r0, r1, c0, c1 int) {
	for r := r0; r < r1; r++ {
		for j, v := range x[r*cols+c0 : r*cols+c1] {
			out[(c0+j)*rows+r] = v
		}
	}
}
