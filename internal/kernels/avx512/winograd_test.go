package avx512

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/gemmtest"
)

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
		if err := gemmtest.CheckWinogradProduct(ws, rng, rows, depth, n, WinogradRows); err != nil {
			t.Error(err)
		}
		padded := (rows + WinogradRows - 1) / WinogradRows * WinogradRows
		a, b := gemmtest.Random(rng, padded*depth), gemmtest.Random(rng, depth*n)
		got, want := gemmtest.NaNs(padded*n), gemmtest.NaNs(padded*n)
		ws.WinogradProduct(rows, depth, n, a, b, got)
		winogradProductTiles(padded, depth, n, a, b, want)
		sameBits(t, "a·b", sh, got[:rows*n], want[:rows*n])
	}
	for _, sh := range [][3]int{{5, 16, 16}, {48, 16, 32}, {37, 32, 32}, {7, 32, 16}, {96, 16, 16}, {21, 64, 64}} {
		rows, m, n := sh[0], sh[1], sh[2]
		for _, add := range []bool{false, true} {
			if err := gemmtest.CheckWinogradProductT(ws, rng, rows, m, n, add); err != nil {
				t.Error(err)
			}
			a, b := gemmtest.Random(rng, rows*m), gemmtest.Random(rng, rows*n)
			got := gemmtest.Random(rng, m*n)
			want := append([]float32(nil), got...)
			ws.WinogradProductT(rows, m, n, a, b, got, add)
			winogradProductTTiles(rows, m, n, a, b, want, add)
			sameBits(t, "aᵀ·b", sh, got, want)
		}
	}
}

// sameBits fails t where got and want, the product what of shape sh,
// differ in a bit.
func sameBits(t *testing.T, what string, sh [3]int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("%s %v: value %d: got %v (%#x), the tiles %v (%#x)", what, sh, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			return
		}
	}
}
