package ops

import (
	"math/rand/v2"
	"testing"
)

// TestPoolBackwardReLU checks PoolBackwardReLU against PoolBackward
// followed by the ReLU's gradient (ActivationBackward), bit for bit, on
// ReLU outputs (zeros and ties among them) with windows that overlap and
// windows that do not, and that average pooling is refused.
func TestPoolBackwardReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for _, spec := range []WindowSpec{
		{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}},
		{Kernel: [2]int{3, 3}, Strides: [2]int{2, 2}, Same: true},
		{Kernel: [2]int{3, 3}, Strides: [2]int{1, 1}},
	} {
		w, err := spec.On(3, 9, 8, 5)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, w.InputSize())
		for i := range x {
			// A ReLU's output: a third zeros, some values repeated.
			x[i] = max(0, float32(rng.IntN(9)-3)/2)
		}
		n := w.Batch * w.OH * w.OW * w.C
		y, dy := make([]float32, n), make([]float32, n)
		for i := range dy {
			dy[i] = float32(rng.NormFloat64())
		}
		PoolForward(MaxPool, w, x, y)
		want, got := make([]float32, len(x)), make([]float32, len(x))
		PoolBackward(MaxPool, w, x, y, dy, want)
		ActivationBackward(ReLU, 0, len(x), x, x, append([]float32(nil), want...), want)
		if err := PoolBackwardReLU(MaxPool, w, x, y, dy, got); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: value %d is %v, want %v", spec, i, got[i], want[i])
			}
		}
	}
	w, _ := WindowSpec{Kernel: [2]int{2, 2}, Strides: [2]int{2, 2}}.On(1, 4, 4, 1)
	if err := PoolBackwardReLU(AvgPool, w, make([]float32, 16), make([]float32, 4), make([]float32, 4), make([]float32, 16)); err == nil {
		t.Error("average pooling: no error")
	}
}
