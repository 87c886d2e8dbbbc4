package nn_test

import (
	"context"
	"fmt"
	"math"
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

func compileSGD(t *testing.T, m *nn.Model, lr float64) {
	t.Helper()
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: lr})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
}

func weightsOf(t *testing.T, m *nn.Model) []float32 {
	t.Helper()
	ws, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	var all []float32
	for _, w := range ws {
		all = append(all, w.Data().([]float32)...)
	}
	return all
}

// A functional model of a stack of layers is the Sequential of them: the
// same initial weights from the same seed, and the same training, bit for
// bit.
func TestFunctionalStackTrainsAsSequential(t *testing.T) {
	in := nn.Input(6)
	x := nn.Apply(layers.Dense(8, layers.ReLU), in)
	x = nn.Apply(layers.Dropout(0.25), x)
	out := nn.Apply(layers.Dense(10, layers.Softmax), x)
	f, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	s := nn.NewSequential(layers.Input(6), layers.Dense(8, layers.ReLU), layers.Dropout(0.25), layers.Dense(10, layers.Softmax))
	var hist [2]*nn.History
	for i, m := range []*nn.Model{f, s} {
		m.SetSeed(4)
		compileSGD(t, m, 0.1)
		defer m.Close()
		h, err := m.Fit(context.Background(), blobs(t, 48, 6, 1, true), nn.Epochs(3), nn.BatchSize(16), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		hist[i] = h
	}
	if !slices.Equal(hist[0].Get("loss"), hist[1].Get("loss")) {
		t.Errorf("losses: functional %v, Sequential %v", hist[0].Get("loss"), hist[1].Get("loss"))
	}
	if a, b := weightsOf(t, f), weightsOf(t, s); !slices.Equal(a, b) {
		t.Error("the functional model and the Sequential trained different weights")
	}
	if got := f.Layers(); len(got) != 3 || got[0].Name() != "dense" || got[2].Name() != "dense_1" {
		t.Errorf("layers %v, want dense, dropout, dense_1", got)
	}
}

// A layer applied twice computes with one set of weights, and their
// gradient is the sum of both calls' gradients: one SGD step moves each
// weight by lr times the loss's derivative, measured here by central
// differences of Evaluate's loss.
func TestSharedLayerGradientIsTheSumOfItsCalls(t *testing.T) {
	in := nn.Input(6)
	shared := layers.Dense(6, layers.Tanh)
	x := nn.Apply(shared, in)
	x = nn.Apply(shared, x) // the same weights again
	out := nn.Apply(layers.Dense(10, layers.Softmax), x)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	m.SetSeed(2)
	const lr = 0.5
	compileSGD(t, m, lr)
	defer m.Close()
	ds := blobs(t, 48, 6, 1, true)
	if n := m.CountParams(); n != 6*6+6+6*10+10 {
		t.Fatalf("CountParams = %d, want the shared layer's weights once (%d)", n, 6*6+6+6*10+10)
	}
	before, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	lossAt := func(ws []*tensor.Dense) float64 {
		t.Helper()
		if err := m.SetWeights(ws); err != nil {
			t.Fatal(err)
		}
		logs, err := m.Evaluate(context.Background(), ds, nn.BatchSize(48), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		return logs["loss"]
	}
	// The shared kernel's first values: their derivative by differences.
	const eps = 1e-2
	kernel := before[0].Data().([]float32)
	want := make([]float64, 4)
	for i := range want {
		plus, minus := cloneAll(before), cloneAll(before)
		plus[0].Data().([]float32)[i] += eps
		minus[0].Data().([]float32)[i] -= eps
		want[i] = (lossAt(plus) - lossAt(minus)) / (2 * eps)
	}
	if err := m.SetWeights(before); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fit(context.Background(), ds, nn.Epochs(1), nn.BatchSize(48), nn.Shuffle(false), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	after, err := m.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		got := float64(kernel[i]-after[0].Data().([]float32)[i]) / lr
		if math.Abs(got-w) > 2e-3+0.02*math.Abs(w) {
			t.Errorf("shared kernel[%d]: SGD's gradient %.6f, central differences %.6f", i, got, w)
		}
	}
}

func cloneAll(ws []*tensor.Dense) []*tensor.Dense {
	out := make([]*tensor.Dense, len(ws))
	for i, w := range ws {
		out[i] = w.Clone().(*tensor.Dense)
	}
	return out
}

// Keras' functional summary: the input's row, a "Connected to" column, and
// a shared layer's second call named dense[1][0].
func TestFunctionalSummary(t *testing.T) {
	in := nn.Input(6)
	shared := layers.Dense(6, layers.Tanh)
	x := nn.Apply(shared, in)
	x = nn.Apply(shared, x)
	out := nn.Apply(layers.Dense(3, layers.Softmax), x)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Build(6); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := m.Summary(&b); err != nil {
		t.Fatal(err)
	}
	rule, dbl := strings.Repeat("_", 98), strings.Repeat("=", 98)
	blank := strings.Repeat(" ", 98)
	want := `Model: "model"
` + rule + `
 Layer (type)                   Output Shape         Param #     Connected to                     
` + dbl + `
 input_1 (InputLayer)           [(None, 6)]          0           []                               
` + blank + `
 dense (Dense)                  (None, 6)            42          ['input_1[0][0]',                
                                                                  'dense[0][0]']                  
` + blank + `
 dense_1 (Dense)                (None, 3)            21          ['dense[1][0]']                  
` + blank + `
` + dbl + `
Total params: 63
Trainable params: 63
Non-trainable params: 0
` + rule + `
`
	if got := b.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}

// Graphs that cannot be models are refused with errors naming the
// mistake, before anything is built.
func TestNewModelRefusesBadGraphs(t *testing.T) {
	tests := []struct {
		name string
		make func() ([]*nn.Tensor, []*nn.Tensor)
		want string
	}{
		{"a nil layer", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(nil, in)}
		}, "no layer (nil)"},
		{"a bad shape, kept through later calls", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4, 4)
			x := nn.Apply(layers.Conv2D(3, 3), in) // Conv2D takes images
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(2), x)}
		}, "expects images"},
		{"two inputs to a one-input layer", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(3), in, in)}
		}, "takes one input but was applied to 2"},
		{"a Sequential's input layer", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Input(4), in)}
		}, "a functional model starts from nn.Input"},
		{"a disconnected output", func() ([]*nn.Tensor, []*nn.Tensor) {
			in, other := nn.Input(4), nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(3), other)}
		}, "graph disconnected"},
		{"the input as output", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{in}
		}, "apply at least one layer"},
		{"a shared layer on two shapes", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			d := layers.Dense(3)
			x := nn.Apply(d, in)
			x = nn.Apply(d, x) // (3) needs a (3, 3) kernel, (4) a (4, 3) one
			return []*nn.Tensor{in}, []*nn.Tensor{x}
		}, "weights of different shapes"},
		{"no input", func() ([]*nn.Tensor, []*nn.Tensor) { return nil, []*nn.Tensor{nn.Input(2)} }, "needs at least one of each"},
		{"a merge layer on one input", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Add(), in)}
		}, "a merge layer should be called on a list of inputs"},
		{"a merge of incompatible shapes", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Add(), in, nn.Apply(layers.Dense(5), in))}
		}, "inputs have incompatible shapes: got inputs of shapes [(None, 4), (None, 5)]"},
		{"a bad input shape", func() ([]*nn.Tensor, []*nn.Tensor) {
			in := nn.Input(4, 0)
			return []*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Flatten(), in)}
		}, "non-positive dimension"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ins, outs := tc.make()
			m, err := nn.NewModel(ins, outs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewModel = %v, %v; want an error containing %q", m, err, tc.want)
			}
		})
	}
}

