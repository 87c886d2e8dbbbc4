package onnx

import (
	"bytes"
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
)

// TestRecurrentRefused: what ONNX's recurrent operators cannot express is
// refused, the error naming the layer and why, rather than exported
// computing something else: an activation they lack, and a mask (Keras'
// masks skip steps anywhere; ONNX's sequence_lens only cuts a sequence's
// end), refused where the mask is made.
func TestRecurrentRefused(t *testing.T) {
	for _, c := range []struct {
		ls   []layers.Layer
		want []string
	}{
		{[]layers.Layer{layers.Input(3, 4), layers.LSTM(2, layers.GELU, layers.Named("l")), layers.Dense(1)},
			[]string{`LSTM layer "l"`, "gelu", "ONNX's recurrent operators"}},
		{[]layers.Layer{layers.Input(3, 4), layers.GRU(2, layers.RecurrentActivation(layers.Swish), layers.Named("g"))},
			[]string{`GRU layer "g"`, "swish"}},
		{[]layers.Layer{layers.Input(3, 4), layers.SimpleRNN(2, layers.SELU, layers.Named("s"))},
			[]string{`SimpleRNN layer "s"`, "selu"}},
		{[]layers.Layer{layers.Input(3, 4), layers.Bidirectional(layers.LSTM(2, layers.Exponential), layers.Named("b"))},
			[]string{`bidirectional layer "b"`, "forward_lstm", "exponential"}},
		{[]layers.Layer{layers.Input(5), layers.Embedding(6, 3, layers.MaskZero(true), layers.Named("e")), layers.LSTM(2)},
			[]string{`embedding layer "e"`, "mask"}},
		{[]layers.Layer{layers.Input(3, 4), layers.Masking(0, layers.Named("m")), layers.GRU(2)},
			[]string{`masking layer "m"`, "mask"}},
	} {
		m := nn.NewSequential(c.ls...)
		m.SetSeed(1)
		var b bytes.Buffer
		err := Export(m, &b)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v, want one naming %q", err, w)
			}
		}
		if b.Len() != 0 {
			t.Errorf("%d bytes written for a refused model", b.Len())
		}
		m.Close()
	}
}

