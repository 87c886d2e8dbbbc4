package onnx

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode, which reads the models
// gokeras exports back (in tests and tools). It must not panic. When it
// decodes a model:
//
//   - every initializer's values fill its dimensions exactly (the product
//     of the dimensions computed without overflow), and are of the type it
//     declares;
//   - Marshal refuses it only for what Write documents: no IR version, no
//     operator set, or an attribute without a type;
//   - otherwise what Marshal writes decodes again to the same model, up to
//     what the wire format cannot carry (a dimension's value beside its
//     symbol, an attribute's values of another type than its own), and
//     writing that model again gives the same bytes.
//
// The seed corpus is sample() and testdata/fuzz/FuzzDecode, which holds
// models export/onnx wrote (a Dense network, a CNN with batch
// normalization and pooling, an embedding model); run longer with
//
//	go test -run XXX -fuzz FuzzDecode -fuzztime 20s -fuzzminimizetime 0s ./internal/formats/onnx
func FuzzDecode(f *testing.F) {
	b, err := sample().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	// An INTS attribute relabelled FLOATS: its ints are not of its type,
	// so writing it drops them (CI's fuzzing found this shape in a CNN's
	// "dilations").
	wrongType, err := (&Model{IRVersion: IRVersion, Opsets: []OpsetID{{Version: OpsetVersion}}, Graph: Graph{Nodes: []Node{
		{OpType: "Conv", Attributes: []Attribute{IntsAttr("dilations", 1, 1)}},
	}}}).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	ints := []byte{0xa0, 0x01, byte(AttrInts)} // AttributeProto.type (field 20), INTS
	if bytes.Count(wrongType, ints) != 1 {
		f.Fatalf("the attribute's type field was not found once in %x", wrongType)
	}
	f.Add(bytes.Replace(wrongType, ints, []byte{0xa0, 0x01, byte(AttrFloats)}, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		for _, tn := range m.Graph.Initializers {
			if err := fillsDims(tn); err != nil {
				t.Fatalf("Decode accepted initializer %q: %v", tn.Name, err)
			}
		}
		b, err := m.Marshal()
		if err != nil {
			if m.IRVersion > 0 && len(m.Opsets) > 0 && !untypedAttribute(m) {
				t.Fatalf("a decoded model is refused by Marshal: %v", err)
			}
			return
		}
		m2, err := Decode(b)
		if err != nil {
			t.Fatalf("Marshal wrote what Decode refuses: %v", err)
		}
		if got, want := canonical(m2), canonical(m); got != want {
			t.Fatalf("decoded, written and decoded again:\n got %s\nwant %s", got, want)
		}
		b2, err := m2.Marshal()
		if err != nil {
			t.Fatalf("the model read back cannot be written: %v", err)
		}
		if !bytes.Equal(b2, b) {
			t.Fatalf("writing the model read back gives other bytes:\n%x\n%x", b2, b)
		}
	})
}

// fillsDims checks, independently of Tensor.check, that a tensor has
// exactly the values of its dimensions, and only of its own type.
func fillsDims(t Tensor) error {
	n := uint64(1)
	for _, d := range t.Dims {
		if d < 0 {
			return fmt.Errorf("negative dimension in %v", t.Dims)
		}
		// Each partial product fits an int64, as Tensor.check asks: a
		// dimension of 0 after a huge one holds no values.
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return fmt.Errorf("dimensions %v hold more values than an int64 counts", t.Dims)
		}
		n = lo
	}
	own, other := len(t.Floats), len(t.Int64s)
	if t.DataType == Int64 {
		own, other = other, own
	}
	if uint64(own) != n || other != 0 {
		return fmt.Errorf("type %v, dimensions %v (%d values): holds %d floats and %d int64s", t.DataType, t.Dims, n, len(t.Floats), len(t.Int64s))
	}
	return nil
}

// untypedAttribute says whether a node has an attribute whose type field
// was missing, which Write refuses to write.
func untypedAttribute(m *Model) bool {
	for _, n := range m.Graph.Nodes {
		for _, a := range n.Attributes {
			switch a.Type {
			case AttrFloat, AttrInt, AttrString, AttrFloats, AttrInts, AttrStrings:
			default:
				return true
			}
		}
	}
	return false
}

// canonical prints the model as the wire format carries it: a dimension's
// symbol without its value, an attribute's value of its own type only,
// and no difference between an empty list and none. Floats print by their
// bits, so that a NaN equals itself and -0 differs from 0.
func canonical(m *Model) string {
	var b strings.Builder
	g := &m.Graph
	fmt.Fprintf(&b, "ir %d producer %q %q doc %q opsets %+v\ngraph %q doc %q\n",
		m.IRVersion, m.ProducerName, m.ProducerVersion, m.DocString, m.Opsets, g.Name, g.DocString)
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "node %q %q in %q out %q\n", n.Name, n.OpType, n.Inputs, n.Outputs)
		for _, a := range n.Attributes {
			switch a.Type {
			case AttrFloat:
				fmt.Fprintf(&b, "\t%q float %#x\n", a.Name, math.Float32bits(a.F))
			case AttrInt:
				fmt.Fprintf(&b, "\t%q int %d\n", a.Name, a.I)
			case AttrString:
				fmt.Fprintf(&b, "\t%q string %q\n", a.Name, a.S)
			case AttrFloats:
				fmt.Fprintf(&b, "\t%q floats", a.Name)
				for _, v := range a.Floats {
					fmt.Fprintf(&b, " %#x", math.Float32bits(v))
				}
				b.WriteByte('\n')
			case AttrInts:
				fmt.Fprintf(&b, "\t%q ints %d\n", a.Name, a.Ints)
			case AttrStrings:
				fmt.Fprintf(&b, "\t%q strings %q\n", a.Name, a.Strings)
			default:
				fmt.Fprintf(&b, "\t%q type %d\n", a.Name, a.Type)
			}
		}
	}
	for _, t := range g.Initializers {
		fmt.Fprintf(&b, "tensor %q %v dims %d int64s %d floats", t.Name, t.DataType, t.Dims, t.Int64s)
		for _, v := range t.Floats {
			fmt.Fprintf(&b, " %#x", math.Float32bits(v))
		}
		b.WriteByte('\n')
	}
	for _, vs := range [][]ValueInfo{g.Inputs, g.Outputs} {
		for _, v := range vs {
			fmt.Fprintf(&b, "value %q %v", v.Name, v.ElemType)
			for _, d := range v.Dims {
				if d.Param != "" {
					fmt.Fprintf(&b, " %q", d.Param)
				} else {
					fmt.Fprintf(&b, " %d", d.Value)
				}
			}
			b.WriteByte('\n')
		}
		b.WriteString("--\n")
	}
	return b.String()
}
