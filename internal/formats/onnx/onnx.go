// Package onnx writes ONNX models: the ModelProto of onnx/onnx.proto and
// the messages inside it that an inference graph needs, encoded by hand
// with package protowire. Decode reads them back, for tests and tools.
//
// Tensors are written as raw_data, little-endian, and a model is streamed
// to its writer: the weights are not copied into one large buffer first.
package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gokeras/gokeras/internal/formats/protowire"
)

// The versions gokeras writes: IR version 8 (ONNX 1.10 to 1.12) with the
// default operator set at version 17 (ONNX 1.12), which Debian 12's
// python3-onnx checks and every current ONNX Runtime runs.
const (
	IRVersion    = 8
	OpsetVersion = 17
)

// DataType is TensorProto.DataType: the element type of a tensor.
type DataType int32

// The element types gokeras writes.
const (
	Float DataType = 1 // float32
	Int64 DataType = 7
)

// String names the type as onnx.proto does.
func (t DataType) String() string {
	switch t {
	case Float:
		return "FLOAT"
	case Int64:
		return "INT64"
	}
	return fmt.Sprintf("DataType(%d)", int32(t))
}

// Model is a ModelProto.
type Model struct {
	IRVersion       int64
	Opsets          []OpsetID
	ProducerName    string
	ProducerVersion string
	DocString       string
	Graph           Graph
}

// OpsetID is an OperatorSetIdProto: "" is the default ONNX domain.
type OpsetID struct {
	Domain  string
	Version int64
}

// Graph is a GraphProto: nodes in topological order, the weights as
// initializers, and the graph's inputs and outputs.
type Graph struct {
	Name         string
	Nodes        []Node
	Initializers []Tensor
	Inputs       []ValueInfo
	Outputs      []ValueInfo
	DocString    string
}

// Node is a NodeProto of the default domain.
type Node struct {
	Name       string
	OpType     string
	Inputs     []string
	Outputs    []string
	Attributes []Attribute
}

// AttributeType is AttributeProto.AttributeType.
type AttributeType int32

// The attribute types gokeras writes.
const (
	AttrFloat   AttributeType = 1
	AttrInt     AttributeType = 2
	AttrString  AttributeType = 3
	AttrFloats  AttributeType = 6
	AttrInts    AttributeType = 7
	AttrStrings AttributeType = 8
)

// Attribute is an AttributeProto holding a float, an int, a string or a
// list of floats, ints or strings, as Type says.
type Attribute struct {
	Name    string
	Type    AttributeType
	F       float32
	I       int64
	S       string
	Floats  []float32
	Ints    []int64
	Strings []string
}

// FloatAttr makes a float attribute.
func FloatAttr(name string, v float32) Attribute {
	return Attribute{Name: name, Type: AttrFloat, F: v}
}

// IntAttr makes an int attribute.
func IntAttr(name string, v int64) Attribute { return Attribute{Name: name, Type: AttrInt, I: v} }

// StringAttr makes a string attribute (Resize's mode, say).
func StringAttr(name, v string) Attribute { return Attribute{Name: name, Type: AttrString, S: v} }

// IntsAttr makes an attribute of a list of ints.
func IntsAttr(name string, vs ...int64) Attribute {
	return Attribute{Name: name, Type: AttrInts, Ints: append([]int64(nil), vs...)}
}

// FloatsAttr makes an attribute of a list of floats (a recurrent
// operator's activation_alpha, say).
func FloatsAttr(name string, vs ...float32) Attribute {
	return Attribute{Name: name, Type: AttrFloats, Floats: append([]float32(nil), vs...)}
}

// StringsAttr makes an attribute of a list of strings (a recurrent
// operator's activations, say).
func StringsAttr(name string, vs ...string) Attribute {
	return Attribute{Name: name, Type: AttrStrings, Strings: append([]string(nil), vs...)}
}

// Tensor is a TensorProto: Floats holds a Float tensor's values, Int64s
// an Int64 tensor's, row-major.
type Tensor struct {
	Name     string
	DataType DataType
	Dims     []int64
	Floats   []float32
	Int64s   []int64
}

// ValueInfo is a ValueInfoProto of a tensor type: its element type and
// its shape, each dimension a number or a symbol (such as "batch").
type ValueInfo struct {
	Name     string
	ElemType DataType
	Dims     []Dim
}

// Dim is a TensorShapeProto.Dimension: Param, a symbolic dimension, when
// not empty, else Value.
type Dim struct {
	Value int64
	Param string
}

