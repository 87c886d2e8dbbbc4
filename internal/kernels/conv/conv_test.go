package conv_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/avx2"
	"github.com/gokeras/gokeras/internal/kernels/avx512"
	"github.com/gokeras/gokeras/internal/kernels/conv"
)

// products are the kernels this CPU has, each tested: the AVX-512 ones
// and the AVX2 ones (which a CPU with AVX-512 runs too).
func products(t testing.TB) map[string]conv.Products {
	ps := map[string]conv.Products{}
	if avx512.Available() {
		ps["avx512"] = avx512.NewWorkspace(2)
	}
	if avx2.Available() {
		ps["avx2"] = avx2.NewWorkspace(2)
	}
	if len(ps) == 0 {
		t.Skip("no AVX-512 or AVX2 on this CPU")
	}
	return ps
}

// convCases are stride-1 convolutions of every padding the layers make:
// "same" with odd and even kernels (the extra row and column of an even
// one go after the image), "valid", and channel counts that fill a
// vector, part of one, or several (from 8: fewer go to the patches).
var convCases = []conv.Shape{
	same(2, 8, 8, 16, 16, 3, 3),
	same(3, 9, 7, 8, 16, 3, 3),
	same(2, 6, 10, 17, 33, 3, 3),
	same(2, 8, 8, 32, 32, 3, 3),
	same(2, 5, 6, 64, 64, 3, 3),
	same(2, 8, 8, 64, 64, 3, 3),   // ResNet-20's stages: computed a row at a time
	same(2, 16, 16, 32, 32, 3, 3), // on AVX-512, tiles of 4, 8 and 16 rows
	same(1, 32, 32, 16, 16, 3, 3),
	same(2, 8, 8, 16, 40, 3, 3),
	// Winograd's tiles of 2×2 outputs: odd images (a last row and column
	// of tiles half outside), more channels out than in and fewer, blocks
	// of tiles across images (cifar10_cnn's 15×15 and 13×13 layers).
	same(3, 7, 9, 16, 32, 3, 3),
	same(2, 15, 15, 32, 64, 3, 3),
	valid(2, 15, 15, 64, 32, 3, 3),
	same(5, 6, 5, 48, 16, 3, 3),
	same(4, 32, 32, 8, 16, 3, 3),  // the kernel's gradient in two parts
	same(3, 24, 24, 16, 16, 3, 3), // Winograd's kernel gradient: a part of two blocks
	same(1, 7, 9, 9, 70, 5, 5),
	same(2, 6, 6, 8, 5, 2, 2),
	same(2, 9, 9, 16, 16, 1, 3),
	valid(2, 10, 10, 32, 32, 3, 3),
	valid(3, 12, 8, 12, 20, 3, 2),
	valid(2, 6, 6, 16, 16, 1, 1),
	same(3, 1, 50, 8, 12, 1, 5), // Conv1D's images: one row
	valid(2, 1, 40, 16, 16, 1, 3),
	// Strides: ResNet-20's downsampling ("same" on even images: nothing
	// before the image), odd images with a row and column of padding
	// before them, "valid", a stride of 3.
	strided(2, 32, 32, 16, 32, 3, 2, true),
	strided(2, 16, 16, 32, 64, 3, 2, true),
	strided(3, 18, 18, 8, 16, 3, 2, true),
	strided(2, 17, 18, 16, 24, 3, 2, false),
	strided(2, 18, 24, 8, 16, 3, 3, true),
	strided(2, 20, 20, 16, 16, 2, 2, false),
	// A kernel of one row, stride 2: no kernel row lands on odd rows.
	{Batch: 2, H: 8, W: 16, C: 8, Filters: 16, KH: 1, KW: 3, Stride: 2, OH: 4, OW: 7},
}

