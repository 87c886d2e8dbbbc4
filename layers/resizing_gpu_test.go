//go:build cudavm && cgo && kernelemu

package layers_test

import (
	"math"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

// TestResizingOnGPU: Resizing (bilinear, nearest, cropped to its aspect)
// and CenterCrop (cropping, and resizing an image smaller than the crop)
// predict on the emulated /GPU:0 what they predict on /CPU:0, bit for
// bit.
func TestResizingOnGPU(t *testing.T) {
	_, x := normData(t, 5, 9, 7, 3)
	ds, err := data.TensorInputs(tensor.New(tensor.WithShape(5, 9, 7, 3), tensor.WithBacking(x)))
	if err != nil {
		t.Fatal(err)
	}
	for _, newLayer := range []func() layers.Layer{
		func() layers.Layer { return layers.Resizing(5, 11) },
		func() layers.Layer { return layers.Resizing(13, 4, layers.Interpolation("nearest")) },
		func() layers.Layer { return layers.Resizing(4, 8, layers.CropToAspectRatio()) },
		func() layers.Layer { return layers.CenterCrop(4, 5) },
		func() layers.Layer { return layers.CenterCrop(12, 6) },
	} {
		var outs [2][]float32
		for i, dev := range []string{"/CPU:0", "/GPU:0"} {
			l := newLayer()
			m := nn.NewSequential(layers.Input(9, 7, 3), l, layers.Flatten())
			outs[i] = predictOn(t, m, ds, dev)
			m.Close()
		}
		for i := range outs[0] {
			if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) {
				t.Fatalf("%s: value %d: %v on /GPU:0, %v on /CPU:0", newLayer().Type(), i, outs[1][i], outs[0][i])
			}
		}
	}
}