// Add belongs to Sequential; a functional model's weights and the whole
// model save and load (see save_functional_test.go for the whole model).
func TestFunctionalModelLimits(t *testing.T) {
	in := nn.Input(4)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(2, layers.Softmax), in)})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add(layers.Dense(2)); err == nil || !strings.Contains(err.Error(), "nn.Apply") {
		t.Errorf("Add = %v, want an error pointing at nn.Apply", err)
	}
	if err := m.Save(t.TempDir() + "/m.safetensors"); err != nil {
		t.Errorf("Save: %v", err)
	}
	path := t.TempDir() + "/w.safetensors"
	if err := m.SaveWeights(path); err != nil {
		t.Fatalf("SaveWeights: %v", err)
	}
	if err := m.LoadWeights(path); err != nil {
		t.Fatalf("LoadWeights: %v", err)
	}
}

// A functional model: the tensors come from nn.Input and nn.Apply, and a
// layer applied twice shares its weights.
func ExampleNewModel() {
	in := nn.Input(32, 32, 3)
	x := nn.Apply(layers.Conv2D(16, 3, layers.Padding("same"), layers.ReLU), in)
	x = nn.Apply(layers.MaxPooling2D(), x)
	x = nn.Apply(layers.Flatten(), x)
	shared := layers.Dense(64, layers.ReLU)
	x = nn.Apply(shared, nn.Apply(layers.Dense(64, layers.ReLU), x))
	x = nn.Apply(shared, x) // the same weights again
	out := nn.Apply(layers.Dense(10, layers.Softmax), x)
	model, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := model.Build(32, 32, 3); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range model.Layers() {
		fmt.Println(l.Name(), l.Type())
	}
	fmt.Println("params:", model.CountParams())
	// Output:
	// conv2d Conv2D
	// max_pooling2d MaxPooling2D
	// flatten Flatten
	// dense Dense
	// dense_1 Dense
	// dense_2 Dense
	// params: 267466
}

