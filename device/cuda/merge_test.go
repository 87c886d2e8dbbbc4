//go:build cudavm && cgo

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/opstest"
	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
)

// mergeShapes are the shape pairs of the merge kernels' tests: equal,
// broadcast on either side and along several axes, and large enough for
// grid-stride loops.
var mergeShapes = [][2][]int{
	{{5, 7}, {5, 7}},
	{{5, 1}, {5, 7}},
	{{5, 7}, {1, 7}},
	{{1, 1}, {5, 7}},
	{{3, 1, 4, 2}, {3, 5, 1, 2}},
	{{2, 3, 1}, {2, 1, 1}},
	{{64, 1, 300}, {64, 40, 300}},
}

// mergeInputs are random values of the given sizes, with some of b equal
// to a's where a and b meet, to exercise Maximum's and Minimum's ties.
func mergeInputs(rng *rand.Rand, p ops.BinaryParams) (a, b []float32) {
	size := func(s []int) int {
		n := 1
		for _, d := range s {
			n *= d
		}
		return n
	}
	a, b = randn(rng, size(p.A), 1), randn(rng, size(p.B), 1)
	for i := range b {
		if i%3 == 0 {
			b[i] = a[i%len(a)]
		}
	}
	return a, b
}

// TestMergeKernelsMatchCPU runs gk_binary and gk_binary_grad (both inputs)
// for every kind and shape pair, and gk_scale_to, against package ops'
// host kernels (the CPU machine's): the same bits, the gradients' sums
// being formed in the same order in double.
func TestMergeKernelsMatchCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(21, 21))
	for _, shapes := range mergeShapes {
		for _, kind := range []ops.BinaryKind{ops.BinaryAdd, ops.BinarySubtract, ops.BinaryMultiply, ops.BinaryMaximum, ops.BinaryMinimum, ops.BinaryDivide} {
			p := ops.BinaryParams{Kind: kind, A: shapes[0], B: shapes[1]}
			what := fmt.Sprintf("%v of %v and %v", kind, p.A, p.B)
			a, b := mergeInputs(rng, p)
			n := p.Layout().Size()
			want := make([]float32, n)
			ops.BinaryForward(p, a, b, want)
			ad, bd, out := h.upload(a), h.upload(b), h.zeros(n)
			h.do(func() error { return h.k.binary(h.s, p, ad, bd, out, n) })
			bitIdentical(t, what, h.download(out, n), want)
			dy := randn(rng, n, 1)
			dyd := h.upload(dy)
			for wrt, m := range []int{len(a), len(b)} {
				p.Wrt = wrt
				want := make([]float32, m)
				ops.BinaryBackward(p, a, b, dy, want)
				g := h.zeros(m)
				h.do(func() error { return h.k.binaryGrad(h.s, p, ad, bd, dyd, g, m) })
				bitIdentical(t, fmt.Sprintf("%s: gradient of input %d", what, wrt), h.download(g, m), want)
			}
		}
	}
	x := randn(rng, 70001, 3)
	xd, out := h.upload(x), h.zeros(len(x))
	for _, p := range []ops.ScaleParams{{Factor: 0.5}, {Factor: -1.5}, {Factor: 3, Divide: true}, {Factor: 7, Divide: true}, {Factor: 1.0 / 127.5, Offset: -1}} {
		want := make([]float32, len(x))
		ops.ScaleForward(p, x, want)
		h.do(func() error { return h.k.scaleTo(h.s, p, xd, out, len(x)) })
		bitIdentical(t, fmt.Sprintf("scale %v", p), h.download(out, len(x)), want)
	}
}

