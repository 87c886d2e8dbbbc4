//go:build kernelemu && cgo

package emu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
)

// Launch shapes: one thread doing everything, a grid smaller than the work
// (grid-stride loops), and the device/cuda defaults.
var launches = []Launch{{1, 1}, {2, 32}, {3, 64}, {4, 256}}

// Row kernels need a power-of-two block.
var rowLaunches = []Launch{{1, 32}, {2, 64}, {8, 256}}

func randn(rng *rand.Rand, n int, scale float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(scale * rng.NormFloat64())
	}
	return s
}

func check(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if d := opstest.Diff(got, want, tol); d != "" {
		t.Errorf("%s: %s", what, d)
	}
}

const tol = 1e-5

func TestBiasAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	rows, cols := 7, 45
	for _, act := range opstest.ElementwiseActivations() {
		o := opstest.MustBuild(t, act, ops.MeanSquaredError, rows, cols)
		alpha := float32(ops.DefaultAlpha(act))
		for _, l := range launches {
			x, b := randn(rng, rows*cols, 3), randn(rng, cols, 1)
			x[0], x[1] = 80, -80
			z, y := make([]float32, len(x)), make([]float32, len(x))
			BiasAct(l, x, b, z, y, rows, cols, int(act), alpha)
			wantZ := make([]float32, len(x))
			for i := range x {
				wantZ[i] = x[i] + b[i%cols]
			}
			check(t, act.String()+" z", z, wantZ, 0)
			check(t, act.String()+" y", y, opstest.MustRun(t, o.Activation, opstest.Dense(wantZ, rows, cols)), tol)
			y2 := make([]float32, len(x))
			BiasAct(l, x, nil, nil, y2, rows, cols, int(act), alpha)
			check(t, act.String()+" without bias", y2, opstest.MustRun(t, o.Activation, opstest.Dense(x, rows, cols)), tol)
			inPlace := append([]float32(nil), x...)
			BiasAct(l, inPlace, b, inPlace, nil, rows, cols, int(ops.Linear), 0)
			check(t, "bias in place", inPlace, wantZ, 0)
		}
	}
}

func TestSoftmaxAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, shape := range [][2]int{{4, 10}, {3, 300}, {1, 1}, {20, 33}} {
		rows, cols := shape[0], shape[1]
		o := opstest.MustBuild(t, ops.Softmax, ops.MeanSquaredError, rows, cols)
		for _, l := range rowLaunches {
			x := randn(rng, rows*cols, 5)
			x[0] = 1000
			y := make([]float32, len(x))
			SoftmaxRows(l, x, y, rows, cols)
			yCPU := opstest.MustRun(t, o.Activation, opstest.Dense(x, rows, cols))
			check(t, "softmax", y, yCPU, tol)
			dy, dx := randn(rng, len(x), 1), make([]float32, len(x))
			SoftmaxGradRows(l, yCPU, dy, dx, rows, cols)
			want := opstest.MustRun(t, o.ActivationGrad, opstest.Dense(x, rows, cols), opstest.Dense(yCPU, rows, cols), opstest.Dense(dy, rows, cols))
			check(t, "softmax gradient", dx, want, tol)
		}
	}
}

func TestActGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	rows, cols := 5, 31
	for _, act := range opstest.ElementwiseActivations() {
		o := opstest.MustBuild(t, act, ops.MeanSquaredError, rows, cols)
		alpha := float32(ops.DefaultAlpha(act))
		for _, l := range launches {
			x, dy := randn(rng, rows*cols, 2), randn(rng, rows*cols, 1)
			x[3] = 0
			x[4], x[5] = 2.5, -2.5
			y := opstest.MustRun(t, o.Activation, opstest.Dense(x, rows, cols))
			dx := make([]float32, len(x))
			ActGrad(l, x, y, dy, dx, int(act), alpha)
			want := opstest.MustRun(t, o.ActivationGrad, opstest.Dense(x, rows, cols), opstest.Dense(y, rows, cols), opstest.Dense(dy, rows, cols))
			check(t, act.String()+" gradient", dx, want, tol)
		}
	}
}

func TestSumRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, shape := range [][2]int{{32, 300}, {1, 5}, {200, 3}, {1024, 10}, {7, 70}} {
		rows, cols := shape[0], shape[1]
		o := opstest.MustBuild(t, ops.Linear, ops.MeanSquaredError, rows, cols)
		for _, l := range launches {
			a, out := randn(rng, rows*cols, 1), make([]float32, cols)
			SumRows(l, a, out, rows, cols)
			check(t, "column sums", out, opstest.MustRun(t, o.SumRows, opstest.Dense(a, rows, cols)), tol)
		}
	}
}

