package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
)

// DTypeF32 is the dtype name of 32-bit IEEE floats, the only one this
// package reads and writes.
const DTypeF32 = "F32"

// metadataKey is the header entry that holds the free-form metadata.
const metadataKey = "__metadata__"

// maxHeader is the largest header the reference implementation accepts
// (100 MB); a larger length means a damaged file or not a safetensors one.
const maxHeader = 100_000_000

// ErrFormat is wrapped by every error about a file that is not a valid
// safetensors file: truncated, corrupt, or of another format.
var ErrFormat = errors.New("not a valid safetensors file")

// Tensor is one named float32 tensor. Data holds the values in row-major
// order, as many as the shape's product (one for a scalar, shape []).
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// File is the content of a safetensors file.
type File struct {
	// Metadata is the file's "__metadata__", nil when it has none.
	Metadata map[string]string
	// Tensors are the file's tensors in the order of their data.
	Tensors []Tensor
}

// Tensor returns the tensor with the given name.
func (f *File) Tensor(name string) (Tensor, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// Names lists the tensors' names in the order of their data.
func (f *File) Names() []string {
	names := make([]string, len(f.Tensors))
	for i, t := range f.Tensors {
		names[i] = t.Name
	}
	return names
}

// numel is the number of values a shape holds, or an error if a dimension
// is negative or the count overflows.
func numel(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d != 0 && n > math.MaxInt/4/d {
			return 0, fmt.Errorf("shape %v is too large", shape)
		}
		n *= d
	}
	return n, nil
}