// TestConcatKernelMatchesCPU: a Concat's copies (gk_copy_cols, one per
// input) and each ConcatGrad's give package ops' values.
func TestConcatKernelMatchesCPU(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(22, 22))
	for _, p := range []ops.ConcatParams{
		{Axis: 1, Shapes: [][]int{{7, 3}, {7, 1}, {7, 5}}},
		{Axis: 2, Shapes: [][]int{{4, 3, 2}, {4, 3, 6}}},
		{Axis: 1, Shapes: [][]int{{64, 40, 30}, {64, 2, 30}}},
	} {
		ins := make([][]float32, len(p.Shapes))
		devs := make([]devicePtr, len(p.Shapes))
		for i := range ins {
			ins[i] = randn(rng, p.Rows()*p.Cols(i), 1)
			devs[i] = h.upload(ins[i])
		}
		n := p.Rows() * p.OutCols()
		want := make([]float32, n)
		ops.ConcatForward(p, ins, want)
		out := h.zeros(n)
		for i := range ins {
			h.do(func() error {
				return h.k.copyCols(h.s, devs[i], p.Cols(i), 0, out, p.OutCols(), p.Offset(i), p.Rows(), p.Cols(i))
			})
		}
		bitIdentical(t, fmt.Sprintf("concatenate %v", p), h.download(out, n), want)
		for i := range ins {
			p.Piece = i
			m := p.Rows() * p.Cols(i)
			want := make([]float32, m)
			ops.ConcatBackward(p, h.download(out, n), want)
			bitIdentical(t, fmt.Sprintf("ops' slice %d of %v", i, p), want, ins[i])
			piece := h.zeros(m)
			h.do(func() error {
				return h.k.copyCols(h.s, out, p.OutCols(), p.Offset(i), piece, p.Cols(i), 0, p.Rows(), p.Cols(i))
			})
			bitIdentical(t, fmt.Sprintf("slice %d of %v", i, p), h.download(piece, m), want)
		}
	}
}

// TestMergeGraphTrainsAsOnCPU trains opstest.MergeGraph (every merge op,
// forward and backward, with broadcasts, and a Concatenate) on /GPU:0 and on /CPU:0 from the
// same values, 20 steps of Adam, and requires the same loss at every step
// and the same weights at the end, within 1e-5.
func TestMergeGraphTrainsAsOnCPU(t *testing.T) {
	trainsAsOnCPU(t, func() gpuTestGraph {
		m, err := opstest.BuildMergeGraph(17, 16)
		if err != nil {
			t.Fatal(err)
		}
		return gpuTestGraph{m.G, m.Learnables, &m.LossValue}
	})
}

// gpuTestGraph is an opstest graph: its learnables and where it reads its
// loss.
type gpuTestGraph struct {
	G          *gorgonia.ExprGraph
	Learnables []*gorgonia.Node
	LossValue  *gorgonia.Value
}

// trainsAsOnCPU trains a graph mk makes on /GPU:0 and one on /CPU:0, 20
// steps of Adam from the same values, and requires the same loss at every
// step and the same weights at the end, within 1e-5.
func trainsAsOnCPU(t *testing.T, mk func() gpuTestGraph) {
	t.Helper()
	needGPU(t)
	train := func(spec device.Spec) ([]float64, gpuTestGraph) {
		m := mk()
		opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		st := driver.NewState()
		defer st.Close()
		mach, err := device.NewMachine(spec, m.G, driver.MachineOptions{Learnables: m.Learnables, State: st, Slots: opt.Slot})
		if err != nil {
			t.Fatal(err)
		}
		defer mach.Close()
		tr, ok := mach.(driver.Trainer)
		if !ok {
			t.Fatalf("%v: the machine %T is not a driver.Trainer", spec, mach)
		}
		var losses []float64
		for range 20 {
			if err := tr.Train(opt.NextUpdate()); err != nil {
				t.Fatal(err)
			}
			opt.Advance()
			l, ok := (*m.LossValue).(*gorgonia.F32)
			if !ok {
				t.Fatalf("the loss came back as %T", *m.LossValue)
			}
			losses = append(losses, float64(*l))
			mach.Reset()
		}
		if err := st.Sync(); err != nil {
			t.Fatal(err)
		}
		return losses, m
	}
	cpuLoss, cpu := train(device.NewSpec(driver.CPU, 0))
	gpuLoss, gpu := train(device.NewSpec(driver.GPU, 0))
	for i := range cpuLoss {
		if math.Abs(gpuLoss[i]-cpuLoss[i]) > 1e-5*math.Max(math.Abs(cpuLoss[i]), 1e-6) {
			t.Fatalf("step %d: loss %.8f on /GPU:0, %.8f on /CPU:0", i+1, gpuLoss[i], cpuLoss[i])
		}
	}
	if !(cpuLoss[19] < cpuLoss[0]) {
		t.Errorf("the loss did not fall: %v -> %v", cpuLoss[0], cpuLoss[19])
	}
	for i, w := range gpu.Learnables {
		got, want := w.Value().Data().([]float32), cpu.Learnables[i].Value().Data().([]float32)
		for j := range want {
			if math.Abs(float64(got[j]-want[j])) > 1e-5*math.Max(1, math.Abs(float64(want[j]))) {
				t.Fatalf("%s[%d] = %v on /GPU:0, %v on /CPU:0", w.Name(), j, got[j], want[j])
			}
		}
	}
	t.Logf("20 steps: loss %.5f -> %.5f on both", cpuLoss[0], cpuLoss[19])
}
