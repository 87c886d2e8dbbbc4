package callbacks

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gokeras/gokeras/internal/formats/protowire"
)

// This file writes and reads TensorFlow event files by hand: TFRecord
// framing around tensorflow.Event protocol buffers (tensorflow/core/util/
// event.proto and tensorflow/core/framework/summary.proto), with only the
// fields TensorBoard's scalars and histograms need.

// TensorBoardEvent is one record of a TensorFlow event file: a
// tensorflow.Event with the fields TensorBoard reads for scalars and
// histograms. The first record of a file has FileVersion "brain.Event:2"
// and no values.
type TensorBoardEvent struct {
	// WallTime is when the event was written, in seconds since the Unix
	// epoch (Event.wall_time).
	WallTime float64
	// Step is the epoch or the batch the values belong to (Event.step).
	Step int64
	// FileVersion is set in a file's first record only (Event.file_version).
	FileVersion string
	// Values are the Summary's values (Event.summary.value).
	Values []TensorBoardValue
}

// TensorBoardValue is one tagged value of a Summary (Summary.Value): a
// scalar, or a histogram when Histogram is not nil.
type TensorBoardValue struct {
	Tag string
	// SimpleValue is a scalar's value (Summary.Value.simple_value).
	SimpleValue float32
	// Histogram is a histogram's buckets (Summary.Value.histo), nil for a
	// scalar.
	Histogram *TensorBoardHistogram
}

// TensorBoardHistogram is a tensorflow.HistogramProto: Bucket[i] values
// fell in (BucketLimit[i-1], BucketLimit[i]], the first bucket starting at
// Min.
type TensorBoardHistogram struct {
	Min, Max, Num, Sum, SumSquares float64
	BucketLimit, Bucket            []float64
}

// fileVersion is the first record's file_version, as TensorFlow 2 writes it.
const fileVersion = "brain.Event:2"

// Field numbers of the messages written (event.proto, summary.proto).
const (
	eventWallTime    = 1 // double
	eventStep        = 2 // int64
	eventFileVersion = 3 // string
	eventSummary     = 5 // Summary

	summaryValue = 1 // repeated Summary.Value

	valueTag         = 1 // string
	valueSimpleValue = 2 // float
	valueHisto       = 5 // HistogramProto

	histoMin         = 1 // double
	histoMax         = 2 // double
	histoNum         = 3 // double
	histoSum         = 4 // double
	histoSumSquares  = 5 // double
	histoBucketLimit = 6 // packed double
	histoBucket      = 7 // packed double
)

// marshal encodes the event as a tensorflow.Event. Fields at their zero
// value are left out, as proto3 does, except the summary value's oneof
// (simple_value or histo), which is always written so that a scalar of 0
// is still a scalar.
func (e *TensorBoardEvent) marshal() []byte {
	var b []byte
	if e.WallTime != 0 {
		b = protowire.AppendDouble(b, eventWallTime, e.WallTime)
	}
	if e.Step != 0 {
		b = protowire.AppendVarint(b, eventStep, uint64(e.Step))
	}
	if e.FileVersion != "" {
		b = protowire.AppendString(b, eventFileVersion, e.FileVersion)
	}
	if len(e.Values) > 0 {
		var summary []byte
		for _, v := range e.Values {
			summary = protowire.AppendBytes(summary, summaryValue, v.marshal())
		}
		b = protowire.AppendBytes(b, eventSummary, summary)
	}
	return b
}

// marshal encodes the value as a tensorflow.Summary.Value.
func (v *TensorBoardValue) marshal() []byte {
	var b []byte
	if v.Tag != "" {
		b = protowire.AppendString(b, valueTag, v.Tag)
	}
	if v.Histogram == nil {
		return protowire.AppendFloat(b, valueSimpleValue, v.SimpleValue)
	}
	h := v.Histogram
	var hb []byte
	hb = protowire.AppendDouble(hb, histoMin, h.Min)
	hb = protowire.AppendDouble(hb, histoMax, h.Max)
	hb = protowire.AppendDouble(hb, histoNum, h.Num)
	hb = protowire.AppendDouble(hb, histoSum, h.Sum)
	hb = protowire.AppendDouble(hb, histoSumSquares, h.SumSquares)
	hb = protowire.AppendPackedDoubles(hb, histoBucketLimit, h.BucketLimit)
	hb = protowire.AppendPackedDoubles(hb, histoBucket, h.Bucket)
	return protowire.AppendBytes(b, valueHisto, hb)
}

