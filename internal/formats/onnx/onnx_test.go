package onnx

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/formats/protowire"
)

// sample is a model with every message and attribute type this package
// writes.
func sample() *Model {
	return &Model{
		IRVersion:       IRVersion,
		Opsets:          []OpsetID{{Version: OpsetVersion}},
		ProducerName:    "gokeras",
		ProducerVersion: "test",
		DocString:       "a test model",
		Graph: Graph{
			Name: "g",
			Nodes: []Node{
				{Name: "dense/Gemm", OpType: "Gemm", Inputs: []string{"input", "dense/kernel", "dense/bias"}, Outputs: []string{"h"}},
				{Name: "bn", OpType: "BatchNormalization", Inputs: []string{"h", "s", "b", "m", "v"}, Outputs: []string{"n"},
					Attributes: []Attribute{FloatAttr("epsilon", 1e-3)}},
				{Name: "pool", OpType: "AveragePool", Inputs: []string{"n"}, Outputs: []string{"output"},
					Attributes: []Attribute{IntsAttr("pads", 0, 1, 0, 1), IntAttr("count_include_pad", 0), IntAttr("axis", -1), StringAttr("auto_pad", "NOTSET")}},
				{Name: "lstm", OpType: "LSTM", Inputs: []string{"x", "w", "r", ""}, Outputs: []string{"", "h"},
					Attributes: []Attribute{StringsAttr("activations", "HardSigmoid", "Tanh", "Tanh"), FloatsAttr("activation_alpha", 0.2), FloatsAttr("activation_beta", 0.5)}},
			},
			Initializers: []Tensor{
				{Name: "dense/kernel", DataType: Float, Dims: []int64{2, 3}, Floats: []float32{1, -2, 3.5, 0, float32(math.Inf(1)), 1e-30}},
				{Name: "dense/bias", DataType: Float, Dims: []int64{3}, Floats: []float32{0.5, 0.25, -1}},
				{Name: "shape", DataType: Int64, Dims: []int64{2}, Int64s: []int64{0, -1}},
				{Name: "scalar", DataType: Float, Floats: []float32{7}},
			},
			Inputs:  []ValueInfo{{Name: "input", ElemType: Float, Dims: []Dim{{Param: "batch"}, {Value: 2}}}},
			Outputs: []ValueInfo{{Name: "output", ElemType: Float, Dims: []Dim{{Param: "batch"}, {Value: 3}}}},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	m := sample()
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("decoded model differs:\n got %+v\nwant %+v", got, m)
	}
}

// TestStreamsLargeTensors writes a tensor larger than the write chunk and
// checks that what Write streams is what Marshal returns, and that it
// decodes to the same values.
func TestStreamsLargeTensors(t *testing.T) {
	m := sample()
	big := make([]float32, 100_003)
	for i := range big {
		big[i] = float32(i) * 0.5
	}
	m.Graph.Initializers = append(m.Graph.Initializers, Tensor{Name: "big", DataType: Float, Dims: []int64{100_003}, Floats: big})
	var w countingWriter
	if err := m.Write(&w); err != nil {
		t.Fatal(err)
	}
	if w.writes < 3 {
		t.Errorf("Write made %d writes: the large tensor was not streamed", w.writes)
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Bytes(), b) {
		t.Fatal("Write and Marshal differ")
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if tt := got.Graph.Initializer("big"); tt == nil || !reflect.DeepEqual(tt.Floats, big) {
		t.Error("the large tensor did not come back")
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

// TestWireLayout checks the bytes of small messages against encodings
// worked out by hand from onnx.proto's field numbers.
func TestWireLayout(t *testing.T) {
	tests := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"int attribute: name, type INT (20: a0 01 02), i", func() ([]byte, error) { a := IntAttr("axis", -1); return a.marshal() },
			"0a0461786973" + "a00102" + "18ffffffffffffffffff01"},
		{"ints attribute: unpacked, as proto2 writes", func() ([]byte, error) { a := IntsAttr("perm", 0, 2); return a.marshal() },
			"0a047065726d" + "a00107" + "4000" + "4002"},
		{"floats attribute: unpacked", func() ([]byte, error) { a := FloatsAttr("a", 1, 0.5); return a.marshal() },
			"0a0161" + "a00106" + "3d0000803f" + "3d0000003f"},
		{"strings attribute", func() ([]byte, error) { a := StringsAttr("s", "Tanh", "Relu"); return a.marshal() },
			"0a0173" + "a00108" + "4a0454616e68" + "4a0452656c75"},
		{"float attribute", func() ([]byte, error) { a := FloatAttr("epsilon", 1); return a.marshal() },
			"0a07657073696c6f6e" + "a00101" + "150000803f"},
		{"node: inputs, outputs, name, op_type", func() ([]byte, error) {
			n := Node{Name: "n", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"}}
			return n.marshal()
		}, "0a0178" + "120179" + "1a016e" + "220452656c75"},
		{"value info: name, tensor type FLOAT of (batch, 3)", func() ([]byte, error) {
			v := ValueInfo{Name: "x", ElemType: Float, Dims: []Dim{{Param: "b"}, {Value: 3}}}
			return v.marshal(), nil
		}, "0a0178" + "120f" + "0a0d" + "0801" + "1209" + "0a03" + "120162" + "0a02" + "0803"},
	}
	for _, tc := range tests {
		b, err := tc.got()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := hex.EncodeToString(b); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}

	// A model starts with its IR version, and its graph is field 7.
	b, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x08, IRVersion}) {
		t.Errorf("the model starts % x, want 08 %02x (ir_version)", b[:2], IRVersion)
	}
	fields, err := protowire.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int
	for _, f := range fields {
		numbers = append(numbers, f.Number)
	}
	if want := []int{1, 2, 3, 6, 8, 7}; !reflect.DeepEqual(numbers, want) {
		t.Errorf("model fields %v, want %v", numbers, want)
	}
}

func TestWriteRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(m *Model)
		want   string
	}{
		{"too few values", func(m *Model) { m.Graph.Initializers[0].Floats = m.Graph.Initializers[0].Floats[:5] },
			`tensor "dense/kernel": 5 values for dimensions [2 3], which hold 6`},
		{"negative dimension", func(m *Model) { m.Graph.Initializers[1].Dims = []int64{-3} }, "negative dimension"},
		{"another data type", func(m *Model) { m.Graph.Initializers[1].DataType = 11 }, "DataType(11) is not one gokeras writes"},
		{"no opset", func(m *Model) { m.Opsets = nil }, "no operator set"},
		{"attribute type", func(m *Model) { m.Graph.Nodes[1].Attributes[0].Type = 4 }, `node "bn": attribute "epsilon": type 4`},
	}
	for _, tc := range tests {
		m := sample()
		tc.change(m)
		if _, err := m.Marshal(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestWritePassesWriteErrors(t *testing.T) {
	full := errors.New("disk full")
	for after := range 4 {
		w := &failingWriter{after: after, err: full}
		if err := sample().Write(w); !errors.Is(err, full) {
			t.Errorf("writer failing after %d writes: error %v, want %v", after, err, full)
		}
	}
}

type failingWriter struct {
	after int
	err   error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after == 0 {
		return 0, f.err
	}
	f.after--
	return len(p), nil
}

func TestDecodeErrors(t *testing.T) {
	good, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The graph is the model's last field: a model cut inside it claims
	// more bytes than it has, which Decode must refuse, not misread.
	for cut := len(good) - 40; cut < len(good); cut++ {
		if _, err := Decode(good[:cut]); err == nil {
			t.Errorf("a model cut at %d of %d bytes decoded without error", cut, len(good))
		}
	}

	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"ir_version as a string", protowire.AppendString(nil, modelIRVersion, "8"), "ModelProto.ir_version (field 1) has wire type 2, want 0"},
		{"raw data of a partial float", func() []byte {
			tb := protowire.AppendVarint(nil, tensorDataType, uint64(Float))
			tb = protowire.AppendVarint(tb, tensorDims, 1)
			tb = protowire.AppendBytes(tb, tensorRawData, []byte{1, 2, 3})
			return protowire.AppendBytes(nil, modelGraph, protowire.AppendBytes(nil, graphInitializer, tb))
		}(), "raw_data of 3 bytes"},
		{"tensor with fewer values than its dims", func() []byte {
			tb := protowire.AppendVarint(nil, tensorDataType, uint64(Float))
			tb = protowire.AppendVarint(tb, tensorDims, 2)
			tb = protowire.AppendBytes(tb, tensorRawData, []byte{0, 0, 0, 0})
			return protowire.AppendBytes(nil, modelGraph, protowire.AppendBytes(nil, graphInitializer, tb))
		}(), "1 values for dimensions [2]"},
		{"tensor attribute", func() []byte {
			ab := protowire.AppendString(nil, attrName, "auto_pad")
			ab = protowire.AppendVarint(ab, attrType, 4)
			nb := protowire.AppendBytes(nil, nodeAttribute, ab)
			return protowire.AppendBytes(nil, modelGraph, protowire.AppendBytes(nil, graphNode, nb))
		}(), `attribute "auto_pad": type 4`},
	}
	for _, tc := range tests {
		if _, err := Decode(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestDecodeReadsOtherEncodings(t *testing.T) {
	// float_data packed and int64_data unpacked, as other writers may use.
	f := protowire.AppendVarint(nil, tensorDataType, uint64(Float))
	f = protowire.AppendVarint(f, tensorDims, 2)
	f = protowire.AppendBytes(f, tensorFloatData, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})
	f = protowire.AppendString(f, tensorName, "f")
	i := protowire.AppendVarint(nil, tensorDataType, uint64(Int64))
	i = protowire.AppendBytes(i, tensorDims, []byte{2})
	i = protowire.AppendVarint(i, tensorInt64Data, 5)
	i = protowire.AppendVarint(i, tensorInt64Data, uint64(1<<64-1))
	i = protowire.AppendString(i, tensorName, "i")
	g := protowire.AppendBytes(nil, graphInitializer, f)
	g = protowire.AppendBytes(g, graphInitializer, i)
	m, err := Decode(protowire.AppendBytes(nil, modelGraph, g))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Graph.Initializer("f"); got == nil || !reflect.DeepEqual(got.Floats, []float32{1, 2}) {
		t.Errorf("float_data: got %+v", got)
	}
	if got := m.Graph.Initializer("i"); got == nil || !reflect.DeepEqual(got.Int64s, []int64{5, -1}) {
		t.Errorf("int64_data: got %+v", got)
	}
	if m.Graph.Initializer("none") != nil {
		t.Error("Initializer of a missing name is not nil")
	}
}

func TestNodeAttr(t *testing.T) {
	n := sample().Graph.Nodes[2]
	if a, ok := n.Attr("count_include_pad"); !ok || a.Type != AttrInt || a.I != 0 {
		t.Errorf("Attr(count_include_pad) = %+v, %v", a, ok)
	}
	if _, ok := n.Attr("strides"); ok {
		t.Error("Attr of a missing attribute found one")
	}
	if s := Int64.String() + Float.String() + DataType(3).String(); s != "INT64FLOATDataType(3)" {
		t.Errorf("DataType names: %s", s)
	}
}
