package nn_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// blobs makes a 10-class problem: each class is a cluster around its own
// random centre, so a small MLP can learn it.
func blobs(t testing.TB, n, features int, seed uint64, oneHot bool) data.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	centres := make([]float32, 10*features)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	x := make([]float32, n*features)
	cols := 1
	if oneHot {
		cols = 10
	}
	y := make([]float32, n*cols)
	for i := 0; i < n; i++ {
		c := i % 10
		for j := 0; j < features; j++ {
			x[i*features+j] = centres[c*features+j] + float32(0.8*rng.NormFloat64())
		}
		if oneHot {
			y[i*10+c] = 1
		} else {
			y[i] = float32(c)
		}
	}
	ds, err := data.TensorData(
		tensor.New(tensor.WithShape(n, features), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func newSGD(t testing.TB, lr float64) optim.Optimizer {
	t.Helper()
	o, err := optim.NewSGD(optim.SGDConfig{LearningRate: lr})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestFitLearnsTenClasses(t *testing.T) {
	tests := []struct {
		name   string
		oneHot bool
		out    layers.Activation
		loss   losses.Loss
		lr     float64
	}{
		{"softmax + categorical", true, layers.Softmax, losses.CategoricalCrossentropy{}, 0.05},
		// The flagship's pairing. Its loss never bounds the logits, so a
		// large learning rate drives several sigmoids to exactly 1 in float32
		// and argmax ties (TensorFlow does the same): train at Keras' 0.01.
		{"sigmoid + categorical (logits path)", true, layers.Sigmoid, losses.CategoricalCrossentropy{}, 0.01},
		{"softmax + sparse categorical", false, layers.Softmax, losses.SparseCategoricalCrossentropy{}, 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := blobs(t, 2000, 20, 3, tc.oneHot)
			model := nn.NewSequential(layers.Dense(64, layers.ReLU), layers.Dense(10, tc.out))
			model.SetSeed(1)
			if err := model.Compile(newSGD(t, tc.lr), tc.loss, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			hist, err := model.Fit(context.Background(), ds, nn.Epochs(4), nn.Seed(2), nn.Output(&out))
			if err != nil {
				t.Fatal(err)
			}
			acc := hist.Get("accuracy")
			if len(acc) != 4 {
				t.Fatalf("history has %d accuracy values, want 4", len(acc))
			}
			if acc[3] < 0.95 {
				t.Errorf("training accuracy after 4 epochs = %.4f, want >= 0.95\n%s", acc[3], out.String())
			}
			if loss := hist.Get("loss"); !(loss[3] < loss[0]) {
				t.Errorf("loss did not fall: %v", loss)
			}
			res, err := model.Evaluate(context.Background(), ds, nn.Verbose(0))
			if err != nil {
				t.Fatal(err)
			}
			if res["accuracy"] < 0.95 {
				t.Errorf("evaluate accuracy %.4f, want >= 0.95", res["accuracy"])
			}
		})
	}
}

func TestFitIsDeterministicForASeed(t *testing.T) {
	run := func() []float64 {
		ds := blobs(t, 300, 8, 5, true)
		model := nn.NewSequential(layers.Dense(16, layers.ReLU), layers.Dense(10, layers.Softmax))
		model.SetSeed(42)
		if err := model.Compile(newSGD(t, 0.01), losses.CategoricalCrossentropy{}, nil); err != nil {
			t.Fatal(err)
		}
		hist, err := model.Fit(context.Background(), ds, nn.Epochs(2), nn.Seed(7), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		return hist.Get("loss")
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seeds gave different losses: %v and %v", a, b)
		}
	}
}

func TestLastPartialBatchIsTrainedAndPredictTakesAnyCount(t *testing.T) {
	ds := blobs(t, 70, 4, 9, true) // 70 = 2×32 + 6
	model := nn.NewSequential(layers.Dense(10, layers.Softmax))
	model.SetSeed(1)
	if err := model.Compile(newSGD(t, 0.01), losses.CategoricalCrossentropy{}, nil); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := model.Fit(context.Background(), ds, nn.Output(&out)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "3/3 [==============================]") {
		t.Errorf("70 samples at batch 32 should take 3 steps:\n%s", out.String())
	}
	for _, n := range []int{1, 31, 32, 33, 70} {
		x := make([]float32, n*4)
		in, err := data.TensorInputs(tensor.New(tensor.WithShape(n, 4), tensor.WithBacking(x)))
		if err != nil {
			t.Fatal(err)
		}
		pred, err := model.PredictTensor(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got := pred.Shape(); got[0] != n || got[1] != 10 {
			t.Errorf("Predict(%d rows) has shape %v", n, got)
		}
		// Every row of zeros gets the same softmax of the bias.
		row := pred.Data().([]float32)[:10]
		var sum float32
		for _, v := range row {
			sum += v
		}
		if math.Abs(float64(sum)-1) > 1e-5 {
			t.Errorf("softmax row sums to %v", sum)
		}
	}
}

func TestFitStopsOnNonFiniteLoss(t *testing.T) {
	ds := blobs(t, 64, 4, 1, true)
	x := make([]float32, 64*4)
	x[5] = float32(math.NaN())
	y := make([]float32, 64*10)
	for i := 0; i < 64; i++ {
		y[i*10] = 1
	}
	bad, err := data.TensorData(tensor.New(tensor.WithShape(64, 4), tensor.WithBacking(x)), tensor.New(tensor.WithShape(64, 10), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	_ = ds
	model := nn.NewSequential(layers.Dense(10, layers.Softmax))
	if err := model.Compile(newSGD(t, 0.01), losses.CategoricalCrossentropy{}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = model.Fit(context.Background(), bad, nn.Verbose(0), nn.Shuffle(false))
	if !errors.Is(err, nn.ErrNonFiniteLoss) {
		t.Fatalf("Fit on NaN data returned %v, want ErrNonFiniteLoss", err)
	}
	for _, want := range []string{"epoch 1/1", "step 1/2", "learning rate"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestTwoSGDStepsByHand checks the whole training step against numbers
// worked out by hand: Dense(1) from ones and zeros, MSE, SGD at 0.1, one
// batch of two samples per epoch, no shuffling.
//
//	step 1: w=(1,1) b=0, pred=(3,2), dL/dpred=(2,2), dW=(8,2), db=4 → w=(0.2,0.8) b=-0.4, loss 4
//	step 2: pred=(1.4,-0.6), dL/dpred=(0.4,-0.6), dW=(-1.4,1.4), db=-0.2 → w=(0.34,0.66) b=-0.38, loss 0.26
//
// A machine that let gradients build up across steps would fail step 2.
func TestTwoSGDStepsByHand(t *testing.T) {
	x := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, -1}))
	y := tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float32{1, 0}))
	ds, err := data.TensorData(x, y)
	if err != nil {
		t.Fatal(err)
	}
	model := nn.NewSequential(layers.Dense(1, layers.KernelInitializer(layers.Ones()), layers.BiasInitializer(layers.Zeros())))
	if err := model.Compile(newSGD(t, 0.1), losses.MeanSquaredError{}, nil); err != nil {
		t.Fatal(err)
	}
	hist, err := model.Fit(context.Background(), ds, nn.Epochs(2), nn.BatchSize(2), nn.Shuffle(false), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if loss := hist.Get("loss"); math.Abs(loss[0]-4) > 1e-6 || math.Abs(loss[1]-0.26) > 1e-6 {
		t.Errorf("losses = %v, want [4 0.26]", loss)
	}
	probe, err := data.TensorInputs(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float32{1, 0, 0, 1, 0, 0})))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := model.PredictTensor(context.Background(), probe)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.34 - 0.38, 0.66 - 0.38, -0.38} // w1+b, w2+b, b
	for i, got := range pred.Data().([]float32) {
		if math.Abs(float64(got)-want[i]) > 1e-6 {
			t.Errorf("prediction %d = %v, want %v", i, got, want[i])
		}
	}
}
