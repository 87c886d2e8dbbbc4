package onnx

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"slices"
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
// models nn.ExportONNX wrote (a Dense network, a CNN with batch
// normalization and pooling, an embedding model); run longer with
//
//	go test -run XXX -fuzz FuzzDecode -fuzztime 20s -fuzzminimizetime 0s ./internal/onnx
func FuzzDecode(f *testing.F) {
	b, err := sample().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
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
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return fmt.Errorf("dimensions %v hold more than 2^62 values", t.Dims)
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
			if a.Type != AttrFloat && a.Type != AttrInt && a.Type != AttrInts {
				return true
			}
		}
	}
	return false
}

// canonical prints the model as the wire format carries it: a dimension's
// symbol without its value, an attribute's value of its own type only,
// and empty lists as none. Floats print by their bits, so that a NaN
// equals itself and -0 differs from 0.
func canonical(m *Model) string {
	c := *m
	c.Opsets = nilIfEmpty(c.Opsets)
	g := &c.Graph
	g.Nodes = nilIfEmpty(slices.Clone(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		n.Inputs, n.Outputs = nilIfEmpty(n.Inputs), nilIfEmpty(n.Outputs)
		n.Attributes = nilIfEmpty(slices.Clone(n.Attributes))
		for j := range n.Attributes {
			a := &n.Attributes[j]
			f, i, ints := a.F, a.I, a.Ints
			a.F, a.I, a.Ints = 0, 0, nil
			switch a.Type {
			case AttrFloat:
				a.F = f
			case AttrInt:
				a.I = i
			case AttrInts:
				a.Ints = nilIfEmpty(ints)
			}
		}
	}
	var floats [][]uint32
	g.Initializers = nilIfEmpty(slices.Clone(g.Initializers))
	for i := range g.Initializers {
		t := &g.Initializers[i]
		t.Dims, t.Int64s = nilIfEmpty(t.Dims), nilIfEmpty(t.Int64s)
		var fb []uint32
		for _, v := range t.Floats {
			fb = append(fb, math.Float32bits(v))
		}
		floats = append(floats, fb)
		t.Floats = nil
	}
	for _, vs := range []*[]ValueInfo{&g.Inputs, &g.Outputs} {
		*vs = nilIfEmpty(slices.Clone(*vs))
		for i := range *vs {
			v := &(*vs)[i]
			v.Dims = nilIfEmpty(slices.Clone(v.Dims))
			for j := range v.Dims {
				if v.Dims[j].Param != "" {
					v.Dims[j].Value = 0
				}
			}
		}
	}
	var attrFloats []uint32
	for _, n := range g.Nodes {
		for _, a := range n.Attributes {
			attrFloats = append(attrFloats, math.Float32bits(a.F))
		}
	}
	for i := range g.Nodes {
		for j := range g.Nodes[i].Attributes {
			g.Nodes[i].Attributes[j].F = 0
		}
	}
	return fmt.Sprintf("%#v floats %x attribute floats %x", c, floats, attrFloats)
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}
