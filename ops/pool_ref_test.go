package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refMaxPool and refMaxPoolBack are max pooling and its gradient one value
// at a time, as pool and poolBack computed them before their AVX2 kernels:
// the bit-exact reference.
func refMaxPool(w Window, x, y []float32) {
	for b := 0; b < w.Batch; b++ {
		img := x[b*w.H*w.W*w.C:]
		for oh := 0; oh < w.OH; oh++ {
			h0, h1 := windowRange(oh, w.StrideH, w.KH, w.PadTop, w.H)
			for ow := 0; ow < w.OW; ow++ {
				w0, w1 := windowRange(ow, w.StrideW, w.KW, w.PadLeft, w.W)
				out := y[((b*w.OH+oh)*w.OW+ow)*w.C:][:w.C]
				for c := range out {
					m := img[(h0*w.W+w0)*w.C+c]
					for ih := h0; ih < h1; ih++ {
						for iw := w0; iw < w1; iw++ {
							if v := img[(ih*w.W+iw)*w.C+c]; v > m {
								m = v
							}
						}
					}
					out[c] = m
				}
			}
		}
	}
}

func refMaxPoolBack(w Window, x, y, dy, dx []float32) {
	clear(dx)
	for b := 0; b < w.Batch; b++ {
		img, dimg := x[b*w.H*w.W*w.C:], dx[b*w.H*w.W*w.C:]
		for oh := 0; oh < w.OH; oh++ {
			h0, h1 := windowRange(oh, w.StrideH, w.KH, w.PadTop, w.H)
			for ow := 0; ow < w.OW; ow++ {
				w0, w1 := windowRange(ow, w.StrideW, w.KW, w.PadLeft, w.W)
				at := ((b*w.OH+oh)*w.OW + ow) * w.C
			channel:
				for c := 0; c < w.C; c++ {
					for ih := h0; ih < h1; ih++ {
						for iw := w0; iw < w1; iw++ {
							if px := (ih*w.W+iw)*w.C + c; img[px] == y[at+c] {
								dimg[px] += dy[at+c]
								continue channel
							}
						}
					}
				}
			}
		}
	}
}

// Max pooling and its gradient give the reference's bits on channel counts
// the AVX2 kernels take whole (8, 16, 32), in part (19) and not at all
// (5), with ties (values from a small set), NaNs, negative zeros,
// overlapping windows and padding.
func TestMaxPoolBitIdenticalToReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	specials := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(-1))}
	specs := []WindowSpec{
		{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}},
		{Kernel: [2]int{3, 3}, Strides: [2]int{1, 1}, Same: true},
		{Kernel: [2]int{2, 3}, Strides: [2]int{1, 2}},
	}
	for _, c := range []int{5, 8, 16, 19, 32} {
		for si, spec := range specs {
			t.Run(fmt.Sprintf("c%d/spec%d", c, si), func(t *testing.T) {
				win, err := spec.On(3, 7, 6, c)
				if err != nil {
					t.Fatal(err)
				}
				x := make([]float32, 3*7*6*c)
				for i := range x {
					x[i] = float32(rng.IntN(4)) - 1 // ties everywhere
					if rng.IntN(40) == 0 {
						x[i] = specials[rng.IntN(len(specials))]
					}
				}
				n := win.Positions() * c
				y, want := make([]float32, n), make([]float32, n)
				pool(MaxPool, win, x, y)
				refMaxPool(win, x, want)
				checkBits(t, "pool", y, want)
				dy := make([]float32, n)
				for i := range dy {
					dy[i] = float32(rng.NormFloat64())
				}
				dx, wantDx := make([]float32, len(x)), make([]float32, len(x))
				for i := range dx {
					dx[i] = float32(math.NaN()) // poolBack overwrites
				}
				poolBack(MaxPool, win, x, want, dy, dx)
				refMaxPoolBack(win, x, want, dy, wantDx)
				checkBits(t, "poolBack", dx, wantDx)
			})
		}
	}
}

func checkBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d is %v (bits %#x), the reference gives %v (bits %#x)",
				what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}
