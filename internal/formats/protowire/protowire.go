// Package protowire writes and reads the protocol buffer wire format by
// hand: field keys, varints, fixed-size numbers and length-delimited
// fields. It is all gokeras needs to write TensorBoard's event files and
// ONNX models without a protobuf dependency; the messages themselves are
// laid out by the packages that write them.
package protowire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Type is a field's wire type.
type Type int

// The wire types gokeras writes and reads. Groups (3 and 4) are not
// supported.
const (
	Varint  Type = 0 // int32, int64, uint64, bool, enum
	Fixed64 Type = 1 // double, fixed64
	Bytes   Type = 2 // string, bytes, messages, packed repeated numbers
	Fixed32 Type = 5 // float, fixed32
)

// AppendKey appends a field's key: its number and wire type.
func AppendKey(b []byte, field int, t Type) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(t))
}

// AppendVarint appends a varint field. Negative int64 values are passed
// as uint64(v), ten bytes long, as protobuf encodes int64.
func AppendVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(AppendKey(b, field, Varint), v)
}

// AppendDouble appends a double field.
func AppendDouble(b []byte, field int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(AppendKey(b, field, Fixed64), math.Float64bits(v))
}

// AppendFloat appends a float field.
func AppendFloat(b []byte, field int, v float32) []byte {
	return binary.LittleEndian.AppendUint32(AppendKey(b, field, Fixed32), math.Float32bits(v))
}

// AppendBytes appends a length-delimited field: bytes, or an encoded
// message.
func AppendBytes(b []byte, field int, v []byte) []byte {
	return append(AppendLength(b, field, len(v)), v...)
}

// AppendString appends a string field.
func AppendString(b []byte, field int, s string) []byte {
	return append(AppendLength(b, field, len(s)), s...)
}

// AppendLength appends the key and the length of a length-delimited field
// whose n bytes the caller writes next: how a large message is streamed
// without being copied into its parent.
func AppendLength(b []byte, field, n int) []byte {
	return binary.AppendUvarint(AppendKey(b, field, Bytes), uint64(n))
}

// SizeLength is the size of what AppendLength appends.
func SizeLength(field, n int) int {
	var buf [2 * binary.MaxVarintLen64]byte
	return len(AppendLength(buf[:0], field, n))
}

// AppendPackedDoubles appends a packed repeated double field.
func AppendPackedDoubles(b []byte, field int, vs []float64) []byte {
	b = AppendLength(b, field, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// Field is one field read from a message: its number, wire type and value
// (Num for varints and fixed-size values, Data for length-delimited ones).
type Field struct {
	Number int
	Type   Type
	Num    uint64
	Data   []byte
}

// Parse splits a message into its fields, in the order they come. Groups
// are refused.
func Parse(b []byte) ([]Field, error) {
	var fields []Field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad field key")
		}
		b = b[n:]
		f := Field{Number: int(key >> 3), Type: Type(key & 7)}
		if f.Number == 0 {
			return nil, errors.New("field number 0")
		}
		switch f.Type {
		case Varint:
			if f.Num, n = binary.Uvarint(b); n <= 0 {
				return nil, fmt.Errorf("field %d: bad varint", f.Number)
			}
			b = b[n:]
		case Fixed64:
			if len(b) < 8 {
				return nil, fmt.Errorf("field %d: truncated 64-bit value", f.Number)
			}
			f.Num, b = binary.LittleEndian.Uint64(b), b[8:]
		case Fixed32:
			if len(b) < 4 {
				return nil, fmt.Errorf("field %d: truncated 32-bit value", f.Number)
			}
			f.Num, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case Bytes:
			size, n := binary.Uvarint(b)
			if n <= 0 || size > uint64(len(b)-n) {
				return nil, fmt.Errorf("field %d: bad or truncated length", f.Number)
			}
			f.Data, b = b[n:n+int(size)], b[n+int(size):]
		default:
			return nil, fmt.Errorf("field %d: unsupported wire type %d", f.Number, f.Type)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// Want checks that a field has the wire type its message declares; what
// names the field in the error.
func (f Field) Want(t Type, what string) error {
	if f.Type != t {
		return fmt.Errorf("%s (field %d) has wire type %d, want %d", what, f.Number, f.Type, t)
	}
	return nil
}

// Varints returns the values of a repeated varint field's occurrence:
// one value when it is unpacked (wire type Varint), all those of a packed
// one (wire type Bytes). A repeated field may come in several
// occurrences, of either kind: the caller appends them.
func (f Field) Varints(what string) ([]uint64, error) {
	switch f.Type {
	case Varint:
		return []uint64{f.Num}, nil
	case Bytes:
		var vs []uint64
		for d := f.Data; len(d) > 0; {
			v, n := binary.Uvarint(d)
			if n <= 0 {
				return nil, fmt.Errorf("%s (field %d): bad packed varint", what, f.Number)
			}
			vs, d = append(vs, v), d[n:]
		}
		return vs, nil
	}
	return nil, fmt.Errorf("%s (field %d) has wire type %d, want %d or %d", what, f.Number, f.Type, Varint, Bytes)
}

// Doubles returns the values of a repeated double field's occurrence,
// unpacked (wire type Fixed64) or packed (wire type Bytes).
func (f Field) Doubles(what string) ([]float64, error) {
	switch f.Type {
	case Fixed64:
		return []float64{math.Float64frombits(f.Num)}, nil
	case Bytes:
		if len(f.Data)%8 != 0 {
			return nil, fmt.Errorf("%s (field %d): packed doubles of %d bytes", what, f.Number, len(f.Data))
		}
		vs := make([]float64, 0, len(f.Data)/8)
		for d := f.Data; len(d) > 0; d = d[8:] {
			vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(d)))
		}
		return vs, nil
	}
	return nil, fmt.Errorf("%s (field %d) has wire type %d, want %d or %d", what, f.Number, f.Type, Fixed64, Bytes)
}
