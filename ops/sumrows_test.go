package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// SumRows sums blocks of sumRowsBlock rows in row order, then adds the
// blocks' sums in block order: the same bits as that definition written
// as plain loops, on one core or two, on the kernels' whole vectors of
// columns and their tails; within float32 rounding of the float64 sum.
func TestSumRowsBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, rows := range []int{1, 7, sumRowsBlock, sumRowsBlock + 1, 3*sumRowsBlock + 17, 20000} {
		for _, cols := range []int{1, 17, 32, 64} {
			t.Run(fmt.Sprintf("%dx%d", rows, cols), func(t *testing.T) {
				a := make([]float32, rows*cols)
				for i := range a {
					a[i] = float32(rng.NormFloat64())
				}
				want := make([]float32, cols)
				for b0 := 0; b0 < rows; b0 += sumRowsBlock {
					block := make([]float32, cols)
					for r := b0; r < min(b0+sumRowsBlock, rows); r++ {
						for c := range cols {
							block[c] += a[r*cols+c]
						}
					}
					for c := range cols {
						want[c] += block[c]
					}
				}
				for _, procs := range []int{1, 2} {
					prev := runtime.GOMAXPROCS(procs)
					got := make([]float32, cols)
					SumRows(rows, cols, a, got)
					runtime.GOMAXPROCS(prev)
					for c := range cols {
						if math.Float32bits(got[c]) != math.Float32bits(want[c]) {
							t.Fatalf("GOMAXPROCS %d: column %d: %v, want %v", procs, c, got[c], want[c])
						}
						var exact float64
						for r := range rows {
							exact += float64(a[r*cols+c])
						}
						if d := math.Abs(float64(got[c]) - exact); d > 1e-6*float64(rows) {
							t.Fatalf("column %d: %v, float64 sum %v", c, got[c], exact)
						}
					}
				}
			})
		}
	}
}