type tensorInfo struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Write writes tensors and metadata (which may be nil) in the safetensors
// format. The tensors' data is laid out in the order of their names, so the
// same tensors always give the same bytes.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	sorted := slices.Clone(tensors)
	slices.SortFunc(sorted, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	var header bytes.Buffer
	header.WriteByte('{')
	if len(metadata) > 0 {
		meta, err := json.Marshal(metadata) // keys sorted
		if err != nil {
			return fmt.Errorf("safetensors: encoding metadata: %w", err)
		}
		fmt.Fprintf(&header, "%q:%s", metadataKey, meta)
	}
	var offset int64
	for i, t := range sorted {
		switch {
		case t.Name == "":
			return errors.New("safetensors: a tensor has an empty name")
		case t.Name == metadataKey:
			return fmt.Errorf("safetensors: %q is reserved for metadata and cannot name a tensor", metadataKey)
		case i > 0 && sorted[i-1].Name == t.Name:
			return fmt.Errorf("safetensors: two tensors are named %q", t.Name)
		}
		n, err := numel(t.Shape)
		if err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
		if n != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %q: shape %v holds %d values but the data has %d", t.Name, t.Shape, n, len(t.Data))
		}
		name, err := json.Marshal(t.Name)
		if err != nil {
			return fmt.Errorf("safetensors: tensor name %q: %w", t.Name, err)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		info, err := json.Marshal(tensorInfo{DType: DTypeF32, Shape: shape, DataOffsets: [2]int64{offset, offset + int64(4*n)}})
		if err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
		if header.Len() > 1 {
			header.WriteByte(',')
		}
		header.Write(name)
		header.WriteByte(':')
		header.Write(info)
		offset += int64(4 * n)
	}
	header.WriteByte('}')
	for header.Len()%8 != 0 { // align the data, as the reference writer does
		header.WriteByte(' ')
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(header.Len()))
	if _, err := w.Write(size[:]); err != nil {
		return err
	}
	if _, err := w.Write(header.Bytes()); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	for _, t := range sorted {
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes tensors and metadata to path, replacing any file there
// atomically.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return Write(w, tensors, metadata) })
}

// ErrNotRegular is wrapped by the error ReadFile and ReadMetadata return
// for a path that names a directory, a device, a pipe or a socket: nothing
// is read from it.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads the safetensors file at path. It checks the header — its
// length against a 100 MB limit and against the file's size, then every
// tensor's byte range against the file's size — before it reads any data,
// and then reads only the bytes the header declares; a path that is not a
// regular file (a directory, a device such as /dev/zero) is refused before
// anything is read.
//
// A file's size does not bound the memory reading it takes: a sparse file
// of a few kilobytes on disk can declare terabytes of tensors. A caller
// that knows what it expects uses ReadFileChecked.
func ReadFile(path string) (*File, error) { return ReadFileChecked(path, nil) }

// Declared is a tensor as a file's header declares it, before its data is
// read: its name, shape, and number of values.
type Declared struct {
	Name   string
	Shape  []int
	Values int
}

// ReadFileChecked is ReadFile that calls check, once the header has been
// checked against the file's size and before any data is read or the
// memory for it allocated, with the file's metadata and the tensors it
// declares in the order of their data. An error from check is returned,
// with the path, and nothing more is read: a caller refuses a file that
// declares more than it can take (tensors of shapes it does not expect)
// without reading it. A nil check checks nothing more.
func ReadFileChecked(path string, check func(metadata map[string]string, tensors []Declared) error) (*File, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file, err := ReadChecked(f, size, check)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file, nil
}

// ReadChecked is ReadFileChecked for a file read from r, of size bytes: an
// embedded file (embed.FS), a network stream. The header is checked
// against size, and check called, before any tensor's memory is
// allocated. With a negative size (a stream of unknown length) the header
// (at most 100 MB) is read and checked the same, check called on what it
// declares, then the tensors read, and nothing may follow them. Errors do
// not name the file: the caller does.
func ReadChecked(r io.Reader, size int64, check func(metadata map[string]string, tensors []Declared) error) (*File, error) {
	var l *layout
	var err error
	if size < 0 {
		l, err = readStreamLayout(r)
	} else {
		l, err = readLayout(r, size, true)
	}
	if err != nil {
		return nil, err
	}
	if check != nil {
		declared := make([]Declared, len(l.entries))
		for i, e := range l.entries {
			declared[i] = Declared{Name: e.name, Shape: slices.Clone(e.Shape), Values: l.counts[i]}
		}
		if err := check(l.meta, declared); err != nil {
			return nil, err
		}
	}
	f, err := l.readTensors(r)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		// A stream's end is known only now: nothing may follow the data.
		var one [1]byte
		if n, _ := io.ReadFull(r, one[:]); n > 0 {
			return nil, fmt.Errorf("%w: more bytes follow the tensors the header declares", ErrFormat)
		}
	}
	return f, nil
}

// readStreamLayout reads a header from a stream of unknown length: the
// length field (at most the 100 MB limit), the header, then checks that
// the tensors tile the data they declare. Their data is not read: the
// caller's check sees the declared sizes before any is allocated.
func readStreamLayout(r io.Reader) (*layout, error) {
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, fmt.Errorf("%w: reading the header length: %v (truncated?)", ErrFormat, err)
	}
	n := binary.LittleEndian.Uint64(prefix[:])
	if n > maxHeader {
		return nil, fmt.Errorf("%w: the header length field says %d bytes, more than the 100 MB limit: the file is corrupt or of another format", ErrFormat, n)
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, fmt.Errorf("%w: reading the %d-byte header: %v (truncated?)", ErrFormat, n, err)
	}
	meta, entries, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	var dataLen int64
	for _, e := range entries {
		dataLen = max(dataLen, e.DataOffsets[1])
	}
	l := &layout{meta: meta, entries: entries, counts: make([]int, len(entries))}
	if err := l.check(dataLen, true); err != nil {
		return nil, err
	}
	return l, nil
}

