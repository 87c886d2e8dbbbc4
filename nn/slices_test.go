package nn_test

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/tensor"
)

type myFloat float64 // a named float type, as generics allow

func TestSliceDataRefusesMistakesNamingThem(t *testing.T) {
	ok := data.Rows([][]float32{{1, 2}, {3, 4}})
	two := data.Classes([]int{0, 1}, 2)
	tests := []struct {
		name string
		x    data.Samples
		y    data.Labels
		want string
	}{
		{"ragged rows", data.Rows([][]float32{{1, 2}, {3, 4}, {5}}), two,
			"data.Rows: row 2 has length 1 but row 0 has length 2: every row must have the same length"},
		{"no rows", data.Rows([][]float64(nil)), two, "data.Rows: no rows given: a dataset needs at least one sample"},
		{"empty first row", data.Rows([][]float32{{}, {}}), two, "data.Rows: row 0 is empty: a sample needs at least one value"},
		{"float64 too large", data.Rows([][]float64{{1, 2}, {3, -1e300}}), two,
			"data.Rows: row 1, column 1: -1e+300 is too large for float32, which models compute in"},
		{"named float too large", data.Flat([]myFloat{1, 2, 3, 1e39}, 2), two,
			"data.Flat: value 3 (sample 1): 1e+39 is too large for float32, which models compute in"},
		{"flat without shape", data.Flat([]float32{1, 2}), two,
			"data.Flat: no sample shape given: say what one sample is, e.g. data.Flat(x, 28, 28) for 28×28 images"},
		{"flat with a zero dimension", data.Flat([]float32{1, 2}, 2, 0), two,
			"data.Flat: sample shape (2, 0) has a dimension 0: every dimension must be positive"},
		{"flat left over", data.Flat(make([]float32, 10), 3), two,
			"data.Flat: 10 values do not make whole samples of shape (3,) (3 values each): 1 would be left over"},
		{"flat empty", data.Flat([]float64{}, 3), two, "data.Flat: no values given: a dataset needs at least one sample"},
		{"pixels divisor 0", data.Pixels([]uint8{1, 2}, 0, 1), two,
			"data.Pixels: divisor 0: want a finite number other than 0, such as 255 to scale bytes to [0, 1]"},
		{"pixels divisor NaN", data.Pixels([]uint8{1, 2}, float32(math.NaN()), 1), two, "data.Pixels: divisor NaN"},
		{"pixels left over", data.Pixels(make([]uint8, 7), 255, 2, 2), two,
			"data.Pixels: 7 values do not make whole samples of shape (2, 2) (4 values each): 3 would be left over"},
		{"zero samples", data.Samples{}, two, "nn: no samples: make them with Rows, Flat or Pixels"},
		{"zero labels", ok, data.Labels{}, "data.SliceData: no labels: make them with Classes, OneHot, Targets or TargetRows"},
		{"class too large", ok, data.Classes([]int{1, 10}, 10), "data.Classes: sample 1 has class 10, outside the 10 classes 0 to 9"},
		{"class negative", ok, data.Classes([]int8{0, -1}, 3), "data.Classes: sample 1 has class -1, outside the 3 classes 0 to 2"},
		{"huge uint64 class", ok, data.Classes([]uint64{0, math.MaxUint64}, 3),
			"data.Classes: sample 1 has class 18446744073709551615, outside the 3 classes 0 to 2"},
		{"no classes", ok, data.Classes([]int{0, 0}, 0), "data.Classes: 0 classes: want 1 to 16777216"},
		{"no class labels", ok, data.Classes([]uint8{}, 2), "data.Classes: no labels given"},
		{"one-hot too large", ok, data.OneHot([]uint8{3, 2}, 3), "data.OneHot: sample 0 has class 3, outside the 3 classes 0 to 2"},
		{"targets too large", ok, data.Targets([]float64{0, 1e40}), "data.Targets: sample 1: 1e+40 is too large for float32"},
		{"target rows ragged", ok, data.TargetRows([][]float64{{1}, {2, 3}}),
			"data.TargetRows: row 1 has length 2 but row 0 has length 1: every row must have the same length"},
		{"fewer labels", data.Rows([][]float32{{1}, {2}, {3}}), two,
			"data.SliceData: 3 samples but 2 labels: give one label per sample"},
		{"more labels", ok, data.Targets([]float32{1, 2, 3}), "data.SliceData: 2 samples but 3 labels: give one label per sample"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := data.SliceData(tc.x, tc.y)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("SliceData error = %v, want one starting %q", err, tc.want)
			}
			if ds != nil {
				t.Errorf("SliceData returned %v with its error", ds)
			}
		})
	}
	// SliceInputs reports the same mistakes, and needs no labels.
	if _, err := data.SliceInputs(data.Rows([][]float32{{1}, {2, 3}})); err == nil || !strings.Contains(err.Error(), "row 1 has length 2") {
		t.Errorf("SliceInputs of ragged rows: %v", err)
	}
	if in, err := data.SliceInputs(ok); err != nil || in.Len() != 2 {
		t.Errorf("SliceInputs(2 rows) = %v, %v", in, err)
	}
}

