package safetensors

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"slices"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the reader (Decode, and
// DecodeMetadata: ReadFile and ReadMetadata in memory). It must never panic
// nor decode more data than the input holds; what Decode accepts must hold
// as many values as each shape says, have the metadata DecodeMetadata
// reads, and come back unchanged through Write.
//
// The seed corpus is in testdata/fuzz/FuzzDecode; run longer with
//
//	go test -run XXX -fuzz FuzzDecode -fuzztime 20s ./safetensors
func FuzzDecode(f *testing.F) {
	var good bytes.Buffer
	if err := Write(&good, []Tensor{
		{Name: "dense/kernel", Shape: []int{2, 3}, Data: []float32{1, -2, 3.5, 0, float32(math.Inf(1)), 6}},
		{Name: "dense/bias", Shape: []int{3}, Data: []float32{0.25, 0, -1}},
		{Name: "scalar", Shape: []int{}, Data: []float32{7}},
	}, map[string]string{"gokeras.kind": "weights", "epoch": "3"}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		meta, lerr := DecodeMetadata(data)
		if err != nil {
			if errors.Is(err, ErrFormat) && lerr == nil {
				t.Fatalf("Decode refused a layout DecodeMetadata accepts: %v", err)
			}
			return
		}
		if lerr != nil {
			t.Fatalf("Decode accepted what DecodeMetadata refuses: %v", lerr)
		}
		if !maps.Equal(meta, file.Metadata) {
			t.Fatalf("metadata %v from DecodeMetadata, %v from Decode", meta, file.Metadata)
		}
		var total int64
		for _, tn := range file.Tensors {
			n, err := numel(tn.Shape)
			if err != nil || n != len(tn.Data) {
				t.Fatalf("tensor %q: shape %v (%v) but %d values", tn.Name, tn.Shape, err, len(tn.Data))
			}
			total += 4 * int64(n)
		}
		if total > int64(len(data)) {
			t.Fatalf("decoded %d bytes of tensor data from %d bytes of input", total, len(data))
		}
		var again bytes.Buffer
		if err := Write(&again, file.Tensors, file.Metadata); err != nil {
			return // a name Write refuses (the empty name): nothing to compare
		}
		back, err := Decode(again.Bytes())
		if err != nil {
			t.Fatalf("Decode of what Write wrote: %v", err)
		}
		if !maps.Equal(back.Metadata, file.Metadata) {
			t.Fatalf("metadata %v came back as %v", file.Metadata, back.Metadata)
		}
		for _, want := range file.Tensors {
			got, ok := back.Tensor(want.Name)
			if !ok || !slices.Equal(got.Shape, want.Shape) || !sameBits(got.Data, want.Data) {
				t.Fatalf("tensor %q came back as %+v", want.Name, got)
			}
		}
	})
}

// sameBits compares values bit for bit, so that NaNs compare equal.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
