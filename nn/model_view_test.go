package nn_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/nn"
	"gorgonia.org/gorgonia"
)

// viewOf returns the model's view, failing the test where View does.
func viewOf(t *testing.T, m *nn.Model) nn.ModelView {
	t.Helper()
	var v nn.ModelView
	if err := m.View("test", func(mv nn.ModelView) error { v = mv; return nil }); err != nil {
		t.Fatal(err)
	}
	return v
}

// callText is what a test compares of a call: the layer's name and the
// call's tensors and shapes.
type callText struct {
	layer         string
	index         int
	inputs        []string
	output        string
	inShapes      [][]int
	outShape      []int
	layerInShape  []int // the LayerView's, for a first call
	layerOutShape []int
}

func callsOf(v nn.ModelView) []callText {
	var out []callText
	for _, c := range v.Calls {
		ct := callText{layer: c.Layer.Name(), index: c.Index, inputs: c.Inputs, output: c.Output, inShapes: c.InputShapes, outShape: c.OutputShape}
		for _, l := range v.Layers {
			if l.Layer == c.Layer && c.Index == 0 {
				ct.layerInShape, ct.layerOutShape = l.InputShape, l.OutputShape
			}
		}
		out = append(out, ct)
	}
	return out
}

// A Sequential's view is a chain of calls, one per layer.
func TestViewOfASequentialIsAChain(t *testing.T) {
	m := nn.NewSequential(layers.Input(4, 4, 1), layers.Flatten(), layers.Dense(3), layers.Dense(2))
	v := viewOf(t, m)
	if v.Functional || v.Input != "input" || v.Output != "dense_1:0" || !slices.Equal(v.OutputShape, []int{2}) || len(v.Layers) != 3 {
		t.Errorf("view %+v", v)
	}
	want := []callText{
		{"flatten", 0, []string{"input"}, "flatten:0", [][]int{{4, 4, 1}}, []int{16}, []int{4, 4, 1}, []int{16}},
		{"dense", 0, []string{"flatten:0"}, "dense:0", [][]int{{16}}, []int{3}, []int{16}, []int{3}},
		{"dense_1", 0, []string{"dense:0"}, "dense_1:0", [][]int{{3}}, []int{2}, []int{3}, []int{2}},
	}
	if got := callsOf(v); !reflect.DeepEqual(got, want) {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
}

// viewMerge is a layer of several inputs that outputs its first input: a
// stand-in for a merge layer, which a view does not compile.
type viewMerge struct{ layers.Layer }

func (viewMerge) Type() string                         { return "Add" }
func (viewMerge) PlanInputs(in [][]int) ([]int, error) { return slices.Clone(in[0]), nil }
func (viewMerge) BuildInputs(in [][]int, _ *rand.Rand) ([]int, error) {
	return slices.Clone(in[0]), nil
}
func (viewMerge) CallInputs([]layers.Flow, []*gorgonia.Node) (layers.Flow, error) {
	return layers.Flow{}, errors.New("not compiled")
}

// A functional model's view is its graph: a shared layer once among the
// layers and once per call among the calls, a merge layer's call reading
// its tensors in order.
func TestViewOfAFunctionalModelIsItsGraph(t *testing.T) {
	in := nn.Input(4)
	shared := layers.Dense(4)
	a := nn.Apply(shared, in)
	b := nn.Apply(shared, a)
	c := nn.Apply(viewMerge{layers.Dropout(0)}, b, a)
	out := nn.Apply(layers.Dense(2), c)
	m, err := nn.NewModel([]*nn.Tensor{in}, []*nn.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	v := viewOf(t, m)
	if !v.Functional || v.Input != "input_1" || v.Output != "dense_1:0" || !slices.Equal(v.InputShape, []int{4}) || !slices.Equal(v.OutputShape, []int{2}) {
		t.Errorf("view %+v", v)
	}
	var names []string
	for _, l := range v.Layers {
		names = append(names, l.Layer.Name())
	}
	if !slices.Equal(names, []string{"dense", "add", "dense_1"}) {
		t.Errorf("layers %v: want each once, in the order of their first call", names)
	}
	want := []callText{
		{"dense", 0, []string{"input_1"}, "dense:0", [][]int{{4}}, []int{4}, []int{4}, []int{4}},
		{"dense", 1, []string{"dense:0"}, "dense:1", [][]int{{4}}, []int{4}, nil, nil},
		{"add", 0, []string{"dense:1", "dense:0"}, "add:0", [][]int{{4}, {4}}, []int{4}, nil, []int{4}},
		{"dense_1", 0, []string{"add:0"}, "dense_1:0", [][]int{{4}}, []int{2}, []int{4}, []int{2}},
	}
	if got := callsOf(v); !reflect.DeepEqual(got, want) {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
	if v.Calls[0].Layer.Params()[0] != v.Calls[1].Layer.Params()[0] {
		t.Error("the shared layer's calls do not share its weights")
	}
}
