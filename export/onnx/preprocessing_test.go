package onnx

import (
	"reflect"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
)

// Rescaling maps to Mul by its scale and Add of its offset, scalar
// initializers, in whichever layout its input has; RandomFlip and
// RandomTranslation, RandomZoom, RandomRotation, RandomBrightness and
// RandomContrast,
// identity in Predict, add nothing.
func TestExportONNXRescaling(t *testing.T) {
	m := functional(t, []int{4, 4, 3}, func(in *nn.Tensor) *nn.Tensor {
		x := nn.Apply(layers.RandomFlip("horizontal"), in)
		x = nn.Apply(layers.RandomTranslation(0.1, 0.1), x)
		x = nn.Apply(layers.RandomZoom(0.2), x)
		x = nn.Apply(layers.RandomRotation(0.1), x)
		x = nn.Apply(layers.RandomBrightness(0.1), x)
		x = nn.Apply(layers.RandomContrast(0.2), x)
		x = nn.Apply(layers.Rescaling(1.0/127.5, -1), x)
		x = nn.Apply(layers.Conv2D(2, 3), x)
		x = nn.Apply(layers.Rescaling(0.5, 0, layers.Named("half")), x)
		return nn.Apply(layers.Dense(2), nn.Apply(layers.Flatten(), x))
	})
	m.SetSeed(2)
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Mul", "Add", "Transpose", "Conv", "Mul", "Add", "Transpose", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	for name, v := range map[string]float32{"rescaling/scale": 1.0 / 127.5, "rescaling/offset": -1, "half/scale": 0.5, "half/offset": 0} {
		if init := om.Graph.Initializer(name); init == nil || len(init.Dims) != 0 || !slices.Equal(init.Floats, []float32{v}) {
			t.Errorf("initializer %s: %+v, want the scalar %v", name, init, v)
		}
	}
}

// Normalization maps to Sub of its mean and Div by max(√variance, 1e-7)
// (inverted: Mul, then Add), initializers of the statistics broadcast
// against the input channels last: after a convolution, whose output the
// graph holds channels first, a Transpose comes first.
func TestExportONNXNormalization(t *testing.T) {
	m := functional(t, []int{4, 4, 3}, func(in *nn.Tensor) *nn.Tensor {
		x := nn.Apply(layers.Normalization(layers.MeanVariance([]float64{1, 2, 3}, []float64{4, 1, 0.25})), in)
		x = nn.Apply(layers.Conv2D(2, 3), x)
		x = nn.Apply(layers.Normalization(layers.NormalizationAxis(1, 2), layers.MeanVariance([]float64{0.5}, []float64{9}), layers.Invert(),
			layers.Named("back")), x)
		return nn.Apply(layers.Dense(2), nn.Apply(layers.Flatten(), x))
	})
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Sub", "Div", "Transpose", "Conv", "Transpose", "Mul", "Add", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	for name, w := range map[string]struct {
		dims   []int64
		values []float32
	}{
		"normalization/mean": {[]int64{1, 1, 3}, []float32{1, 2, 3}},
		"normalization/std":  {[]int64{1, 1, 3}, []float32{2, 1, 0.5}},
		"back/mean":          {[]int64{2, 2, 1}, []float32{0.5, 0.5, 0.5, 0.5}},
		"back/std":           {[]int64{2, 2, 1}, []float32{3, 3, 3, 3}},
	} {
		if init := om.Graph.Initializer(name); init == nil || !slices.Equal(init.Dims, w.dims) || !slices.Equal(init.Floats, w.values) {
			t.Errorf("initializer %s: %+v, want dims %v values %v", name, init, w.dims, w.values)
		}
	}
}

// Resizing and CenterCrop map to Slice of their box and, when they
// resize, Resize on the images channels first to sizes made of the
// input's batch and channels and the layer's size, with the attributes
// that read where tf.image.resize reads; a crop alone is a Slice in the
// layout its input has.
func TestExportONNXResizing(t *testing.T) {
	m := functional(t, []int{9, 7, 3}, func(in *nn.Tensor) *nn.Tensor {
		x := nn.Apply(layers.CenterCrop(12, 6), in) // smaller: the centre 9×4 box resized
		x = nn.Apply(layers.Resizing(5, 5, layers.Interpolation("nearest")), x)
		x = nn.Apply(layers.Conv2D(2, 3), x)
		x = nn.Apply(layers.CenterCrop(2, 2, layers.Named("crop")), x)
		return nn.Apply(layers.Dense(2), nn.Apply(layers.Flatten(), x))
	})
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Transpose", "Slice", "Shape", "Slice", "Concat", "Resize", "Shape", "Slice", "Concat", "Resize", "Conv", "Slice",
		"Transpose", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	var resizes []map[string]string
	for _, n := range om.Graph.Nodes {
		if n.OpType != "Resize" {
			continue
		}
		attrs := map[string]string{}
		for _, a := range n.Attributes {
			attrs[a.Name] = a.S
		}
		resizes = append(resizes, attrs)
		if len(n.Inputs) != 4 || n.Inputs[1] != "" || n.Inputs[2] != "" {
			t.Errorf("Resize reads %q: want the images, no roi, no scales, and sizes", n.Inputs)
		}
	}
	if w := []map[string]string{{"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
		{"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn", "nearest_mode": "floor"}}; !reflect.DeepEqual(resizes, w) {
		t.Errorf("Resize attributes %v, want %v", resizes, w)
	}
	for name, want := range map[string][]int64{"center_crop/starts": {0, 1}, "center_crop/ends": {9, 5}, "center_crop/size": {12, 6},
		"resizing/size": {5, 5}, "crop/starts": {0, 0}, "crop/ends": {2, 2}} {
		if init := om.Graph.Initializer(name); init == nil || !slices.Equal(init.Int64s, want) {
			t.Errorf("initializer %s: %+v, want %v", name, init, want)
		}
	}
}

// RandomCrop exports what it does in Predict, Keras 2's resizing of the
// centre box with the window's aspect: Slice, then Resize.
func TestExportONNXRandomCrop(t *testing.T) {
	m := functional(t, []int{9, 7, 3}, func(in *nn.Tensor) *nn.Tensor {
		return nn.Apply(layers.Dense(2), nn.Apply(layers.Flatten(), nn.Apply(layers.RandomCrop(6, 6), in)))
	})
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Transpose", "Slice", "Shape", "Slice", "Concat", "Resize", "Transpose", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	for name, want := range map[string][]int64{"random_crop/starts": {1, 0}, "random_crop/ends": {8, 7}, "random_crop/size": {6, 6}} {
		if init := om.Graph.Initializer(name); init == nil || !slices.Equal(init.Int64s, want) {
			t.Errorf("initializer %s: %+v, want %v", name, init, want)
		}
	}
}
