package onnx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/internal/formats/shapes"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/tensor"
)

// exportedONNX compiles m on the CPU, trains it for one epoch of random
// data when train is set, exports it and decodes the file.
func exportedONNX(t *testing.T, m *nn.Sequential, train bool) *wire.Model {
	t.Helper()
	if err := m.Compile(newSGD(t), losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	if train {
		fitOnce(t, m, randomTargets(t, m, 16))
	}
	return exportAndDecode(t, m)
}

func newSGD(t *testing.T) optim.Optimizer {
	t.Helper()
	o, err := optim.NewSGD(optim.SGDConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func exportAndDecode(t *testing.T, m *nn.Sequential) *wire.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := ExportFile(m, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	om, err := wire.Decode(b)
	if err != nil {
		t.Fatalf("the exported file does not decode: %v", err)
	}
	return om
}

// randomTargets is n random samples of the model's input (small integers,
// so that they also index an Embedding) with random targets of its output.
func randomTargets(t *testing.T, m *nn.Sequential, n int) data.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, n*shapes.Size(m.InputShape()))
	for i := range x {
		x[i] = float32(rng.IntN(5))
	}
	y := make([]float32, n*shapes.Size(m.OutputShape()))
	for i := range y {
		y[i] = rng.Float32()
	}
	ds, err := data.TensorData(tensor.New(tensor.WithShape(append([]int{n}, m.InputShape()...)...), tensor.WithBacking(x)),
		tensor.New(tensor.WithShape(append([]int{n}, m.OutputShape()...)...), tensor.WithBacking(y)))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// checkGraph checks what every exported graph of a model of one input
// and one output must be: IR version 8 and opset 17, one float32 input
// and output, "input" and "output", with a symbolic batch and the model's
// shapes, nodes in topological order each reading only what is defined
// before it, unique names, and the last node writing "output".
func checkGraph(t *testing.T, om *wire.Model, m *nn.Sequential) {
	t.Helper()
	checkGraphIO(t, om, m, []string{"input"}, []string{"output"})
	if k := len(om.Graph.Nodes); k == 0 || om.Graph.Nodes[k-1].Outputs[0] != "output" {
		t.Error(`the last node does not write "output"`)
	}
}

// checkGraphIO checks what every exported graph must be: IR version 8 and
// opset 17, float32 inputs and outputs of the given names, in order, with
// a symbolic batch and the model's shapes, nodes in topological order each
// reading only what is defined before it, unique names, and a node
// writing each output.
func checkGraphIO(t *testing.T, om *wire.Model, m *nn.Sequential, inputs, outputs []string) {
	t.Helper()
	if om.IRVersion != 8 || len(om.Opsets) != 1 || om.Opsets[0].Domain != "" || om.Opsets[0].Version != 17 {
		t.Errorf("IR version %d, opsets %+v: want IR 8 and the default domain at 17", om.IRVersion, om.Opsets)
	}
	if om.ProducerName != "gokeras" || om.Graph.Name != m.Name() {
		t.Errorf("producer %q, graph %q", om.ProducerName, om.Graph.Name)
	}
	values := func(what string, vs []wire.ValueInfo, names []string, shapes [][]int) {
		if len(vs) != len(names) || len(shapes) != len(names) {
			t.Fatalf("%d graph %ss and %d model shapes, want %d", len(vs), what, len(shapes), len(names))
		}
		for i, v := range vs {
			want := []wire.Dim{{Param: "batch"}}
			for _, d := range shapes[i] {
				want = append(want, wire.Dim{Value: int64(d)})
			}
			if v.Name != names[i] || v.ElemType != wire.Float || !slices.Equal(v.Dims, want) {
				t.Errorf("graph %s %d: %+v, want %q FLOAT %v", what, i, v, names[i], want)
			}
		}
	}
	values("input", om.Graph.Inputs, inputs, m.InputShapes())
	values("output", om.Graph.Outputs, outputs, m.OutputShapes())
	defined := map[string]bool{}
	for _, in := range inputs {
		defined[in] = true
	}
	for _, init := range om.Graph.Initializers {
		if defined[init.Name] {
			t.Errorf("initializer %q defined twice", init.Name)
		}
		defined[init.Name] = true
	}
	nodes := map[string]bool{}
	for i, n := range om.Graph.Nodes {
		if nodes[n.Name] {
			t.Errorf("node name %q used twice", n.Name)
		}
		nodes[n.Name] = true
		for _, in := range n.Inputs {
			if in != "" && !defined[in] { // "": an optional input left out (Resize's roi)
				t.Errorf("node %d (%s %q) reads %q, which nothing before it defines", i, n.OpType, n.Name, in)
			}
		}
		want := 1
		switch n.OpType {
		case "RNN", "GRU": // Y and Y_h
			want = 2
		case "LSTM": // Y, Y_h and Y_c
			want = 3
		}
		if len(n.Outputs) != want {
			t.Errorf("node %q: outputs %v: want %d", n.Name, n.Outputs, want)
		}
		for _, out := range n.Outputs {
			if out == "" || defined[out] {
				t.Errorf("node %q: outputs %v: want new values", n.Name, n.Outputs)
			}
			defined[out] = true
		}
	}
	for _, out := range outputs {
		if !defined[out] || slices.Contains(inputs, out) {
			t.Errorf("no node writes the graph's output %q", out)
		}
	}
}

// opTypes lists the graph's nodes' op types.
func opTypes(om *wire.Model) []string {
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	return ops
}

// nodeOf returns the graph's first node of an op type.
func nodeOf(t *testing.T, om *wire.Model, op string) wire.Node {
	t.Helper()
	for _, n := range om.Graph.Nodes {
		if n.OpType == op {
			return n
		}
	}
	t.Fatalf("no %s node among %v", op, opTypes(om))
	return wire.Node{}
}

func ints(t *testing.T, n wire.Node, attr string) []int64 {
	t.Helper()
	a, ok := n.Attr(attr)
	if !ok || a.Type != wire.AttrInts {
		t.Fatalf("node %q has no ints attribute %q", n.Name, attr)
	}
	return a.Ints
}

func intAttr(t *testing.T, n wire.Node, attr string) int64 {
	t.Helper()
	a, ok := n.Attr(attr)
	if !ok || a.Type != wire.AttrInt {
		t.Fatalf("node %q has no int attribute %q", n.Name, attr)
	}
	return a.I
}

// checkWeight checks that the initializer holds the layer's weight as is.
func checkWeight(t *testing.T, om *wire.Model, l layers.Layer, param string) {
	t.Helper()
	p := layerParam(l, param)
	init := om.Graph.Initializer(l.Name() + "/" + param)
	if p == nil || init == nil {
		t.Fatalf("%s/%s: weight %v, initializer %v", l.Name(), param, p, init)
	}
	if !slices.Equal(init.Dims, int64s(p.Value.Shape())) || !slices.Equal(init.Floats, p.Value.Data().([]float32)) {
		t.Errorf("initializer %s: dims %v, want %v, or other values", init.Name, init.Dims, p.Value.Shape())
	}
}

func TestExportONNXGraphs(t *testing.T) {
	cases := []struct {
		name   string
		layers func() []layers.Layer
		ops    []string
		check  func(t *testing.T, om *wire.Model, m *nn.Sequential)
		// untrained: the model cannot be fit (no weights, or outputs that
		// are not flat).
		untrained bool
	}{
		{"the MLP", func() []layers.Layer {
			return []layers.Layer{layers.Input(4, 4, 3), layers.Flatten(), layers.Dense(5, layers.ReLU), layers.Dense(3, layers.Sigmoid)}
		}, []string{"Flatten", "Gemm", "Relu", "Gemm", "Sigmoid"}, func(t *testing.T, om *wire.Model, m *nn.Sequential) {
			if axis := intAttr(t, nodeOf(t, om, "Flatten"), "axis"); axis != 1 {
				t.Errorf("Flatten axis %d, want 1", axis)
			}
			for _, l := range m.Layers()[1:] {
				checkWeight(t, om, l, "kernel")
				checkWeight(t, om, l, "bias")
			}
			if g := nodeOf(t, om, "Gemm"); len(g.Attributes) != 0 || !slices.Equal(g.Inputs[1:], []string{"dense/kernel", "dense/bias"}) {
				t.Errorf("Gemm %+v: want x·kernel + bias, Gemm's defaults", g)
			}
		}, false},
		{"every activation, Dense without bias", func() []layers.Layer {
			return []layers.Layer{layers.Input(3), layers.Dense(4, layers.Tanh), layers.Dense(3, layers.Linear, layers.WithoutBias()),
				layers.NewActivation(layers.Softmax), layers.NewActivation(layers.ReLU), layers.NewActivation(layers.Sigmoid), layers.NewActivation(layers.Linear)}
		}, []string{"Gemm", "Tanh", "Gemm", "Softmax", "Relu", "Sigmoid"}, func(t *testing.T, om *wire.Model, m *nn.Sequential) {
			if axis := intAttr(t, nodeOf(t, om, "Softmax"), "axis"); axis != -1 {
				t.Errorf("Softmax axis %d, want -1, Keras' last axis", axis)
			}
			if n := len(om.Graph.Nodes[2].Inputs); n != 2 {
				t.Errorf("the Gemm without bias has %d inputs, want 2", n)
			}
		}, false},
		{"Keras' cifar10_cnn, small", func() []layers.Layer {
			return []layers.Layer{layers.Input(6, 5, 3), layers.Conv2D(4, 3, layers.Padding("same"), layers.ReLU), layers.Conv2D(4, 2, layers.ReLU),
				layers.MaxPooling2D(), layers.Dropout(0.25), layers.Flatten(), layers.Dense(6, layers.ReLU), layers.Dropout(0.5), layers.Dense(2, layers.Softmax)}
		}, []string{"Transpose", "Conv", "Relu", "Conv", "Relu", "MaxPool", "Transpose", "Flatten", "Gemm", "Relu", "Gemm", "Softmax"},
			func(t *testing.T, om *wire.Model, m *nn.Sequential) {
				if p := ints(t, om.Graph.Nodes[0], "perm"); !slices.Equal(p, []int64{0, 3, 1, 2}) {
					t.Errorf("the first Transpose's perm %v, want NHWC to NCHW", p)
				}
				if p := ints(t, om.Graph.Nodes[6], "perm"); !slices.Equal(p, []int64{0, 2, 3, 1}) {
					t.Errorf("the Transpose before Flatten has perm %v, want NCHW to NHWC", p)
				}
				conv := nodeOf(t, om, "Conv")
				if got := ints(t, conv, "pads"); !slices.Equal(got, []int64{1, 1, 1, 1}) {
					t.Errorf("3×3 same pads %v", got)
				}
				pool := nodeOf(t, om, "MaxPool")
				if k, s := ints(t, pool, "kernel_shape"), ints(t, pool, "strides"); !slices.Equal(k, []int64{2, 2}) || !slices.Equal(s, []int64{2, 2}) {
					t.Errorf("MaxPool kernel %v strides %v, want Keras' defaults 2×2 and the pool size", k, s)
				}
			}, false},
		{"1D layers and global poolings", func() []layers.Layer {
			return []layers.Layer{layers.Input(7, 2), layers.Conv1D(3, 2, layers.Padding("same"), layers.Strides(2)),
				layers.AveragePooling1D(layers.Padding("same")), layers.GlobalMaxPooling1D()}
		}, []string{"Transpose", "Conv", "AveragePool", "ReduceMax"}, func(t *testing.T, om *wire.Model, m *nn.Sequential) {
			if p := ints(t, om.Graph.Nodes[0], "perm"); !slices.Equal(p, []int64{0, 2, 1}) {
				t.Errorf("perm %v, want (batch, steps, channels) to (batch, channels, steps)", p)
			}
			conv := nodeOf(t, om, "Conv")
			if k := ints(t, conv, "kernel_shape"); !slices.Equal(k, []int64{2}) {
				t.Errorf("Conv1D kernel_shape %v", k)
			}
			if init := om.Graph.Initializer("conv1d/kernel"); init == nil || !slices.Equal(init.Dims, []int64{3, 2, 2}) {
				t.Errorf("Conv1D kernel %+v: want (filters, channels, size)", init)
			}
			avg := nodeOf(t, om, "AveragePool")
			if c := intAttr(t, avg, "count_include_pad"); c != 0 {
				t.Errorf("AveragePool count_include_pad %d: Keras averages the input only", c)
			}
			// Steps 7 → 4 (strides 2, same) → 2 (pool 2, same): no padding on 4.
			if p := ints(t, avg, "pads"); !slices.Equal(p, []int64{0, 0}) {
				t.Errorf("AveragePool pads %v", p)
			}
			if a := ints(t, nodeOf(t, om, "ReduceMax"), "axes"); !slices.Equal(a, []int64{2}) {
				t.Errorf("global pooling over axes %v, want the steps of (batch, channels, steps)", a)
			}
		}, false},
		{"a global pooling of channels-last images", func() []layers.Layer {
			return []layers.Layer{layers.Input(3, 4, 2), layers.GlobalAveragePooling2D(), layers.Dense(2)}
		}, []string{"ReduceMean", "Gemm"}, func(t *testing.T, om *wire.Model, m *nn.Sequential) {
			n := nodeOf(t, om, "ReduceMean")
			if a, k := ints(t, n, "axes"), intAttr(t, n, "keepdims"); !slices.Equal(a, []int64{1, 2}) || k != 0 {
				t.Errorf("axes %v keepdims %d, want the height and width of NHWC, dropped", a, k)
			}
		}, false},
		{"normalizations", func() []layers.Layer {
			return []layers.Layer{layers.Input(3, 3, 2), layers.BatchNormalization(layers.Epsilon(0.01)),
				layers.LayerNormalization(layers.WithoutCenter()), layers.Flatten(), layers.BatchNormalization(layers.WithoutScale())}
		}, []string{"Transpose", "BatchNormalization", "Transpose", "LayerNormalization", "Flatten", "BatchNormalization"},
			func(t *testing.T, om *wire.Model, m *nn.Sequential) {
				ls := m.Layers()
				bn := om.Graph.Nodes[1]
				if a, ok := bn.Attr("epsilon"); !ok || a.Type != wire.AttrFloat || a.F != float32(0.01) {
					t.Errorf("epsilon %+v, want 0.01", a)
				}
				want := []string{"batch_normalization/gamma", "batch_normalization/beta", "batch_normalization/moving_mean", "batch_normalization/moving_variance"}
				if !slices.Equal(bn.Inputs[1:], want) {
					t.Errorf("BatchNormalization inputs %v, want %v", bn.Inputs[1:], want)
				}
				for _, p := range []string{"gamma", "beta", "moving_mean", "moving_variance"} {
					checkWeight(t, om, ls[0], p)
				}
				// Trained: the moving statistics are not the initial 0 and 1.
				if mean := layerParam(ls[0], "moving_mean").Value.Data().([]float32); mean[0] == 0 {
					t.Error("the model did not train: the moving mean is still 0")
				}
				ln := nodeOf(t, om, "LayerNormalization")
				if axis := intAttr(t, ln, "axis"); axis != -1 || len(ln.Inputs) != 2 {
					t.Errorf("LayerNormalization axis %d, inputs %v: want -1 and no bias", axis, ln.Inputs)
				}
				if g := om.Graph.Initializer("batch_normalization_1/no_gamma"); g == nil || !slices.Equal(g.Floats, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}) {
					t.Errorf("WithoutScale: gamma %+v, want ones", g)
				}
			}, false},
		{"embedding", func() []layers.Layer {
			return []layers.Layer{layers.Input(5), layers.Embedding(10, 3), layers.GlobalAveragePooling1D()}
		}, []string{"Cast", "Gather", "ReduceMean"}, func(t *testing.T, om *wire.Model, m *nn.Sequential) {
			if to := intAttr(t, om.Graph.Nodes[0], "to"); to != int64(wire.Int64) {
				t.Errorf("Cast to %d, want INT64", to)
			}
			g := om.Graph.Nodes[1]
			if !slices.Equal(g.Inputs, []string{"embedding/embeddings", "embedding/Cast"}) || intAttr(t, g, "axis") != 0 {
				t.Errorf("Gather %+v: want the table's rows at the indices", g)
			}
			checkWeight(t, om, m.Layers()[0], "embeddings")
		}, false},
		{"reshape", func() []layers.Layer {
			return []layers.Layer{layers.Input(6), layers.Reshape([]int{2, -1}), layers.Flatten(), layers.Reshape([]int{3, 2})}
		}, []string{"Reshape", "Flatten", "Reshape"}, func(t *testing.T, om *wire.Model, m *nn.Sequential) {
			if s := om.Graph.Initializer("reshape/shape"); s == nil || s.DataType != wire.Int64 || !slices.Equal(s.Int64s, []int64{0, 2, 3}) {
				t.Errorf("shape %+v: want the batch copied (0), then (2, 3)", s)
			}
		}, true},
		{"dropout alone", func() []layers.Layer { return []layers.Layer{layers.Input(3), layers.Dropout(0.5)} },
			[]string{"Identity"}, nil, true},
		{"a later Input passes through", func() []layers.Layer { return []layers.Layer{layers.Dense(2), layers.Input(2), layers.Dense(1)} },
			[]string{"Gemm", "Gemm"}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := nn.NewSequential(c.layers()...)
			m.SetSeed(1)
			if m.InputShape() == nil {
				if err := m.Build(3); err != nil {
					t.Fatal(err)
				}
			}
			om := exportedONNX(t, m, !c.untrained)
			checkGraph(t, om, m)
			if got := opTypes(om); !slices.Equal(got, c.ops) {
				t.Errorf("ops %v, want %v", got, c.ops)
			}
			if c.check != nil {
				c.check(t, om, m)
			}
		})
	}
}

