package layers_test

import (
	"context"
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

// augmentImages are n 6×6 RGB images, a bright square left or right by
// class, one-hot labelled, and the images' values.
func augmentImages(t *testing.T, n int) (data.Dataset, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	const h, w, c = 6, 6, 3
	x, y := make([]float32, n*h*w*c), make([]float32, n*2)
	for i := range n {
		cls := i % 2
		for p := range h * w {
			v := 0.1 * rng.Float64()
			if col := p % w; p/w >= 1 && p/w < 4 && (col < 3) == (cls == 0) {
				v += 1
			}
			for k := range c {
				x[(i*h*w+p)*c+k] = float32(v)
			}
		}
		y[i*2+cls] = 1
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(n, h, w, c), tensor.WithBacking(slices.Clone(x))), tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds, x
}

// augmentCNN is a small CNN, with RandomFlip("horizontal") and
// RandomTranslation(0.2, 0.2) first when augment is set.
func augmentCNN(augment bool, device string) *nn.Sequential {
	ls := []layers.Layer{layers.Input(6, 6, 3)}
	if augment {
		ls = append(ls, layers.RandomFlip("horizontal"), layers.RandomTranslation(0.2, 0.2))
	}
	ls = append(ls, layers.Conv2D(4, 3, layers.ReLU), layers.Flatten(), layers.Dense(2, layers.Softmax))
	m := nn.NewSequential(ls...)
	m.SetSeed(11)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		panic(err)
	}
	if err := m.Compile(sgd, losses.CategoricalCrossentropy{}, nil, nn.OnDevice(device)); err != nil {
		panic(err)
	}
	return m
}

// fitLosses fits m for epochs epochs of batches of 16, unshuffled, and
// returns each epoch's loss.
func fitLosses(t *testing.T, m *nn.Sequential, ds data.Dataset, epochs int) []float64 {
	t.Helper()
	h, err := m.Fit(context.Background(), ds, nn.Epochs(epochs), nn.BatchSize(16), nn.Shuffle(false), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	return h.Get("loss")
}

// TestAugmentationInAModel: the random layers are identity in Predict (a
// model of them alone returns its input, bits and all); in Fit they
// transform (a model with them trains to other losses than without, the
// same again for the same seed); a saved model loads with them, their
// keys kept; after a layer with weights they are refused, saying why.
func TestAugmentationInAModel(t *testing.T) {
	ctx := context.Background()
	ds, images := augmentImages(t, 64)

	only := nn.NewSequential(layers.Input(6, 6, 3), layers.RandomFlip("horizontal_and_vertical"), layers.RandomTranslation(0.3, 0.3, layers.FillMode("wrap")),
		layers.Flatten())
	defer only.Close()
	sgd, _ := optim.NewSGD(optim.SGDConfig{})
	if err := only.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	xs, err := data.TensorData(tensor.New(tensor.WithShape(64, 6, 6, 3), tensor.WithBacking(slices.Clone(images))), tensor.New(tensor.WithShape(64, 108), tensor.WithBacking(make([]float32, 64*108))))
	if err != nil {
		t.Fatal(err)
	}
	p, err := only.PredictTensor(ctx, xs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Data().([]float32), images) {
		t.Error("Predict through the random layers changed the images")
	}

	plain, aug, again := augmentCNN(false, "/CPU:0"), augmentCNN(true, "/CPU:0"), augmentCNN(true, "/CPU:0")
	defer plain.Close()
	defer aug.Close()
	defer again.Close()
	lp, la, lg := fitLosses(t, plain, ds, 3), fitLosses(t, aug, ds, 3), fitLosses(t, again, ds, 3)
	if slices.Equal(lp, la) {
		t.Errorf("losses %v with and without augmentation: it did nothing in Fit", la)
	}
	if !slices.Equal(la, lg) {
		t.Errorf("losses %v and %v for one seed: the draws are not the same", la, lg)
	}
	pp, err := plain.PredictTensor(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.Data().([]float32)) != 128 {
		t.Fatalf("predictions %v", pp.Shape())
	}

	loaded := saveAndLoad(t, aug, "augment.safetensors")
	for i, l := range aug.Layers() {
		want, _ := layers.ConfigOf(l)
		got, _ := layers.ConfigOf(loaded.Layers()[i])
		if l.Type() == "RandomFlip" || l.Type() == "RandomTranslation" {
			if got.ClassName != want.ClassName || got.Config["seed"] != want.Config["seed"] || got.Config["seed"] == nil {
				t.Errorf("layer %d loads as %v, saved as %v", i, got, want)
			}
		}
	}
	a, err := aug.PredictTensor(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loaded.PredictTensor(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Data().([]float32), b.Data().([]float32)) {
		t.Error("the loaded model predicts otherwise")
	}

	late := nn.NewSequential(layers.Input(6, 6, 3), layers.Conv2D(2, 3), layers.RandomFlip("horizontal"), layers.Flatten(), layers.Dense(2))
	defer late.Close()
	sgd, _ = optim.NewSGD(optim.SGDConfig{})
	if err := late.Compile(sgd, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	if _, err := late.Fit(ctx, ds, nn.Epochs(1), nn.Verbose(0)); err == nil || !strings.Contains(err.Error(), "put them first in the model, before any layer with weights") {
		t.Errorf("RandomFlip after Conv2D: Fit's error %v", err)
	}
}

// cropCNN is a small CNN after RandomCrop(5, 5) and RandomContrast on
// the images of augmentImages, compiled for device.
func cropCNN(device string) *nn.Sequential {
	m := nn.NewSequential(layers.Input(6, 6, 3), layers.RandomCrop(5, 5), layers.RandomContrast(0.3), layers.Conv2D(4, 3, layers.ReLU),
		layers.Flatten(), layers.Dense(2, layers.Softmax))
	m.SetSeed(12)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		panic(err)
	}
	if err := m.Compile(sgd, losses.CategoricalCrossentropy{}, nil, nn.OnDevice(device)); err != nil {
		panic(err)
	}
	return m
}

// TestRandomCropInAModel: a CNN after RandomCrop and RandomContrast
// trains (the loss falls), the same again for the same seed; Predict sees
// the images resized to the window (Keras 2's inference), Summary the
// window's shape; a saved model loads with the layers and predicts the
// same.
func TestRandomCropInAModel(t *testing.T) {
	ds, _ := augmentImages(t, 64)
	a, b := cropCNN("/CPU:0"), cropCNN("/CPU:0")
	defer a.Close()
	defer b.Close()
	la, lb := fitLosses(t, a, ds, 4), fitLosses(t, b, ds, 4)
	if !slices.Equal(la, lb) {
		t.Errorf("one seed trains to losses %v and %v", la, lb)
	}
	if !(la[len(la)-1] < la[0]) {
		t.Errorf("losses %v: the model did not learn", la)
	}
	var summary strings.Builder
	if err := a.Summary(&summary); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary.String(), "random_crop (RandomCrop)") || !strings.Contains(summary.String(), "(None, 5, 5, 3)") {
		t.Errorf("Summary:\n%s", summary.String())
	}
	checkLoadedPredicts(t, a, ds, "crop.safetensors")
}
