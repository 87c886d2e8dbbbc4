package layers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// dotModel is a functional model of three Dot layers: the cosine
// similarity of two Dense branches (Normalize), and products of their
// samples reshaped to matrices, along (2, 2) and (2, 1).
func dotModel(t *testing.T) *nn.Model {
	t.Helper()
	in := nn.Input(6)
	u := nn.Apply(layers.Dense(8, layers.Tanh), in)
	v := nn.Apply(layers.Dense(8), in)
	cos := nn.Apply(layers.Dot(1, layers.Normalize()), u, v)                         // (1)
	p := nn.Apply(layers.Reshape([]int{2, 4}), u)                                    // (2, 4)
	q := nn.Apply(layers.Reshape([]int{3, 4}), nn.Apply(layers.Dense(12), in))       // (3, 4)
	att := nn.Apply(layers.Dot(2), p, q)                                             // (2, 3)
	w := nn.Apply(layers.DotAxes(2, 1), p, nn.Apply(layers.Reshape([]int{4, 2}), v)) // (2, 2)
	j := nn.Apply(layers.Concatenate(-1), cos, nn.Apply(layers.Flatten(), att), nn.Apply(layers.Flatten(), w))
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(3, layers.Softmax), j)})
	if err != nil {
		t.Fatal(err)
	}
	m.SetSeed(5)
	return m
}

// dotData are 96 samples of 6 features around one of 3 centres, one-hot
// labelled.
func dotData(t *testing.T) data.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	const n, f = 96, 6
	x, y := make([]float32, n*f), make([]float32, n*3)
	for i := range n {
		c := i % 3
		for k := range f {
			x[i*f+k] = float32(float64((c+k)%3-1) + 0.3*rng.NormFloat64())
		}
		y[i*3+c] = 1
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, f), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestDotInAModel: Dot layers in a functional model get Keras' automatic
// names and their shapes in Summary, train (the loss goes down), and a
// saved model loads with its Dot layers, predicting the same.
func TestDotInAModel(t *testing.T) {
	m := dotModel(t)
	defer m.Close()
	compileSGD(t, m, optim.SGDConfig{LearningRate: 0.1}, losses.CategoricalCrossentropy{}, "/CPU:0")
	var dots []string
	for _, l := range m.Layers() {
		if l.Type() == "Dot" {
			dots = append(dots, l.Name())
		}
	}
	if want := []string{"dot", "dot_1", "dot_2"}; !slices.Equal(dots, want) {
		t.Errorf("Dot layers named %q, want %q", dots, want)
	}
	var b strings.Builder
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		" dot (Dot)                      (None, 1)            0           ['dense[0][0]',",
		" dot_1 (Dot)                    (None, 2, 3)         0           ['reshape[0][0]',",
		" dot_2 (Dot)                    (None, 2, 2)         0           ['reshape[0][0]',",
	} {
		if !strings.Contains(b.String(), row) {
			t.Errorf("the summary has no row %q:\n%s", row, b.String())
		}
	}

	ds := dotData(t)
	h, err := m.Fit(context.Background(), ds, nn.Epochs(10), nn.BatchSize(16), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	loss := h.Get("loss")
	if first, last := loss[0], loss[len(loss)-1]; !(last < 0.7*first) {
		t.Errorf("loss %v after 10 epochs from %v: the model did not learn", last, first)
	}

	loaded := checkLoadedPredicts(t, m, ds, "dot.safetensors")
	var loadedDots []string
	for _, l := range loaded.Layers() {
		if d, ok := l.(*layers.DotLayer); ok {
			a, b := d.Axes()
			loadedDots = append(loadedDots, fmt.Sprintf("%s %d %d %t", d.Name(), a, b, d.Normalized()))
		}
	}
	if want := []string{"dot 1 1 true", "dot_1 2 2 false", "dot_2 2 1 false"}; !slices.Equal(loadedDots, want) {
		t.Errorf("the loaded model's Dot layers: %q, want %q", loadedDots, want)
	}
}