// TestExportONNXConvKernel checks the reordering of a Conv2D kernel from
// Keras' (height, width, channels, filters) to ONNX's (filters, channels,
// height, width), element by element through the tensor's own indexing.
func TestExportONNXConvKernel(t *testing.T) {
	m := nn.NewSequential(layers.Input(5, 6, 2), layers.Conv2D(4, 2, layers.KernelSize(2, 3)))
	m.SetSeed(2)
	om := exportedONNX(t, m, false)
	kernel := layerParam(m.Layers()[0], "kernel").Value
	init := om.Graph.Initializer("conv2d/kernel")
	if init == nil || !slices.Equal(init.Dims, []int64{4, 2, 2, 3}) {
		t.Fatalf("kernel initializer %+v: want dims [4 2 2 3]", init)
	}
	i := 0
	for f := range 4 {
		for c := range 2 {
			for h := range 2 {
				for w := range 3 {
					v, err := kernel.At(h, w, c, f)
					if err != nil {
						t.Fatal(err)
					}
					if init.Floats[i] != v.(float32) {
						t.Fatalf("ONNX kernel[%d][%d][%d][%d] = %v, want Keras' kernel[%d][%d][%d][%d] = %v", f, c, h, w, init.Floats[i], h, w, c, f, v)
					}
					i++
				}
			}
		}
	}
}

