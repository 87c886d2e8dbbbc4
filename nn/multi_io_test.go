package nn_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// twoByTwo is a model of two inputs, a (4 values) and b (3), and two
// outputs: "class", 3 softmax classes, and "value", one number.
func twoByTwo(t *testing.T) *nn.Model {
	t.Helper()
	a, b := nn.Input(4), nn.Input(3)
	x := nn.Apply(layers.Dense(8, layers.ReLU), a)
	y := nn.Apply(layers.Dense(8, layers.ReLU), b)
	c := nn.Apply(layers.Concatenate(-1), x, y)
	class := nn.Apply(layers.Dense(3, layers.Softmax, layers.Named("class")), c)
	value := nn.Apply(layers.Dense(1, layers.Named("value")), c)
	m, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{class, value})
	if err != nil {
		t.Fatal(err)
	}
	m.SetSeed(3)
	return m
}

// twoByTwoData is n samples for twoByTwo: the class is the largest of a's
// first three values, the value the sum of b's.
func twoByTwoData(t *testing.T, n int, seed uint64) (data.Dataset, [][]float32, [][]float32, []int, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	as, bs := make([][]float32, n), make([][]float32, n)
	classes, values := make([]int, n), make([]float32, n)
	for i := range n {
		as[i], bs[i] = make([]float32, 4), make([]float32, 3)
		for j := range as[i] {
			as[i][j] = float32(rng.NormFloat64())
		}
		for j := range bs[i] {
			bs[i][j] = float32(rng.NormFloat64())
			values[i] += bs[i][j]
		}
		classes[i] = slices.Index(as[i][:3], slices.Max(as[i][:3]))
	}
	ds, err := data.SliceData(data.InputTuple(data.Rows(as), data.Rows(bs)), data.LabelTuple(data.Classes(classes, 3), data.Targets(values)))
	if err != nil {
		t.Fatal(err)
	}
	return ds, as, bs, classes, values
}

func compileTwoByTwo(t *testing.T, m *nn.Model, opts ...nn.CompileOption) {
	t.Helper()
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]nn.CompileOption{
		nn.OnDevice("/CPU:0"),
		nn.LossFor("class", losses.SparseCategoricalCrossentropy{}),
		nn.LossFor("value", losses.MeanSquaredError{}),
		nn.LossWeights(1, 0.5),
		nn.MetricsFor("class", &metrics.SparseCategoricalAccuracy{}),
	}, opts...)
	if err := m.Compile(opt, nil, nil, opts...); err != nil {
		t.Fatal(err)
	}
}

// A model of two inputs and two outputs trains on a tuple of inputs and
// of labels, reports each output's loss and metrics under Keras' names,
// and its loss is the weighted sum of its outputs', each computed from
// its own labels: checked against the losses computed here from
// PredictOutputs.
func TestTwoInputsTwoOutputsTrain(t *testing.T) {
	m := twoByTwo(t)
	compileTwoByTwo(t, m)
	defer m.Close()
	ds, _, _, classes, values := twoByTwoData(t, 96, 1)
	ctx := context.Background()
	before, err := m.Evaluate(ctx, ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Fit(ctx, ds, nn.Epochs(15), nn.BatchSize(16), nn.Verbose(0), nn.ValidationSplit(0.25))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"loss", "class_loss", "value_loss", "class_sparse_categorical_accuracy",
		"val_loss", "val_class_loss", "val_value_loss", "val_class_sparse_categorical_accuracy"}
	if !slices.Equal(h.Keys, want) {
		t.Errorf("history keys %v, want %v", h.Keys, want)
	}
	after, err := m.Evaluate(ctx, ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if after["loss"] >= before["loss"]/2 {
		t.Errorf("loss %.4f after training, %.4f before: it should have fallen by half", after["loss"], before["loss"])
	}
	// The loss is the weighted sum of the outputs' (no regularizer here).
	if sum := after["class_loss"] + 0.5*after["value_loss"]; math.Abs(after["loss"]-sum) > 1e-5*sum {
		t.Errorf("loss %v, want class_loss + 0.5·value_loss = %v", after["loss"], sum)
	}
	// Each output's loss and accuracy from its predictions and labels.
	preds, err := m.PredictOutputs(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 2 || !slices.Equal(preds[0].Shape(), []int{96, 3}) || !slices.Equal(preds[1].Shape(), []int{96, 1}) {
		t.Fatalf("PredictOutputs gave %d outputs, want (96, 3) and (96, 1)", len(preds))
	}
	var ce, mse, right float64
	for i, c := range classes {
		row := preds[0].Row(i)
		ce -= math.Log(float64(row[c]))
		d := float64(preds[1].Row(i)[0] - values[i])
		mse += d * d
		if slices.Index(row, slices.Max(row)) == c {
			right++
		}
	}
	n := float64(len(classes))
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"class_loss", after["class_loss"], ce / n},
		{"value_loss", after["value_loss"], mse / n},
		{"class_sparse_categorical_accuracy", after["class_sparse_categorical_accuracy"], right / n},
	} {
		if math.Abs(c.got-c.want) > 1e-4*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, computed from the predictions %v", c.name, c.got, c.want)
		}
	}
	if _, err := m.Predict(ctx, ds); err == nil || !strings.Contains(err.Error(), "PredictOutputs") {
		t.Errorf("Predict of a model of two outputs: %v, want an error pointing at PredictOutputs", err)
	}
}

