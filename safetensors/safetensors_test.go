package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/safetensors"
)

// file assembles a safetensors file by hand: length, header, data.
func file(header string, data ...float32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	for _, v := range data {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(v))
	}
	return b.Bytes()
}

func TestWriteMatchesTheFormatByHand(t *testing.T) {
	var got bytes.Buffer
	err := safetensors.Write(&got, []safetensors.Tensor{
		{Name: "dense/kernel", Shape: []int{2, 1}, Data: []float32{1.5, -2}},
		{Name: "dense/bias", Shape: []int{1}, Data: []float32{0.25}},
	}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	// Tensors sorted by name, data back to back, header padded with spaces
	// to a multiple of 8: 135 bytes of JSON + 1 space = 136.
	header := `{"__metadata__":{"format":"pt"},` +
		`"dense/bias":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},` +
		`"dense/kernel":{"dtype":"F32","shape":[2,1],"data_offsets":[4,12]}}`
	header += strings.Repeat(" ", (8-len(header)%8)%8)
	want := file(header, 0.25, 1.5, -2)
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Write produced\n%q\nwant\n%q", got.Bytes(), want)
	}
	if len(header)%8 != 0 || binary.LittleEndian.Uint64(got.Bytes()) != uint64(len(header)) {
		t.Errorf("header length field %d, want %d (a multiple of 8)", binary.LittleEndian.Uint64(got.Bytes()), len(header))
	}
	// 0.25 is 0x3e800000: little-endian bytes 00 00 80 3e.
	data := got.Bytes()[8+len(header):]
	if !bytes.Equal(data[:4], []byte{0, 0, 0x80, 0x3e}) {
		t.Errorf("0.25 encoded as % x, want 00 00 80 3e", data[:4])
	}
}

func TestRoundTripThroughAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.safetensors")
	in := []safetensors.Tensor{
		{Name: "scalar", Shape: []int{}, Data: []float32{3}},
		{Name: "empty", Shape: []int{0, 4}, Data: []float32{}},
		{Name: "k", Shape: []int{2, 3}, Data: []float32{1, 2, 3, float32(math.Inf(-1)), -0, 1e-30}},
	}
	if err := safetensors.WriteFile(path, in, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata != nil {
		t.Errorf("metadata %v, want none", f.Metadata)
	}
	if got := f.Names(); !reflect.DeepEqual(got, []string{"empty", "k", "scalar"}) {
		t.Errorf("names %v", got)
	}
	for _, want := range in {
		got, ok := f.Tensor(want.Name)
		if !ok {
			t.Fatalf("tensor %q missing", want.Name)
		}
		if !reflect.DeepEqual(got.Shape, want.Shape) || !reflect.DeepEqual(got.Data, want.Data) {
			t.Errorf("tensor %q = %v %v, want %v %v", want.Name, got.Shape, got.Data, want.Shape, want.Data)
		}
	}
	meta, err := safetensors.ReadMetadata(path)
	if err != nil || meta != nil {
		t.Errorf("ReadMetadata = %v, %v", meta, err)
	}
}