// strided is a convolution of stride s, TensorFlow's "same" or "valid"
// padding.
func strided(batch, h, w, c, f, k, s int, samePad bool) conv.Shape {
	oh, ow := (h-k)/s+1, (w-k)/s+1
	top, left := 0, 0
	if samePad {
		oh, ow = (h+s-1)/s, (w+s-1)/s
		top, left = max((oh-1)*s+k-h, 0)/2, max((ow-1)*s+k-w, 0)/2
	}
	return conv.Shape{Batch: batch, H: h, W: w, C: c, Filters: f, KH: k, KW: k, Stride: s, PadTop: top, PadLeft: left, OH: oh, OW: ow}
}

// st is s's stride.
func st(s conv.Shape) int { return max(1, s.Stride) }

func same(batch, h, w, c, f, kh, kw int) conv.Shape {
	return conv.Shape{Batch: batch, H: h, W: w, C: c, Filters: f, KH: kh, KW: kw,
		PadTop: (kh - 1) / 2, PadLeft: (kw - 1) / 2, OH: h, OW: w}
}

func valid(batch, h, w, c, f, kh, kw int) conv.Shape {
	return conv.Shape{Batch: batch, H: h, W: w, C: c, Filters: f, KH: kh, KW: kw, OH: h - kh + 1, OW: w - kw + 1}
}

// values are n numbers in [-1, 1), different for each seed.
func values(n, seed int) []float32 {
	v := make([]float32, n)
	x := uint32(seed*2654435761 + 1)
	for i := range v {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v[i] = float32(x%2000)/1000 - 1
	}
	return v
}

// inputGradRef is the input's gradient by the definition, in float64:
// each output's gradient times the kernel, added onto every input pixel
// its window covers. It also returns, per value, the sum of the absolute
// terms, the scale of float32 rounding errors.
func inputGradRef(s conv.Shape, dz, k []float32) (dx, scale []float64) {
	dx = make([]float64, s.Batch*s.H*s.W*s.C)
	scale = make([]float64, len(dx))
	for b := 0; b < s.Batch; b++ {
		for oy := 0; oy < s.OH; oy++ {
			for ox := 0; ox < s.OW; ox++ {
				g := dz[((b*s.OH+oy)*s.OW+ox)*s.Filters:][:s.Filters]
				for ky := 0; ky < s.KH; ky++ {
					iy := st(s)*oy + ky - s.PadTop
					if iy < 0 || iy >= s.H {
						continue
					}
					for kx := 0; kx < s.KW; kx++ {
						ix := st(s)*ox + kx - s.PadLeft
						if ix < 0 || ix >= s.W {
							continue
						}
						for ci := 0; ci < s.C; ci++ {
							row := k[((ky*s.KW+kx)*s.C+ci)*s.Filters:][:s.Filters]
							at := ((b*s.H+iy)*s.W+ix)*s.C + ci
							for f, v := range g {
								p := float64(v) * float64(row[f])
								dx[at] += p
								scale[at] += math.Abs(p)
							}
						}
					}
				}
			}
		}
	}
	return dx, scale
}

// close reports the first value of got farther from want than float32
// rounding of sums of that scale allows.
func close(got []float32, want, scale []float64) error {
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); !(d <= 1e-5*scale[i]+1e-30) { // NaN too
			return fmt.Errorf("value %d: got %v, want %v (scale %v)", i, got[i], w, scale[i])
		}
	}
	return nil
}

