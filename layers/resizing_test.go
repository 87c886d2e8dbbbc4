package layers_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// gradient4x4 is a batch of one 4×4 image of one channel whose pixel
// (y, x) is 4y + x.
func gradient4x4() []float32 {
	img := make([]float32, 16)
	for i := range img {
		img[i] = float32(i)
	}
	return img
}

// TestResizingAndCenterCropValues: models of Resizing or CenterCrop alone
// predict, for the 4×4 image of 4y + x, the images worked out by hand
// (tf.image.resize's half-pixel centres; Keras 2's crop offsets and
// smart_resize), in Predict as in every mode.
func TestResizingAndCenterCropValues(t *testing.T) {
	third := float32(1.0 / 3)
	cases := []struct {
		name string
		l    layers.Layer
		want []float32
	}{
		// Each output pixel is the mean of a 2×2 block: (0+1+4+5)/4, ...
		{"Resizing(2, 2)", layers.Resizing(2, 2), []float32{2.5, 4.5, 10.5, 12.5}},
		// Rows and columns floor((i+0.5)·2) = 1, 3.
		{"Resizing(2, 2) nearest", layers.Resizing(2, 2, layers.Interpolation("nearest")), []float32{5, 7, 13, 15}},
		// Rows at 1/6, 3/2, 17/6, columns at 0 (clamped from -0.1), 0.7,
		// 1.5, 2.3, 3 (clamped from 3.1): the image is linear, so 4·row +
		// column.
		{"Resizing(3, 5)", layers.Resizing(3, 5), []float32{
			2 * third, 2*third + 0.7, 2*third + 1.5, 2*third + 2.3, 2*third + 3,
			6, 6.7, 7.5, 8.3, 9,
			34 * third, 34*third + 0.7, 34*third + 1.5, 34*third + 2.3, 34*third + 3}},
		// Rows floor((i+0.5)·4/3) = 0, 2, 3; columns floor((j+0.5)·0.8)
		// = 0, 1, 2, 2, 3.
		{"Resizing(3, 5) nearest", layers.Resizing(3, 5, layers.Interpolation("nearest")), []float32{0, 1, 2, 2, 3, 8, 9, 10, 10, 11, 12, 13, 14, 14, 15}},
		// The 2×4 box of aspect 1:2 at the centre, rows 1 and 2, kept.
		{"Resizing(2, 4) cropped to its aspect", layers.Resizing(2, 4, layers.CropToAspectRatio()), []float32{4, 5, 6, 7, 8, 9, 10, 11}},
		{"Resizing(4, 4) passes through", layers.Resizing(4, 4), gradient4x4()},
		// Rows and columns 1 and 2.
		{"CenterCrop(2, 2)", layers.CenterCrop(2, 2), []float32{5, 6, 9, 10}},
		// One row to crop: none above (floor(1/2)), one below; columns 1, 2.
		{"CenterCrop(3, 2)", layers.CenterCrop(3, 2), []float32{1, 2, 5, 6, 9, 10}},
		// Taller than the image: Keras 2 resizes the centre 4×2 box
		// (aspect 2:1; columns 1, 2) to 6×3, bilinear: rows at 0
		// (clamped), 1/2, 7/6, 11/6, 5/2, 3 (clamped), columns 1, 1.5, 2.
		{"CenterCrop(6, 3) resizes", layers.CenterCrop(6, 3), []float32{
			1, 1.5, 2, 3, 3.5, 4,
			4*7*third/2 + 1, 4*7*third/2 + 1.5, 4*7*third/2 + 2,
			4*11*third/2 + 1, 4*11*third/2 + 1.5, 4*11*third/2 + 2,
			11, 11.5, 12, 13, 13.5, 14}},
	}
	for _, c := range cases {
		ds, err := data.TensorInputs(tensor.New(tensor.WithShape(1, 4, 4, 1), tensor.WithBacking(gradient4x4())))
		if err != nil {
			t.Fatal(err)
		}
		got := predict(t, nn.NewSequential(layers.Input(4, 4, 1), c.l, layers.Flatten()), ds)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d values %v, want %v", c.name, len(got), got, c.want)
			continue
		}
		for i := range c.want {
			if math.Abs(float64(got[i]-c.want[i])) > 4e-6 {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestResizingInAModel: Summary shows the resized shapes; CenterCrop
// passes the gradient (a crop after a convolution trains); Resizing after
// a layer with weights is refused, saying to put it first; a model of
// both saves and loads (gokeras' .safetensors) predicting the same.
func TestResizingInAModel(t *testing.T) {
	ctx := context.Background()
	_, x := normData(t, 32, 9, 7, 2)
	y := make([]float32, 32*24)
	for i := range y {
		y[i] = float32(math.Sin(float64(i)))
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(32, 9, 7, 2), tensor.WithBacking(x)), tensor.New(tensor.WithShape(32, 24), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(9, 7, 2), layers.Resizing(6, 8, layers.CropToAspectRatio()), layers.Conv2D(3, 3, layers.ReLU),
		layers.CenterCrop(2, 4, layers.Named("centre")), layers.Flatten(), layers.Dense(2*4*3))
	m.SetSeed(4)
	defer m.Close()
	compileSGD(t, m, optim.SGDConfig{LearningRate: 0.01}, losses.MeanSquaredError{}, "/CPU:0")
	var summary bytes.Buffer
	if err := m.Summary(&summary); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"resizing (Resizing)", "(None, 6, 8, 2)", "centre (CenterCrop)", "(None, 2, 4, 3)"} {
		if !strings.Contains(summary.String(), want) {
			t.Errorf("Summary lacks %q:\n%s", want, summary.String())
		}
	}
	h, err := m.Fit(ctx, ds, nn.Epochs(3), nn.BatchSize(8), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if loss := h.Get("loss"); !(loss[len(loss)-1] < loss[0]) {
		t.Errorf("losses %v: the model did not learn through CenterCrop", loss)
	}
	checkLoadedPredicts(t, m, ds, "resizing.safetensors")

	bad := nn.NewSequential(layers.Input(9, 7, 2), layers.Conv2D(3, 3), layers.Resizing(4, 4), layers.Flatten(), layers.Dense(24))
	defer bad.Close()
	compileSGD(t, bad, optim.SGDConfig{LearningRate: 0.01}, losses.MeanSquaredError{}, "/CPU:0")
	if _, err := bad.Fit(ctx, ds, nn.Epochs(1), nn.Verbose(0)); err == nil || !strings.Contains(err.Error(), "put it first") {
		t.Errorf("Resizing after a Conv2D: error %v, want one saying to put it first", err)
	}
}
