package avx512

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// winoValues is n values of kind: "ints", whole numbers in [-4, 4] (their
// products and sums exact in float32), "floats", in [-1, 1), or "nans".
func winoValues(rng *rand.Rand, kind string, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch kind {
		case "ints":
			v[i] = float32(rng.IntN(9) - 4)
		case "floats":
			v[i] = 2*rng.Float32() - 1
		default:
			v[i] = float32(math.NaN())
		}
	}
	return v
}

// TestWinogradProducts checks WinogradProduct (a·b) and WinogradProductT
// (aᵀ·b, set and added) against their definitions on whole numbers
// (exact), and, on values in [-1, 1), bit for bit against the tall
// kernels' tiles (winogradProductTiles, winogradProductTTiles), which
// they replace for up to 32 channels: the same sums in the same order.
// The shapes take the winoRows and winoCols kernels (16 and 32 deep or
// wide, row counts the loops' steps divide and do not) and the tiles (64).
func TestWinogradProducts(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX-512 on this CPU")
	}
	ws := NewWorkspace(1)
	rng := rand.New(rand.NewPCG(5, 26))
	for _, sh := range [][3]int{{7, 16, 16}, {48, 16, 32}, {50, 32, 16}, {96, 32, 32}, {20, 64, 64}} {
		rows, depth, n := sh[0], sh[1], sh[2]
		padded := (rows + WinogradRows - 1) / WinogradRows * WinogradRows
		t.Run(fmt.Sprintf("ab/%dx%dx%d", rows, depth, n), func(t *testing.T) {
			a, b, c := winoValues(rng, "ints", padded*depth), winoValues(rng, "ints", depth*n), winoValues(rng, "nans", padded*n)
			ws.WinogradProduct(rows, depth, n, a, b, c)
			for i := 0; i < rows; i++ {
				for j := 0; j < n; j++ {
					want := 0.0
					for p := 0; p < depth; p++ {
						want += float64(a[i*depth+p]) * float64(b[p*n+j])
					}
					if got := c[i*n+j]; float64(got) != want {
						t.Fatalf("c[%d][%d]: got %v, want %v", i, j, got, want)
					}
				}
			}
			a, b = winoValues(rng, "floats", padded*depth), winoValues(rng, "floats", depth*n)
			got, want := winoValues(rng, "nans", padded*n), winoValues(rng, "nans", padded*n)
			ws.WinogradProduct(rows, depth, n, a, b, got)
			winogradProductTiles(padded, depth, n, a, b, want)
			sameBits(t, got[:rows*n], want[:rows*n])
		})
	}
	for _, sh := range [][3]int{{5, 16, 16}, {48, 16, 32}, {37, 32, 32}, {7, 32, 16}, {96, 16, 16}, {21, 64, 64}} {
		rows, m, n := sh[0], sh[1], sh[2]
		for _, add := range []bool{false, true} {
			t.Run(fmt.Sprintf("atb/%dx%dx%d/add=%v", rows, m, n, add), func(t *testing.T) {
				a, b := winoValues(rng, "ints", rows*m), winoValues(rng, "ints", rows*n)
				c := winoValues(rng, "nans", m*n)
				var before []float32
				if add {
					c = winoValues(rng, "ints", m*n)
					before = append([]float32(nil), c...)
				}
				ws.WinogradProductT(rows, m, n, a, b, c, add)
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
							t.Fatalf("c[%d][%d]: got %v, want %v", i, j, got, want)
						}
					}
				}
				a, b = winoValues(rng, "floats", rows*m), winoValues(rng, "floats", rows*n)
				got := winoValues(rng, "floats", m*n)
				want := append([]float32(nil), got...)
				ws.WinogradProductT(rows, m, n, a, b, got, add)
				winogradProductTTiles(rows, m, n, a, b, want, add)
				sameBits(t, got, want)
			})
		}
	}
}

// sameBits fails t where got and want differ in a bit.
func sameBits(t *testing.T, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: got %v (%#x), the tiles %v (%#x)", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}