// forwardRef is the convolution by the definition, in float64, with the
// scale of each value's terms.
func forwardRef(s conv.Shape, x, k, bias []float32) (z, scale []float64) {
	z = make([]float64, s.Batch*s.OH*s.OW*s.Filters)
	scale = make([]float64, len(z))
	for b := 0; b < s.Batch; b++ {
		for oy := 0; oy < s.OH; oy++ {
			for ox := 0; ox < s.OW; ox++ {
				at := ((b*s.OH+oy)*s.OW + ox) * s.Filters
				for f := 0; f < s.Filters; f++ {
					z[at+f] = float64(bias[f])
					scale[at+f] = math.Abs(float64(bias[f]))
				}
				for ky := 0; ky < s.KH; ky++ {
					iy := st(s)*oy + ky - s.PadTop
					for kx := 0; kx < s.KW; kx++ {
						ix := st(s)*ox + kx - s.PadLeft
						if iy < 0 || iy >= s.H || ix < 0 || ix >= s.W {
							continue
						}
						for ci := 0; ci < s.C; ci++ {
							v := float64(x[((b*s.H+iy)*s.W+ix)*s.C+ci])
							row := k[((ky*s.KW+kx)*s.C+ci)*s.Filters:][:s.Filters]
							for f, w := range row {
								z[at+f] += v * float64(w)
								scale[at+f] += math.Abs(v * float64(w))
							}
						}
					}
				}
			}
		}
	}
	return z, scale
}

// kernelGradRef is the kernel's gradient by the definition, in float64.
func kernelGradRef(s conv.Shape, x, dz []float32) (dk, scale []float64) {
	dk = make([]float64, s.KH*s.KW*s.C*s.Filters)
	scale = make([]float64, len(dk))
	for b := 0; b < s.Batch; b++ {
		for oy := 0; oy < s.OH; oy++ {
			for ox := 0; ox < s.OW; ox++ {
				g := dz[((b*s.OH+oy)*s.OW+ox)*s.Filters:][:s.Filters]
				for ky := 0; ky < s.KH; ky++ {
					iy := st(s)*oy + ky - s.PadTop
					for kx := 0; kx < s.KW; kx++ {
						ix := st(s)*ox + kx - s.PadLeft
						if iy < 0 || iy >= s.H || ix < 0 || ix >= s.W {
							continue
						}
						for ci := 0; ci < s.C; ci++ {
							v := float64(x[((b*s.H+iy)*s.W+ix)*s.C+ci])
							at := ((ky*s.KW+kx)*s.C + ci) * s.Filters
							for f, gv := range g {
								dk[at+f] += v * float64(gv)
								scale[at+f] += math.Abs(v * float64(gv))
							}
						}
					}
				}
			}
		}
	}
	return dk, scale
}

