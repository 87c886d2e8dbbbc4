package cifar10

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// decodeBatch is how the fuzz targets and tests drive the record parser:
// the same size check and decoder that Load uses.
func decodeBatch(data []byte) (images, labels []uint8, err error) {
	n, err := recordCount("test.bin", int64(len(data)))
	if err != nil {
		return nil, nil, err
	}
	images, labels = make([]uint8, n*ImageSize), make([]uint8, n)
	if err := decodeRecords(bytes.NewReader(data), images, labels, "test.bin"); err != nil {
		return nil, nil, err
	}
	return images, labels, nil
}

// encodeBatch is the inverse of decodeBatch: HWC images back to CHW records.
func encodeBatch(images, labels []uint8) []byte {
	out := make([]byte, 0, len(labels)*RecordSize)
	for n, label := range labels {
		out = append(out, label)
		for ch := range Channels {
			for p := range Height * Width {
				out = append(out, images[(n*Height*Width+p)*Channels+ch])
			}
		}
	}
	return out
}

func TestDecodePixelOrder(t *testing.T) {
	// One record whose planes are filled with distinct markers at known
	// places: the decoder must move plane ch, row r, column c to
	// image[(r*32+c)*3+ch].
	record := make([]byte, RecordSize)
	record[0] = 6
	cases := []struct {
		row, col, ch int
		value        uint8
	}{
		{0, 0, 0, 11},
		{0, 0, 1, 12},
		{0, 0, 2, 13},
		{0, 31, 0, 21},
		{31, 0, 1, 22},
		{31, 31, 2, 23},
		{5, 17, 0, 31},
		{5, 17, 1, 32},
		{17, 5, 2, 33},
	}
	for _, c := range cases {
		record[1+c.ch*Height*Width+c.row*Width+c.col] = c.value
	}
	images, labels, err := decodeBatch(record)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(labels, []uint8{6}) {
		t.Errorf("labels %v, want [6]", labels)
	}
	marked := 0
	for _, c := range cases {
		if got := images[(c.row*Width+c.col)*Channels+c.ch]; got != c.value {
			t.Errorf("row %d col %d channel %d: got %d, want %d", c.row, c.col, c.ch, got, c.value)
		}
	}
	for _, v := range images {
		if v != 0 {
			marked++
		}
	}
	if marked != len(cases) {
		t.Errorf("%d nonzero pixels, want %d", marked, len(cases))
	}
}

func TestDecodeManyRecords(t *testing.T) {
	// More records than one read chunk, so chunk boundaries are crossed.
	const records = 600
	data := cifar10test.Batch(2, records)
	images, labels, err := decodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	for r := range records {
		if labels[r] != cifar10test.LabelValue(2, r) {
			t.Fatalf("record %d: label %d, want %d", r, labels[r], cifar10test.LabelValue(2, r))
		}
		for _, at := range [][3]int{{0, 0, 0}, {31, 31, 2}, {7, 19, 1}} {
			row, col, ch := at[0], at[1], at[2]
			if got, want := images[((r*Height+row)*Width+col)*Channels+ch], cifar10test.PixelValue(2, r, ch, row, col); got != want {
				t.Fatalf("record %d row %d col %d ch %d: %d, want %d", r, row, col, ch, got, want)
			}
		}
	}
	if !bytes.Equal(encodeBatch(images, labels), data) {
		t.Error("decoding then encoding does not give the file back")
	}
}