func TestWriteRejects(t *testing.T) {
	tests := []struct {
		name    string
		tensors []safetensors.Tensor
		want    string
	}{
		{"empty name", []safetensors.Tensor{{Shape: []int{1}, Data: []float32{1}}}, "empty name"},
		{"reserved name", []safetensors.Tensor{{Name: "__metadata__", Shape: []int{1}, Data: []float32{1}}}, "reserved"},
		{"duplicate", []safetensors.Tensor{{Name: "a", Shape: []int{1}, Data: []float32{1}}, {Name: "a", Shape: []int{1}, Data: []float32{2}}}, "two tensors"},
		{"shape mismatch", []safetensors.Tensor{{Name: "a", Shape: []int{2, 2}, Data: []float32{1}}}, "holds 4 values but the data has 1"},
		{"negative dim", []safetensors.Tensor{{Name: "a", Shape: []int{-1}}}, "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := safetensors.Write(&bytes.Buffer{}, tc.tensors, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestDecodeRejectsDamagedFiles(t *testing.T) {
	good := file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 1, 2)
	tests := []struct {
		name   string
		data   []byte
		want   string
		format bool // wraps ErrFormat
	}{
		{"empty", nil, "too short", true},
		{"truncated data", good[:len(good)-1], "truncated", true},
		{"truncated header", good[:20], "truncated", true},
		{"extra bytes", append(append([]byte{}, good...), 0), "extra bytes", true},
		{"huge header length", append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, good[8:]...), "100 MB", true},
		{"not JSON", file(`{"a":`), "not valid JSON", true},
		{"not an object", file(`[1, 2]  `), "does not start with '{'", true},
		{"size does not match shape", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 1, 2), "needs 12 bytes", true},
		{"gap", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 1, 2), "gap or overlap", true},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 1, 2), "gap or overlap", true},
		{"negative dim", file(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 1, 2), "negative", true},
		{"metadata not strings", file(`{"__metadata__":{"epoch":3}}`), "strings", true},
		{"other dtype", file(`{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}}`, 1, 2), `dtype "F16"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := safetensors.Decode(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if got := errors.Is(err, safetensors.ErrFormat); got != tc.format {
				t.Errorf("errors.Is(err, ErrFormat) = %v, want %v", got, tc.format)
			}
		})
	}
	if _, err := safetensors.Decode(good); err != nil {
		t.Errorf("the undamaged file: %v", err)
	}
}

func TestReadFileNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.safetensors")
	if err := os.WriteFile(path, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string) error{
		func(p string) error { _, err := safetensors.ReadFile(p); return err },
		func(p string) error { _, err := safetensors.ReadMetadata(p); return err },
	} {
		err := read(path)
		if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, safetensors.ErrFormat) {
			t.Errorf("error %v, want a format error naming %s", err, path)
		}
	}
	_, err := safetensors.ReadFile(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path string
		want       string
	}{
		{"directory", dir, "is a directory"},
		{"endless device", "/dev/zero", "is a device"},
		{"empty device", "/dev/null", "is a device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.path); err != nil {
				t.Skipf("%s: %v", tc.path, err)
			}
			for name, read := range map[string]func(string) error{
				"ReadFile":     func(p string) error { _, err := safetensors.ReadFile(p); return err },
				"ReadMetadata": func(p string) error { _, err := safetensors.ReadMetadata(p); return err },
			} {
				err := read(tc.path)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
					t.Errorf("%s(%s) = %v, want an error saying it %s", name, tc.path, err, tc.want)
				}
				if !errors.Is(err, safetensors.ErrNotRegular) {
					t.Errorf("%s(%s): errors.Is(err, ErrNotRegular) is false for %v", name, tc.path, err)
				}
			}
		})
	}
}

// sparseFile writes head at the start of a file of size bytes, the rest a
// hole that takes no disk space; it skips the test where holes are not
// supported.
func sparseFile(t *testing.T, head []byte, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.safetensors")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("cannot make a sparse file of %d bytes here: %v", size, err)
	}
	return path
}

// A huge file is judged by its header and size before any data is read:
// none of these is read into memory (reading them whole would need 64 GiB).
func TestReadChecksTheHeaderBeforeReading(t *testing.T) {
	const huge = 64 << 30
	tensor := func(shape string, end int64) string {
		return fmt.Sprintf(`{"a":{"dtype":"F32","shape":[%s],"data_offsets":[0,%d]}}`, shape, end)
	}
	tests := []struct {
		name string
		head []byte
		size int64
		want string
	}{
		{"header length of 2^62", binary.LittleEndian.AppendUint64(nil, 1<<62), huge, "100 MB"},
		{"header longer than the file", binary.LittleEndian.AppendUint64(nil, 90_000_000), 1000, "truncated"},
		{"tensor past the end of the file", file(tensor("68719476736", 1<<38)), huge, "truncated"},
		{"data the header does not declare", file(tensor("2", 8), 1, 2), huge, "extra bytes"},
		{"shape that overflows", file(tensor("4611686018427387904,4", 16)), huge, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := sparseFile(t, tc.head, tc.size)
			for name, read := range map[string]func(string) error{
				"ReadFile":     func(p string) error { _, err := safetensors.ReadFile(p); return err },
				"ReadMetadata": func(p string) error { _, err := safetensors.ReadMetadata(p); return err },
			} {
				err := read(path)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, safetensors.ErrFormat) {
					t.Errorf("%s: %v, want a format error mentioning %q", name, err, tc.want)
				}
			}
		})
	}
}
