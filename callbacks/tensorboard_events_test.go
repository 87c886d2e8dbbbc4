package callbacks

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestMaskedCRC(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want uint32
	}{
		// CRC-32C's check value is 0xe3069283; masked: rotated right 15, plus 0xa282ead8.
		{"check string", []byte("123456789"), 0xc78ab0e5},
		// Every TensorFlow 2 event file starts with the length 24 framed
		// this way: 18 00 00 00 00 00 00 00 a3 7f 4b 22.
		{"length 24", []byte{0x18, 0, 0, 0, 0, 0, 0, 0}, 0x224b7fa3},
	}
	for _, tc := range tests {
		if got := maskedCRC(tc.data); got != tc.want {
			t.Errorf("%s: maskedCRC = %#08x, want %#08x", tc.name, got, tc.want)
		}
	}
}

func TestMarshalWritesProtobufWireFormat(t *testing.T) {
	tests := []struct {
		name  string
		event TensorBoardEvent
		want  string // hex
	}{
		{"file version", TensorBoardEvent{WallTime: 1, FileVersion: fileVersion},
			"09" + "000000000000f03f" + "1a0d" + hex.EncodeToString([]byte("brain.Event:2"))},
		{"scalar", TensorBoardEvent{Step: 300, Values: []TensorBoardValue{{Tag: "a", SimpleValue: 1}}},
			"10ac02" + "2a0a" + "0a08" + "0a0161" + "150000803f"},
		{"scalar zero is still written", TensorBoardEvent{Values: []TensorBoardValue{{Tag: "a"}}},
			"2a0a" + "0a08" + "0a0161" + "1500000000"},
		{"histogram", TensorBoardEvent{Values: []TensorBoardValue{{Tag: "h", Histogram: &TensorBoardHistogram{
			Min: 1, Max: 2, Num: 3, Sum: 4, SumSquares: 5, BucketLimit: []float64{2}, Bucket: []float64{3}}}}},
			"2a48" + "0a46" + "0a0168" + "2a41" +
				"09000000000000f03f" + "110000000000000040" + "190000000000000840" + "210000000000001040" + "290000000000001440" +
				"3208" + "0000000000000040" + "3a08" + "0000000000000840"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hex.EncodeToString(tc.event.marshal())
			if got != tc.want {
				t.Fatalf("marshal:\n got %s\nwant %s", got, tc.want)
			}
			back, err := unmarshalEvent(tc.event.marshal())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.event) {
				t.Errorf("read back %+v, want %+v", back, tc.event)
			}
		})
	}
}

