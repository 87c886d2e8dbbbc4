package layers_test

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// TestDenseOnEveryStep checks Dense on samples of (steps, features), as
// Keras' Dense on a 3-D input: every step's features times the same
// kernel, plus the bias, then the activation (a softmax over the units),
// computed here by hand in float64 from the model's weights; the output
// keeps the steps (flattened after it here), and the layer has the
// weights of its last axis only.
func TestDenseOnEveryStep(t *testing.T) {
	const batch, steps, features, units = 3, 5, 4, 6
	m := nn.NewSequential(layers.Dense(units, layers.Softmax), layers.Flatten()) // models output flat samples
	m.SetSeed(7)
	if err := m.Build(steps, features); err != nil {
		t.Fatal(err)
	}
	compiled(t, m)
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Shape()[0] != features || ws[0].Shape()[1] != units || ws[1].Shape()[0] != units {
		t.Fatalf("weights %v, want a kernel (%d, %d) and a bias (%d)", ws, features, units, units)
	}
	kernel, bias := ws[0].Data().([]float32), ws[1].Data().([]float32)
	for i := range bias {
		bias[i] = 0.1 * float32(i-2) // a bias that matters
	}
	if err := m.SetWeights(ws); err != nil {
		t.Fatal(err)
	}
	x := make([]float32, batch*steps*features)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	got := predictRows(t, m, x, batch, steps, features)
	for b := range batch {
		if len(got[b]) != steps*units {
			t.Fatalf("sample %d: %d values, want %d (steps × units)", b, len(got[b]), steps*units)
		}
		for s := range steps {
			z := make([]float64, units)
			sum := 0.0
			for u := range units {
				z[u] = float64(bias[u])
				for f := range features {
					z[u] += float64(x[(b*steps+s)*features+f]) * float64(kernel[f*units+u])
				}
				z[u] = math.Exp(z[u])
				sum += z[u]
			}
			for u := range units {
				if want := z[u] / sum; math.Abs(float64(got[b][s*units+u])-want) > 1e-6 {
					t.Fatalf("sample %d, step %d, unit %d: %v, want %v", b, s, u, got[b][s*units+u], want)
				}
			}
		}
	}
}
