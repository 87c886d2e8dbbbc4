package layers_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// TestRescalingInAModel: a model of Rescaling alone predicts x·scale +
// offset, the product rounded first, on pixels of [0, 255]; after a
// Dense layer it passes the gradient on (the model learns); and a saved
// model loads with its Rescaling, predicting the same.
func TestRescalingInAModel(t *testing.T) {
	ctx := context.Background()
	pix := make([]float32, 4*6)
	for i := range pix {
		pix[i] = float32(i * 11 % 256)
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(4, 6), tensor.WithBacking(pix)), tensor.New(tensor.WithShape(4, 6), tensor.WithBacking(make([]float32, 4*6))))
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(6), layers.Rescaling(1.0/127.5, -1))
	defer m.Close()
	compileSGD(t, m, optim.SGDConfig{LearningRate: 0.5}, losses.MeanSquaredError{}, "/CPU:0")
	got, err := m.PredictTensor(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.Data().([]float32) {
		want := float32(pix[i]*float32(1.0/127.5)) - 1
		if math.Float32bits(v) != math.Float32bits(want) {
			t.Fatalf("pixel %d (%v) rescaled to %v, want %v", i, pix[i], v, want)
		}
	}

	rng := rand.New(rand.NewPCG(4, 4))
	const n = 64
	x, y := make([]float32, n*6), make([]float32, n*2)
	for i := range n {
		c := i % 2
		for k := range 6 {
			x[i*6+k] = float32(float64(255*c) + 40*rng.NormFloat64())
		}
		y[i*2+c] = 1
	}
	train, err := data.TensorData(tensor.New(tensor.WithShape(n, 6), tensor.WithBacking(x)), tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	tm := nn.NewSequential(layers.Input(6), layers.Rescaling(1.0/255, 0), layers.Dense(4, layers.Tanh), layers.Rescaling(2, -0.5),
		layers.Dense(2, layers.Softmax))
	tm.SetSeed(3)
	defer tm.Close()
	compileSGD(t, tm, optim.SGDConfig{LearningRate: 0.5}, losses.CategoricalCrossentropy{}, "/CPU:0")
	h, err := tm.Fit(ctx, train, nn.Epochs(8), nn.BatchSize(16), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if loss := h.Get("loss"); !(loss[len(loss)-1] < 0.5*loss[0]) {
		t.Errorf("loss %v after 8 epochs from %v: the model did not learn through Rescaling", loss[len(loss)-1], loss[0])
	}
	loaded := checkLoadedPredicts(t, tm, train, "rescaling.safetensors")
	var scales []float64
	for _, l := range loaded.Layers() {
		if r, ok := l.(*layers.RescalingLayer); ok {
			scales = append(scales, r.Scale(), r.Offset())
		}
	}
	if len(scales) != 4 || scales[0] != 1.0/255 || scales[1] != 0 || scales[2] != 2 || scales[3] != -0.5 {
		t.Errorf("the loaded Rescaling layers' scale and offset: %v", scales)
	}
}
