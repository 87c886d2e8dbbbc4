package ops

import "testing"

// BenchmarkDropout32 is the training path's dropout over the activations
// of Keras' cifar10_cnn's first Dropout at batch 32 (32×16×16×32 units).
func BenchmarkDropout32(b *testing.B) {
	x := make([]float32, 32*16*16*32)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	y := make([]float32, len(x))
	p := DropoutParams{Rate: 0.25, Key: 5}
	b.SetBytes(int64(len(x)) * 4)
	for b.Loop() {
		dropout32(p, 3, 0, x, y)
	}
}