// unmarshalEvent decodes a tensorflow.Event, keeping the fields
// TensorBoardEvent has and skipping the others.
func unmarshalEvent(b []byte) (TensorBoardEvent, error) {
	var e TensorBoardEvent
	fields, err := protowire.Parse(b)
	if err != nil {
		return e, fmt.Errorf("Event: %w", err)
	}
	for _, f := range fields {
		switch f.Number {
		case eventWallTime:
			err = f.Want(protowire.Fixed64, "Event.wall_time")
			e.WallTime = math.Float64frombits(f.Num)
		case eventStep:
			err = f.Want(protowire.Varint, "Event.step")
			e.Step = int64(f.Num)
		case eventFileVersion:
			err = f.Want(protowire.Bytes, "Event.file_version")
			e.FileVersion = string(f.Data)
		case eventSummary:
			if err = f.Want(protowire.Bytes, "Event.summary"); err == nil {
				err = e.unmarshalSummary(f.Data)
			}
		}
		if err != nil {
			return e, err
		}
	}
	return e, nil
}

func (e *TensorBoardEvent) unmarshalSummary(b []byte) error {
	fields, err := protowire.Parse(b)
	if err != nil {
		return fmt.Errorf("Summary: %w", err)
	}
	for _, f := range fields {
		if f.Number != summaryValue {
			continue
		}
		if err := f.Want(protowire.Bytes, "Summary.value"); err != nil {
			return err
		}
		v, err := unmarshalValue(f.Data)
		if err != nil {
			return err
		}
		e.Values = append(e.Values, v)
	}
	return nil
}

func unmarshalValue(b []byte) (TensorBoardValue, error) {
	var v TensorBoardValue
	fields, err := protowire.Parse(b)
	if err != nil {
		return v, fmt.Errorf("Summary.Value: %w", err)
	}
	for _, f := range fields {
		switch f.Number {
		case valueTag:
			err = f.Want(protowire.Bytes, "Summary.Value.tag")
			v.Tag = string(f.Data)
		case valueSimpleValue:
			err = f.Want(protowire.Fixed32, "Summary.Value.simple_value")
			v.SimpleValue = math.Float32frombits(uint32(f.Num))
		case valueHisto:
			if err = f.Want(protowire.Bytes, "Summary.Value.histo"); err == nil {
				v.Histogram, err = unmarshalHistogram(f.Data)
			}
		}
		if err != nil {
			return v, err
		}
	}
	return v, nil
}

func unmarshalHistogram(b []byte) (*TensorBoardHistogram, error) {
	fields, err := protowire.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("HistogramProto: %w", err)
	}
	h := &TensorBoardHistogram{}
	doubles := map[int]*float64{histoMin: &h.Min, histoMax: &h.Max, histoNum: &h.Num, histoSum: &h.Sum, histoSumSquares: &h.SumSquares}
	for _, f := range fields {
		switch f.Number {
		case histoMin, histoMax, histoNum, histoSum, histoSumSquares:
			if err := f.Want(protowire.Fixed64, "HistogramProto double"); err != nil {
				return nil, err
			}
			*doubles[f.Number] = math.Float64frombits(f.Num)
		case histoBucketLimit, histoBucket:
			what := "HistogramProto.bucket"
			if f.Number == histoBucketLimit {
				what = "HistogramProto.bucket_limit"
			}
			vs, err := f.Doubles(what)
			if err != nil {
				return nil, err
			}
			if f.Number == histoBucketLimit {
				h.BucketLimit = append(h.BucketLimit, vs...)
			} else {
				h.Bucket = append(h.Bucket, vs...)
			}
		}
	}
	return h, nil
}

// castagnoli is the CRC-32C table TFRecord checksums use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's checksum: CRC-32C of b, rotated right by 15
// bits and offset, so that a CRC of data holding CRCs stays well mixed.
func maskedCRC(b []byte) uint32 {
	crc := crc32.Checksum(b, castagnoli)
	return (crc>>15 | crc<<17) + 0xa282ead8
}

