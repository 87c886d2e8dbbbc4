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

// Protocol buffer wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// appendKey appends a field's key: its number and wire type.
func appendKey(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendKey(b, field, wireVarint), v)
}

func appendDouble(b []byte, field int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendKey(b, field, wireFixed64), math.Float64bits(v))
}

func appendFloat(b []byte, field int, v float32) []byte {
	return binary.LittleEndian.AppendUint32(appendKey(b, field, wireFixed32), math.Float32bits(v))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendKey(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func appendPackedDoubles(b []byte, field int, vs []float64) []byte {
	b = binary.AppendUvarint(appendKey(b, field, wireBytes), uint64(8*len(vs)))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// marshal encodes the event as a tensorflow.Event. Fields at their zero
// value are left out, as proto3 does, except the summary value's oneof
// (simple_value or histo), which is always written so that a scalar of 0
// is still a scalar.
func (e *TensorBoardEvent) marshal() []byte {
	var b []byte
	if e.WallTime != 0 {
		b = appendDouble(b, eventWallTime, e.WallTime)
	}
	if e.Step != 0 {
		b = appendVarintField(b, eventStep, uint64(e.Step))
	}
	if e.FileVersion != "" {
		b = appendBytes(b, eventFileVersion, []byte(e.FileVersion))
	}
	if len(e.Values) > 0 {
		var summary []byte
		for _, v := range e.Values {
			summary = appendBytes(summary, summaryValue, v.marshal())
		}
		b = appendBytes(b, eventSummary, summary)
	}
	return b
}

// marshal encodes the value as a tensorflow.Summary.Value.
func (v *TensorBoardValue) marshal() []byte {
	var b []byte
	if v.Tag != "" {
		b = appendBytes(b, valueTag, []byte(v.Tag))
	}
	if v.Histogram == nil {
		return appendFloat(b, valueSimpleValue, v.SimpleValue)
	}
	h := v.Histogram
	var hb []byte
	hb = appendDouble(hb, histoMin, h.Min)
	hb = appendDouble(hb, histoMax, h.Max)
	hb = appendDouble(hb, histoNum, h.Num)
	hb = appendDouble(hb, histoSum, h.Sum)
	hb = appendDouble(hb, histoSumSquares, h.SumSquares)
	hb = appendPackedDoubles(hb, histoBucketLimit, h.BucketLimit)
	hb = appendPackedDoubles(hb, histoBucket, h.Bucket)
	return appendBytes(b, valueHisto, hb)
}

// protoField is one field read from a protocol buffer: its number, wire
// type and value (num for varints and fixed-size values, data for
// length-delimited ones).
type protoField struct {
	field, wire int
	num         uint64
	data        []byte
}

// parseProto splits a protocol buffer message into its fields, in the
// order they come. Groups (wire types 3 and 4) are refused: no message
// read here has them.
func parseProto(b []byte) ([]protoField, error) {
	var fields []protoField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad field key")
		}
		b = b[n:]
		f := protoField{field: int(key >> 3), wire: int(key & 7)}
		if f.field == 0 {
			return nil, errors.New("field number 0")
		}
		switch f.wire {
		case wireVarint:
			if f.num, n = binary.Uvarint(b); n <= 0 {
				return nil, fmt.Errorf("field %d: bad varint", f.field)
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return nil, fmt.Errorf("field %d: truncated 64-bit value", f.field)
			}
			f.num, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return nil, fmt.Errorf("field %d: truncated 32-bit value", f.field)
			}
			f.num, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireBytes:
			size, n := binary.Uvarint(b)
			if n <= 0 || size > uint64(len(b)-n) {
				return nil, fmt.Errorf("field %d: bad or truncated length", f.field)
			}
			f.data, b = b[n:n+int(size)], b[n+int(size):]
		default:
			return nil, fmt.Errorf("field %d: unsupported wire type %d", f.field, f.wire)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// want checks that a field has the wire type its message declares.
func (f protoField) want(wire int, what string) error {
	if f.wire != wire {
		return fmt.Errorf("%s (field %d) has wire type %d, want %d", what, f.field, f.wire, wire)
	}
	return nil
}

// unmarshalEvent decodes a tensorflow.Event, keeping the fields
// TensorBoardEvent has and skipping the others.
func unmarshalEvent(b []byte) (TensorBoardEvent, error) {
	var e TensorBoardEvent
	fields, err := parseProto(b)
	if err != nil {
		return e, fmt.Errorf("Event: %w", err)
	}
	for _, f := range fields {
		switch f.field {
		case eventWallTime:
			err = f.want(wireFixed64, "Event.wall_time")
			e.WallTime = math.Float64frombits(f.num)
		case eventStep:
			err = f.want(wireVarint, "Event.step")
			e.Step = int64(f.num)
		case eventFileVersion:
			err = f.want(wireBytes, "Event.file_version")
			e.FileVersion = string(f.data)
		case eventSummary:
			if err = f.want(wireBytes, "Event.summary"); err == nil {
				err = e.unmarshalSummary(f.data)
			}
		}
		if err != nil {
			return e, err
		}
	}
	return e, nil
}

func (e *TensorBoardEvent) unmarshalSummary(b []byte) error {
	fields, err := parseProto(b)
	if err != nil {
		return fmt.Errorf("Summary: %w", err)
	}
	for _, f := range fields {
		if f.field != summaryValue {
			continue
		}
		if err := f.want(wireBytes, "Summary.value"); err != nil {
			return err
		}
		v, err := unmarshalValue(f.data)
		if err != nil {
			return err
		}
		e.Values = append(e.Values, v)
	}
	return nil
}

func unmarshalValue(b []byte) (TensorBoardValue, error) {
	var v TensorBoardValue
	fields, err := parseProto(b)
	if err != nil {
		return v, fmt.Errorf("Summary.Value: %w", err)
	}
	for _, f := range fields {
		switch f.field {
		case valueTag:
			err = f.want(wireBytes, "Summary.Value.tag")
			v.Tag = string(f.data)
		case valueSimpleValue:
			err = f.want(wireFixed32, "Summary.Value.simple_value")
			v.SimpleValue = math.Float32frombits(uint32(f.num))
		case valueHisto:
			if err = f.want(wireBytes, "Summary.Value.histo"); err == nil {
				v.Histogram, err = unmarshalHistogram(f.data)
			}
		}
		if err != nil {
			return v, err
		}
	}
	return v, nil
}

func unmarshalHistogram(b []byte) (*TensorBoardHistogram, error) {
	fields, err := parseProto(b)
	if err != nil {
		return nil, fmt.Errorf("HistogramProto: %w", err)
	}
	h := &TensorBoardHistogram{}
	doubles := map[int]*float64{histoMin: &h.Min, histoMax: &h.Max, histoNum: &h.Num, histoSum: &h.Sum, histoSumSquares: &h.SumSquares}
	for _, f := range fields {
		switch f.field {
		case histoMin, histoMax, histoNum, histoSum, histoSumSquares:
			if err := f.want(wireFixed64, "HistogramProto double"); err != nil {
				return nil, err
			}
			*doubles[f.field] = math.Float64frombits(f.num)
		case histoBucketLimit, histoBucket:
			var vs []float64
			switch f.wire {
			case wireFixed64: // one unpacked element
				vs = []float64{math.Float64frombits(f.num)}
			case wireBytes:
				if len(f.data)%8 != 0 {
					return nil, fmt.Errorf("HistogramProto field %d: packed doubles of %d bytes", f.field, len(f.data))
				}
				for d := f.data; len(d) > 0; d = d[8:] {
					vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(d)))
				}
			default:
				return nil, fmt.Errorf("HistogramProto field %d has wire type %d, want 1 or 2", f.field, f.wire)
			}
			if f.field == histoBucketLimit {
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
	data := make([]byte, size+4)
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
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