func TestSliceDataGathersWhatItWasGiven(t *testing.T) {
	tests := []struct {
		name          string
		x             data.Samples
		y             data.Labels
		sample, label []int
		n             int
		wantX, wantY  []float32 // gathered at indices 2, 0
	}{
		{
			name: "float64 rows, uint8 classes", n: 3,
			x: data.Rows([][]float64{{1, 2}, {3, 4}, {5.5, 6}}), y: data.Classes([]uint8{2, 0, 1}, 3),
			sample: []int{2}, label: []int{},
			wantX: []float32{5.5, 6, 1, 2}, wantY: []float32{1, 2},
		},
		{
			name: "flat float32 images, one-hot", n: 3,
			x: data.Flat([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2, 2), y: data.OneHot([]int{1, 0, 2}, 3),
			sample: []int{2, 2}, label: []int{3},
			wantX: []float32{8, 9, 10, 11, 0, 1, 2, 3}, wantY: []float32{0, 0, 1, 0, 1, 0},
		},
		{
			name: "pixels over 255, targets", n: 3,
			x: data.Pixels([]uint8{0, 255, 51, 102, 255, 0}, 255, 2), y: data.Targets([]myFloat{0.5, -1, 2}),
			sample: []int{2}, label: []int{},
			wantX: []float32{1, 0, 0, 1}, wantY: []float32{2, 0.5},
		},
		{
			name: "pixels kept, target rows", n: 3,
			x: data.Pixels([]uint8{0, 255, 51, 102, 7, 9}, 1, 1, 2), y: data.TargetRows([][]float32{{1, 2}, {3, 4}, {5, 6}}),
			sample: []int{1, 2}, label: []int{2},
			wantX: []float32{7, 9, 0, 255}, wantY: []float32{5, 6, 1, 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := data.SliceData(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Len() != tc.n || !slices.Equal(ds.SampleShape(), tc.sample) || !slices.Equal(ds.LabelShape(), tc.label) {
				t.Fatalf("Len %d, SampleShape %v, LabelShape %v; want %d, %v, %v",
					ds.Len(), ds.SampleShape(), ds.LabelShape(), tc.n, tc.sample, tc.label)
			}
			x := make([]float32, len(tc.wantX))
			y := make([]float32, len(tc.wantY))
			for i := range y {
				y[i] = 42 // one-hot rows must be cleared, not just set
			}
			if err := ds.GatherInputs([]int{2, 0}, x); err != nil {
				t.Fatal(err)
			}
			if err := ds.GatherLabels([]int{2, 0}, y); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(x, tc.wantX) || !slices.Equal(y, tc.wantY) {
				t.Errorf("gathered x %v, y %v; want %v, %v", x, y, tc.wantX, tc.wantY)
			}
			for _, c := range []struct {
				err  error
				want string
			}{
				{ds.GatherInputs([]int{3}, x[:len(x)/2]), "gather: sample index 3 out of range [0, 3)"},
				{ds.GatherLabels([]int{-1}, y[:len(y)/2]), "gather: sample index -1 out of range [0, 3)"},
				{ds.GatherInputs([]int{0, 1}, x[:1]), "gather: destination holds 1 values, want " + strconv.Itoa(len(x))},
			} {
				if c.err == nil || c.err.Error() != c.want {
					t.Errorf("error %v, want %q", c.err, c.want)
				}
			}
		})
	}
}

// Pixels(x, 255, ...) gives the very floats the CIFAR-10 loader gives, as
// both compute Keras' x / 255 in float32.
func TestPixelsScaleAsCIFAR10Does(t *testing.T) {
	split := cifar10.Synthetic(5, 0, 3).Train
	ds, err := data.SliceData(data.Pixels(split.Images, 255, 32, 32, 3), data.Classes(split.Labels, 10))
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{4, 1, 3}
	got := make([]float32, len(idx)*cifar10.ImageSize)
	want := make([]float32, len(got))
	if err := ds.GatherInputs(idx, got); err != nil {
		t.Fatal(err)
	}
	if err := split.GatherInputs(idx, want); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Error("Pixels(x, 255) and cifar10 gather different floats")
	}
	gotY, wantY := make([]float32, 3), make([]float32, 3)
	if err := ds.GatherLabels(idx, gotY); err != nil {
		t.Fatal(err)
	}
	if err := split.Sparse().GatherLabels(idx, wantY); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotY, wantY) {
		t.Errorf("labels %v, cifar10's %v", gotY, wantY)
	}
}