// The model splits each sample into its inputs in order: each output here
// reads one input through a Dense layer, computed here from its weights.
func TestSeveralInputsAreSplitInOrder(t *testing.T) {
	a, b := nn.Input(2), nn.Input(3)
	da, db := layers.Dense(1), layers.Dense(1)
	m, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{nn.Apply(da, a), nn.Apply(db, b)})
	if err != nil {
		t.Fatal(err)
	}
	m.SetSeed(5)
	sgd, err := optim.Get("sgd")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.InputShapes(); len(got) != 2 || !slices.Equal(got[0], []int{2}) || !slices.Equal(got[1], []int{3}) {
		t.Errorf("InputShapes = %v, want [[2] [3]]", got)
	}
	if got := m.OutputNames(); !slices.Equal(got, []string{"dense", "dense_1"}) {
		t.Errorf("OutputNames = %v", got)
	}
	as := [][]float32{{1, 2}, {-3, 0.5}}
	bs := [][]float32{{1, 0, -1}, {2, 4, 8}}
	in, err := data.SliceInputs(data.InputTuple(data.Rows(as), data.Rows(bs)))
	if err != nil {
		t.Fatal(err)
	}
	preds, err := m.PredictOutputs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range []struct {
		layer *layers.DenseLayer
		rows  [][]float32
	}{{da, as}, {db, bs}} {
		kernel := c.layer.Params()[0].Value.Data().([]float32)
		bias := c.layer.Params()[1].Value.Data().([]float32)
		for i, row := range c.rows {
			want := bias[0]
			for j, v := range row {
				want += v * kernel[j]
			}
			if got := preds[k].Row(i)[0]; math.Abs(float64(got-want)) > 1e-6 {
				t.Errorf("output %d, sample %d: %v, want %v", k, i, got, want)
			}
		}
	}
}

// A model of two outputs saves and loads whole: the same predictions, and
// the same compile settings (each output's loss, weight and metrics).
func TestTwoOutputsSaveAndLoad(t *testing.T) {
	m := twoByTwo(t)
	compileTwoByTwo(t, m)
	defer m.Close()
	ds, _, _, _, _ := twoByTwoData(t, 32, 2)
	ctx := context.Background()
	if _, err := m.Fit(ctx, ds, nn.Epochs(2), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "two.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	want, err := m.Evaluate(ctx, ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := loaded.Evaluate(ctx, ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("loaded model's %s = %v, saved model's %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("loaded model's logs %v, saved model's %v", got, want)
	}
	// Training goes on as the saved model's would: the optimizer's state
	// came with it.
	h1, err := m.Fit(ctx, ds, nn.Epochs(1), nn.Verbose(0), nn.Seed(9))
	if err != nil {
		t.Fatal(err)
	}
	h2, err := loaded.Fit(ctx, ds, nn.Epochs(1), nn.Verbose(0), nn.Seed(9))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := h1.Values["loss"][0], h2.Values["loss"][0]; a != b {
		t.Errorf("after loading, an epoch's loss is %v, the saved model's %v", b, a)
	}
}

