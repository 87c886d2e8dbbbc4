package avx2_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/gemmtest"
)

// Winograd's F(2×2, 3×3) matrices (package conv's winograd.go).
var (
	winoBT = [][]float64{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}
	winoG  = [][]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	winoAT = [][]float64{{1, 1, 1, 0}, {0, 1, -1, -1}}
)

// matMul is a·b for matrices of rows.
func matMul(a, b [][]float64) [][]float64 {
	c := make([][]float64, len(a))
	for i := range a {
		c[i] = make([]float64, len(b[0]))
		for j := range c[i] {
			for p := range b {
				c[i][j] += a[i][p] * b[p][j]
			}
		}
	}
	return c
}

// transposed is aᵀ.
func transposed(a [][]float64) [][]float64 {
	t := make([][]float64, len(a[0]))
	for j := range t {
		t[j] = make([]float64, len(a))
		for i := range a {
			t[j][i] = a[i][j]
		}
	}
	return t
}

// sandwich is l·x·r.
func sandwich(l, x, r [][]float64) [][]float64 { return matMul(matMul(l, x), r) }

// TestWinogradTransforms checks each transform against its definition
// by matrices, on whole numbers (exact), tiles of 16 or 32 channels with
// gaps between rows and planes that must stay untouched.
func TestWinogradTransforms(t *testing.T) {
	if !avx2.Available() {
		t.Skip("no AVX2+FMA on this CPU")
	}
	ws := avx2.NewWorkspace(1)
	rng := rand.New(rand.NewPCG(27, 3))
	for _, c := range []int{16, 32} {
		const count = 3
		t.Run(fmt.Sprintf("input/c%d", c), func(t *testing.T) {
			ld, plane := (2*count+2)*c+8, count*c+8
			src, dst := gemmtest.SmallInts(rng, 3*ld+(2*count+2)*c), gemmtest.NaNs(16*plane)
			ws.WinogradInput(count, src, ld, c, dst, plane)
			for tile := 0; tile < count; tile++ {
				for ch := 0; ch < c; ch++ {
					d := make([][]float64, 4)
					for i := range d {
						d[i] = make([]float64, 4)
						for j := range d[i] {
							d[i][j] = float64(src[i*ld+(2*tile+j)*c+ch])
						}
					}
					want := sandwich(winoBT, d, transposed(winoBT))
					for e := 0; e < 16; e++ {
						if got := dst[e*plane+tile*c+ch]; float64(got) != want[e/4][e%4] {
							t.Fatalf("tile %d channel %d, value %d: got %v, want %v", tile, ch, e, got, want[e/4][e%4])
						}
					}
				}
			}
			for e := 0; e < 16; e++ {
				for _, v := range dst[e*plane+count*c : min(len(dst), (e+1)*plane)] {
					if v == v {
						t.Fatalf("plane %d: a value written past the tiles", e)
					}
				}
			}
		})
		t.Run(fmt.Sprintf("output-grad/c%d", c), func(t *testing.T) {
			ld, plane := 2*count*c+8, count*c+8
			src, dst := gemmtest.SmallInts(rng, ld+2*count*c), gemmtest.NaNs(16*plane)
			ws.WinogradOutputGrad(count, src, ld, c, dst, plane)
			a := transposed(winoAT)
			for tile := 0; tile < count; tile++ {
				for ch := 0; ch < c; ch++ {
					y := [][]float64{
						{float64(src[2*tile*c+ch]), float64(src[(2*tile+1)*c+ch])},
						{float64(src[ld+2*tile*c+ch]), float64(src[ld+(2*tile+1)*c+ch])},
					}
					want := sandwich(a, y, winoAT)
					for e := 0; e < 16; e++ {
						if got := dst[e*plane+tile*c+ch]; float64(got) != want[e/4][e%4] {
							t.Fatalf("tile %d channel %d, value %d: got %v, want %v", tile, ch, e, got, want[e/4][e%4])
						}
					}
				}
			}
		})
		for _, opts := range []struct{ bias, relu, mask bool }{{false, false, false}, {true, false, false}, {true, true, false}, {false, false, true}, {true, true, true}} {
			t.Run(fmt.Sprintf("output/c%d/bias=%v,relu=%v,mask=%v", c, opts.bias, opts.relu, opts.mask), func(t *testing.T) {
				plane, ld := count*c+8, 2*count*c+8
				src, dst := gemmtest.SmallInts(rng, 16*plane), gemmtest.NaNs(ld+2*count*c)
				var bias, mask []float32
				if opts.bias {
					bias = gemmtest.SmallInts(rng, c)
				}
				if opts.mask {
					mask = gemmtest.SmallInts(rng, len(dst))
					mask[0] = float32(math.NaN())
				}
				ws.WinogradOutput(count, src, plane, c, dst, ld, bias, opts.relu, mask)
				for tile := 0; tile < count; tile++ {
					for ch := 0; ch < c; ch++ {
						m := make([][]float64, 4)
						for i := range m {
							m[i] = make([]float64, 4)
							for j := range m[i] {
								m[i][j] = float64(src[(4*i+j)*plane+tile*c+ch])
							}
						}
						y := sandwich(winoAT, m, transposed(winoAT))
						for i := 0; i < 2; i++ {
							for j := 0; j < 2; j++ {
								at := i*ld + (2*tile+j)*c + ch
								want := y[i][j]
								if bias != nil {
									want += float64(bias[ch])
								}
								// The ReLU and the mask write +0.
								zeroed := opts.relu && want <= 0 || mask != nil && !(mask[at] > 0)
								if zeroed {
									want = 0
								}
								if got := dst[at]; float64(got) != want || zeroed && math.Signbit(float64(got)) {
									t.Fatalf("tile %d channel %d, output (%d, %d): got %v, want %v", tile, ch, i, j, got, want)
								}
							}
						}
					}
				}
				for _, v := range dst[2*count*c : ld] {
					if v == v {
						t.Fatal("a value written between the rows")
					}
				}
			})
		}
	}
	for _, io := range [][2]int{{16, 16}, {16, 32}, {48, 16}} {
		in, out := io[0], io[1]
		plane := in * out
		t.Run(fmt.Sprintf("kernel/%dx%d", in, out), func(t *testing.T) {
			k, u := gemmtest.SmallInts(rng, 9*plane), gemmtest.NaNs(16*plane)
			ws.WinogradKernel(k, in, out, u)
			for v := 0; v < plane; v++ {
				g := make([][]float64, 3)
				for i := range g {
					g[i] = []float64{float64(k[(3*i)*plane+v]), float64(k[(3*i+1)*plane+v]), float64(k[(3*i+2)*plane+v])}
				}
				want := sandwich(winoG, g, transposed(winoG))
				for e := 0; e < 16; e++ {
					if got := u[e*plane+v]; float64(got) != want[e/4][e%4] {
						t.Fatalf("value %d, element %d: got %v, want %v", v, e, got, want[e/4][e%4])
					}
				}
			}
		})
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("kernel-grad/%dx%d/parts%d", in, out, parts), func(t *testing.T) {
				src, dk := gemmtest.SmallInts(rng, parts*16*plane), gemmtest.NaNs(9*plane)
				ws.WinogradKernelGrad(src, parts, in, out, dk)
				for v := 0; v < plane; v++ {
					x := make([][]float64, 4)
					for i := range x {
						x[i] = make([]float64, 4)
						for j := range x[i] {
							for p := 0; p < parts; p++ {
								x[i][j] += float64(src[p*16*plane+(4*i+j)*plane+v])
							}
						}
					}
					want := sandwich(transposed(winoG), x, winoG)
					for e := 0; e < 9; e++ {
						if got := dk[e*plane+v]; float64(got) != want[e/3][e%3] {
							t.Fatalf("value %d, tap %d: got %v, want %v", v, e, got, want[e/3][e%3])
						}
					}
				}
			})
		}
	}
}

// TestWinogradProducts checks the products against their definitions on
// whole numbers (exact): a·b on rows rounded up to WinogradRows, and aᵀ·b,
// set and added, for row counts of c that six divides and that it does
// not (the last tile moved back).
func TestWinogradProducts(t *testing.T) {
	if !avx2.Available() {
		t.Skip("no AVX2+FMA on this CPU")
	}
	ws := avx2.NewWorkspace(1)
	rng := rand.New(rand.NewPCG(27, 4))
	for _, sh := range [][3]int{{7, 16, 16}, {48, 32, 16}, {50, 16, 48}, {96, 64, 32}} {
		if err := gemmtest.CheckWinogradProduct(ws, rng, sh[0], sh[1], sh[2], avx2.WinogradRows); err != nil {
			t.Error(err)
		}
	}
	for _, sh := range [][3]int{{5, 6, 16}, {48, 16, 16}, {37, 22, 32}, {96, 64, 48}, {20, 48, 16}} {
		for _, add := range []bool{false, true} {
			if err := gemmtest.CheckWinogradProductT(ws, rng, sh[0], sh[1], sh[2], add); err != nil {
				t.Error(err)
			}
		}
	}
}