// Flat reads a []float32 in place, as its documentation says.
func TestFlatReadsFloat32InPlace(t *testing.T) {
	values := []float32{1, 2, 3, 4}
	in, err := data.SliceInputs(data.Flat(values, 2))
	if err != nil {
		t.Fatal(err)
	}
	values[3] = 40
	got := make([]float32, 2)
	if err := in.GatherInputs([]int{1}, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []float32{3, 40}) {
		t.Errorf("gathered %v, want [3 40]", got)
	}
}

// Slices and tensors of the same values train a model alike, to the bit,
// with sparse labels of shape () (Keras' y of shape (N,)) and one-hot ones.
func TestSliceDataTrainsAsTensorDataDoes(t *testing.T) {
	const n, features = 60, 3
	rows := make([][]float64, n)
	flat := make([]float32, 0, n*features)
	classes := make([]int, n)
	for i := range rows {
		c := i % 3
		rows[i] = []float64{float64(c) + 0.1*float64(i%7), float64(i%5) / 5, 1 - float64(c)}
		for _, v := range rows[i] {
			flat = append(flat, float32(v))
		}
		classes[i] = c
	}
	for _, tc := range []struct {
		name   string
		labels data.Labels
		loss   losses.Loss
		y      *tensor.Dense
	}{
		{"sparse", data.Classes(classes, 3), losses.SparseCategoricalCrossentropy{}, tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(toFloats(classes)))},
		{"one-hot", data.OneHot(classes, 3), losses.CategoricalCrossentropy{}, tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(oneHotOf(classes, 3)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fit := func(ds data.Dataset) []float64 {
				m := nn.NewSequential(layers.Dense(8, layers.ReLU), layers.Dense(3, layers.Softmax))
				m.SetSeed(4)
				if err := m.Compile(newSGD(t, 0.1), tc.loss, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
					t.Fatal(err)
				}
				h, err := m.Fit(context.Background(), ds, nn.Epochs(3), nn.BatchSize(16), nn.Seed(5), nn.Verbose(0))
				if err != nil {
					t.Fatal(err)
				}
				return append(h.Get("loss"), h.Get("accuracy")...)
			}
			sliced, err := data.SliceData(data.Rows(rows), tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			tensors, err := data.TensorData(tensor.New(tensor.WithShape(n, features), tensor.WithBacking(flat)), tc.y)
			if err != nil {
				t.Fatal(err)
			}
			a, b := fit(sliced), fit(tensors)
			if !slices.Equal(a, b) {
				t.Errorf("slices: loss and accuracy %v; tensors: %v", a, b)
			}
		})
	}
}

func toFloats(ints []int) []float32 {
	out := make([]float32, len(ints))
	for i, v := range ints {
		out[i] = float32(v)
	}
	return out
}

func oneHotOf(classes []int, n int) []float32 {
	out := make([]float32, len(classes)*n)
	for i, c := range classes {
		out[i*n+c] = 1
	}
	return out
}

// PredictValues gives Predict's numbers without tensors: a linear layer
// with weights set by hand, whose outputs are worked out below.
func TestPredictValuesReadsAsPredict(t *testing.T) {
	m := nn.NewSequential(layers.Input(2), layers.Dense(3, layers.Linear))
	if err := m.Compile(newSGD(t, 0.1), losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	// kernel (2, 3), bias (3): out = [x0 + 2·x1 + 1, -x0, x1 - 1]
	kernel := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, -1, 0, 2, 0, 1}))
	bias := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{1, 0, -1}))
	if err := m.SetWeights([]*tensor.Dense{kernel, bias}); err != nil {
		t.Fatal(err)
	}
	in, err := data.SliceInputs(data.Rows([][]float32{{1, 2}, {-3, 0}, {0, 5}}))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(context.Background(), in, nn.BatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{6, -1, 1}, {-2, 3, -1}, {11, 0, 4}}
	if got := pred.Rows(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Rows() = %v, want %v", got, want)
	}
	if got := pred.Argmax(); !slices.Equal(got, []int{0, 1, 0}) {
		t.Errorf("Argmax() = %v, want [0 1 0]", got)
	}
	if got := pred.Shape(); !slices.Equal(got, []int{3, 3}) || pred.Len() != 3 {
		t.Errorf("Shape() = %v, Len() = %d; want [3 3], 3", got, pred.Len())
	}
	dense, err := m.PredictTensor(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pred.Values(), dense.Data().([]float32)) {
		t.Errorf("Values() %v, Predict %v", pred.Values(), dense.Data())
	}
	if _, err := m.Predict(context.Background(), nil); err == nil || err.Error() != "predict: no samples given" {
		t.Errorf("PredictValues(nil) error = %v", err)
	}
}