// appendRecord frames data as one TFRecord: its length as a little-endian
// uint64, the masked CRC-32C of those 8 bytes, the data, and the masked
// CRC-32C of the data.
func appendRecord(b, data []byte) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = binary.LittleEndian.AppendUint32(b, maskedCRC(b[start:]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, maskedCRC(data))
}

// maxRecord bounds the length a record may claim when read back, so that
// a damaged length does not ask for gigabytes.
const maxRecord = 1 << 30

// readRecord reads one TFRecord and checks both its checksums. It returns
// io.EOF at the end of the file and io.ErrUnexpectedEOF for a record cut
// short.
func readRecord(r io.Reader) ([]byte, error) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	if got, want := binary.LittleEndian.Uint32(head[8:]), maskedCRC(head[:8]); got != want {
		return nil, fmt.Errorf("the length's checksum is %#08x, want %#08x: the file is damaged", got, want)
	}
	size := binary.LittleEndian.Uint64(head[:8])
	if size > maxRecord {
		return nil, fmt.Errorf("record of %d bytes, more than the %d allowed", size, maxRecord)
	}
	// Read what is there rather than allocate what the length claims: a
	// damaged or hostile length in a short file asks for nothing.
	data, err := io.ReadAll(io.LimitReader(r, int64(size)+4))
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) < size+4 {
		return nil, io.ErrUnexpectedEOF
	}
	data, crc := data[:size], binary.LittleEndian.Uint32(data[size:])
	if want := maskedCRC(data); crc != want {
		return nil, fmt.Errorf("the data's checksum is %#08x, want %#08x: the file is damaged", crc, want)
	}
	return data, nil
}

// ReadTensorBoardEvents reads a TensorFlow event file, such as those
// TensorBoard writes, checking every record's two CRC-32C checksums. It
// returns the events in the order written; for an event file cut short
// (one being written) it returns the complete events and an error wrapping
// io.ErrUnexpectedEOF.
func ReadTensorBoardEvents(path string) ([]TensorBoardEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []TensorBoardEvent
	r := bufio.NewReader(f)
	for i := 0; ; i++ {
		data, err := readRecord(r)
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, fmt.Errorf("%s: record %d: %w", path, i, err)
		}
		e, err := unmarshalEvent(data)
		if err != nil {
			return events, fmt.Errorf("%s: record %d: %w", path, i, err)
		}
		events = append(events, e)
	}
}

// eventWriter appends events to one event file.
type eventWriter struct {
	path string
	f    *os.File
	w    *bufio.Writer
	buf  []byte
}

// fileSerial tells apart the event files one process opens in the same
// second, as TensorFlow's writer adds a counter to the name.
var fileSerial atomic.Int64

// eventFileName is the name TensorFlow 2 gives an event file:
// events.out.tfevents.<unix seconds>.<host>.<pid>.<serial>.v2.
func eventFileName(now time.Time) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.NewReplacer("/", "_", `\`, "_").Replace(host)
	return fmt.Sprintf("events.out.tfevents.%d.%s.%d.%d.v2", now.Unix(), host, os.Getpid(), fileSerial.Add(1))
}

// newEventWriter creates dir and a new event file in it, and writes the
// file's first record, its file_version.
func newEventWriter(dir string) (*eventWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	now := time.Now()
	path := filepath.Join(dir, eventFileName(now))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w := &eventWriter{path: path, f: f, w: bufio.NewWriter(f)}
	if err := w.write(TensorBoardEvent{WallTime: wallTime(now), FileVersion: fileVersion}); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// wallTime is t in seconds since the Unix epoch, as Event.wall_time holds it.
func wallTime(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// write appends one event; it reaches the file on the next flush.
func (w *eventWriter) write(e TensorBoardEvent) error {
	w.buf = appendRecord(w.buf[:0], e.marshal())
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("writing %s: %w", w.path, err)
	}
	return nil
}

// flush writes the buffered events to the file.
func (w *eventWriter) flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", w.path, err)
	}
	return nil
}

// close flushes and closes the file.
func (w *eventWriter) close() error {
	err := w.flush()
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing %s: %w", w.path, cerr)
	}
	return err
}