// TestExportRecurrentGraphs: each layer is its ONNX operator between
// Transposes, time first, with the attributes that say how Keras' layer
// computes, and the weights reordered into ONNX's layout.
func TestExportRecurrentGraphs(t *testing.T) {
	for _, c := range []struct {
		name  string
		l     layers.Layer
		ops   []string
		attrs map[string]any
	}{
		{"lstm", layers.LSTM(3, layers.ReturnSequences()), []string{"Transpose", "LSTM", "Squeeze", "Transpose"},
			map[string]any{"hidden_size": int64(3), "direction": "forward", "activations": []string{"Sigmoid", "Tanh", "Tanh"}}},
		{"gru", layers.GRU(3), []string{"Transpose", "GRU", "Squeeze"},
			map[string]any{"direction": "forward", "linear_before_reset": int64(1), "activations": []string{"Sigmoid", "Tanh"}}},
		{"gru_before", layers.GRU(3, layers.ResetAfter(false), layers.GoBackwards()), []string{"Transpose", "GRU", "Squeeze"},
			map[string]any{"direction": "reverse", "linear_before_reset": nil}},
		{"rnn_backwards", layers.SimpleRNN(3, layers.GoBackwards(), layers.ReturnSequences(), layers.Linear),
			[]string{"Transpose", "RNN", "Slice", "Squeeze", "Transpose"},
			map[string]any{"direction": "reverse", "activations": []string{"Affine"}, "activation_alpha": []float32{1}, "activation_beta": []float32{0}}},
		{"lstm_hard", layers.LSTM(3, layers.RecurrentActivation(layers.HardSigmoid), layers.ReLU), []string{"Transpose", "LSTM", "Squeeze"},
			map[string]any{"activations": []string{"HardSigmoid", "Relu", "Relu"}, "activation_alpha": []float32{0.2}, "activation_beta": []float32{0.5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := nn.NewSequential(layers.Input(4, 2), c.l)
			m.SetSeed(2)
			om := exportedONNX(t, m, false)
			checkGraph(t, om, m)
			if got := opTypes(om); !slices.Equal(got, c.ops) {
				t.Fatalf("ops %v, want %v", got, c.ops)
			}
			n := om.Graph.Nodes[1]
			for name, want := range c.attrs {
				a, ok := n.Attr(name)
				if want == nil {
					if ok {
						t.Errorf("attribute %s: %+v, want none", name, a)
					}
					continue
				}
				var got any
				switch a.Type {
				case wire.AttrInt:
					got = a.I
				case wire.AttrString:
					got = a.S
				case wire.AttrStrings:
					got = a.Strings
				case wire.AttrFloats:
					got = a.Floats
				}
				if !ok || !equalAttr(got, want) {
					t.Errorf("attribute %s: %v, want %v", name, got, want)
				}
			}
			if len(n.Inputs) != 4 || n.Inputs[0] != om.Graph.Nodes[0].Outputs[0] {
				t.Errorf("inputs %v, want the transposed input, W, R and B", n.Inputs)
			}
			gates := map[string]int64{"LSTM": 4, "GRU": 3, "RNN": 1}[n.OpType]
			for i, dims := range [][]int64{{1, gates * 3, 2}, {1, gates * 3, 3}, {1, 2 * gates * 3}} {
				if w := om.Graph.Initializer(n.Inputs[i+1]); w == nil || !slices.Equal(w.Dims, dims) {
					t.Errorf("input %d of %s: %+v, want dims %v", i+1, n.OpType, w, dims)
				}
			}
		})
	}
}

func equalAttr(got, want any) bool {
	switch w := want.(type) {
	case []string:
		g, ok := got.([]string)
		return ok && slices.Equal(g, w)
	case []float32:
		g, ok := got.([]float32)
		return ok && slices.Equal(g, w)
	}
	return got == want
}

// TestExportRecurrentWeights: W and R are Keras' kernels transposed, an
// LSTM's gate blocks moved from Keras' i, f, c, o to ONNX's i, o, f, c,
// and B the bias so moved, then zeros for the recurrent bias; a GRU's
// (2, 3·units) bias is ONNX's input bias then recurrent bias, its gates
// in the same order (z, r, h).
func TestExportRecurrentWeights(t *testing.T) {
	const units, features = 2, 3
	for _, c := range []struct {
		l     layers.Layer
		op    string
		order []int // for each ONNX gate block, Keras' block
	}{
		{layers.LSTM(units), "LSTM", []int{0, 3, 1, 2}},
		{layers.GRU(units), "GRU", []int{0, 1, 2}},
	} {
		m := nn.NewSequential(layers.Input(4, features), c.l)
		m.SetSeed(5)
		om := exportedONNX(t, m, true) // a step of training: the biases are not zero
		n := nodeOf(t, om, c.op)
		w, r, b := om.Graph.Initializer(n.Inputs[1]), om.Graph.Initializer(n.Inputs[2]), om.Graph.Initializer(n.Inputs[3])
		kernel := layerParam(c.l, "kernel").Value.Data().([]float32)
		rec := layerParam(c.l, "recurrent_kernel").Value.Data().([]float32)
		bias := layerParam(c.l, "bias").Value.Data().([]float32)
		gu := len(c.order) * units
		for g, kg := range c.order {
			for j := range units {
				row := g*units + j
				for i := range features {
					if got, want := w.Floats[row*features+i], kernel[i*gu+kg*units+j]; got != want {
						t.Errorf("%s W[%d][%d] = %v, want Keras' kernel[%d][%d] = %v", c.op, row, i, got, i, kg*units+j, want)
					}
				}
				for i := range units {
					if got, want := r.Floats[row*units+i], rec[i*gu+kg*units+j]; got != want {
						t.Errorf("%s R[%d][%d] = %v, want Keras' recurrent_kernel[%d][%d] = %v", c.op, row, i, got, i, kg*units+j, want)
					}
				}
				wantRec := float32(0)
				if c.op == "GRU" {
					wantRec = bias[gu+kg*units+j]
				}
				if got, want := b.Floats[row], bias[kg*units+j]; got != want || want == 0 {
					t.Errorf("%s Wb[%d] = %v, want Keras' bias %v (not zero)", c.op, row, got, want)
				}
				if got := b.Floats[gu+row]; got != wantRec {
					t.Errorf("%s Rb[%d] = %v, want %v", c.op, row, got, wantRec)
				}
			}
		}
		m.Close()
	}
}

// TestExportRecurrentComputesPredict runs the exported graphs with a
// reference of ONNX's operators written from their specification (below)
// and compares with Predict, after a step of training: every cell, both
// GRUs, go_backwards with and without return_sequences, activations with
// alpha and beta, no bias, and Bidirectional in each merge mode.
func TestExportRecurrentComputesPredict(t *testing.T) {
	for _, c := range []struct {
		name string
		ls   []layers.Layer
	}{
		{"lstm sequences", []layers.Layer{layers.LSTM(3, layers.ReturnSequences())}},
		{"lstm backwards", []layers.Layer{layers.LSTM(3, layers.GoBackwards(), layers.ReturnSequences(), layers.RecurrentActivation(layers.HardSigmoid))}},
		{"gru", []layers.Layer{layers.GRU(3)}},
		{"gru backwards sequences", []layers.Layer{layers.GRU(3, layers.GoBackwards(), layers.ReturnSequences(), layers.Softsign)}},
		{"gru reset before", []layers.Layer{layers.GRU(3, layers.ResetAfter(false), layers.ReturnSequences())}},
		{"rnn no bias", []layers.Layer{layers.SimpleRNN(3, layers.WithoutBias(), layers.ReturnSequences()), layers.SimpleRNN(2, layers.GoBackwards(), layers.ReLU)}},
		{"rnn linear", []layers.Layer{layers.SimpleRNN(3, layers.Linear, layers.GoBackwards())}},
		{"bidirectional concat", []layers.Layer{layers.Bidirectional(layers.LSTM(3, layers.ReturnSequences()))}},
		{"bidirectional sum", []layers.Layer{layers.Bidirectional(layers.GRU(3, layers.ReturnSequences()), layers.MergeMode("sum"))}},
		{"bidirectional mul backwards", []layers.Layer{layers.Bidirectional(layers.SimpleRNN(3, layers.ReturnSequences(), layers.GoBackwards()), layers.MergeMode("mul"))}},
		{"bidirectional ave", []layers.Layer{layers.Bidirectional(layers.LSTM(3), layers.MergeMode("ave"))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Flatten: the model trains on (batch, n) outputs.
			m := nn.NewSequential(append(append([]layers.Layer{layers.Input(5, 2)}, c.ls...), layers.Flatten())...)
			m.SetSeed(6)
			om := exportedONNX(t, m, true)
			checkGraph(t, om, m)
			x := normalRows(7, 4*5*2)
			checkRecurrentComputes(t, om, m, map[string]rtensor{"input": {[]int{4, 5, 2}, x}}, []string{"output"})
		})
	}
}

// TestExportRecurrentStates: a functional model of a layer with
// return_state (its last states are outputs of the call, and of the
// graph), layers given initial states, and Bidirectional with merge mode
// None and return_state.
func TestExportRecurrentStates(t *testing.T) {
	in := nn.Input(5, 2)
	seq := nn.ApplyAll(layers.LSTM(3, layers.ReturnSequences(), layers.ReturnState(), layers.Named("lstm")), in)
	y := nn.Apply(layers.LSTM(3, layers.GoBackwards(), layers.Named("from_states")), seq[0], seq[1], seq[2])
	z := nn.Apply(layers.SimpleRNN(3, layers.Named("from_h")), seq[0], seq[1])
	bi := nn.ApplyAll(layers.Bidirectional(layers.GRU(2, layers.ReturnState()), layers.MergeMode(""), layers.Named("bi")), seq[0])
	m := newModel(t, []*nn.Tensor{in}, append([]*nn.Tensor{y, z, seq[1], seq[2]}, bi...))
	m.SetSeed(8)
	// Random biases, where a step of training would need a label per
	// output.
	rng := rand.New(rand.NewPCG(8, 8))
	for _, l := range m.Layers() {
		for _, p := range l.Params() {
			if strings.HasSuffix(p.Name, "bias") {
				for i, v := range p.Value.Data().([]float32) {
					p.Value.Data().([]float32)[i] = v + float32(rng.NormFloat64())
				}
			}
		}
	}
	om := exportedONNX(t, m, false)
	names := []string{"from_states", "from_h", "lstm", "lstm_1", "bi", "bi_1", "bi_2", "bi_3"}
	checkGraphIO(t, om, m, []string{"input_1"}, names)
	x := normalRows(9, 4*5*2)
	checkRecurrentComputes(t, om, m, map[string]rtensor{"input_1": {[]int{4, 5, 2}, x}}, names)
}

// TestExportTimeDistributed: the steps folded into the batch, the
// wrapped layer's nodes on them (a convolution channels first, and back,
// inside the fold), the steps unfolded; the graph computes Predict.
func TestExportTimeDistributed(t *testing.T) {
	c := nn.NewSequential(layers.Input(3, 4, 4, 2), layers.TimeDistributed(layers.Conv2D(2, 3)), layers.Flatten())
	c.SetSeed(3)
	om := exportedONNX(t, c, false)
	checkGraph(t, om, c)
	if got, want := opTypes(om), []string{"Reshape", "Transpose", "Conv", "Transpose", "Reshape", "Flatten"}; !slices.Equal(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	for i, want := range [][]float64{{-1, 4, 4, 2}, {-1, 3, 2, 2, 2}} {
		n := om.Graph.Nodes[4*i]
		if shape := om.Graph.Initializer(n.Inputs[1]); shape == nil || !slices.Equal(shape.Int64s, int64s(toInts(want))) {
			t.Errorf("Reshape %d: shape %+v, want %v", i, shape, want)
		}
	}

	m := nn.NewSequential(layers.Input(5, 2), layers.TimeDistributed(layers.Dense(3)), layers.GRU(3, layers.ReturnSequences()),
		layers.TimeDistributed(layers.Dense(2)), layers.Flatten())
	m.SetSeed(4)
	om = exportedONNX(t, m, true)
	checkGraph(t, om, m)
	checkRecurrentComputes(t, om, m, map[string]rtensor{"input": {[]int{4, 5, 2}, normalRows(5, 4*5*2)}}, []string{"output"})
}

func toInts(v []float64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func normalRows(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(float32(rng.NormFloat64()))
	}
	return x
}

// checkRecurrentComputes runs the graph on the inputs with the reference
// below and compares each named output with PredictOutputs'.
func checkRecurrentComputes(t *testing.T, om *wire.Model, m *nn.Model, inputs map[string]rtensor, outputs []string) {
	t.Helper()
	in := inputs[om.Graph.Inputs[0].Name]
	rows := in.shape[0]
	x := make([]float32, len(in.v))
	for i, v := range in.v {
		x[i] = float32(v)
	}
	ds, err := data.SliceInputs(data.Flat(x, in.shape[1:]...))
	if err != nil {
		t.Fatal(err)
	}
	preds, err := m.PredictOutputs(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	got := runRecurrentGraph(t, om, inputs)
	for k, name := range outputs {
		want := preds[k].Values()
		g := got[name]
		if len(g.v) != len(want) || g.shape[0] != rows {
			t.Fatalf("output %s: shape %v, PredictOutputs %d values", name, g.shape, len(want))
		}
		for i, w := range want {
			if math.Abs(g.v[i]-float64(w)) > 1e-5 {
				t.Fatalf("output %s, value %d: the graph computes %v, PredictOutputs %v", name, i, g.v[i], w)
			}
		}
	}
}

// rtensor is a value of the reference: its shape and values, row-major.
type rtensor struct {
	shape []int
	v     []float64
}

// runRecurrentGraph runs a graph of the nodes the recurrent layers'
// mapping writes (RNN, LSTM and GRU with layout 0, Transpose, Squeeze,
// Unsqueeze, Slice reversing axis 0, Concat on the last axis, Add, Mul,
// Reshape, Gemm, Flatten and Identity) in float64, as ONNX's operators are specified, and
// returns every value.
func runRecurrentGraph(t *testing.T, om *wire.Model, inputs map[string]rtensor) map[string]rtensor {
	t.Helper()
	vals := map[string]rtensor{}
	for k, v := range inputs {
		vals[k] = v
	}
	for _, init := range om.Graph.Initializers {
		r := rtensor{}
		for _, d := range init.Dims {
			r.shape = append(r.shape, int(d))
		}
		for _, f := range init.Floats {
			r.v = append(r.v, float64(f))
		}
		for _, i := range init.Int64s {
			r.v = append(r.v, float64(i))
		}
		vals[init.Name] = r
	}
	for _, n := range om.Graph.Nodes {
		in := func(i int) rtensor {
			if i >= len(n.Inputs) || n.Inputs[i] == "" {
				return rtensor{}
			}
			v, ok := vals[n.Inputs[i]]
			if !ok {
				t.Fatalf("node %s reads %q, which nothing wrote", n.Name, n.Inputs[i])
			}
			return v
		}
		var outs []rtensor
		switch n.OpType {
		case "Transpose":
			a, _ := n.Attr("perm")
			outs = []rtensor{transposeR(in(0), a.Ints)}
		case "Squeeze", "Unsqueeze":
			x, axes := in(0), in(1).v
			shape := slices.Clone(x.shape)
			for _, ax := range axes {
				if n.OpType == "Squeeze" {
					if shape[int(ax)] != 1 {
						t.Fatalf("%s: squeezing axis %v of %v", n.Name, ax, x.shape)
					}
					shape = slices.Delete(shape, int(ax), int(ax)+1)
				} else {
					shape = slices.Insert(shape, int(ax), 1)
				}
			}
			outs = []rtensor{{shape, x.v}}
		case "Slice":
			if !slices.Equal(in(1).v, []float64{-1}) || in(2).v[0] != math.MinInt64 || !slices.Equal(in(3).v, []float64{0}) || !slices.Equal(in(4).v, []float64{-1}) {
				t.Fatalf("%s: a slice other than axis 0 reversed", n.Name)
			}
			x := in(0)
			step := len(x.v) / x.shape[0]
			var v []float64
			for i := x.shape[0] - 1; i >= 0; i-- {
				v = append(v, x.v[i*step:(i+1)*step]...)
			}
			outs = []rtensor{{x.shape, v}}
		case "Concat":
			if a, _ := n.Attr("axis"); a.I != -1 {
				t.Fatalf("%s: axis %d", n.Name, a.I)
			}
			a, b := in(0), in(1)
			ca, cb := a.shape[len(a.shape)-1], b.shape[len(b.shape)-1]
			var v []float64
			for r := range len(a.v) / ca {
				v = append(append(v, a.v[r*ca:(r+1)*ca]...), b.v[r*cb:(r+1)*cb]...)
			}
			shape := slices.Clone(a.shape)
			shape[len(shape)-1] = ca + cb
			outs = []rtensor{{shape, v}}
		case "Add", "Mul":
			a, b := in(0), in(1)
			v := make([]float64, len(a.v))
			for i := range v {
				y := b.v[0]
				if len(b.v) > 1 {
					y = b.v[i]
				}
				if n.OpType == "Add" {
					v[i] = a.v[i] + y
				} else {
					v[i] = a.v[i] * y
				}
			}
			outs = []rtensor{{a.shape, v}}
		case "Identity":
			outs = []rtensor{in(0)}
		case "Reshape":
			x, shape := in(0), toInts(in(1).v)
			if k := slices.Index(shape, -1); k >= 0 {
				shape[k] = 1
				shape[k] = len(x.v) / shapeSize(shape)
			}
			outs = []rtensor{{shape, x.v}}
		case "Gemm":
			a, k, bias := in(0), in(1), in(2)
			rows, inner, cols := a.shape[0], k.shape[0], k.shape[1]
			v := make([]float64, rows*cols)
			for i := range rows {
				for j := range cols {
					v[i*cols+j] = bias.v[j]
					for l := range inner {
						v[i*cols+j] += a.v[i*inner+l] * k.v[l*cols+j]
					}
				}
			}
			outs = []rtensor{{[]int{rows, cols}, v}}
		case "Flatten":
			x := in(0)
			outs = []rtensor{{[]int{x.shape[0], len(x.v) / x.shape[0]}, x.v}}
		case "RNN", "LSTM", "GRU":
			outs = recurrentR(t, n, in(0), in(1), in(2), in(3), in(5), in(6))
		default:
			t.Fatalf("the reference has no %s", n.OpType)
		}
		for i, o := range outs {
			vals[n.Outputs[i]] = o
		}
	}
	return vals
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func transposeR(x rtensor, perm []int64) rtensor {
	r := len(x.shape)
	shape := make([]int, r)
	for i, p := range perm {
		shape[i] = x.shape[p]
	}
	strides := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		strides[i] = s
		s *= x.shape[i]
	}
	v := make([]float64, len(x.v))
	idx := make([]int, r)
	for k := range v {
		off := 0
		for i := range r {
			off += idx[i] * strides[perm[i]]
		}
		v[k] = x.v[off]
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return rtensor{shape, v}
}

// recurrentR is ONNX's RNN, LSTM or GRU (layout 0, one direction), as
// their specification writes them: X (seq, batch, input), W (1,
// gates·hidden, input), R (1, gates·hidden, hidden), B (1, 2·gates·hidden),
// optional initial_h and initial_c (1, batch, hidden); gates i, o, f, c
// for LSTM, z, r, h for GRU. It returns Y (seq, 1, batch, hidden), Y_h
// and, for LSTM, Y_c (1, batch, hidden).
func recurrentR(t *testing.T, n wire.Node, x, w, r, b, h0, c0 rtensor) []rtensor {
	t.Helper()
	a, _ := n.Attr("hidden_size")
	hidden := int(a.I)
	acts, _ := n.Attr("activations")
	alphas, _ := n.Attr("activation_alpha")
	betas, _ := n.Attr("activation_beta")
	var fs []func(float64) float64
	for _, name := range acts.Strings {
		var alpha, beta float64
		switch name {
		case "Affine", "HardSigmoid", "LeakyRelu", "Elu":
			alpha, alphas.Floats = float64(alphas.Floats[0]), alphas.Floats[1:]
		}
		switch name {
		case "Affine", "HardSigmoid":
			beta, betas.Floats = float64(betas.Floats[0]), betas.Floats[1:]
		}
		f := map[string]func(float64) float64{
			"Sigmoid":     func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
			"Tanh":        math.Tanh,
			"Relu":        func(v float64) float64 { return math.Max(v, 0) },
			"Affine":      func(v float64) float64 { return alpha*v + beta },
			"HardSigmoid": func(v float64) float64 { return math.Max(0, math.Min(1, alpha*v+beta)) },
			"Softsign":    func(v float64) float64 { return v / (1 + math.Abs(v)) },
		}[name]
		if f == nil {
			t.Fatalf("the reference has no activation %s", name)
		}
		fs = append(fs, f)
	}
	dir, _ := n.Attr("direction")
	lbr, _ := n.Attr("linear_before_reset")
	seq, batch, input := x.shape[0], x.shape[1], x.shape[2]
	gates := w.shape[1] / hidden
	h := make([]float64, batch*hidden)
	c := make([]float64, batch*hidden)
	if h0.v != nil {
		copy(h, h0.v)
	}
	if c0.v != nil {
		copy(c, c0.v)
	}
	// dot is row j of gate block g of W (or R) times x (or h) of sample s.
	wx := func(m []float64, cols int, v []float64, g, j int) float64 {
		s := 0.0
		for k := range cols {
			s += m[(g*hidden+j)*cols+k] * v[k]
		}
		return s
	}
	y := make([]float64, seq*batch*hidden)
	for k := range seq {
		step := k
		if dir.S == "reverse" {
			step = seq - 1 - k
		}
		hn, cn := make([]float64, len(h)), make([]float64, len(c))
		for s := range batch {
			xs, hs := x.v[(step*batch+s)*input:][:input], h[s*hidden:][:hidden]
			// pre is gate g's Xt·W^T + Wb + Ht-1·R^T + Rb for unit j.
			pre := func(g, j int) (xw, hr float64) {
				return wx(w.v, input, xs, g, j) + b.v[g*hidden+j], wx(r.v, hidden, hs, g, j) + b.v[(gates+g)*hidden+j]
			}
			for j := range hidden {
				o := s*hidden + j
				switch n.OpType {
				case "RNN":
					xw, hr := pre(0, j)
					hn[o] = fs[0](xw + hr)
				case "LSTM":
					zi, ri := pre(0, j)
					zo, ro := pre(1, j)
					zf, rf := pre(2, j)
					zc, rc := pre(3, j)
					cn[o] = fs[0](zf+rf)*c[o] + fs[0](zi+ri)*fs[1](zc+rc)
					hn[o] = fs[0](zo+ro) * fs[2](cn[o])
				case "GRU":
					xz, rz := pre(0, j)
					xr, rr := pre(1, j)
					z := fs[0](xz + rz)
					var cand float64
					if lbr.I == 1 {
						xh, rh := pre(2, j)
						cand = fs[1](xh + fs[0](xr+rr)*rh)
					} else {
						// (rt ⊙ Ht-1)·Rh^T: the reset of every unit first.
						reset := make([]float64, hidden)
						for i := range hidden {
							xri, rri := pre(1, i)
							reset[i] = fs[0](xri+rri) * hs[i]
						}
						xh, _ := pre(2, j)
						cand = fs[1](xh + wx(r.v, hidden, reset, 2, j) + b.v[(gates+2)*hidden+j])
					}
					hn[o] = (1-z)*cand + z*hs[j]
				}
			}
		}
		h, c = hn, cn
		copy(y[step*batch*hidden:], h)
	}
	outs := []rtensor{{[]int{seq, 1, batch, hidden}, y}, {[]int{1, batch, hidden}, h}}
	if n.OpType == "LSTM" {
		outs = append(outs, rtensor{[]int{1, batch, hidden}, c})
	}
	return outs
}