// Mistakes in giving a model of several inputs or outputs its settings or
// data are errors that say what to do.
func TestSeveralInputsAndOutputsErrors(t *testing.T) {
	ds, as, _, classes, _ := twoByTwoData(t, 16, 3)
	ctx := context.Background()
	oneInput, err := data.SliceData(data.Rows(as), data.LabelTuple(data.Classes(classes, 3), data.Targets(make([]float32, 16))))
	if err != nil {
		t.Fatal(err)
	}
	bs := make([][]float32, 16)
	for i := range bs {
		bs[i] = make([]float32, 3)
	}
	adam := func() optim.Optimizer {
		opt, err := optim.Get("adam")
		if err != nil {
			t.Fatal(err)
		}
		return opt
	}
	for _, c := range []struct {
		name string
		run  func(m *nn.Model) error
		want []string
	}{
		{"a loss for an output that does not exist", func(m *nn.Model) error {
			return m.Compile(adam(), losses.MeanSquaredError{}, nil, nn.LossFor("clas", losses.MeanSquaredError{}))
		}, []string{`no output named "clas"`, `"class", "value"`}},
		{"no loss for an output", func(m *nn.Model) error {
			return m.Compile(adam(), nil, nil, nn.LossFor("class", losses.MeanSquaredError{}))
		}, []string{`no loss for output "value"`, "LossFor"}},
		{"too few loss weights", func(m *nn.Model) error {
			return m.Compile(adam(), losses.MeanSquaredError{}, nil, nn.LossWeights(1))
		}, []string{"1 weights for 2 outputs"}},
		{"too few losses", func(m *nn.Model) error {
			return m.Compile(adam(), nil, nil, nn.OutputLosses(losses.MeanSquaredError{}))
		}, []string{"1 losses for 2 outputs"}},
		{"data of one input", func(m *nn.Model) error {
			compileTwoByTwo(t, m)
			_, err := m.Fit(ctx, oneInput, nn.Verbose(0))
			return err
		}, []string{"2 inputs", "1 part", "data.InputTuple"}},
		{"labels of one part", func(m *nn.Model) error {
			compileTwoByTwo(t, m)
			one, err := data.SliceData(data.InputTuple(data.Rows(as), data.Rows(bs)), data.Classes(classes, 3))
			if err != nil {
				return err
			}
			_, err = m.Evaluate(ctx, one, nn.Verbose(0))
			return err
		}, []string{"2 outputs", "1 part", "data.LabelTuple"}},
		{"class weights", func(m *nn.Model) error {
			compileTwoByTwo(t, m)
			_, err := m.Fit(ctx, ds, nn.Verbose(0), nn.ClassWeight(map[int]float64{0: 1, 1: 2, 2: 1}))
			return err
		}, []string{"ClassWeight", "one output", "SampleWeight"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := twoByTwo(t)
			defer m.Close()
			err := c.run(m)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// A run of a model of two outputs interrupted mid-epoch and resumed from
// its checkpoint ends with the weights of the run never interrupted.
func TestTwoOutputsResumeExactly(t *testing.T) {
	ds, _, _, _, _ := twoByTwoData(t, 100, 4) // 7 steps at batch 16
	fit := func(ctx context.Context, m *nn.Model, opts ...nn.Option) (*nn.History, error) {
		return m.Fit(ctx, ds, append([]nn.Option{nn.Epochs(3), nn.BatchSize(16), nn.Seed(7), nn.Verbose(0)}, opts...)...)
	}
	whole := twoByTwo(t)
	compileTwoByTwo(t, whole)
	defer whole.Close()
	if _, err := fit(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	want := weightsOf(t, whole)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := twoByTwo(t)
	compileTwoByTwo(t, first)
	defer first.Close()
	_, err := fit(ctx, first, nn.Callbacks(&cancelAt{epoch: 1, batch: 3, cancel: cancel}))
	var ie *nn.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("interrupted Fit returned %v, want an *InterruptedError", err)
	}
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	if err := first.SaveCheckpoint(path, nn.Checkpoint{Epoch: ie.Epoch, Step: ie.Step}); err != nil {
		t.Fatal(err)
	}
	resumed := twoByTwo(t)
	resumed.SetSeed(99) // other initial weights: all must come from the checkpoint
	compileTwoByTwo(t, resumed)
	defer resumed.Close()
	ck, err := resumed.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fit(context.Background(), resumed, nn.InitialEpoch(ck.Epoch), nn.InitialStep(ck.Step)); err != nil {
		t.Fatal(err)
	}
	if got := weightsOf(t, resumed); !slices.Equal(got, want) {
		t.Error("the resumed run ended with other weights than the uninterrupted one")
	}
}

// A model of two inputs and two outputs: the data has a part per input and
// per output, each output its loss, and the logs are named after the
// outputs' layers.
func ExampleLossFor() {
	a, b := nn.Input(2), nn.Input(3)
	x := nn.Apply(layers.Concatenate(-1), nn.Apply(layers.Dense(8, layers.ReLU), a), b)
	class := nn.Apply(layers.Dense(2, layers.Softmax, layers.Named("class")), x)
	value := nn.Apply(layers.Dense(1, layers.Named("value")), x)
	model, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{class, value})
	if err != nil {
		fmt.Println(err)
		return
	}
	model.SetSeed(1)
	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.05})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = model.Compile(sgd, nil, nil, nn.OnDevice("/CPU:0"),
		nn.LossFor("class", losses.SparseCategoricalCrossentropy{}),
		nn.LossFor("value", losses.MeanSquaredError{}),
		nn.LossWeights(1, 0.5),
		nn.MetricsFor("class", &metrics.SparseCategoricalAccuracy{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer model.Close()
	as := [][]float32{{1, 0}, {0, 1}, {1, 1}, {0, 0}}
	bs := [][]float32{{1, 2, 3}, {0, 1, 0}, {2, 2, 2}, {-1, 0, 1}}
	ds, err := data.SliceData(data.InputTuple(data.Rows(as), data.Rows(bs)),
		data.LabelTuple(data.Classes([]int{0, 1, 0, 1}, 2), data.Targets([]float32{6, 1, 6, 0})))
	if err != nil {
		fmt.Println(err)
		return
	}
	hist, err := model.Fit(context.Background(), ds, nn.Epochs(2), nn.Verbose(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hist.Keys)
	preds, err := model.PredictOutputs(context.Background(), ds)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(model.OutputNames(), preds[0].Shape(), preds[1].Shape())
	// Output:
	// [loss class_loss value_loss class_sparse_categorical_accuracy]
	// [class value] [4 2] [4 1]
}

// Inputs take their names from NamedInput, or input_1, input_2, ... in
// the order given.
func TestNamedInputs(t *testing.T) {
	a, b := nn.NamedInput("title", 3), nn.Input(2)
	m, err := nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{nn.Apply(layers.Dense(1), nn.Apply(layers.Concatenate(-1), a, b))})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := m.Summary(&sb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"title (InputLayer)", "input_2 (InputLayer)", "['title[0][0]',", "'input_2[0][0]']"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("the summary has no %q:\n%s", want, sb.String())
		}
	}
	if _, err := nn.NewModel([]*nn.Tensor{nn.NamedInput("a/b", 3)}, []*nn.Tensor{nn.Apply(layers.Dense(1), nn.NamedInput("a/b", 3))}); err == nil || !strings.Contains(err.Error(), "without") {
		t.Errorf("a name with a slash: %v", err)
	}
}

// Regressions a review found: a metric that cannot be copied for each
// output is an error, not a panic; a one-output model's loss weight
// survives Save and LoadModel; a one-output model refuses labels of
// several parts.
func TestOutputsReviewRegressions(t *testing.T) {
	m := twoByTwo(t)
	adam, err := optim.Get("adam")
	if err != nil {
		t.Fatal(err)
	}
	err = m.Compile(adam, losses.MeanSquaredError{}, []metrics.Metric{&metrics.BinaryAccuracy{Threshold: float32(math.NaN())}})
	if err == nil || !strings.Contains(err.Error(), "copying metric") {
		t.Errorf("a metric whose copy fails: %v", err)
	}

	one := nn.NewSequential(layers.Input(3), layers.Dense(1))
	one.SetSeed(2)
	sgd, err := optim.Get("sgd")
	if err != nil {
		t.Fatal(err)
	}
	if err := one.Compile(sgd, losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0"), nn.LossWeights(10)); err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	ds, err := data.SliceData(data.Rows([][]float32{{1, 2, 3}, {4, 5, 6}}), data.Targets([]float32{1, -1}))
	if err != nil {
		t.Fatal(err)
	}
	want, err := one.Evaluate(context.Background(), ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.safetensors")
	if err := one.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	got, err := loaded.Evaluate(context.Background(), ds, nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if got["loss"] != want["loss"] {
		t.Errorf("a loss weighted by 10: %v after loading, %v saved", got["loss"], want["loss"])
	}

	two, err := data.SliceData(data.Rows([][]float32{{1, 2, 3}, {4, 5, 6}}), data.LabelTuple(data.Targets([]float32{1, 2}), data.Targets([]float32{3, 4})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Evaluate(context.Background(), two, nn.Verbose(0)); err == nil || !strings.Contains(err.Error(), "2 parts") {
		t.Errorf("labels of two parts for one output: %v", err)
	}
}
