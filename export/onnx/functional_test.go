package onnx

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/gorgonia"
)

// functional makes the functional model of the output that build computes
// from the input, and fails the test where NewModel refuses it.
func functional(t *testing.T, inShape []int, build func(in *nn.Tensor) *nn.Tensor) *nn.Model {
	t.Helper()
	in := nn.Input(inShape...)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{build(in)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// initializerNames lists the graph's initializers' names.
func initializerNames(om *wire.Model) []string {
	var names []string
	for _, init := range om.Graph.Initializers {
		names = append(names, init.Name)
	}
	return names
}

// A layer applied twice adds its nodes twice and its weights once: both
// calls' nodes read the one initializer, and the graph computes what
// Predict does.
func TestExportONNXFunctionalSharedLayer(t *testing.T) {
	shared := layers.Dense(4, layers.GELU)
	m := functional(t, []int{4}, func(in *nn.Tensor) *nn.Tensor {
		x := nn.Apply(shared, in)
		x = nn.Apply(shared, x) // the same weights again
		return nn.Apply(layers.Dense(3), x)
	})
	m.SetSeed(6)
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)

	want := []string{"dense/kernel", "dense/bias", "dense/sqrt2", "dense/one", "dense/half", "dense_1/kernel", "dense_1/bias"}
	if got := initializerNames(om); !slices.Equal(got, want) {
		t.Errorf("initializers %v, want %v: the shared layer's once", got, want)
	}
	checkWeight(t, om, shared, "kernel")
	checkWeight(t, om, shared, "bias")
	var gemms [][]string
	for _, n := range om.Graph.Nodes {
		if n.OpType == "Gemm" {
			gemms = append(gemms, n.Inputs[1:])
		}
	}
	if len(gemms) != 3 || !slices.Equal(gemms[0], []string{"dense/kernel", "dense/bias"}) || !slices.Equal(gemms[1], gemms[0]) {
		t.Errorf("the Gemm nodes read %v: want the shared layer's two calls to read its one kernel and bias", gemms)
	}
	if !strings.Contains(om.Graph.DocString, "functional model") {
		t.Errorf("doc string %q", om.Graph.DocString)
	}

	// The graph computes what Predict does.
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 5*4)
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	inputs, err := data.SliceInputs(data.Flat(x, 4))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	x64 := make([]float64, len(x))
	for i, v := range x {
		x64[i] = float64(v)
	}
	got := evaluate(t, om, x64, 4)
	for i, w := range pred.Values() {
		if math.Abs(got[i]-float64(w)) > 1e-5 {
			t.Errorf("output %d: the graph computes %v, Predict %v", i, got[i], w)
		}
	}
}

// A shared convolution: its kernel, reordered for ONNX at each call, is
// one initializer, and the values stay channels first between the calls.
func TestExportONNXFunctionalSharedConv(t *testing.T) {
	conv := layers.Conv2D(2, 3, layers.Padding("same"), layers.ReLU)
	m := functional(t, []int{5, 5, 2}, func(in *nn.Tensor) *nn.Tensor {
		x := nn.Apply(conv, nn.Apply(conv, in))
		x = nn.Apply(layers.BatchNormalization(), x)
		x = nn.Apply(conv, x)
		return nn.Apply(layers.Dense(3), nn.Apply(layers.Flatten(), x))
	})
	m.SetSeed(2)
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Transpose", "Conv", "Relu", "Conv", "Relu", "BatchNormalization", "Conv", "Relu", "Transpose", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	for _, name := range initializerNames(om) {
		if strings.HasPrefix(name, "conv2d/") && name != "conv2d/kernel" && name != "conv2d/bias" {
			t.Errorf("initializer %s: the shared convolution's weights are added again", name)
		}
	}
	for _, n := range om.Graph.Nodes {
		if n.OpType == "Conv" && !slices.Equal(n.Inputs[1:], []string{"conv2d/kernel", "conv2d/bias"}) {
			t.Errorf("node %s reads %v", n.Name, n.Inputs)
		}
	}
}

// A functional model of a stack of layers exports as the Sequential of
// them does, but for the graph's doc string.
func TestExportONNXFunctionalChainIsTheSequential(t *testing.T) {
	stack := func() []layers.Layer {
		return []layers.Layer{layers.Conv2D(3, 2, layers.ReLU), layers.MaxPooling2D(), layers.Flatten(), layers.Dense(2, layers.Softmax)}
	}
	s := nn.NewSequential(append([]layers.Layer{layers.Input(6, 6, 2)}, stack()...)...)
	s.SetSeed(9)
	f := functional(t, []int{6, 6, 2}, func(in *nn.Tensor) *nn.Tensor {
		x := in
		for _, l := range stack() {
			x = nn.Apply(l, x)
		}
		return x
	})
	f.SetSeed(9)
	a, b := exportAndDecode(t, s), exportAndDecode(t, f)
	if !slices.Equal(opTypes(a), opTypes(b)) || !slices.Equal(initializerNames(a), initializerNames(b)) {
		t.Errorf("Sequential: %v %v\nfunctional: %v %v", opTypes(a), initializerNames(a), opTypes(b), initializerNames(b))
	}
	for i, init := range a.Graph.Initializers {
		if !slices.Equal(init.Floats, b.Graph.Initializers[i].Floats) {
			t.Errorf("initializer %s differs", init.Name)
		}
	}
}

