package onnx

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/data"
	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
)

// newModel makes the functional model of the given inputs and outputs,
// and fails the test where NewModel refuses it.
func newModel(t *testing.T, inputs, outputs []*nn.Tensor) *nn.Model {
	t.Helper()
	m, err := nn.NewModel(inputs, outputs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// writer returns the node that writes the value x, and fails the test
// where none does.
func writer(t *testing.T, om *wire.Model, x string) wire.Node {
	t.Helper()
	for _, n := range om.Graph.Nodes {
		if slices.Contains(n.Outputs, x) {
			return n
		}
	}
	t.Fatalf("no node writes %q", x)
	return wire.Node{}
}

// readers lists the op types of the nodes that read the value x.
func readers(om *wire.Model, x string) []string {
	var ops []string
	for _, n := range om.Graph.Nodes {
		if slices.Contains(n.Inputs, x) {
			ops = append(ops, n.OpType)
		}
	}
	return ops
}

// A model of two inputs, an image and a vector, and two outputs: the
// graph takes input_1 and input_2 and returns class and mask, in the
// model's order, with the model's shapes. The mask, computed channels
// first, is moved back to channels last before it is flattened into the
// output, which the class's Concat reads too: one Transpose, no Identity.
func TestExportONNXTwoInputsTwoOutputs(t *testing.T) {
	img, vec := nn.Input(6, 5, 2), nn.Input(3)
	x := nn.Apply(layers.MaxPooling2D(), nn.Apply(layers.Conv2D(4, 3, layers.Padding("same"), layers.ReLU), img)) // (3, 2, 4)
	m := nn.Apply(layers.Conv2D(1, 1, layers.Sigmoid), x)
	mask := nn.Apply(layers.Flatten(layers.Named("mask")), m) // (6)
	gated := nn.Apply(layers.GlobalAveragePooling2D(), nn.Apply(layers.Multiply(), x, m))
	v := nn.Apply(layers.Dense(5, layers.Tanh), vec)
	h := nn.Apply(layers.Concatenate(-1), gated, mask, v)
	class := nn.Apply(layers.Dense(3, layers.Softmax, layers.Named("class")), h)
	model := newModel(t, []*nn.Tensor{img, vec}, []*nn.Tensor{class, mask})
	model.SetSeed(5)

	om := exportAndDecode(t, model)
	checkGraphIO(t, om, model, []string{"input_1", "input_2"}, []string{"class", "mask"})
	if got := readers(om, "input_1"); !slices.Equal(got, []string{"Transpose"}) {
		t.Errorf("input_1 is read by %v, want one Transpose to channels first", got)
	}
	if got := readers(om, "input_2"); !slices.Equal(got, []string{"Gemm"}) {
		t.Errorf("input_2 is read by %v, want the Dense's Gemm", got)
	}
	flatten := writer(t, om, "mask")
	if flatten.OpType != "Flatten" {
		t.Fatalf("mask is written by a %s, want the Flatten", flatten.OpType)
	}
	if tr := writer(t, om, flatten.Inputs[0]); tr.OpType != "Transpose" || !slices.Equal(ints(t, tr, "perm"), []int64{0, 2, 3, 1}) {
		t.Errorf("the Flatten reads a %s %v, want a Transpose to channels last", tr.OpType, tr.Attributes)
	}
	if got := readers(om, "mask"); !slices.Equal(got, []string{"Concat"}) {
		t.Errorf("the output mask is read by %v, want the class's Concat", got)
	}
	if got := writer(t, om, "class"); got.OpType != "Softmax" {
		t.Errorf("class is written by a %s, want the Softmax", got.OpType)
	}
	transposes := 0
	for _, op := range opTypes(om) {
		switch op {
		case "Transpose":
			transposes++
		case "Identity":
			t.Error("an Identity node: every output is a node's")
		}
	}
	if transposes != 2 {
		t.Errorf("%d Transposes in %v, want 2: the image to channels first, the mask back", transposes, opTypes(om))
	}
}

// An output computed channels first is moved back to channels last, and
// the Transpose that another output's Flatten read is the output itself.
func TestExportONNXImageOutputReadByAnother(t *testing.T) {
	in := nn.Input(4, 4, 2)
	features := nn.Apply(layers.Conv2D(3, 3, layers.Padding("same"), layers.Named("features")), in)
	score := nn.Apply(layers.Dense(1, layers.Named("score")), nn.Apply(layers.Flatten(), features))
	model := newModel(t, []*nn.Tensor{in}, []*nn.Tensor{features, score})
	model.SetSeed(2)
	om := exportAndDecode(t, model)
	checkGraphIO(t, om, model, []string{"input_1"}, []string{"features", "score"})
	want := []string{"Transpose", "Conv", "Transpose", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if tr := writer(t, om, "features"); tr.OpType != "Transpose" || !slices.Equal(ints(t, tr, "perm"), []int64{0, 2, 3, 1}) {
		t.Errorf("features is written by a %s, want the Transpose to channels last", tr.OpType)
	}
	if got := readers(om, "features"); !slices.Equal(got, []string{"Flatten"}) {
		t.Errorf("features is read by %v, want the Flatten", got)
	}
}

// randomRows is n rows of cols values in [-1, 1).
func randomRows(rng *rand.Rand, n, cols int) [][]float32 {
	r := make([][]float32, n)
	for i := range r {
		r[i] = make([]float32, cols)
		for j := range r[i] {
			r[i][j] = float32(2*rng.Float64() - 1)
		}
	}
	return r
}

// checkComputes checks that each of the graph's outputs, named, computes
// from the samples of a model's two inputs what PredictOutputs returns.
func checkComputes(t *testing.T, om *wire.Model, m *nn.Model, names []string, as, bs [][]float32) {
	t.Helper()
	inputs, err := data.SliceInputs(data.InputTuple(data.Rows(as), data.Rows(bs)))
	if err != nil {
		t.Fatal(err)
	}
	preds, err := m.PredictOutputs(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	flat := func(r [][]float32) []float64 {
		var v []float64
		for _, row := range r {
			for _, x := range row {
				v = append(v, float64(x))
			}
		}
		return v
	}
	got := evaluateGraph(t, om, map[string][]float64{"input_1": flat(as), "input_2": flat(bs)}, len(as))
	for k, name := range names {
		want := preds[k].Values()
		if len(got[name]) != len(want) {
			t.Fatalf("output %s: %d values, PredictOutputs %d", name, len(got[name]), len(want))
		}
		for i, w := range want {
			if math.Abs(got[name][i]-float64(w)) > 1e-5 {
				t.Errorf("output %s, value %d: the graph computes %v, PredictOutputs %v", name, i, got[name][i], w)
			}
		}
	}
}

// The graph's outputs compute what PredictOutputs returns, after a step
// of training (the biases are not 0): an output that another output reads
// (value reads class) and one whose layer passes another output through
// (Dropout: an Identity of class).
func TestExportONNXOutputsComputeWhatPredictOutputsDoes(t *testing.T) {
	a, b := nn.Input(4), nn.Input(3)
	x := nn.Apply(layers.Dense(5, layers.GELU), a)
	y := nn.Apply(layers.Dense(5), b)
	class := nn.Apply(layers.Dense(3, layers.Named("class")), nn.Apply(layers.Add(), x, y))
	value := nn.Apply(layers.Dense(1, layers.GELU, layers.Named("value")), class)
	same := nn.Apply(layers.Dropout(0.5, layers.Named("same")), class)
	model := newModel(t, []*nn.Tensor{a, b}, []*nn.Tensor{class, value, same})
	model.SetSeed(8)
	if err := model.Compile(newSGD(t), losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	ds, err := data.SliceData(data.InputTuple(data.Rows(randomRows(rng, 16, 4)), data.Rows(randomRows(rng, 16, 3))),
		data.LabelTuple(data.TargetRows(randomRows(rng, 16, 3)), data.TargetRows(randomRows(rng, 16, 1)), data.TargetRows(randomRows(rng, 16, 3))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Fit(context.Background(), ds, nn.Epochs(1), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}

	om := exportAndDecode(t, model)
	names := []string{"class", "value", "same"}
	checkGraphIO(t, om, model, []string{"input_1", "input_2"}, names)
	if n := writer(t, om, "same"); n.OpType != "Identity" || !slices.Equal(n.Inputs, []string{"class"}) || n.Name != "same/Identity" {
		t.Errorf("same is written by %s %q reading %v, want same/Identity reading class", n.OpType, n.Name, n.Inputs)
	}
	if got := readers(om, "class"); !slices.Equal(got, []string{"Gemm", "Identity"}) {
		t.Errorf("class is read by %v, want value's Gemm and same's Identity", got)
	}
	checkComputes(t, om, model, names, randomRows(rng, 5, 4), randomRows(rng, 5, 3))
}

// An output whose layer passes a model input through (Dropout) is an
// Identity of the graph's input.
func TestExportONNXOutputOfAnInput(t *testing.T) {
	a, b := nn.Input(4), nn.Input(3)
	class := nn.Apply(layers.Dense(3, layers.Named("class")), a)
	passed := nn.Apply(layers.Dropout(0.5, layers.Named("passed")), b)
	model := newModel(t, []*nn.Tensor{a, b}, []*nn.Tensor{class, passed})
	model.SetSeed(8)
	if err := model.Compile(newSGD(t), losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	om := exportAndDecode(t, model)
	names := []string{"class", "passed"}
	checkGraphIO(t, om, model, []string{"input_1", "input_2"}, names)
	if n := writer(t, om, "passed"); n.OpType != "Identity" || !slices.Equal(n.Inputs, []string{"input_2"}) {
		t.Errorf("passed is written by %s reading %v, want an Identity of input_2", n.OpType, n.Inputs)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	checkComputes(t, om, model, names, randomRows(rng, 5, 4), randomRows(rng, 5, 3))
}

// The graph's names: a model of one input and one output takes "input"
// and returns "output"; any other names its inputs after its Input layers
// and its outputs after their layers, a layer's second and third outputs
// (a shared layer's calls) told apart as Keras 2 does, skipping a name
// another output has.
func TestExportONNXGraphNames(t *testing.T) {
	cases := []struct {
		name     string
		model    func() (*nn.Model, error)
		ins, out []string
	}{
		{"one input, one output", func() (*nn.Model, error) {
			in := nn.Input(3)
			return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(2, layers.Named("class")), in)})
		}, []string{"input"}, []string{"output"}},
		{"one input, two outputs", func() (*nn.Model, error) {
			in := nn.Input(3)
			return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{nn.Apply(layers.Dense(2), in), nn.Apply(layers.Dense(1, layers.Named("value")), in)})
		}, []string{"input_1"}, []string{"dense", "value"}},
		{"two inputs, one output", func() (*nn.Model, error) {
			a, b := nn.Input(3), nn.Input(2)
			x := nn.Apply(layers.Concatenate(-1), a, b)
			return nn.NewModel([]*nn.Tensor{a, b}, []*nn.Tensor{nn.Apply(layers.Dense(1, layers.Named("sum")), x)})
		}, []string{"input_1", "input_2"}, []string{"sum"}},
		{"a shared layer's outputs", func() (*nn.Model, error) {
			in := nn.Input(2)
			head := layers.Dense(2, layers.Named("head"))
			x := nn.Apply(layers.Dense(2), in)
			return nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{
				nn.Apply(head, in), nn.Apply(layers.Dense(2, layers.Named("head_1")), in), nn.Apply(head, x), nn.Apply(head, nn.Apply(head, in)),
			})
		}, []string{"input_1"}, []string{"head", "head_1", "head_2", "head_3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.model()
			if err != nil {
				t.Fatal(err)
			}
			m.SetSeed(1)
			checkGraphIO(t, exportAndDecode(t, m), m, c.ins, c.out)
		})
	}
}
