package avx2

import (
	"fmt"
	"testing"
)

// Transpose against plain indexing, on shapes with and without whole 8×8
// blocks, with row strides past the matrices; values outside out's matrix
// are left alone.
func TestTranspose(t *testing.T) {
	for _, s := range [][2]int{{1, 1}, {8, 8}, {16, 8}, {8, 24}, {7, 9}, {9, 7}, {32, 32}, {33, 70}, {128, 128}, {3, 40}} {
		rows, cols := s[0], s[1]
		t.Run(fmt.Sprintf("%dx%d", rows, cols), func(t *testing.T) {
			ldx, ldo := cols+3, rows+5
			x := make([]float32, rows*ldx)
			for i := range x {
				x[i] = float32(i + 1)
			}
			out := make([]float32, cols*ldo)
			for i := range out {
				out[i] = -1
			}
			Transpose(x, ldx, out, ldo, rows, cols)
			for c := range cols {
				for j := range ldo {
					want := float32(-1)
					if j < rows {
						want = x[j*ldx+c]
					}
					if got := out[c*ldo+j]; got != want {
						t.Fatalf("out[%d][%d] = %v, want %v (kernels: %t)", c, j, got, want, haveKernels)
					}
				}
			}
		})
	}
}

func BenchmarkTranspose(b *testing.B) {
	const n = 128
	x, out := make([]float32, n*n), make([]float32, n*n)
	for range b.N {
		Transpose(x, n, out, n, n, n)
	}
	b.ReportMetric(float64(n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gvalues/s")
}