// TestConv checks the three kernels of each convolution against the
// definition: forward (with and without a bias), the input's gradient and
// the kernel's, their grids and scratch memory filled with garbage first
// (NaN: a value read that should not be poisons the result).
func TestConv(t *testing.T) {
	// Each case twice: as Plan chooses (Winograd's for 3×3 kernels of
	// stride 1 where the kernels fit), and with Winograd's turned off.
	defer conv.SetWinograd(conv.SetWinograd(true))
	for _, way := range []struct {
		name     string
		winograd bool
	}{{"", true}, {"/direct", false}} {
		conv.SetWinograd(way.winograd)
		for name, p := range products(t) {
			for i, s := range convCases {
				t.Run(fmt.Sprintf("%s%s/%dx%dx%d-f%d-k%dx%d-s%d-p%d,%d", name, way.name, s.H, s.W, s.C, s.Filters, s.KH, s.KW, st(s), s.PadTop, s.PadLeft), func(t *testing.T) {
					mem, ok := conv.Plan(p, s)
					if !ok {
						t.Fatalf("Plan refuses %+v", s)
					}
					x := values(s.Batch*s.H*s.W*s.C, 5*i+1)
					k := values(s.KH*s.KW*s.C*s.Filters, 5*i+2)
					dz := values(s.Batch*s.OH*s.OW*s.Filters, 5*i+3)
					bias := values(s.Filters, 5*i+4)
					images, grad, err := layGrids(p, s, mem, x, dz)
					if err != nil {
						t.Fatal(err)
					}
					z := nan(s.Batch * s.OH * s.OW * s.Filters)
					if err := conv.Forward(p, s, images, k, bias, z, nan(mem.Forward)); err != nil {
						t.Fatal(err)
					}
					want, scale := forwardRef(s, x, k, bias)
					if err := close(z, want, scale); err != nil {
						t.Errorf("forward: %v", err)
					}
					for _, b := range [][]float32{bias, nil} {
						if err := conv.ForwardReLU(p, s, images, k, b, z, nan(mem.Forward)); err != nil {
							t.Fatal(err)
						}
						withBias := b != nil
						if !withBias {
							b = make([]float32, s.Filters)
						}
						want, scale = forwardRef(s, x, k, b)
						for i, v := range want {
							want[i] = max(v, 0)
						}
						if err := close(z, want, scale); err != nil {
							t.Errorf("forward with a ReLU (bias %v): %v", withBias, err)
						}
					}
					if err := conv.Forward(p, s, images, k, nil, z, nan(mem.Forward)); err != nil {
						t.Fatal(err)
					}
					want, scale = forwardRef(s, x, k, make([]float32, s.Filters))
					if err := close(z, want, scale); err != nil {
						t.Errorf("forward without a bias: %v", err)
					}
					dx := nan(len(x))
					if err := conv.InputGrad(p, s, grad, k, dx, nan(mem.InputGrad)); err != nil {
						t.Fatal(err)
					}
					want, scale = inputGradRef(s, dz, k)
					if err := close(dx, want, scale); err != nil {
						t.Errorf("input gradient: %v", err)
					}
					// Through a ReLU whose output the images are: +0 where
					// they are not above 0 (x's values are of both signs).
					dx = nan(len(x))
					if err := conv.InputGradReLU(p, s, grad, k, x, dx, nan(mem.InputGrad)); err != nil {
						t.Fatal(err)
					}
					for i, v := range x {
						if !(v > 0) {
							want[i], scale[i] = 0, 0
						}
					}
					if err := close(dx, want, scale); err != nil {
						t.Errorf("input gradient through a ReLU: %v", err)
					}
					dk := nan(len(k))
					if err := conv.KernelGrad(p, s, images, grad, dk, nan(mem.KernelGrad)); err != nil {
						t.Fatal(err)
					}
					want, scale = kernelGradRef(s, x, dz)
					if err := close(dk, want, scale); err != nil {
						t.Errorf("kernel gradient: %v", err)
					}
				})
			}
		}
	}
}

func TestConvRefusals(t *testing.T) {
	for name, p := range products(t) {
		bad := same(1, 4, 4, 8, 2, 3, 3)
		bad.PadTop = 5
		if _, ok := conv.Plan(p, bad); ok {
			t.Errorf("%s: a padding outside the grid: Plan accepts it", name)
		}
		if err := conv.InputGrad(p, bad, nil, nil, nil, nil); err == nil || errors.Is(err, conv.ErrUnsupported) {
			t.Errorf("%s: a padding outside the grid: error %v, want one that names the shape", name, err)
		}
		if _, ok := conv.Plan(p, same(1, 1, 1, 16, 16, 3, 3)); ok {
			t.Errorf("%s: images of 1×1: Plan accepts them, with fewer grid positions than a tile's rows", name)
		}
		if _, ok := conv.Plan(p, same(2, 32, 32, 3, 16, 3, 3)); ok {
			t.Errorf("%s: images of 3 channels: Plan accepts them", name)
		}
		for _, s := range []conv.Shape{strided(2, 17, 17, 16, 16, 3, 2, true), strided(2, 18, 18, 16, 16, 5, 3, true), strided(2, 16, 16, 32, 64, 1, 2, true)} {
			if _, ok := conv.Plan(p, s); ok {
				t.Errorf("%s: stride %d, %d×%d kernel, on images of width %d, %d columns of padding before: Plan accepts it", name, s.Stride, s.KH, s.KW, s.W, s.PadLeft)
			}
		}
		if err := conv.Forward(p, same(1, 6, 6, 8, 8, 3, 3), make([]float32, 3), nil, nil, nil, nil); err == nil {
			t.Errorf("%s: short slices: no error", name)
		}
	}
}