// Merge layers in a functional model: a residual block (Add), branches
// joined (Concatenate) and averaged (Average) train, their loss going
// down, and two runs from one seed are the same bit for bit.
func TestMergeLayersTrain(t *testing.T) {
	build := func() *nn.Model {
		in := nn.Input(6)
		h := nn.Apply(layers.Dense(6, layers.ReLU), in)
		r := nn.Apply(layers.Add(), in, nn.Apply(layers.Dense(6), h)) // residual
		a := nn.Apply(layers.Dense(4, layers.Tanh), r)
		b := nn.Apply(layers.Dense(4, layers.ReLU), r)
		j := nn.Apply(layers.Concatenate(-1), a, b, nn.Apply(layers.Average(), a, b))
		m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(10, layers.Softmax), j)})
		if err != nil {
			t.Fatal(err)
		}
		m.SetSeed(8)
		compileSGD(t, m, 0.2)
		return m
	}
	var runs [2][]float64
	for i := range runs {
		m := build()
		defer m.Close()
		h, err := m.Fit(context.Background(), blobs(t, 48, 6, 1, true), nn.Epochs(15), nn.BatchSize(16), nn.Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = h.Get("loss")
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Errorf("two runs from one seed: %v and %v", runs[0], runs[1])
	}
	if first, last := runs[0][0], runs[0][len(runs[0])-1]; !(last < 0.7*first) {
		t.Errorf("loss %v after 15 epochs from %v: the model did not learn", last, first)
	}
}

// ZeroPadding2D, UpSampling2D, Cropping2D, Identity and ReLU in a model:
// Keras' automatic names, the shapes, and the model learns.
func TestResizeLayersTrain(t *testing.T) {
	in := nn.Input(6)
	x := nn.Apply(layers.Reshape([]int{2, 3, 1}), in)
	x = nn.Apply(layers.ZeroPadding2D(1, 0, 1, 1), x)              // (3, 5, 1)
	x = nn.Apply(layers.Conv2D(4, 2, layers.Tanh), x)              // (2, 4, 4)
	x = nn.Apply(layers.UpSampling2D(2, 1), x)                     // (4, 4, 4)
	x = nn.Apply(layers.Cropping2DSymmetric(1, 0), x)              // (2, 4, 4)
	x = nn.Apply(layers.NewReLU(), nn.Apply(layers.Identity(), x)) // (2, 4, 4)
	out := nn.Apply(layers.Dense(10, layers.Softmax), nn.Apply(layers.Flatten(), x))
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var names []string
	for _, l := range m.Layers() {
		names = append(names, l.Name())
	}
	want := []string{"reshape", "zero_padding2d", "conv2d", "up_sampling2d", "cropping2d", "identity", "re_lu", "flatten", "dense"}
	if !slices.Equal(names, want) {
		t.Errorf("layer names %q, want %q", names, want)
	}
	m.SetSeed(3)
	compileSGD(t, m, 0.2)
	h, err := m.Fit(context.Background(), blobs(t, 48, 6, 1, true), nn.Epochs(15), nn.BatchSize(16), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	loss := h.Get("loss")
	if first, last := loss[0], loss[len(loss)-1]; !(last < 0.7*first) {
		t.Errorf("loss %v after 15 epochs from %v: the model did not learn", last, first)
	}
}

// TestSubModelKeepsWeights builds a model of some of another's layers, as
// Keras' Model(inputs, an intermediate tensor) does to read features out
// of a trained model: its layers keep the weights they have (built again,
// they would be drawn anew), so its predictions are the first layer's
// outputs with those weights, computed here by hand; a layer whose
// weights do not fit the new model's shapes is an error naming it.
func TestSubModelKeepsWeights(t *testing.T) {
	in := nn.Input(3)
	hidden := layers.Dense(4, layers.ReLU)
	h := nn.Apply(hidden, in)
	full, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(2, layers.Softmax), h)})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	full.SetSeed(3)
	compileSGD(t, full, 0.1)
	before := weightsOf(t, full)

	features, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{h})
	if err != nil {
		t.Fatal(err)
	}
	defer features.Close()
	features.SetSeed(99) // a seed of its own, which must not redraw the shared weights
	compileSGD(t, features, 0.1)
	if after := weightsOf(t, full); !slices.Equal(after, before) {
		t.Fatalf("building a model of its first layer changed the model's weights")
	}
	x := []float32{0.5, -1, 2, 1.5, 0.25, -0.75}
	xs, err := data.TensorInputs(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(x)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := features.Predict(context.Background(), xs)
	if err != nil {
		t.Fatal(err)
	}
	kernel, bias := hidden.Params()[0].Value.Data().([]float32), hidden.Params()[1].Value.Data().([]float32)
	for r := range 2 {
		for u := range 4 {
			want := float64(bias[u])
			for f := range 3 {
				want += float64(x[r*3+f]) * float64(kernel[f*4+u])
			}
			want = math.Max(want, 0)
			if got := p.Row(r)[u]; math.Abs(float64(got)-want) > 1e-6 {
				t.Fatalf("features of sample %d, unit %d: %v, want %v (the first layer's, with its weights)", r, u, got, want)
			}
		}
	}

	wide := nn.Input(5)
	other, err := nn.NewModel([]*nn.Tensor{wide}, []*nn.Tensor{nn.Apply(hidden, wide)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Compile(sgd, losses.CategoricalCrossentropy{}, nil, nn.OnDevice("/CPU:0")); err == nil || !strings.Contains(err.Error(), "built by another model") {
		t.Errorf("the shared layer on inputs of 5 features: %v, want an error that its weights were built by another model", err)
	}
}