// ReadMetadata reads only the header of the file at path and returns its
// metadata, for a quick look at a large checkpoint. It checks the header
// and the tensors' byte ranges against the file's size, as ReadFile does,
// but reads none of the data.
func ReadMetadata(path string) (map[string]string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := readLayout(f, size, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l.meta, nil
}

// openRegular opens path for reading and returns its size, refusing
// anything but a regular file (symbolic links are followed). It looks
// before it opens, so that a named pipe cannot block the open.
func openRegular(path string) (*os.File, int64, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: %w", err)
	}
	if err := checkRegular(path, info); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: %w", err)
	}
	if info, err = f.Stat(); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("safetensors: %w", err)
	}
	if err := checkRegular(path, info); err != nil { // replaced since the look
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// checkRegular says what path is when it is not a regular file.
func checkRegular(path string, info os.FileInfo) error {
	mode := info.Mode()
	var what string
	switch {
	case mode.IsRegular():
		return nil
	case mode.IsDir():
		return fmt.Errorf("safetensors: %s is a directory (%w): give the path of a safetensors file, such as one SaveWeights or SaveCheckpoint wrote", path, ErrNotRegular)
	case mode&os.ModeDevice != 0:
		what = "a device"
	case mode&os.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&os.ModeSocket != 0:
		what = "a socket"
	default:
		what = "a special file"
	}
	return fmt.Errorf("safetensors: %s is %s (%w): weights are read only from a regular file; copy them into one first", path, what, ErrNotRegular)
}

// layout is what a file's header declares, checked against the file's
// size: the metadata, the tensors in the order of their data, and the
// length of the data.
type layout struct {
	meta    map[string]string
	entries []entry
	counts  []int // values in each entry (F32 entries only)
}

// readLayout reads the header from r, positioned at the start of a file
// of size bytes, and checks it and every tensor's byte range against the
// size. It allocates nothing larger than the header, which it reads only
// once its length is known to fit the file. With f32Only, a tensor of
// another dtype is an error, as ReadFile needs; ReadMetadata checks only
// the byte ranges of such tensors.
func readLayout(r io.Reader, size int64, f32Only bool) (*layout, error) {
	if size < 8 {
		return nil, fmt.Errorf("%w: the file is %d bytes, too short for the 8-byte header length (truncated?)", ErrFormat, size)
	}
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, fmt.Errorf("%w: reading the header length: %v (did the file change while it was read?)", ErrFormat, err)
	}
	n, err := headerLength(prefix[:], size)
	if err != nil {
		return nil, err
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, fmt.Errorf("%w: reading the %d-byte header: %v (did the file change while it was read?)", ErrFormat, n, err)
	}
	meta, entries, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	l := &layout{meta: meta, entries: entries, counts: make([]int, len(entries))}
	if err := l.check(size-8-n, f32Only); err != nil {
		return nil, err
	}
	return l, nil
}

// check checks that the tensors' byte ranges match their shapes and tile
// the dataLen bytes of data exactly.
func (l *layout) check(dataLen int64, f32Only bool) error {
	var end int64
	for i, e := range l.entries {
		f32 := e.DType == DTypeF32
		if !f32 && f32Only {
			return fmt.Errorf("tensor %q has dtype %q: gokeras reads %s tensors only (convert the file to float32 first)", e.name, e.DType, DTypeF32)
		}
		count, err := numel(e.Shape)
		if err != nil {
			return fmt.Errorf("%w: tensor %q: %v", ErrFormat, e.name, err)
		}
		begin, stop := e.DataOffsets[0], e.DataOffsets[1]
		switch {
		case begin != end:
			return fmt.Errorf("%w: tensor %q starts at byte %d of the data but the previous tensor ends at %d: the data has a gap or overlap", ErrFormat, e.name, begin, end)
		case stop < begin:
			return fmt.Errorf("%w: tensor %q has data offsets [%d, %d] that end before they begin", ErrFormat, e.name, begin, stop)
		case f32 && stop-begin != int64(4*count):
			return fmt.Errorf("%w: tensor %q of shape %v needs %d bytes but its data offsets [%d, %d] give %d", ErrFormat, e.name, e.Shape, 4*count, begin, stop, stop-begin)
		case stop > dataLen:
			return fmt.Errorf("%w: tensor %q ends at byte %d of the data but the file holds only %d bytes of data: the file is truncated", ErrFormat, e.name, stop, dataLen)
		}
		l.counts[i] = count
		end = stop
	}
	if end != dataLen {
		return fmt.Errorf("%w: the tensors cover %d bytes of data but the file holds %d: it has extra bytes at the end", ErrFormat, end, dataLen)
	}
	return nil
}

