//go:build cudavm && cgo && kernelemu

package layers_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/layers"
)

// TestMultiHeadAttentionOnGPU: a model of MultiHeadAttention (attention
// mask, causal mask, dropout on the probabilities) trains on the emulated
// /GPU:0 as on /CPU:0: the same losses epoch by epoch, within float32
// rounding of the products' other order.
func TestMultiHeadAttentionOnGPU(t *testing.T) {
	ds, _, _ := attentionData(t, 32)
	var losses [2][]float64
	for i, dev := range []string{"/CPU:0", "/GPU:0"} {
		m, _ := attentionModel(t, layers.AttentionDropout(0.1))
		losses[i] = fitAttention(t, m, ds, dev, 3).Get("loss")
		if d, err := m.Device(); err != nil || !strings.Contains(d.String(), dev[1:]) {
			t.Errorf("the model compiled for %s runs on %v (%v)", dev, d, err)
		}
		m.Close()
	}
	for e := range losses[0] {
		if d := math.Abs(losses[0][e] - losses[1][e]); d > 1e-4*max(1, losses[0][e]) {
			t.Errorf("epoch %d: loss %v on /GPU:0, %v on /CPU:0", e+1, losses[1][e], losses[0][e])
		}
	}
	if first, last := losses[1][0], losses[1][len(losses[1])-1]; !(last < first) {
		t.Errorf("/GPU:0: loss %v after 3 epochs from %v", last, first)
	}
	t.Logf("/CPU:0 %v, /GPU:0 %v", losses[0], losses[1])
}
