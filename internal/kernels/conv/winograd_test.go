package conv_test

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/conv"
)

// relErrors returns the largest and the root mean square of |got-want|/scale
// over the values: the error in units of the scale of each value's terms.
func relErrors(got []float32, want, scale []float64) (largest, rms float64) {
	for i, w := range want {
		if scale[i] == 0 {
			continue
		}
		e := math.Abs(float64(got[i])-w) / scale[i]
		largest = max(largest, e)
		rms += e * e
	}
	return largest, math.Sqrt(rms / float64(len(want)))
}

// TestWinogradError measures the error of Winograd's convolutions against
// float64, beside the direct ones', on each instruction set's kernels, on
// ResNet-20's three stages (batch 4, values in [-1, 1)), in units of the
// scale of each value's terms (the sum of their magnitudes: float32's
// rounding of the sum is a few times 6e-8 of it). It fails where Winograd's largest error is more than 8 times
// the direct one's; go test -v prints them (docs/performance.md quotes
// them).
func TestWinogradError(t *testing.T) {
	defer conv.SetWinograd(conv.SetWinograd(true))
	for name, p := range products(t) {
		t.Run(name, func(t *testing.T) { winogradError(t, p) })
	}
}

// winogradError is TestWinogradError on the products p.
func winogradError(t *testing.T, p conv.Products) {
	w, ok := p.(conv.WinogradProducts)
	if !ok {
		t.Fatal("the products have no Winograd kernels")
	}
	for i, s := range []conv.Shape{same(4, 32, 32, 16, 16, 3, 3), same(4, 16, 16, 32, 32, 3, 3), same(4, 8, 8, 64, 64, 3, 3)} {
		if !w.WinogradFits(s.C, s.Filters) || !w.WinogradFits(s.Filters, s.C) {
			t.Fatalf("%+v: the Winograd kernels do not take it", s)
		}
		x := values(s.Batch*s.H*s.W*s.C, 7*i+1)
		k := values(9*s.C*s.Filters, 7*i+2)
		dz := values(s.Batch*s.OH*s.OW*s.Filters, 7*i+3)
		zRef, zScale := forwardRef(s, x, k, make([]float32, s.Filters))
		dxRef, dxScale := inputGradRef(s, dz, k)
		dkRef, dkScale := kernelGradRef(s, x, dz)
		var worst [2][3]float64
		for w, on := range []bool{false, true} {
			conv.SetWinograd(on)
			mem, ok := conv.Plan(p, s)
			if !ok {
				t.Fatalf("Plan refuses %+v", s)
			}
			images, grad, err := layGrids(p, s, mem, x, dz)
			if err != nil {
				t.Fatal(err)
			}
			z, dx, dk := make([]float32, len(zRef)), make([]float32, len(x)), make([]float32, len(k))
			if err := conv.Forward(p, s, images, k, nil, z, make([]float32, mem.Forward)); err != nil {
				t.Fatal(err)
			}
			if err := conv.InputGrad(p, s, grad, k, dx, make([]float32, mem.InputGrad)); err != nil {
				t.Fatal(err)
			}
			if err := conv.KernelGrad(p, s, images, grad, dk, make([]float32, mem.KernelGrad)); err != nil {
				t.Fatal(err)
			}
			for j, c := range []struct {
				got        []float32
				ref, scale []float64
			}{{z, zRef, zScale}, {dx, dxRef, dxScale}, {dk, dkRef, dkScale}} {
				largest, rms := relErrors(c.got, c.ref, c.scale)
				worst[w][j] = largest
				t.Logf("%dx%dx%d→%d %-9s %-13s largest %.2e, rms %.2e of the scale", s.H, s.W, s.C, s.Filters,
					map[bool]string{false: "direct", true: "Winograd"}[on], []string{"forward", "input grad", "kernel grad"}[j], largest, rms)
			}
		}
		for j, name := range []string{"forward", "input gradient", "kernel gradient"} {
			if worst[1][j] > 8*worst[0][j] {
				t.Errorf("%+v %s: Winograd's largest error %.2e, more than 8 times the direct one's %.2e", s, name, worst[1][j], worst[0][j])
			}
		}
	}
}