func TestUnmarshalSkipsUnknownFieldsAndRefusesBadOnes(t *testing.T) {
	tests := []struct {
		name    string
		hex     string
		want    TensorBoardEvent
		wantErr string
	}{
		// Event.source_metadata (field 10) and a varint field 99 are skipped.
		{"unknown fields", "10055202080a" + "98068001", TensorBoardEvent{Step: 5}, ""},
		{"unpacked bucket", "2a0f" + "0a0d" + "2a0b" + "31000000000000f03f" + "3a00",
			TensorBoardEvent{Values: []TensorBoardValue{{Histogram: &TensorBoardHistogram{BucketLimit: []float64{1}}}}}, ""},
		{"truncated string", "1a0562", TensorBoardEvent{}, "bad or truncated length"},
		{"wrong wire type", "0d00000000", TensorBoardEvent{}, "Event.wall_time (field 1) has wire type 5, want 1"},
		{"group", "0b", TensorBoardEvent{}, "unsupported wire type 3"},
		{"field 0", "0001", TensorBoardEvent{}, "field number 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			got, err := unmarshalEvent(b)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRecordsDetectDamage(t *testing.T) {
	data := []byte("some event bytes")
	rec := appendRecord(nil, data)
	if len(rec) != 8+4+len(data)+4 {
		t.Fatalf("record of %d bytes, want %d", len(rec), 8+4+len(data)+4)
	}
	if got, err := readRecord(bytes.NewReader(rec)); err != nil || string(got) != string(data) {
		t.Fatalf("read back %q, %v", got, err)
	}
	tests := []struct {
		name    string
		damage  func([]byte) []byte
		wantErr string
	}{
		{"length", func(b []byte) []byte { b[0]++; return b }, "the length's checksum"},
		{"length checksum", func(b []byte) []byte { b[9]++; return b }, "the length's checksum"},
		{"data", func(b []byte) []byte { b[13]++; return b }, "the data's checksum"},
		{"data checksum", func(b []byte) []byte { b[len(b)-1]++; return b }, "the data's checksum"},
		{"cut in the data", func(b []byte) []byte { return b[:20] }, io.ErrUnexpectedEOF.Error()},
		{"cut in the header", func(b []byte) []byte { return b[:5] }, io.ErrUnexpectedEOF.Error()},
	}
	for _, tc := range tests {
		damaged := tc.damage(bytes.Clone(rec))
		_, err := readRecord(bytes.NewReader(damaged))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestEventWriterWritesReadableFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "train")
	w, err := newEventWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := newEventWriter(dir) // a second writer in the same second gets its own file
	if err != nil {
		t.Fatal(err)
	}
	if w.path == w2.path {
		t.Fatalf("two writers share %s", w.path)
	}
	if !regexp.MustCompile(`^events\.out\.tfevents\.\d{10}\.[^/]+\.\d+\.\d+\.v2$`).MatchString(filepath.Base(w.path)) {
		t.Errorf("file name %s", filepath.Base(w.path))
	}
	want := []TensorBoardEvent{
		{WallTime: 5, Step: 1, Values: []TensorBoardValue{{Tag: "epoch_loss", SimpleValue: 0.5}}},
		{WallTime: 6, Step: 2, Values: []TensorBoardValue{{Tag: "epoch_loss", SimpleValue: 0.25}}},
	}
	for _, e := range want {
		if err := w.write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(w.close(), w2.close()); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(w.path)
	if err != nil {
		t.Fatal(err)
	}
	if head := hex.EncodeToString(raw[:12]); head != "1800000000000000a37f4b22" {
		t.Errorf("file starts %s, want TensorFlow's 1800000000000000a37f4b22", head)
	}
	got, err := ReadTensorBoardEvents(w.path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].FileVersion != fileVersion || got[0].WallTime == 0 || !reflect.DeepEqual(got[1:], want) {
		t.Errorf("read back %+v", got)
	}
	// A file cut short returns what is complete, and says so.
	if err := os.WriteFile(w.path, raw[:len(raw)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadTensorBoardEvents(w.path)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 2 {
		t.Errorf("cut file: %d events, error %v", len(got), err)
	}
}

func TestHistogramCountsEveryValueInItsBucket(t *testing.T) {
	tests := []struct {
		name       string
		values     []float32
		wantBucket int // buckets expected
	}{
		{"spread", []float32{-1, -0.5, 0, 0.1, 0.2, 0.3, 1, 2, 3}, histogramBuckets},
		{"edges", []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30}, histogramBuckets},
		{"awkward width", []float32{0.1, 0.7, 0.3, 0.30000001, 0.69999999, 0.1000001}, histogramBuckets},
		{"all equal", []float32{2, 2, 2}, 1},
		{"one value", []float32{-3}, 1},
		{"empty", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, ok := histogram(tc.values, histogramBuckets)
			if !ok {
				t.Fatal("refused finite values")
			}
			if len(h.Bucket) != tc.wantBucket || len(h.BucketLimit) != tc.wantBucket {
				t.Fatalf("%d buckets, %d limits, want %d", len(h.Bucket), len(h.BucketLimit), tc.wantBucket)
			}
			var total, sum float64
			for _, c := range h.Bucket {
				total += c
			}
			if total != float64(len(tc.values)) || h.Num != total {
				t.Errorf("buckets hold %v values, Num %v, want %d", total, h.Num, len(tc.values))
			}
			for _, v := range tc.values {
				sum += float64(v)
				x := float64(v)
				if x < h.Min || x > h.Max {
					t.Errorf("%v outside [%v, %v]", v, h.Min, h.Max)
				}
			}
			if sum != h.Sum {
				t.Errorf("Sum %v, want %v", h.Sum, sum)
			}
			if len(h.BucketLimit) > 0 && h.BucketLimit[len(h.BucketLimit)-1] != h.Max {
				t.Errorf("last limit %v, want the max %v", h.BucketLimit[len(h.BucketLimit)-1], h.Max)
			}
			// Recount each value by the limits alone.
			want := make([]float64, len(h.Bucket))
			for _, v := range tc.values {
				i := 0
				for i < len(h.BucketLimit)-1 && float64(v) > h.BucketLimit[i] {
					i++
				}
				want[i]++
			}
			if !slices.Equal(h.Bucket, want) {
				t.Errorf("buckets %v, want %v (limits %v)", h.Bucket, want, h.BucketLimit)
			}
		})
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		if _, ok := histogram([]float32{1, bad}, histogramBuckets); ok {
			t.Errorf("histogram of %v accepted", bad)
		}
	}
}
