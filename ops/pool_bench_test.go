package ops

import (
	"fmt"
	"testing"
)

// BenchmarkPool times 2x2 max pooling forward on the cifar10_cnn's two
// pooling layers at batch 128 (30x30x32 and 13x13x64 inputs).
func BenchmarkPool(b *testing.B) {
	for _, sh := range [][3]int{{30, 30, 32}, {13, 13, 64}} {
		win, err := WindowSpec{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}}.On(128, sh[0], sh[1], sh[2])
		if err != nil {
			b.Fatal(err)
		}
		x := make([]float32, 128*sh[0]*sh[1]*sh[2])
		for i := range x {
			x[i] = float32((i*7919)%101) - 50 // no pattern a branch predictor learns
		}
		y := make([]float32, win.Batch*win.OH*win.OW*win.C)
		b.Run(fmt.Sprintf("max/%dx%dx%d", sh[0], sh[1], sh[2]), func(b *testing.B) {
			for b.Loop() {
				pool(MaxPool, win, x, y)
			}
		})
	}
}

// BenchmarkPoolBack times max pooling's gradient on the same layers.
func BenchmarkPoolBack(b *testing.B) {
	for _, sh := range [][3]int{{30, 30, 32}, {13, 13, 64}} {
		win, err := WindowSpec{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}}.On(128, sh[0], sh[1], sh[2])
		if err != nil {
			b.Fatal(err)
		}
		x := make([]float32, 128*sh[0]*sh[1]*sh[2])
		for i := range x {
			x[i] = float32((i*7919)%101) - 50
		}
		y := make([]float32, win.Batch*win.OH*win.OW*win.C)
		pool(MaxPool, win, x, y)
		dx := make([]float32, len(x))
		b.Run(fmt.Sprintf("max/%dx%dx%d", sh[0], sh[1], sh[2]), func(b *testing.B) {
			for b.Loop() {
				poolBack(MaxPool, win, x, y, y, dx)
			}
		})
	}
}