func TestU8ToF32(t *testing.T) {
	in := make([]byte, 777)
	for i := range in {
		in[i] = byte(i * 13)
	}
	for _, l := range launches {
		out := make([]float32, len(in))
		U8ToF32(l, in, out, 1.0/255)
		for i, b := range in {
			if want := float32(b) * (1.0 / 255); out[i] != want {
				t.Fatalf("byte %d (%d) -> %v, want %v", i, b, out[i], want)
			}
		}
	}
}

// sameBits requires got and want to hold the same float32s to the bit.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("%s: [%d] = %v (%#08x), the CPU gives %v (%#08x)", what, i, got[i], math.Float32bits(got[i]),
				want[i], math.Float32bits(want[i]))
			return
		}
	}
}

// gatherTol bounds the gathers' (patches' and pooling's gradients)
// difference from the CPU, which scatters: relative, as opstest.Near.
const gatherTol = 1e-5

type imageCase struct {
	name           string
	batch, h, w, c int
	spec           ops.WindowSpec
}

func (ic imageCase) window(t *testing.T) ops.Window {
	t.Helper()
	w, err := ic.spec.On(ic.batch, ic.h, ic.w, ic.c)
	if err != nil {
		t.Fatalf("%s: %v", ic.name, err)
	}
	return w
}

func TestPatchesAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	k3 := [2]int{3, 3}
	cases := []imageCase{
		{"3x3 valid, odd sizes", 2, 5, 7, 3, ops.WindowSpec{Kernel: k3}},
		{"3x3 same, odd sizes", 2, 5, 7, 3, ops.WindowSpec{Kernel: k3, Same: true}},
		{"3x3 same, even sizes", 2, 6, 8, 2, ops.WindowSpec{Kernel: k3, Same: true}},
		{"4x2 same (padding after > before)", 1, 6, 5, 2, ops.WindowSpec{Kernel: [2]int{4, 2}, Same: true}},
		{"3x3 stride 2 same, odd", 2, 7, 9, 3, ops.WindowSpec{Kernel: k3, Strides: [2]int{2, 2}, Same: true}},
		{"3x3 stride 2 same, even", 1, 8, 8, 3, ops.WindowSpec{Kernel: k3, Strides: [2]int{2, 2}, Same: true}},
		{"3x3 stride 2 valid", 2, 8, 7, 2, ops.WindowSpec{Kernel: k3, Strides: [2]int{2, 2}}},
		{"2x3 strides 2,1 valid", 2, 7, 6, 1, ops.WindowSpec{Kernel: [2]int{2, 3}, Strides: [2]int{2, 1}}},
		{"3x3 dilation 2 same", 1, 9, 8, 2, ops.WindowSpec{Kernel: k3, Dilation: [2]int{2, 2}, Same: true}},
		{"2x2 dilation 2 same, even", 2, 6, 6, 3, ops.WindowSpec{Kernel: [2]int{2, 2}, Dilation: [2]int{2, 2}, Same: true}},
		{"3x3 dilation 2 stride 2 valid", 1, 11, 9, 2, ops.WindowSpec{Kernel: k3, Strides: [2]int{2, 2}, Dilation: [2]int{2, 2}}},
		{"1x1", 3, 4, 5, 6, ops.WindowSpec{Kernel: [2]int{1, 1}}},
		{"1D: 1x3 same stride 2", 2, 1, 15, 4, ops.WindowSpec{Kernel: [2]int{1, 3}, Strides: [2]int{1, 2}, Same: true}},
	}
	for _, ic := range cases {
		w := ic.window(t)
		x := randn(rng, w.InputSize(), 1)
		want := make([]float32, w.Positions()*w.PatchSize())
		ops.PatchesForward(w, x, want)
		dcols := randn(rng, len(want), 1)
		wantDx := make([]float32, len(x))
		ops.PatchesBackward(w, dcols, wantDx)
		for _, l := range launches {
			cols := make([]float32, len(want))
			for i := range cols {
				cols[i] = float32(math.NaN()) // every value must be written, padding too
			}
			Patches(l, w, x, cols)
			sameBits(t, ic.name+": patches", cols, want)
			dx := make([]float32, len(x))
			for i := range dx {
				dx[i] = float32(math.NaN()) // overwritten, not added to
			}
			PatchesGrad(l, w, dcols, dx)
			check(t, ic.name+": patches gradient", dx, wantDx, gatherTol)
		}
	}
}

func TestPoolAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	k2, k3, s2 := [2]int{2, 2}, [2]int{3, 3}, [2]int{2, 2}
	cases := []imageCase{
		{"2x2 stride 2, odd sizes", 2, 6, 7, 3, ops.WindowSpec{Kernel: k2, Strides: s2}},
		{"2x2 stride 2 same, odd sizes", 2, 5, 7, 3, ops.WindowSpec{Kernel: k2, Strides: s2, Same: true}},
		{"3x3 stride 2, overlapping", 2, 9, 9, 2, ops.WindowSpec{Kernel: k3, Strides: s2}},
		{"3x3 stride 2 same, even and odd", 2, 8, 7, 3, ops.WindowSpec{Kernel: k3, Strides: s2, Same: true}},
		{"3x3 stride 1 same", 1, 5, 6, 2, ops.WindowSpec{Kernel: k3, Same: true}},
		{"2x2 stride 1 same, even", 1, 6, 4, 2, ops.WindowSpec{Kernel: k2, Same: true}},
		{"global", 2, 5, 6, 4, ops.WindowSpec{Kernel: [2]int{5, 6}}},
		{"1D: 1x3 stride 2", 2, 1, 16, 3, ops.WindowSpec{Kernel: [2]int{1, 3}, Strides: [2]int{1, 2}}},
	}
	// Inputs: distinct values, and values from {-1, 0, 1} whose windows
	// hold their maximum more than once (the gradient goes to the first).
	inputs := []struct {
		name string
		make func(n int) []float32
	}{
		{"normal", func(n int) []float32 { return randn(rng, n, 1) }},
		{"ties", func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(rng.IntN(3) - 1)
			}
			return s
		}},
	}
	for _, ic := range cases {
		w := ic.window(t)
		for _, kind := range []ops.PoolKind{ops.MaxPool, ops.AvgPool} {
			for _, in := range inputs {
				what := fmt.Sprintf("%s, %v, %s", ic.name, kind, in.name)
				x := in.make(w.InputSize())
				want := make([]float32, w.Positions()*w.C)
				ops.PoolForward(kind, w, x, want)
				dy := randn(rng, len(want), 1)
				wantDx := make([]float32, len(x))
				ops.PoolBackward(kind, w, x, want, dy, wantDx)
				for _, l := range launches {
					y := make([]float32, len(want))
					Pool(l, kind, w, x, y)
					sameBits(t, what+": pooled", y, want)
					dx := make([]float32, len(x))
					for i := range dx {
						dx[i] = float32(math.NaN())
					}
					PoolGrad(l, kind, w, x, want, dy, dx)
					check(t, what+": gradient", dx, wantDx, gatherTol)
				}
			}
		}
	}
}

func TestDropout(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 100_003 // not a whole number of Philox blocks
	x := randn(rng, n, 1)
	cases := []struct {
		name          string
		p             ops.DropoutParams
		step          uint64
		first, perRow int // the first row in the global batch, units a row
	}{
		{"rate 0.25, step past 2^24", ops.DropoutParams{Rate: 0.25, Key: 0x0123456789abcdef}, 3<<24 + 12345, 0, 1},
		{"rate 0.5, step past 2^32", ops.DropoutParams{Rate: 0.5, Key: 0xfedcba9876543210}, 5<<32 + 7, 0, 1},
		{"rate 0.1, step 0", ops.DropoutParams{Rate: 0.1, Key: 42}, 0, 0, 1},
		{"rate 0.9, step 1", ops.DropoutParams{Rate: 0.9, Key: 1 << 40}, 1, 0, 1},
		{"rate 0: keeps all", ops.DropoutParams{Rate: 0, Key: 7}, 99, 0, 1},
		// A replica's shard: rows of 7 units from row 5 of the global batch
		// (off Philox's blocks of 4), and from row 2^24 + 3 (both words).
		{"rate 0.3, a shard from row 5", ops.DropoutParams{Rate: 0.3, Key: 11}, 8, 5, 7},
		{"rate 0.3, a shard from row 2^24+3", ops.DropoutParams{Rate: 0.3, Key: 11}, 8, 1<<24 + 3, 7},
	}
	for _, c := range cases {
		sv := ops.StepValues(c.step, c.first)
		want := make([]float32, n)
		ops.DropoutForward(c.p, sv[:], c.perRow, x, want)
		for _, l := range launches {
			y := make([]float32, n)
			Dropout(l, c.p, sv, c.perRow, x, y)
			sameBits(t, c.name, y, want)
		}
		kept := 0
		for _, v := range want {
			if v != 0 {
				kept++
			}
		}
		if got, exp := float64(kept)/n, 1-c.p.Rate; math.Abs(got-exp) > 0.01 {
			t.Errorf("%s: the CPU keeps %.4f of the units, want about %.2f", c.name, got, exp)
		}
	}
	// The case past 2^24 tests the step's high word: its mask differs
	// from the one of the step's low 24 bits alone.
	p, step := cases[0].p, cases[0].step
	high, low := make([]float32, n), make([]float32, n)
	Dropout(Launch{4, 256}, p, ops.StepValues(step, 0), 1, x, high)
	Dropout(Launch{4, 256}, p, ops.StepValues(step&(1<<24-1), 0), 1, x, low)
	if slices.Equal(high, low) {
		t.Errorf("steps %d and %d drop the same units: the step's high word is ignored", step, step&(1<<24-1))
	}
}
