package conv_test

import (
	"testing"

	"github.com/gokeras/gokeras/internal/kernels/conv"
)

// BenchmarkConvBatch128 times each step of ResNet-20's three stages at
// batch 128 (grids of 9.5, 4.8 and 2.4 MB, larger than the caches keep
// between a step's passes) on each instruction set's kernels, with 64 MB
// read between runs, off the clock, as a training step reads its other
// tensors in between:
//
//	go test -run XXX -bench ConvBatch128 -benchtime 30x ./internal/kernels/conv
func BenchmarkConvBatch128(b *testing.B) {
	between := make([]float32, 16<<20)
	sink := float32(0)
	for name, p := range products(b) {
		for _, c := range []struct {
			name string
			s    conv.Shape
		}{
			{"resnet20/32x32x16", same(128, 32, 32, 16, 16, 3, 3)},
			{"resnet20/16x16x32", same(128, 16, 16, 32, 32, 3, 3)},
			{"resnet20/8x8x64", same(128, 8, 8, 64, 64, 3, 3)},
		} {
			s := c.s
			mem, _ := conv.Plan(p, s)
			x, k := values(s.Batch*s.H*s.W*s.C, 1), values(9*s.C*s.Filters, 2)
			dz := values(s.Batch*s.OH*s.OW*s.Filters, 3)
			images, grad, err := layGrids(p, s, mem, x, dz)
			if err != nil {
				b.Fatal(err)
			}
			z, dx, dk := make([]float32, len(dz)), make([]float32, len(x)), make([]float32, len(k))
			fwd, back, kgrad := make([]float32, mem.Forward), make([]float32, mem.InputGrad), make([]float32, mem.KernelGrad)
			flops := float64(2 * s.Batch * s.OH * s.OW * 9 * s.C * s.Filters)
			for _, step := range []struct {
				name string
				run  func() error
			}{
				{"forward", func() error { return conv.Forward(p, s, images, k, nil, z, fwd) }},
				{"input-grad", func() error { return conv.InputGrad(p, s, grad, k, dx, back) }},
				{"kernel-grad", func() error { return conv.KernelGrad(p, s, images, grad, dk, kgrad) }},
			} {
				b.Run(name+"/"+c.name+"/"+step.name, func(b *testing.B) {
					for b.Loop() {
						b.StopTimer()
						for i := 0; i < len(between); i += 16 {
							sink += between[i]
						}
						b.StartTimer()
						if err := step.run(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
	if sink == 1 {
		b.Log(sink)
	}
}