func TestExportONNXSoftmaxOverChannelsFirst(t *testing.T) {
	m := nn.NewSequential(layers.Input(3, 3, 2), layers.Conv2D(4, 1, layers.Softmax))
	om := exportedONNX(t, m, false)
	if got := opTypes(om); !slices.Equal(got, []string{"Transpose", "Conv", "Softmax", "Transpose"}) {
		t.Fatalf("ops %v", got)
	}
	if axis := intAttr(t, om.Graph.Nodes[2], "axis"); axis != 1 {
		t.Errorf("softmax on NCHW over axis %d, want 1, the channels, Keras' last axis", axis)
	}
	checkGraph(t, om, m)
}

// TestExportONNXUncompiled exports a model that was never compiled: it is
// built from its Input, as Save builds it.
func TestExportONNXUncompiled(t *testing.T) {
	m := nn.NewSequential(layers.Input(2), layers.Dense(3))
	om := exportAndDecode(t, m)
	checkGraph(t, om, m)
	checkWeight(t, om, m.Layers()[0], "kernel")
}

func TestExportONNXErrors(t *testing.T) {
	dir := t.TempDir()
	model := func(ls ...layers.Layer) func(t *testing.T) *nn.Sequential {
		return func(t *testing.T) *nn.Sequential {
			m := nn.NewSequential(append([]layers.Layer{layers.Input(3)}, ls...)...)
			if err := m.Compile(newSGD(t), losses.MeanSquaredError{}, nil, nn.OnDevice("/CPU:0")); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	cases := []struct {
		name  string
		model func(t *testing.T) *nn.Sequential
		path  string
		want  []string
	}{
		{name: "a nil model", model: func(*testing.T) *nn.Sequential { return nil }, want: []string{nn.ErrNilModel.Error()}},
		{name: "a directory", path: dir, model: model(layers.Dense(2)), want: []string{dir}},
		{name: "a missing folder", path: filepath.Join(dir, "no", "m.onnx"), model: model(layers.Dense(2)), want: []string{filepath.Join(dir, "no")}},
		{name: "an unbuilt model", model: func(*testing.T) *nn.Sequential { return nn.NewSequential(layers.Dense(2)) },
			want: []string{"not built", "Build"}},
		{name: "a layer of another package", model: model(layers.Dense(2), opaqueLayer{layers.Dense(2)}),
			want: []string{"layer 2", `Dense layer "dense_1" is a onnx.opaqueLayer`, "no ONNX mapping", "package layers"}},
		{name: "a weight that is not finite", model: func(t *testing.T) *nn.Sequential {
			m := model(layers.Dense(2))(t)
			m.Layers()[0].Params()[0].Value.Data().([]float32)[3] = float32(math.Inf(-1))
			return m
		}, want: []string{"weight dense/kernel holds -Inf at index 3", "training diverged", "unchanged"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			if path == "" {
				path = filepath.Join(t.TempDir(), "m.onnx")
				if err := os.WriteFile(path, []byte("the previous file"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := ExportFile(c.model(t), path)
			if err == nil {
				t.Fatal("ExportFile wrote the file")
			}
			for _, w := range append([]string{"export ONNX: "}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if c.path == "" {
				if got, err := os.ReadFile(path); err != nil || string(got) != "the previous file" {
					t.Errorf("the file there became %q (%v)", got, err)
				}
			}
		})
	}
}

// TestExportONNXChecksThePathFirst gives a bad path to a model that could
// not be exported either: the path's error comes first, before any work.
func TestExportONNXChecksThePathFirst(t *testing.T) {
	err := ExportFile(nn.NewSequential(layers.Dense(2)), t.TempDir())
	if err == nil || strings.Contains(err.Error(), "not built") {
		t.Fatalf("error %v: want the path's", err)
	}
}

// A model that does not fit in one ONNX file (a protobuf message is at
// most 2 GiB) is refused with the reason and what to do, and nothing is
// written: it used to "succeed" with a file ONNX cannot parse. The limit
// is lowered here to what a small model exceeds, once by its weights alone
// (refused before the graph is built) and once with the graph around them.
func TestExportONNXRefusesWhatOneFileCannotHold(t *testing.T) {
	m := nn.NewSequential(layers.Input(4), layers.Dense(3, layers.ReLU), layers.Dense(2))
	if err := m.Build(4); err != nil {
		t.Fatal(err)
	}
	weights := 4 * int64(m.CountParams()) // 84 bytes
	for _, tc := range []struct {
		limit int64
		what  string
	}{
		{weights - 1, fmt.Sprintf("takes %d bytes of weights", weights)},
		{weights + 1, "bytes as an ONNX file, more than the"},
	} {
		old := maxBytes
		maxBytes = tc.limit
		path := filepath.Join(t.TempDir(), "m.onnx")
		err := ExportFile(m, path)
		maxBytes = old
		if err == nil || !strings.Contains(err.Error(), tc.what) || !strings.Contains(err.Error(), "external data") {
			t.Errorf("limit %d: %v, want an error saying %q and naming external data", tc.limit, err, tc.what)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("limit %d: the refused export left a file (%v)", tc.limit, err)
		}
	}
	if err := ExportFile(m, filepath.Join(t.TempDir(), "m.onnx")); err != nil {
		t.Errorf("at ONNX's real limit: %v", err)
	}
}

// fitOnce fits the model for one epoch of ds.
func fitOnce(t *testing.T, m *nn.Sequential, ds data.Dataset) {
	t.Helper()
	if _, err := m.Fit(context.Background(), ds, nn.Epochs(1), nn.BatchSize(8), nn.Seed(5), nn.Verbose(0)); err != nil {
		t.Fatal(err)
	}
}

// opaqueLayer is a layer of another package than layers.
type opaqueLayer struct{ layers.Layer }

// layerParam returns the layer's weight of that name, nil if it has none.
func layerParam(l layers.Layer, name string) *layers.Param {
	for _, p := range l.Params() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