// Field numbers of onnx.proto's messages.
const (
	modelIRVersion       = 1
	modelProducerName    = 2
	modelProducerVersion = 3
	modelDocString       = 6
	modelGraph           = 7
	modelOpsetImport     = 8

	opsetDomain  = 1
	opsetVersion = 2

	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphDocString   = 10
	graphInput       = 11
	graphOutput      = 12

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5

	attrName    = 1
	attrF       = 2
	attrI       = 3
	attrS       = 4
	attrFloats  = 7
	attrInts    = 8
	attrStrings = 9
	attrType    = 20

	tensorDims      = 1
	tensorDataType  = 2
	tensorFloatData = 4
	tensorInt64Data = 7
	tensorName      = 8
	tensorRawData   = 9

	valueInfoName = 1
	valueInfoType = 2

	typeTensorType = 1 // TypeProto.tensor_type
	tensorElemType = 1 // TypeProto.Tensor.elem_type
	tensorShape    = 2 // TypeProto.Tensor.shape
	shapeDim       = 1 // TensorShapeProto.dim
	dimValue       = 1
	dimParam       = 2
)

// Check reports what would make the model invalid to write: a tensor whose
// values do not fill its dimensions, or of a type gokeras does not write.
func (m *Model) Check() error {
	for _, t := range m.Graph.Initializers {
		if err := t.check(); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tensor) check() error {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return fmt.Errorf("tensor %q: negative dimension in %v", t.Name, t.Dims)
		}
		if d > 0 && n > math.MaxInt64/d {
			return fmt.Errorf("tensor %q: dimensions %v hold more values than an int64 counts", t.Name, t.Dims)
		}
		n *= d
	}
	var have, other int
	switch t.DataType {
	case Float:
		have, other = len(t.Floats), len(t.Int64s)
	case Int64:
		have, other = len(t.Int64s), len(t.Floats)
	default:
		return fmt.Errorf("tensor %q: data type %v is not one gokeras writes (FLOAT or INT64)", t.Name, t.DataType)
	}
	if int64(have) != n {
		return fmt.Errorf("tensor %q: %d values for dimensions %v, which hold %d", t.Name, have, t.Dims, n)
	}
	if other != 0 {
		return fmt.Errorf("tensor %q: %d values of another type than its %v", t.Name, other, t.DataType)
	}
	return nil
}

// rawSize is the size of the tensor's raw_data.
func (t *Tensor) rawSize() int {
	if t.DataType == Int64 {
		return 8 * len(t.Int64s)
	}
	return 4 * len(t.Floats)
}

// head encodes the tensor's fields but raw_data.
func (t *Tensor) head(b []byte) []byte {
	for _, d := range t.Dims {
		b = protowire.AppendVarint(b, tensorDims, uint64(d))
	}
	b = protowire.AppendVarint(b, tensorDataType, uint64(t.DataType))
	return protowire.AppendString(b, tensorName, t.Name)
}

// size is the size of the whole encoded TensorProto.
func (t *Tensor) size() int {
	return len(t.head(nil)) + protowire.SizeLength(tensorRawData, t.rawSize()) + t.rawSize()
}

// write streams the encoded TensorProto, buf being scratch space.
func (t *Tensor) write(w io.Writer, buf []byte) ([]byte, error) {
	buf = protowire.AppendLength(t.head(buf[:0]), tensorRawData, t.rawSize())
	const chunk = 1 << 16
	flush := func() error {
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	for i, v := range t.Floats {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) >= chunk && i+1 < len(t.Floats) {
			if err := flush(); err != nil {
				return buf, err
			}
		}
	}
	for _, v := range t.Int64s {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
	}
	return buf, flush()
}

type sliceWriter []byte

func (s *sliceWriter) Write(p []byte) (int, error) {
	*s = append(*s, p...)
	return len(p), nil
}

func (a *Attribute) marshal() ([]byte, error) {
	b := protowire.AppendString(nil, attrName, a.Name)
	b = protowire.AppendVarint(b, attrType, uint64(a.Type))
	switch a.Type {
	case AttrFloat:
		b = protowire.AppendFloat(b, attrF, a.F)
	case AttrInt:
		b = protowire.AppendVarint(b, attrI, uint64(a.I))
	case AttrString:
		b = protowire.AppendString(b, attrS, a.S)
	case AttrFloats:
		for _, v := range a.Floats {
			b = protowire.AppendFloat(b, attrFloats, v)
		}
	case AttrInts:
		for _, v := range a.Ints {
			b = protowire.AppendVarint(b, attrInts, uint64(v))
		}
	case AttrStrings:
		for _, v := range a.Strings {
			b = protowire.AppendString(b, attrStrings, v)
		}
	default:
		return nil, fmt.Errorf("attribute %q: type %d is not one gokeras writes", a.Name, a.Type)
	}
	return b, nil
}

