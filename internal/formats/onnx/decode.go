package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gokeras/gokeras/internal/formats/protowire"
)

// Decode reads a ModelProto: the fields this package writes, from any
// writer (numbers packed or not, tensors as raw_data, float_data or
// int64_data). Other fields are skipped; an attribute of a type Attribute
// cannot hold, or a tensor of another element type, is an error.
func Decode(b []byte) (*Model, error) {
	m := &Model{}
	err := eachField(b, "ModelProto", func(f protowire.Field) error {
		switch f.Number {
		case modelIRVersion:
			return varint(f, "ModelProto.ir_version", &m.IRVersion)
		case modelProducerName:
			return str(f, "ModelProto.producer_name", &m.ProducerName)
		case modelProducerVersion:
			return str(f, "ModelProto.producer_version", &m.ProducerVersion)
		case modelDocString:
			return str(f, "ModelProto.doc_string", &m.DocString)
		case modelOpsetImport:
			var o OpsetID
			err := message(f, "ModelProto.opset_import", func(f protowire.Field) error {
				switch f.Number {
				case opsetDomain:
					return str(f, "OperatorSetIdProto.domain", &o.Domain)
				case opsetVersion:
					return varint(f, "OperatorSetIdProto.version", &o.Version)
				}
				return nil
			})
			m.Opsets = append(m.Opsets, o)
			return err
		case modelGraph:
			return message(f, "ModelProto.graph", m.Graph.decodeField)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (g *Graph) decodeField(f protowire.Field) error {
	switch f.Number {
	case graphNode:
		var n Node
		err := message(f, "GraphProto.node", n.decodeField)
		g.Nodes = append(g.Nodes, n)
		return err
	case graphName:
		return str(f, "GraphProto.name", &g.Name)
	case graphDocString:
		return str(f, "GraphProto.doc_string", &g.DocString)
	case graphInitializer:
		var t Tensor
		var raw []byte
		err := message(f, "GraphProto.initializer", func(f protowire.Field) error { return t.decodeField(f, &raw) })
		if err == nil {
			err = t.decodeRaw(raw)
		}
		g.Initializers = append(g.Initializers, t)
		return err
	case graphInput, graphOutput:
		var v ValueInfo
		err := message(f, "GraphProto.input or output", v.decodeField)
		if f.Number == graphInput {
			g.Inputs = append(g.Inputs, v)
		} else {
			g.Outputs = append(g.Outputs, v)
		}
		return err
	}
	return nil
}

func (n *Node) decodeField(f protowire.Field) error {
	switch f.Number {
	case nodeInput:
		var s string
		err := str(f, "NodeProto.input", &s)
		n.Inputs = append(n.Inputs, s)
		return err
	case nodeOutput:
		var s string
		err := str(f, "NodeProto.output", &s)
		n.Outputs = append(n.Outputs, s)
		return err
	case nodeName:
		return str(f, "NodeProto.name", &n.Name)
	case nodeOpType:
		return str(f, "NodeProto.op_type", &n.OpType)
	case nodeAttribute:
		var a Attribute
		err := message(f, "NodeProto.attribute", a.decodeField)
		n.Attributes = append(n.Attributes, a)
		return err
	}
	return nil
}

func (a *Attribute) decodeField(f protowire.Field) error {
	switch f.Number {
	case attrName:
		return str(f, "AttributeProto.name", &a.Name)
	case attrType:
		var t int64
		err := varint(f, "AttributeProto.type", &t)
		a.Type = AttributeType(t)
		switch a.Type {
		case AttrFloat, AttrInt, AttrString, AttrFloats, AttrInts, AttrStrings:
		default:
			if err == nil {
				err = fmt.Errorf("attribute %q: type %d is not one this package reads (FLOAT, INT, STRING, FLOATS, INTS or STRINGS)", a.Name, t)
			}
		}
		return err
	case attrF:
		if err := f.Want(protowire.Fixed32, "AttributeProto.f"); err != nil {
			return err
		}
		a.F = math.Float32frombits(uint32(f.Num))
	case attrI:
		return varint(f, "AttributeProto.i", &a.I)
	case attrS:
		return str(f, "AttributeProto.s", &a.S)
	case attrFloats:
		if err := f.Want(protowire.Fixed32, "AttributeProto.floats"); err != nil {
			return err
		}
		a.Floats = append(a.Floats, math.Float32frombits(uint32(f.Num)))
	case attrStrings:
		var s string
		err := str(f, "AttributeProto.strings", &s)
		a.Strings = append(a.Strings, s)
		return err
	case attrInts:
		vs, err := f.Varints("AttributeProto.ints")
		for _, v := range vs {
			a.Ints = append(a.Ints, int64(v))
		}
		return err
	}
	return nil
}

func (t *Tensor) decodeField(f protowire.Field, raw *[]byte) error {
	switch f.Number {
	case tensorDims:
		vs, err := f.Varints("TensorProto.dims")
		for _, v := range vs {
			t.Dims = append(t.Dims, int64(v))
		}
		return err
	case tensorDataType:
		var dt int64
		err := varint(f, "TensorProto.data_type", &dt)
		t.DataType = DataType(dt)
		return err
	case tensorName:
		return str(f, "TensorProto.name", &t.Name)
	case tensorRawData:
		if err := f.Want(protowire.Bytes, "TensorProto.raw_data"); err != nil {
			return err
		}
		*raw = f.Data
	case tensorFloatData:
		switch f.Type {
		case protowire.Fixed32:
			t.Floats = append(t.Floats, math.Float32frombits(uint32(f.Num)))
		case protowire.Bytes:
			if len(f.Data)%4 != 0 {
				return fmt.Errorf("TensorProto.float_data: packed floats of %d bytes", len(f.Data))
			}
			for d := f.Data; len(d) > 0; d = d[4:] {
				t.Floats = append(t.Floats, math.Float32frombits(binary.LittleEndian.Uint32(d)))
			}
		default:
			return fmt.Errorf("TensorProto.float_data has wire type %d, want %d or %d", f.Type, protowire.Fixed32, protowire.Bytes)
		}
	case tensorInt64Data:
		vs, err := f.Varints("TensorProto.int64_data")
		for _, v := range vs {
			t.Int64s = append(t.Int64s, int64(v))
		}
		return err
	}
	return nil
}

// decodeRaw reads the tensor's raw_data, if it had one, and checks that
// its values fill its dimensions.
func (t *Tensor) decodeRaw(raw []byte) error {
	if raw != nil {
		switch t.DataType {
		case Float:
			if len(raw)%4 != 0 {
				return fmt.Errorf("tensor %q: raw_data of %d bytes for FLOAT values", t.Name, len(raw))
			}
			t.Floats = make([]float32, 0, len(raw)/4)
			for d := raw; len(d) > 0; d = d[4:] {
				t.Floats = append(t.Floats, math.Float32frombits(binary.LittleEndian.Uint32(d)))
			}
		case Int64:
			if len(raw)%8 != 0 {
				return fmt.Errorf("tensor %q: raw_data of %d bytes for INT64 values", t.Name, len(raw))
			}
			t.Int64s = make([]int64, 0, len(raw)/8)
			for d := raw; len(d) > 0; d = d[8:] {
				t.Int64s = append(t.Int64s, int64(binary.LittleEndian.Uint64(d)))
			}
		}
	}
	return t.check()
}

func (v *ValueInfo) decodeField(f protowire.Field) error {
	switch f.Number {
	case valueInfoName:
		return str(f, "ValueInfoProto.name", &v.Name)
	case valueInfoType:
		return message(f, "ValueInfoProto.type", func(f protowire.Field) error {
			if f.Number != typeTensorType {
				return fmt.Errorf("value %q: TypeProto field %d: only tensor types are read", v.Name, f.Number)
			}
			return message(f, "TypeProto.tensor_type", func(f protowire.Field) error {
				switch f.Number {
				case tensorElemType:
					var t int64
					err := varint(f, "TypeProto.Tensor.elem_type", &t)
					v.ElemType = DataType(t)
					return err
				case tensorShape:
					return message(f, "TypeProto.Tensor.shape", func(f protowire.Field) error {
						if f.Number != shapeDim {
							return nil
						}
						var d Dim
						err := message(f, "TensorShapeProto.dim", func(f protowire.Field) error {
							switch f.Number {
							case dimValue:
								return varint(f, "Dimension.dim_value", &d.Value)
							case dimParam:
								return str(f, "Dimension.dim_param", &d.Param)
							}
							return nil
						})
						v.Dims = append(v.Dims, d)
						return err
					})
				}
				return nil
			})
		})
	}
	return nil
}

// eachField parses a message and calls do for each field, in order.
func eachField(b []byte, what string, do func(protowire.Field) error) error {
	fields, err := protowire.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, f := range fields {
		if err := do(f); err != nil {
			return err
		}
	}
	return nil
}

// message decodes a field holding a message.
func message(f protowire.Field, what string, do func(protowire.Field) error) error {
	if err := f.Want(protowire.Bytes, what); err != nil {
		return err
	}
	return eachField(f.Data, what, do)
}

func str(f protowire.Field, what string, s *string) error {
	if err := f.Want(protowire.Bytes, what); err != nil {
		return err
	}
	*s = string(f.Data)
	return nil
}

func varint(f protowire.Field, what string, v *int64) error {
	if err := f.Want(protowire.Varint, what); err != nil {
		return err
	}
	*v = int64(f.Num)
	return nil
}