func TestRecordCount(t *testing.T) {
	for _, tc := range []struct {
		size    int64
		want    int
		wantErr bool
	}{
		{RecordSize, 1, false},
		{10000 * RecordSize, 10000, false},
		{0, 0, true},
		{-RecordSize, 0, true},
		{RecordSize - 1, 0, true},
		{RecordSize + 1, 0, true},
		{10000*RecordSize - 7, 0, true},
		{10001 * RecordSize, 0, true},               // more records than a batch file holds
		{20000 * RecordSize, 0, true},               // what a crafted archive declared
		{RecordSize << 50, 0, true},                 // too large to allocate at all
		{1<<63 - 1 - (1<<63-1)%RecordSize, 0, true}, // the largest multiple an int64 holds
	} {
		got, err := recordCount("data_batch_1.bin", tc.size)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("recordCount(%d) = %d, %v; want %d, error %v", tc.size, got, err, tc.want, tc.wantErr)
		}
		if err != nil && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "data_batch_1.bin")) {
			t.Errorf("recordCount(%d) error %q should match ErrCorrupt and name the file", tc.size, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	badLabel := cifar10test.Batch(0, 3)
	badLabel[2*RecordSize] = 255
	_, _, err := decodeBatch(badLabel)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "test.bin record 2 has label 255") {
		t.Errorf("label 255: error %v, want ErrCorrupt naming record 2", err)
	}

	// A reader that ends early (a truncated tar entry) is corrupt data.
	images, labels := make([]uint8, 2*ImageSize), make([]uint8, 2)
	err = decodeRecords(bytes.NewReader(cifar10test.Batch(0, 1)), images, labels, "short.bin")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "short.bin ended after 3073 bytes, want 6146") {
		t.Errorf("short reader: error %v, want ErrCorrupt with byte counts", err)
	}

	// Other read errors pass through.
	failure := errors.New("disk on fire")
	err = decodeRecords(io.MultiReader(bytes.NewReader(cifar10test.Batch(0, 1)), errReader{failure}), images, labels, "hot.bin")
	if !errors.Is(err, failure) || errors.Is(err, ErrCorrupt) {
		t.Errorf("failing reader: error %v, want it wrapped as is", err)
	}

	if err := decodeRecords(bytes.NewReader(nil), images[:5], labels, "x"); err == nil {
		t.Error("mismatched destination slices accepted")
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestParseClassNames(t *testing.T) {
	want := ClassNames()
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"as shipped", strings.Join(want, "\n") + "\n\n", true},
		{"no trailing newline", strings.Join(want, "\n"), true},
		{"CRLF and spaces", " " + strings.Join(want, " \r\n") + "\r\n\r\n  \n", true},
		{"nine names", strings.Join(want[:9], "\n"), false},
		{"eleven names", strings.Join(append(slices.Clone(want), "unicorn"), "\n"), false},
		{"blank line inside", strings.Join(want[:5], "\n") + "\n\n" + strings.Join(want[5:], "\n"), false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseClassNames(metaFileName, []byte(tc.text))
			if !tc.ok {
				if !errors.Is(err, ErrNotCIFAR10) || !strings.Contains(err.Error(), metaFileName) {
					t.Errorf("error %v, want ErrNotCIFAR10 naming %s", err, metaFileName)
				}
				return
			}
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("got %q, %v; want %q", got, err, want)
			}
		})
	}
}

// FuzzParseBatch checks the batch parser on arbitrary bytes. Its seeds are
// committed under testdata/fuzz/FuzzParseBatch (see batchFuzzSeeds).
func FuzzParseBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		images, labels, err := decodeBatch(data)
		wellFormed := len(data) > 0 && len(data)%RecordSize == 0 && len(data) <= BatchRecords*RecordSize
		for i := 0; wellFormed && i < len(data); i += RecordSize {
			wellFormed = data[i] < NumClasses
		}
		if (err == nil) != wellFormed {
			t.Fatalf("len %d: error %v, but well-formed = %v", len(data), err, wellFormed)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not match ErrCorrupt", err)
			}
			return
		}
		if len(labels) != len(data)/RecordSize || len(images) != len(labels)*ImageSize {
			t.Fatalf("%d bytes gave %d labels and %d image bytes", len(data), len(labels), len(images))
		}
		if !bytes.Equal(encodeBatch(images, labels), data) {
			t.Fatal("decode then encode does not round-trip")
		}
	})
}

func FuzzParseClassNames(f *testing.F) {
	f.Add(string(cifar10test.MetaText()))
	f.Add("a\nb\n")
	f.Add("\n\n\n")
	f.Fuzz(func(t *testing.T, text string) {
		names, err := parseClassNames(metaFileName, []byte(text))
		if err != nil {
			if !errors.Is(err, ErrNotCIFAR10) {
				t.Fatalf("error %v does not match ErrNotCIFAR10", err)
			}
			return
		}
		if len(names) != NumClasses {
			t.Fatalf("%d names accepted", len(names))
		}
		for _, name := range names {
			if name == "" || strings.TrimSpace(name) != name || strings.ContainsAny(name, "\r\n") {
				t.Fatalf("name %q is not a trimmed non-empty line", name)
			}
		}
	})
}
