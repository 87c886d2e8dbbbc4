package layers_test

import (
	"bytes"
	"context"
	"math"
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

// normData is n samples of the given shape, values of mean 3 and spread
// 5 plus a different offset per last index, and zero labels.
func normData(t *testing.T, n int, shape ...int) (data.Dataset, []float32) {
	t.Helper()
	size := 1
	for _, d := range shape {
		size *= d
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	x := make([]float32, n*size)
	for i := range x {
		x[i] = float32(3 + 5*rng.NormFloat64() + float64(i%shape[len(shape)-1])*10)
	}
	return samples(t, x, append([]int{n}, shape...)...), x
}

// samples is a Dataset of x, of the given shape (the batch axis first),
// with labels of zeros of its size, as a model of preprocessing layers
// and a Flatten predicts.
func samples(t *testing.T, x []float32, shape ...int) data.Dataset {
	t.Helper()
	ds, err := data.TensorData(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(shape[0], len(x)/shape[0]), tensor.WithBacking(make([]float32, len(x)))))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// refMoments is numpy's x.mean(axis=reduced), x.var(axis=reduced) in
// float64, two passes, for values of shape (n, shape...) keeping the
// sample axes kept (0 the first sample axis): the reference Adapt is
// checked against.
func refMoments(x []float32, n int, shape, kept []int) (mean, variance []float64) {
	size := len(x) / n
	index := func(i int) int { // the kept index of value i of a sample
		j, rest := 0, i
		coord := make([]int, len(shape))
		for a := len(shape) - 1; a >= 0; a-- {
			coord[a] = rest % shape[a]
			rest /= shape[a]
		}
		for _, a := range kept {
			j = j*shape[a] + coord[a]
		}
		return j
	}
	k := 1
	for _, a := range kept {
		k *= shape[a]
	}
	mean, variance = make([]float64, k), make([]float64, k)
	count := make([]float64, k)
	for i, v := range x {
		mean[index(i%size)] += float64(v)
		count[index(i%size)]++
	}
	for j := range mean {
		mean[j] /= count[j]
	}
	for i, v := range x {
		d := float64(v) - mean[index(i%size)]
		variance[index(i%size)] += d * d
	}
	for j := range variance {
		variance[j] /= count[j]
	}
	return mean, variance
}

// TestNormalizationAdapt: Adapt's mean and variance equal numpy's two-pass
// float64 statistics (within 1e-12 relative) for each kind of axis, in
// batches of 1, 7, 32 (the default) and all at once, and its count is
// the values per index; Keras' own example (axis -1 on 4 rows) gives -1.
func TestNormalizationAdapt(t *testing.T) {
	cases := []struct {
		name  string
		shape []int
		axis  []int // nil: the default, -1
		none  bool  // NormalizationAxis(): Keras' axis=None
		kept  []int
	}{
		{"last axis of rows", []int{3}, nil, false, []int{0}},
		{"channels of images", []int{4, 5, 3}, nil, false, []int{2}},
		{"rows and channels", []int{4, 5, 3}, []int{1, -1}, false, []int{0, 2}},
		{"height", []int{4, 5, 3}, []int{-3}, false, []int{0}},
		{"none", []int{4, 5, 3}, nil, true, nil},
	}
	const n = 50
	for _, c := range cases {
		ds, x := normData(t, n, c.shape...)
		wantMean, wantVar := refMoments(x, n, c.shape, c.kept)
		for _, batch := range []int{1, 7, 0, n} {
			var opts []layers.NormalizationOption
			if c.axis != nil || c.none {
				opts = append(opts, layers.NormalizationAxis(c.axis...))
			}
			l := layers.Normalization(opts...)
			l.SetName("normalization")
			if err := l.Adapt(ds, batch); err != nil {
				t.Fatalf("%s, batch %d: %v", c.name, batch, err)
			}
			if _, err := l.Build(c.shape, nil); err != nil {
				t.Fatal(err)
			}
			ps := l.Params()
			if len(ps) != 3 || ps[0].Name != "mean" || ps[1].Name != "variance" || ps[2].Name != "count" || !ps[0].NonTrainable || !ps[2].NonTrainable {
				t.Fatalf("%s: weights %v", c.name, ps)
			}
			mean, variance := ps[0].Value.Data().([]float32), ps[1].Value.Data().([]float32)
			if len(mean) != len(wantMean) {
				t.Fatalf("%s: %d means, want %d", c.name, len(mean), len(wantMean))
			}
			for j := range wantMean {
				if mean[j] != float32(wantMean[j]) || math.Abs(float64(variance[j])-wantVar[j]) > 1e-6*wantVar[j] {
					t.Errorf("%s, batch %d, index %d: mean %v variance %v, want %v and %v", c.name, batch, j, mean[j], variance[j], wantMean[j], wantVar[j])
				}
			}
			if got, want := ps[2].Value.Data().([]float32)[0], float32(len(x)/len(wantMean)); got != want {
				t.Errorf("%s: count %v, want %v", c.name, got, want)
			}
		}
	}

	// Keras' docstring: adapted to rows [0 7 4], [2 9 6] (twice each),
	// [0 7 4] normalizes to -1 everywhere: mean [1 8 5], variance 1.
	rows := []float32{0, 7, 4, 2, 9, 6, 0, 7, 4, 2, 9, 6}
	ds := samples(t, rows, 4, 3)
	l := layers.Normalization()
	if err := l.Adapt(ds, 3); err != nil {
		t.Fatal(err)
	}
	got := predict(t, nn.NewSequential(layers.Input(3), l), ds)
	if !slices.Equal(got[:3], []float32{-1, -1, -1}) || !slices.Equal(got[3:6], []float32{1, 1, 1}) {
		t.Errorf("Keras' example normalizes to %v, want -1 -1 -1 1 1 1 ...", got)
	}
}

// predict runs m on /CPU:0 over ds and returns its outputs.
func predict(t *testing.T, m *nn.Sequential, ds data.Inputs) []float32 {
	t.Helper()
	defer m.Close()
	return predictOn(t, m, ds, "/CPU:0")
}

func predictOn(t *testing.T, m *nn.Sequential, ds data.Inputs, dev string) []float32 {
	t.Helper()
	compileSGD(t, m, optim.SGDConfig{LearningRate: 0.01}, losses.MeanSquaredError{}, dev)
	got, err := m.PredictTensor(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	return got.Data().([]float32)
}

// TestNormalizationValues: outputs of fixed statistics, bit for bit what
// TensorFlow computes in float32, (x - mean) / max(√variance, 1e-7), and
// inverted mean + x·max(√variance, 1e-7): a variance of 0 divides by
// 1e-7, one mean and variance broadcast to every channel.
func TestNormalizationValues(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6}
	ds := samples(t, x, 2, 3)
	eps := float32(1e-7)
	f := func(v float64) float32 { return float32(v) }
	sqrt := func(v float32) float32 { return float32(math.Sqrt(float64(v))) }
	cases := []struct {
		name           string
		mean, variance []float64
		invert         bool
		want           []float32
	}{
		// (x - 2) / √2 for each value.
		{"one mean and variance", []float64{2}, []float64{2}, false,
			[]float32{(1 - 2) / sqrt(2), 0, 1 / sqrt(2), 2 / sqrt(2), 3 / sqrt(2), 4 / sqrt(2)}},
		// Channel 0: (x-1)/3, channel 1: (x-0)/1e-7 (variance 0), channel
		// 2: (x+1)/0.5.
		{"per channel", []float64{1, 0, -1}, []float64{9, 0, 0.25}, false,
			[]float32{0, 2 / eps, 4 / 0.5, 1, 5 / eps, 7 / 0.5}},
		// mean + x·√variance: 1 + x·3, 0 + x·1e-7, -1 + x·0.5.
		{"inverted", []float64{1, 0, -1}, []float64{9, 0, 0.25}, true,
			[]float32{1 + 1*3, 2 * eps, -1 + 3*f(0.5), 1 + 4*3, 5 * eps, -1 + 6*f(0.5)}},
	}
	for _, c := range cases {
		opts := []layers.NormalizationOption{layers.MeanVariance(c.mean, c.variance)}
		if c.invert {
			opts = append(opts, layers.Invert())
		}
		l := layers.Normalization(opts...)
		got := predict(t, nn.NewSequential(layers.Input(3), l), ds)
		for i := range c.want {
			if math.Float32bits(got[i]) != math.Float32bits(c.want[i]) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
		if l.Params() != nil {
			t.Errorf("%s: a layer given its statistics has weights %v", c.name, l.Params())
		}
	}
}

// TestNormalizationErrors: an unadapted layer, statistics that do not fit,
// the batch axis, and adapting a layer given its statistics are clear
// errors.
func TestNormalizationErrors(t *testing.T) {
	ds, _ := normData(t, 4, 2, 3)
	cases := []struct {
		name string
		l    *layers.NormalizationLayer
		want string
	}{
		{"unadapted", layers.Normalization(), "call its Adapt"},
		{"two means for three channels", layers.Normalization(layers.MeanVariance([]float64{1, 2}, []float64{1})), "give 1 value or 3"},
		{"the batch axis", layers.Normalization(layers.NormalizationAxis(0)), "batch axis"},
		{"axis out of range", layers.Normalization(layers.NormalizationAxis(3)), "out of range"},
		{"negative variance", layers.Normalization(layers.MeanVariance([]float64{1}, []float64{-1})), "never negative"},
	}
	for _, c := range cases {
		m := nn.NewSequential(layers.Input(2, 3), c.l, layers.Flatten())
		sgd, _ := optim.NewSGD(optim.SGDConfig{LearningRate: 0.01})
		err := m.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0"))
		if err == nil {
			_, err = m.PredictTensor(context.Background(), ds)
		}
		m.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	err := layers.Normalization(layers.MeanVariance([]float64{1}, []float64{1})).Adapt(ds, 0)
	if err == nil || !strings.Contains(err.Error(), "MeanVariance") {
		t.Errorf("adapting a layer given its statistics: %v", err)
	}
	empty, _ := data.TensorInputs(tensor.New(tensor.WithShape(0, 3), tensor.WithBacking([]float32{})))
	if empty != nil {
		if err := layers.Normalization().Adapt(empty, 0); err == nil || !strings.Contains(err.Error(), "no samples") {
			t.Errorf("adapting to no samples: %v", err)
		}
	}
}

// TestNormalizationInAModel: an adapted Normalization in a model predicts
// (x - mean)/√variance with its adapted float32 statistics, shows its
// 2c+1 non-trainable weights in Summary, passes the gradient to a Dense
// before it (the model learns), saves and loads with its statistics as
// Keras stores them (mean, variance, count), predicting the same.
func TestNormalizationInAModel(t *testing.T) {
	ctx := context.Background()
	ds, x := normData(t, 40, 4, 4, 3)
	norm := layers.Normalization()
	if err := norm.Adapt(ds, 8); err != nil {
		t.Fatal(err)
	}
	m := nn.NewSequential(layers.Input(4, 4, 3), norm, layers.Flatten())
	got := predict(t, m, ds)
	mean, variance := norm.Params()[0].Value.Data().([]float32), norm.Params()[1].Value.Data().([]float32)
	for i, v := range x {
		c := i % 3
		want := (v - mean[c]) / float32(math.Sqrt(float64(variance[c])))
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			t.Fatalf("value %d (%v) normalized to %v, want %v", i, v, got[i], want)
		}
	}

	n := 64
	rng := rand.New(rand.NewPCG(9, 9))
	xs, ys := make([]float32, n*2), make([]float32, n)
	for i := range n {
		xs[2*i], xs[2*i+1] = float32(100+30*rng.NormFloat64()), float32(-50+2*rng.NormFloat64())
		ys[i] = 0.01*(xs[2*i]-100) + (xs[2*i+1]+50)*0.5
	}
	train, err := data.TensorData(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(xs)), tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(ys)))
	if err != nil {
		t.Fatal(err)
	}
	first := layers.Normalization(layers.Named("inputs"))
	if err := first.Adapt(train, 0); err != nil {
		t.Fatal(err)
	}
	tm := nn.NewSequential(layers.Input(2), first, layers.Dense(3, layers.Tanh), layers.Normalization(layers.MeanVariance([]float64{0.5}, []float64{4})),
		layers.Dense(1))
	tm.SetSeed(5)
	defer tm.Close()
	compileSGD(t, tm, optim.SGDConfig{LearningRate: 0.1}, losses.MeanSquaredError{}, "/CPU:0")
	var summary bytes.Buffer
	if err := tm.Summary(&summary); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inputs (Normalization)", "Non-trainable params: 5"} {
		if !strings.Contains(summary.String(), want) {
			t.Errorf("Summary lacks %q:\n%s", want, summary.String())
		}
	}
	h, err := tm.Fit(ctx, train, nn.Epochs(10), nn.BatchSize(16), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if loss := h.Get("loss"); !(loss[len(loss)-1] < 0.5*loss[0]) {
		t.Errorf("loss %v after 10 epochs from %v: the model did not learn through Normalization", loss[len(loss)-1], loss[0])
	}
	for _, ext := range []string{".safetensors"} {
		loaded := checkLoadedPredicts(t, tm, train, "normalization"+ext)
		ws, err := loaded.GetWeights()
		if err != nil {
			t.Fatal(err)
		}
		adapted := first.Params()
		for i, p := range adapted {
			if !slices.Equal(ws[i].Data().([]float32), p.Value.Data().([]float32)) {
				t.Errorf("%s: loaded %s %v, saved %v", ext, p.Name, ws[i].Data(), p.Value.Data())
			}
		}
		loaded.Close()
	}

}
