package layers

import (
	"math"
	"math/rand/v2"
)

// Orthogonal is Keras' orthogonal initializer, the recurrent layers'
// default for their recurrent kernel: a matrix of normal draws, shaped
// (max(rows, cols), min(rows, cols)), made orthonormal by its QR
// decomposition (the signs of R's diagonal moved into Q, as Keras does),
// transposed when there are fewer rows than columns, and scaled by gain
// (Keras' default 1). A kernel (rows, cols) is filled with fanIn rows
// and fanOut columns.
func Orthogonal(gain float64) Initializer { return orthogonal{gain} }

type orthogonal struct{ gain float64 }

func (orthogonal) Name() string { return "orthogonal" }

func (o orthogonal) Fill(out []float32, fanIn, fanOut int, rng *rand.Rand) {
	rows, cols := fanIn, fanOut
	if rows*cols != len(out) {
		// Not a matrix of that shape (a bias): one row of all values.
		rows, cols = 1, len(out)
	}
	m, n := max(rows, cols), min(rows, cols)
	a := make([]float64, m*n) // row-major m×n
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	// Modified Gram-Schmidt on the columns: Q's columns orthonormal, R's
	// diagonal (the norms) positive, which is Keras' q·sign(diag(r)).
	for j := range n {
		for k := range j {
			dot := 0.0
			for i := range m {
				dot += a[i*n+j] * a[i*n+k]
			}
			for i := range m {
				a[i*n+j] -= dot * a[i*n+k]
			}
		}
		norm := 0.0
		for i := range m {
			norm += a[i*n+j] * a[i*n+j]
		}
		norm = math.Sqrt(norm)
		for i := range m {
			a[i*n+j] /= norm
		}
	}
	for r := range rows {
		for c := range cols {
			v := 0.0
			if rows >= cols {
				v = a[r*n+c]
			} else { // the transpose of the (cols, rows) matrix
				v = a[c*n+r]
			}
			out[r*cols+c] = float32(o.gain * v)
		}
	}
}
