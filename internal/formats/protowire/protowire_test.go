package protowire

import (
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want string // hex, from the protobuf encoding documentation's rules
	}{
		{"varint 150 (the documentation's example)", AppendVarint(nil, 1, 150), "089601"},
		{"varint -1 as int64", AppendVarint(nil, 3, uint64(math.MaxUint64)), "18ffffffffffffffffff01"},
		{"field 20 key takes two bytes", AppendVarint(nil, 20, 2), "a00102"},
		{"double 1", AppendDouble(nil, 1, 1), "09000000000000f03f"},
		{"float 1", AppendFloat(nil, 2, 1), "150000803f"},
		{"string", AppendString(nil, 2, "testing"), "120774657374696e67"},
		{"bytes", AppendBytes(nil, 4, []byte{1, 2}), "22020102"},
		{"empty bytes", AppendBytes(nil, 4, nil), "2200"},
		{"length only", AppendLength(nil, 7, 300), "3aac02"},
		{"packed doubles", AppendPackedDoubles(nil, 6, []float64{2}), "32080000000000000040"},
		{"appends to b", AppendVarint([]byte{0xff}, 1, 1), "ff0801"},
	}
	for _, tc := range tests {
		if got := hex.EncodeToString(tc.b); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSizeLength(t *testing.T) {
	for _, tc := range []struct{ field, n int }{{1, 0}, {7, 127}, {7, 128}, {15, 1 << 20}, {16, 1 << 30}, {2047, 5}} {
		if got, want := SizeLength(tc.field, tc.n), len(AppendLength(nil, tc.field, tc.n)); got != want {
			t.Errorf("SizeLength(%d, %d) = %d, want %d", tc.field, tc.n, got, want)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	var b []byte
	b = AppendVarint(b, 1, 300)
	b = AppendDouble(b, 2, -2.5)
	b = AppendFloat(b, 3, 0.25)
	b = AppendString(b, 4, "name")
	b = AppendVarint(b, 1, 7)
	fields, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{Number: 1, Type: Varint, Num: 300},
		{Number: 2, Type: Fixed64, Num: math.Float64bits(-2.5)},
		{Number: 3, Type: Fixed32, Num: uint64(math.Float32bits(0.25))},
		{Number: 4, Type: Bytes, Data: []byte("name")},
		{Number: 1, Type: Varint, Num: 7},
	}
	if len(fields) != len(want) {
		t.Fatalf("got %d fields, want %d: %+v", len(fields), len(want), fields)
	}
	for i, f := range fields {
		w := want[i]
		if f.Number != w.Number || f.Type != w.Type || f.Num != w.Num || string(f.Data) != string(w.Data) {
			t.Errorf("field %d: got %+v, want %+v", i, f, w)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, hex, want string
	}{
		{"truncated key", "80", "bad field key"},
		{"field 0", "0001", "field number 0"},
		{"truncated varint", "0880", "field 1: bad varint"},
		{"truncated double", "0900", "field 1: truncated 64-bit value"},
		{"truncated float", "0d00", "field 1: truncated 32-bit value"},
		{"length past the end", "0a0561", "field 1: bad or truncated length"},
		{"group", "0b", "unsupported wire type 3"},
	}
	for _, tc := range tests {
		b, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse(%s) error %v, want one containing %q", tc.name, tc.hex, err, tc.want)
		}
	}
}

func TestWant(t *testing.T) {
	f := Field{Number: 1, Type: Fixed32}
	if err := f.Want(Fixed32, "x"); err != nil {
		t.Errorf("Want of the right type: %v", err)
	}
	err := f.Want(Fixed64, "Event.wall_time")
	if err == nil || err.Error() != "Event.wall_time (field 1) has wire type 5, want 1" {
		t.Errorf("Want of the wrong type: %v", err)
	}
}

func TestRepeatedPackedAndUnpacked(t *testing.T) {
	packed := AppendLength(nil, 8, 3)
	packed = append(packed, 0x01, 0xac, 0x02) // 1, 300
	var unpacked []byte
	unpacked = AppendVarint(unpacked, 8, 1)
	unpacked = AppendVarint(unpacked, 8, 300)
	for name, b := range map[string][]byte{"packed": packed, "unpacked": unpacked} {
		fields, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, f := range fields {
			vs, err := f.Varints("ints")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, vs...)
		}
		if !slices.Equal(got, []uint64{1, 300}) {
			t.Errorf("%s varints: got %v, want [1 300]", name, got)
		}
	}
	if _, err := (Field{Number: 8, Type: Bytes, Data: []byte{0x80}}).Varints("ints"); err == nil {
		t.Error("a packed varint cut short: no error")
	}
	if _, err := (Field{Number: 8, Type: Fixed32}).Varints("ints"); err == nil {
		t.Error("varints of a float field: no error")
	}

	fields, err := Parse(append(AppendPackedDoubles(nil, 6, []float64{1, 2}), AppendDouble(nil, 6, 3)...))
	if err != nil {
		t.Fatal(err)
	}
	var ds []float64
	for _, f := range fields {
		vs, err := f.Doubles("bucket")
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, vs...)
	}
	if !slices.Equal(ds, []float64{1, 2, 3}) {
		t.Errorf("doubles: got %v, want [1 2 3]", ds)
	}
	if _, err := (Field{Number: 6, Type: Bytes, Data: make([]byte, 7)}).Doubles("bucket"); err == nil {
		t.Error("packed doubles of 7 bytes: no error")
	}
	if _, err := (Field{Number: 6, Type: Varint}).Doubles("bucket"); err == nil {
		t.Error("doubles of a varint field: no error")
	}
}