// mergeStub is a layer of several inputs of another package than layers:
// it can be built, not compiled or exported.
type mergeStub struct{ layers.Layer }

func (mergeStub) Type() string { return "Add" }
func (mergeStub) PlanInputs(in [][]int) ([]int, error) {
	return slices.Clone(in[0]), nil
}
func (s mergeStub) BuildInputs(in [][]int, _ *rand.Rand) ([]int, error) {
	return s.PlanInputs(in)
}
func (mergeStub) CallInputs(in []layers.Flow, _ []*gorgonia.Node) (layers.Flow, error) {
	return in[0], nil
}

var _ layers.MultiInputLayer = mergeStub{}

// A layer without an ONNX mapping in a graph is refused, naming it. (A
// functional model takes the layers of package layers only, but for
// layers of several inputs, which it does not plan.)
func TestExportONNXFunctionalRefusesWhatHasNoMapping(t *testing.T) {
	cases := []struct {
		name  string
		model func(t *testing.T) *nn.Model
		want  []string
	}{
		{"after a shared layer", func(t *testing.T) *nn.Model {
			shared := layers.Dense(3)
			return functional(t, []int{3}, func(in *nn.Tensor) *nn.Tensor {
				a := nn.Apply(shared, in)
				b := nn.Apply(shared, a)
				return nn.Apply(mergeStub{layers.Dropout(0, layers.Named("my_add"))}, a, b)
			})
		}, []string{"layer 2", `Add layer "my_add" is a onnx.mergeStub`, "no ONNX mapping", "package layers"}},
		{"a merge layer of another package", func(t *testing.T) *nn.Model {
			return functional(t, []int{3}, func(in *nn.Tensor) *nn.Tensor {
				a := nn.Apply(layers.Dense(2), in)
				b := nn.Apply(layers.Dense(2), in)
				return nn.Apply(mergeStub{layers.Dropout(0, layers.Named("my_add"))}, a, b)
			})
		}, []string{"layer 3", `Add layer "my_add" is a onnx.mergeStub`, "no ONNX mapping"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ExportFile(c.model(t), t.TempDir()+"/m.onnx")
			if err == nil {
				t.Fatal("exported")
			}
			for _, w := range append([]string{"export ONNX: "}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// The builder for a call of several inputs: each input's layout moves by
// its own rank, and a value is transposed once however many calls need
// it so.
func TestBuilderCallOfSeveralInputs(t *testing.T) {
	b := newBuilder(inputName, outputName)
	b.Begin("conv2d", []string{inputName}, [][]int{{4, 4, 2}})
	first := b.ChannelsFirst(inputName)
	b.Begin("conv2d_1", []string{inputName}, [][]int{{4, 4, 2}})
	if again := b.ChannelsFirst(inputName); again != first {
		t.Errorf("a second Transpose of the input: %s, then %s", first, again)
	}
	b.Begin("add", []string{first, "x"}, [][]int{{4, 4, 2}, {2}})
	if got := b.InputShapes(); !slices.Equal(got[0], []int{4, 4, 2}) || !slices.Equal(got[1], []int{2}) {
		t.Errorf("InputShapes %v", got)
	}
	last := b.ChannelsLast(first)
	if b.ChannelsLast("x") != "x" || b.ChannelsLast(first) != last {
		t.Error("a value transposed again, or a vector transposed")
	}
	var perms [][]int64
	for _, n := range b.g.Nodes {
		if n.OpType != "Transpose" {
			t.Errorf("node %s", n.OpType)
			continue
		}
		a, _ := n.Attr("perm")
		perms = append(perms, a.Ints)
	}
	if len(perms) != 2 || !slices.Equal(perms[0], []int64{0, 3, 1, 2}) || !slices.Equal(perms[1], []int64{0, 2, 3, 1}) {
		t.Errorf("Transposes %v: want one to channels first and one back", perms)
	}
}

// ZeroPadding2D, Cropping2D and UpSampling2D map to Pad, Slice and Resize
// in whichever layout their input has (channels last before the
// convolution, first after it, with no Transpose between them), Identity
// to Identity and ReLU to Relu.
func TestExportONNXResizeLayers(t *testing.T) {
	m := functional(t, []int{6, 5, 2}, func(in *nn.Tensor) *nn.Tensor {
		x := nn.Apply(layers.ZeroPadding2D(1, 0, 0, 1), in)
		x = nn.Apply(layers.Conv2D(3, 2), x)
		x = nn.Apply(layers.Cropping2DSymmetric(1, 0), x)
		x = nn.Apply(layers.UpSampling2D(2, 1), x)
		x = nn.Apply(layers.NewReLU(), nn.Apply(layers.Identity(), x))
		return nn.Apply(layers.Dense(2), nn.Apply(layers.Flatten(), x))
	})
	m.SetSeed(4)
	om := exportedONNX(t, m, true)
	checkGraph(t, om, m)
	want := []string{"Pad", "Transpose", "Conv", "Slice", "Resize", "Identity", "Relu", "Transpose", "Flatten", "Gemm"}
	if got := opTypes(om); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if r := nodeOf(t, om, "Resize"); len(r.Inputs) != 3 || r.Inputs[1] != "" {
		t.Errorf("Resize's inputs %q: want X, no roi, scales", r.Inputs)
	}
}
