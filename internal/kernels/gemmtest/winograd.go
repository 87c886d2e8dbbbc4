package gemmtest

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// WinogradProducts are the two products of Winograd's convolutions that
// an instruction set's kernels compute (package internal/kernels/conv's
// WinogradProducts): a·b on a block's tiles, and aᵀ·b, set or added, for
// the kernel's gradient.
type WinogradProducts interface {
	WinogradProduct(rows, depth, n int, a, b, c []float32)
	WinogradProductT(rows, m, n int, a, b, c []float32, add bool)
}

// SmallInts returns n whole numbers in [-4, 4]: their products, and sums
// of a few thousand of those, are exact in float32, so a product of them
// has one right answer whatever the order of its sums.
func SmallInts(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.IntN(9) - 4)
	}
	return v
}

// Random returns n values in [-1, 1).
func Random(rng *rand.Rand, n int) []float32 { return random(rng, n) }

// NaNs returns n NaNs: a value left unwritten, or read where it should
// not be, shows.
func NaNs(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}

// CheckWinogradProduct checks w's a·b, for a rows×depth and b depth×n of
// whole numbers, against its definition, exactly. The kernels compute
// rows rounded up to a multiple of padTo, so a and c hold that many; c
// starts as NaNs.
func CheckWinogradProduct(w WinogradProducts, rng *rand.Rand, rows, depth, n, padTo int) error {
	padded := (rows + padTo - 1) / padTo * padTo
	a, b, c := SmallInts(rng, padded*depth), SmallInts(rng, depth*n), NaNs(padded*n)
	w.WinogradProduct(rows, depth, n, a, b, c)
	for i := 0; i < rows; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			for p := 0; p < depth; p++ {
				want += float64(a[i*depth+p]) * float64(b[p*n+j])
			}
			if got := c[i*n+j]; float64(got) != want {
				return fmt.Errorf("a·b, %d×%d times %d×%d: c[%d][%d] = %v, want %v", rows, depth, depth, n, i, j, got, want)
			}
		}
	}
	return nil
}

// CheckWinogradProductT checks w's aᵀ·b, for a rows×m and b rows×n of
// whole numbers, against its definition, exactly: set into c (NaNs
// before), or with add added to c (whole numbers before).
func CheckWinogradProductT(w WinogradProducts, rng *rand.Rand, rows, m, n int, add bool) error {
	a, b := SmallInts(rng, rows*m), SmallInts(rng, rows*n)
	c := NaNs(m * n)
	var before []float32
	if add {
		c = SmallInts(rng, m*n)
		before = append([]float32(nil), c...)
	}
	w.WinogradProductT(rows, m, n, a, b, c, add)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			if add {
				want = float64(before[i*n+j])
			}
			for p := 0; p < rows; p++ {
				want += float64(a[p*m+i]) * float64(b[p*n+j])
			}
			if got := c[i*n+j]; float64(got) != want {
				return fmt.Errorf("aᵀ·b (add %v), %d rows of %d and %d: c[%d][%d] = %v, want %v", add, rows, m, n, i, j, got, want)
			}
		}
	}
	return nil
}