// readTensors reads the data a checked F32 layout declares from r,
// positioned just after the header, tensor by tensor.
func (l *layout) readTensors(r io.Reader) (*File, error) {
	f := &File{Metadata: l.meta, Tensors: make([]Tensor, 0, len(l.entries))}
	var buf []byte
	for i, e := range l.entries {
		values := make([]float32, l.counts[i])
		for done := 0; done < len(values); {
			chunk := min(len(values)-done, 64<<10)
			if cap(buf) < 4*chunk {
				buf = make([]byte, 4*chunk)
			}
			raw := buf[:4*chunk]
			if _, err := io.ReadFull(r, raw); err != nil {
				return nil, fmt.Errorf("%w: reading tensor %q: %v (did the file change while it was read?)", ErrFormat, e.name, err)
			}
			for j := range chunk {
				values[done+j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			}
			done += chunk
		}
		shape := e.Shape
		if shape == nil {
			shape = []int{}
		}
		f.Tensors = append(f.Tensors, Tensor{Name: e.name, Shape: shape, Data: values})
	}
	return f, nil
}

// headerLength reads the header length and checks it against the file size.
func headerLength(prefix []byte, fileSize int64) (int64, error) {
	n := binary.LittleEndian.Uint64(prefix)
	if n > maxHeader {
		return 0, fmt.Errorf("%w: the header length field says %d bytes, more than the 100 MB limit: the file is corrupt or of another format", ErrFormat, n)
	}
	if int64(n) > fileSize-8 {
		return 0, fmt.Errorf("%w: the header is %d bytes but only %d bytes follow the length field: the file is truncated", ErrFormat, n, fileSize-8)
	}
	return int64(n), nil
}

// entry is a tensor's header entry with its name.
type entry struct {
	name string
	tensorInfo
}

// parseHeader decodes and checks the JSON header.
func parseHeader(header []byte) (map[string]string, []entry, error) {
	trimmed := bytes.TrimRight(header, " ")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, nil, fmt.Errorf("%w: the header does not start with '{': the file is corrupt or of another format", ErrFormat)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: the header is not valid JSON (%v): the file is corrupt", ErrFormat, err)
	}
	var meta map[string]string
	entries := make([]entry, 0, len(raw))
	for name, msg := range raw {
		if name == metadataKey {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("%w: %s must map strings to strings: %v", ErrFormat, metadataKey, err)
			}
			continue
		}
		e := entry{name: name}
		dec := json.NewDecoder(bytes.NewReader(msg))
		if err := dec.Decode(&e.tensorInfo); err != nil {
			return nil, nil, fmt.Errorf("%w: tensor %q: its header entry is malformed: %v", ErrFormat, name, err)
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := a.DataOffsets[0] - b.DataOffsets[0]; c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return meta, entries, nil
}

// DecodeMetadata is ReadMetadata for a file held in memory: it checks the
// header and the tensors' byte ranges, and returns the metadata.
func DecodeMetadata(data []byte) (map[string]string, error) {
	l, err := readLayout(bytes.NewReader(data), int64(len(data)), false)
	if err != nil {
		return nil, err
	}
	return l.meta, nil
}

// Decode parses a whole safetensors file held in memory, with the checks
// ReadFile makes.
func Decode(data []byte) (*File, error) {
	r := bytes.NewReader(data)
	l, err := readLayout(r, int64(len(data)), true)
	if err != nil {
		return nil, err
	}
	return l.readTensors(r)
}