func (n *Node) marshal() ([]byte, error) {
	var b []byte
	for _, in := range n.Inputs {
		b = protowire.AppendString(b, nodeInput, in)
	}
	for _, out := range n.Outputs {
		b = protowire.AppendString(b, nodeOutput, out)
	}
	if n.Name != "" {
		b = protowire.AppendString(b, nodeName, n.Name)
	}
	b = protowire.AppendString(b, nodeOpType, n.OpType)
	for _, a := range n.Attributes {
		ab, err := a.marshal()
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", n.Name, err)
		}
		b = protowire.AppendBytes(b, nodeAttribute, ab)
	}
	return b, nil
}

func (v *ValueInfo) marshal() []byte {
	var shape []byte
	for _, d := range v.Dims {
		var db []byte
		if d.Param != "" {
			db = protowire.AppendString(db, dimParam, d.Param)
		} else {
			db = protowire.AppendVarint(db, dimValue, uint64(d.Value))
		}
		shape = protowire.AppendBytes(shape, shapeDim, db)
	}
	tt := protowire.AppendVarint(nil, tensorElemType, uint64(v.ElemType))
	tt = protowire.AppendBytes(tt, tensorShape, shape)
	typ := protowire.AppendBytes(nil, typeTensorType, tt)
	b := protowire.AppendString(nil, valueInfoName, v.Name)
	return protowire.AppendBytes(b, valueInfoType, typ)
}

// head encodes the graph's fields but its initializers.
func (g *Graph) head() ([]byte, error) {
	var b []byte
	for i := range g.Nodes {
		nb, err := g.Nodes[i].marshal()
		if err != nil {
			return nil, err
		}
		b = protowire.AppendBytes(b, graphNode, nb)
	}
	b = protowire.AppendString(b, graphName, g.Name)
	if g.DocString != "" {
		b = protowire.AppendString(b, graphDocString, g.DocString)
	}
	for i := range g.Inputs {
		b = protowire.AppendBytes(b, graphInput, g.Inputs[i].marshal())
	}
	for i := range g.Outputs {
		b = protowire.AppendBytes(b, graphOutput, g.Outputs[i].marshal())
	}
	return b, nil
}

// Write encodes the model as a ModelProto to w, the initializers' values
// streamed one tensor after another.
func (m *Model) Write(w io.Writer) error {
	if err := m.Check(); err != nil {
		return err
	}
	if m.IRVersion <= 0 || len(m.Opsets) == 0 {
		return errors.New("the model has no IR version or no operator set: set IRVersion and Opsets")
	}
	graph, err := m.Graph.head()
	if err != nil {
		return err
	}
	graphSize := len(graph)
	for i := range m.Graph.Initializers {
		size := m.Graph.Initializers[i].size()
		graphSize += protowire.SizeLength(graphInitializer, size) + size
	}
	b := protowire.AppendVarint(nil, modelIRVersion, uint64(m.IRVersion))
	if m.ProducerName != "" {
		b = protowire.AppendString(b, modelProducerName, m.ProducerName)
	}
	if m.ProducerVersion != "" {
		b = protowire.AppendString(b, modelProducerVersion, m.ProducerVersion)
	}
	if m.DocString != "" {
		b = protowire.AppendString(b, modelDocString, m.DocString)
	}
	for _, o := range m.Opsets {
		ob := protowire.AppendString(nil, opsetDomain, o.Domain)
		ob = protowire.AppendVarint(ob, opsetVersion, uint64(o.Version))
		b = protowire.AppendBytes(b, modelOpsetImport, ob)
	}
	b = protowire.AppendLength(b, modelGraph, graphSize)
	b = append(b, graph...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16+64)
	for i := range m.Graph.Initializers {
		t := &m.Graph.Initializers[i]
		buf = protowire.AppendLength(buf[:0], graphInitializer, t.size())
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if buf, err = t.write(w, buf); err != nil {
			return err
		}
	}
	return nil
}

// Marshal encodes the model as a ModelProto.
func (m *Model) Marshal() ([]byte, error) {
	var w sliceWriter
	if err := m.Write(&w); err != nil {
		return nil, err
	}
	return w, nil
}

// Attr returns the node's attribute of that name.
func (n *Node) Attr(name string) (Attribute, bool) {
	for _, a := range n.Attributes {
		if a.Name == name {
			return a, true
		}
	}
	return Attribute{}, false
}

// Initializer returns the graph's initializer of that name, nil if none.
func (g *Graph) Initializer(name string) *Tensor {
	for i := range g.Initializers {
		if g.Initializers[i].Name == name {
			return &g.Initializers[i]
		}
	}
	return nil
}