// BenchmarkConv times each step of the convolutions of ResNet-20 (its
// three stages' and its downsampling 3×3 ones of stride 2) and
// Keras' cifar10_cnn at batch 32, on each instruction set's kernels.
func BenchmarkConv(b *testing.B) {
	for name, p := range products(b) {
		for _, c := range []struct {
			name string
			s    conv.Shape
		}{
			{"resnet20/32x32x16", same(32, 32, 32, 16, 16, 3, 3)},
			{"resnet20/16x16x32", same(32, 16, 16, 32, 32, 3, 3)},
			{"resnet20/8x8x64", same(32, 8, 8, 64, 64, 3, 3)},
			{"resnet20/32x32x16-s2", strided(32, 32, 32, 16, 32, 3, 2, true)},
			{"resnet20/16x16x32-s2", strided(32, 16, 16, 32, 64, 3, 2, true)},
			{"cnn/32x32x32-valid", valid(32, 32, 32, 32, 32, 3, 3)},
			{"cnn/15x15x32-64", same(32, 15, 15, 32, 64, 3, 3)},
			{"cnn/15x15x64-valid", valid(32, 15, 15, 64, 64, 3, 3)},
		} {
			s := c.s
			for _, way := range []struct {
				name     string
				winograd bool
			}{{"", true}, {"-direct", false}} {
				was := conv.SetWinograd(way.winograd)
				mem, _ := conv.Plan(p, s)
				x, k := values(s.Batch*s.H*s.W*s.C, 1), values(s.KH*s.KW*s.C*s.Filters, 2)
				dz, bias := values(s.Batch*s.OH*s.OW*s.Filters, 3), values(s.Filters, 4)
				images, grad, err := layGrids(p, s, mem, x, dz)
				if err != nil {
					b.Fatal(err)
				}
				z, dx, dk := make([]float32, len(dz)), make([]float32, len(x)), make([]float32, len(k))
				fwd, back, kgrad := make([]float32, mem.Forward), make([]float32, mem.InputGrad), make([]float32, mem.KernelGrad)
				flops := float64(2 * s.Batch * s.OH * s.OW * s.KH * s.KW * s.C * s.Filters)
				for _, kernel := range []struct {
					name string
					run  func() error
				}{
					{"grids", func() error {
						_, _, err := layGrids(p, s, mem, x, dz)
						return err
					}},
					{"forward", func() error { return conv.Forward(p, s, images, k, bias, z, fwd) }},
					{"input-grad", func() error { return conv.InputGrad(p, s, grad, k, dx, back) }},
					{"kernel-grad", func() error { return conv.KernelGrad(p, s, images, grad, dk, kgrad) }},
				} {
					if kernel.name == "grids" && (!way.winograd || mem.InputGrid == 0) {
						continue // the same either way, or none
					}
					b.Run(name+"/"+c.name+"/"+kernel.name+way.name, func(b *testing.B) {
						for b.Loop() {
							if err := kernel.run(); err != nil {
								b.Fatal(err)
							}
						}
						if kernel.name != "grids" {
							b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
						}
					})
				}
				conv.SetWinograd(was)
			}
		}
	}
}

// layGrids returns the grids the steps of s read: the images x and the
// output's gradient dz laid out on grids that start as NaNs (so that a
// value the steps read but the grid does not set shows), or where the
// convolution has no grids (Winograd's: mem's grids are 0), x and dz
// themselves.
func layGrids(p conv.Products, s conv.Shape, mem conv.Memory, x, dz []float32) (images, grad []float32, err error) {
	if mem.InputGrid == 0 && mem.OutputGrid == 0 {
		return x, dz, nil
	}
	images, grad = nan(mem.InputGrid), nan(mem.OutputGrid)
	if err := conv.InputGrid(p, s, x, images); err != nil {
		return nil, nil, err
	}
	return images, grad, conv.OutputGrid(p, s, dz, grad)
}

// nan returns n NaNs: garbage that poisons every result it reaches.
func nan(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}
