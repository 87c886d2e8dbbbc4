package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The writer's layout, fixed for every file it writes (all addresses are
// 8 bytes, all little-endian):
//
//	superblock version 0 (96 bytes), root group symbol table entry
//	object headers, version 1, one per group and dataset, depth first
//	raw data of the datasets, contiguous, in the same order
//
// Groups are "new style" (a Link Info message, a Group Info message and
// one Link message per child) inside version 1 object headers: what
// libhdf5 1.8 and later write for a group that tracks creation order, and
// what h5py 2.x/3.x and Keras read. Superblock version 0 needs no
// checksums and is read by every libhdf5 since 1.0.

const (
	undefAddr = ^uint64(0)
	// maxMessage is the largest message a version 1 object header holds:
	// its size field is 16 bits.
	maxMessage = 0xffff
	sbSize     = 96
)

var signature = []byte{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}

// ErrWrite is wrapped by every error WriteTo returns for content the
// writer cannot represent.
var ErrWrite = errors.New("hdf5: cannot write")

// Writer builds an HDF5 file in memory; WriteTo writes it.
type Writer struct {
	root *Node
}

// NewWriter returns a Writer with an empty root group.
func NewWriter() *Writer {
	return &Writer{root: &Node{isGroup: true}}
}

// Root is the root group, "/".
func (w *Writer) Root() *Node { return w.root }

// Node is a group or a dataset being written. Group and Dataset create
// children; Attr attaches attributes. Mistakes (a name used twice, a shape
// that does not match the data, an attribute of an unsupported type) are
// recorded and returned by WriteTo, so that calls can be chained.
type Node struct {
	name     string
	isGroup  bool
	children []*Node
	attrs    []writeAttr
	shape    []int
	data     []float32
	ints     []int64 // an int64 dataset's data (isInt)
	isInt    bool
	errs     []error

	// layout
	addr     uint64
	dataAddr uint64
	header   []byte
}

type writeAttr struct {
	name  string
	value any
	// heapIndex is a VarString's object in the global heap collection.
	heapIndex uint16
}

// VarString is an attribute value written as a scalar variable-length
// UTF-8 string, as h5py stores a Python str (Keras 3's "name" attributes
// of the vars groups of a .weights.h5 file), where a string value is
// written fixed-length, as h5py stores numpy bytes. Its bytes go in the
// file's one global heap collection; it must not be empty.
type VarString string

// gheapHeader is the size of a global heap collection's header and of
// each object's header in it.
const gheapHeader = 16

// gheapMin is the smallest global heap collection libhdf5 writes.
const gheapMin = 4096

func (n *Node) fail(format string, args ...any) {
	n.errs = append(n.errs, fmt.Errorf("%w: %s", ErrWrite, fmt.Sprintf(format, args...)))
}

func (n *Node) child(name string) *Node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (n *Node) checkName(name string) bool {
	if !n.isGroup {
		n.fail("%q is a dataset, it cannot hold %q; add children to groups only", n.name, name)
		return false
	}
	if name == "" || name == "." || containsByte(name, '/') || containsByte(name, 0) || len(name) > maxMessage-64 {
		n.fail("link name %q in group %q is empty, \".\", too long or holds '/' or NUL; use one path element per Group call", name, n.name)
		return false
	}
	return true
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

// Group returns the child group name, creating it if needed.
func (n *Node) Group(name string) *Node {
	if c := n.child(name); c != nil {
		if !c.isGroup {
			n.fail("%q in group %q is a dataset, not a group; choose another name", name, n.name)
			return &Node{name: name, isGroup: true}
		}
		return c
	}
	c := &Node{name: name, isGroup: true}
	if n.checkName(name) {
		n.children = append(n.children, c)
	}
	return c
}

// Dataset adds a contiguous float32 dataset of the given shape (rank 0
// is a scalar) holding data in row-major order, and returns it so that
// attributes can be attached. The data is not copied.
func (n *Node) Dataset(name string, shape []int, data []float32) *Node {
	d := &Node{name: name, shape: append([]int(nil), shape...), data: data}
	return n.addDataset(d, len(data))
}

// DatasetInt64 is Dataset of little-endian int64 values (Keras keeps an
// optimizer's step count so).
func (n *Node) DatasetInt64(name string, shape []int, data []int64) *Node {
	d := &Node{name: name, shape: append([]int(nil), shape...), ints: data, isInt: true}
	return n.addDataset(d, len(data))
}

// addDataset checks dataset d of values values and adds it.
func (n *Node) addDataset(d *Node, values int) *Node {
	name, shape := d.name, d.shape
	if n.child(name) != nil {
		n.fail("%q already exists in group %q; each name once per group", name, n.name)
		return d
	}
	if !n.checkName(name) {
		return d
	}
	count := 1
	for _, s := range shape {
		if s < 0 || (s > 0 && count > math.MaxInt32/s) {
			n.fail("dataset %q has shape %v: dimensions must be >= 0 with fewer than 2^31 elements", name, shape)
			return d
		}
		count *= s
	}
	if count != values {
		n.fail("dataset %q has shape %v (%d values) but %d values were given; pass data matching the shape", name, shape, count, values)
		return d
	}
	n.children = append(n.children, d)
	return d
}

// Attr sets an attribute. Supported values: string (a scalar fixed-length
// string, as h5py stores numpy bytes), VarString (a scalar
// variable-length string, as h5py stores a str), []string (a 1-D array of
// fixed-length strings padded to the longest), float32, float64, int64,
// []float32, []float64 and []int64. Setting a name again replaces it.
func (n *Node) Attr(name string, value any) *Node {
	switch v := value.(type) {
	case string, []string, float32, float64, int64, []float32, []float64, []int64:
	case VarString:
		if v == "" {
			n.fail("attribute %q of %q is an empty VarString; use an empty string instead", name, n.name)
			return n
		}
	default:
		n.fail("attribute %q of %q has type %T; use a string, VarString, []string, float32, float64, int64 or a slice of those numbers", name, n.name, value)
		return n
	}
	if name == "" || containsByte(name, 0) {
		n.fail("attribute name %q of %q is empty or holds NUL", name, n.name)
		return n
	}
	for i := range n.attrs {
		if n.attrs[i].name == name {
			n.attrs[i].value = value
			return n
		}
	}
	n.attrs = append(n.attrs, writeAttr{name: name, value: value})
	return n
}

// WriteTo writes the file. It returns the first recorded mistake, wrapped
// around ErrWrite, before writing anything.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	var nodes []*Node
	var walk func(n *Node) error
	walk = func(n *Node) error {
		if len(n.errs) > 0 {
			return n.errs[0]
		}
		nodes = append(nodes, n)
		for _, c := range n.children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(w.root); err != nil {
		return 0, err
	}
	// The variable-length strings' bytes, objects 1, 2, ... of one global
	// heap collection after the raw data.
	var heap []byte
	objects := 0
	for _, n := range nodes {
		for i := range n.attrs {
			v, ok := n.attrs[i].value.(VarString)
			if !ok {
				continue
			}
			if objects++; objects > 0xffff {
				return 0, fmt.Errorf("%w: more than 65535 variable-length string attributes", ErrWrite)
			}
			n.attrs[i].heapIndex = uint16(objects)
			heap = le16(heap, uint16(objects))
			heap = le16(heap, 1) // reference count
			heap = le32(heap, 0)
			heap = le64(heap, uint64(len(v)))
			heap = pad8(append(heap, v...))
		}
	}
	var heapAddr uint64
	// Headers hold child addresses of fixed width: build once with zero
	// addresses to learn sizes, assign addresses, then build again.
	for _, n := range nodes {
		h, err := n.buildHeader(heapAddr)
		if err != nil {
			return 0, err
		}
		n.header = h
	}
	off := uint64(sbSize)
	for _, n := range nodes {
		n.addr = off
		off += uint64(len(n.header))
	}
	for _, n := range nodes {
		n.dataAddr = undefAddr
		if !n.isGroup && len(n.data) > 0 {
			n.dataAddr = off
			off += 4 * uint64(len(n.data))
		}
		if n.isInt && len(n.ints) > 0 {
			n.dataAddr = off
			off += 8 * uint64(len(n.ints))
		}
	}
	if objects > 0 {
		// The collection: its header, the objects, then free space
		// (object 0, whose size counts its own header) to the
		// collection's size, 4096 bytes at least.
		size := max(gheapMin, gheapHeader+len(heap)+gheapHeader)
		col := append([]byte("GCOL"), 1, 0, 0, 0)
		col = le64(col, uint64(size))
		col = append(col, heap...)
		free := size - len(col)
		col = le16(col, 0)
		col = le16(col, 0)
		col = le32(col, 0)
		col = le64(col, uint64(free))
		heap = append(col, make([]byte, size-len(col))...)
		heapAddr = off
		off += uint64(len(heap))
	}
	eof := off
	for _, n := range nodes {
		h, err := n.buildHeader(heapAddr)
		if err != nil {
			return 0, err
		}
		n.header = h
	}

	buf := make([]byte, 0, eof)
	buf = append(buf, signature...)
	buf = append(buf, 0, 0, 0, 0, 0, 8, 8, 0) // versions, sizes of offsets and lengths
	buf = le16(buf, 4)                        // group leaf node K
	buf = le16(buf, 16)                       // group internal node K
	buf = le32(buf, 0)                        // file consistency flags
	buf = le64(buf, 0)                        // base address
	buf = le64(buf, undefAddr)                // free-space info
	buf = le64(buf, eof)                      // end of file
	buf = le64(buf, undefAddr)                // driver info
	buf = le64(buf, 0)                        // root entry: link name offset
	buf = le64(buf, w.root.addr)              // object header address
	buf = le32(buf, 0)                        // cache type: nothing cached
	buf = le32(buf, 0)
	buf = append(buf, make([]byte, 16)...) // scratch pad
	for _, n := range nodes {
		buf = append(buf, n.header...)
	}
	for _, n := range nodes {
		if n.dataAddr == undefAddr {
			continue
		}
		for _, v := range n.data {
			buf = le32(buf, math.Float32bits(v))
		}
		for _, v := range n.ints {
			buf = le64(buf, uint64(v))
		}
	}
	if objects > 0 {
		buf = append(buf, heap...)
	}
	m, err := out.Write(buf)
	return int64(m), err
}

func le16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func pad8(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

type message struct {
	typ  uint16
	body []byte
}

// buildHeader lays out n's version 1 object header.
func (n *Node) buildHeader(heapAddr uint64) ([]byte, error) {
	var msgs []message
	if n.isGroup {
		// Link Info: version 0, no flags, no dense storage.
		li := []byte{0, 0}
		li = le64(li, undefAddr)
		li = le64(li, undefAddr)
		msgs = append(msgs, message{0x02, li})
		msgs = append(msgs, message{0x0A, []byte{0, 0}}) // Group Info: defaults
		for _, c := range n.children {
			l := []byte{1, 0x10} // version 1; flags: charset field present, 1-byte name length
			if len(c.name) > 255 {
				l[1] |= 1 // 2-byte name length
			}
			l = append(l, 1) // charset UTF-8
			if len(c.name) > 255 {
				l = le16(l, uint16(len(c.name)))
			} else {
				l = append(l, byte(len(c.name)))
			}
			l = append(l, c.name...)
			l = le64(l, c.addr) // hard link
			msgs = append(msgs, message{0x06, l})
		}
	} else {
		msgs = append(msgs, message{0x01, dataspace(n.shape)})
		dt, size := float32Type(), 4*uint64(len(n.data))
		if n.isInt {
			dt, size = int64Type(), 8*uint64(len(n.ints))
		}
		msgs = append(msgs, message{0x03, dt})
		// Fill Value: version 2, allocation time late, write time on
		// allocation, no value defined.
		msgs = append(msgs, message{0x05, []byte{2, 2, 2, 0}})
		lay := []byte{3, 1}
		lay = le64(lay, n.dataAddr)
		lay = le64(lay, size)
		msgs = append(msgs, message{0x08, lay})
	}
	for _, a := range n.attrs {
		body, err := attributeMessage(a, heapAddr)
		if err != nil {
			return nil, fmt.Errorf("%w: attribute %q of %q: %v", ErrWrite, a.name, n.name, err)
		}
		msgs = append(msgs, message{0x0C, body})
	}
	var b []byte
	for _, m := range msgs {
		body := pad8(m.body)
		if len(body) > maxMessage {
			return nil, fmt.Errorf("%w: a message of %q is %d bytes, over the 65535 an object header message holds; split a long attribute into several (as Keras does with layer_names0, layer_names1, ...)", ErrWrite, n.name, len(body))
		}
		b = le16(b, m.typ)
		b = le16(b, uint16(len(body)))
		b = append(b, 0, 0, 0, 0) // flags, reserved
		b = append(b, body...)
	}
	h := []byte{1, 0}
	h = le16(h, uint16(len(msgs)))
	h = le32(h, 1) // reference count
	h = le32(h, uint32(len(b)))
	h = le32(h, 0) // padding to 8 bytes
	if len(msgs) > 0xffff {
		return nil, fmt.Errorf("%w: %q has %d messages (children and attributes), over 65535", ErrWrite, n.name, len(msgs))
	}
	return append(h, b...), nil
}

// dataspace is a version 1 dataspace message; rank 0 is a scalar.
func dataspace(shape []int) []byte {
	b := []byte{1, byte(len(shape)), 0, 0, 0, 0, 0, 0}
	for _, s := range shape {
		b = le64(b, uint64(s))
	}
	return b
}

func float32Type() []byte {
	// class 1 (floating point), version 1; little-endian, mantissa
	// normalised with an implied leading 1, sign at bit 31.
	b := []byte{0x11, 0x20, 31, 0}
	b = le32(b, 4)
	b = le16(b, 0)  // bit offset
	b = le16(b, 32) // precision
	b = append(b, 23, 8, 0, 23)
	return le32(b, 127)
}

func float64Type() []byte {
	b := []byte{0x11, 0x20, 63, 0}
	b = le32(b, 8)
	b = le16(b, 0)
	b = le16(b, 64)
	b = append(b, 52, 11, 0, 52)
	return le32(b, 1023)
}

func int64Type() []byte {
	b := []byte{0x10, 0x08, 0, 0} // class 0 (fixed point), signed, little-endian
	b = le32(b, 8)
	b = le16(b, 0)
	return le16(b, 64)
}

// stringType is a fixed-length, NUL-padded UTF-8 string of size bytes.
func stringType(size int) []byte {
	b := []byte{0x13, 0x11, 0, 0}
	return le32(b, uint32(size))
}

// varStringType is a variable-length, NUL-terminated UTF-8 string (class
// 9, version 1) of bytes (its base type, an unsigned 8-bit integer): 16
// bytes an element, its length and its global heap ID.
func varStringType() []byte {
	b := []byte{0x19, 0x01, 0x01, 0} // type string, padding null terminate, charset UTF-8
	b = le32(b, 16)
	base := []byte{0x10, 0, 0, 0} // fixed point, unsigned
	base = le32(base, 1)
	base = le16(base, 0)
	base = le16(base, 8)
	return append(b, base...)
}

func attributeMessage(a writeAttr, heapAddr uint64) ([]byte, error) {
	var dt, ds, data []byte
	switch v := a.value.(type) {
	case VarString:
		dt, ds = varStringType(), dataspace(nil)
		data = le32(nil, uint32(len(v)))
		data = le64(data, heapAddr)
		data = le32(data, uint32(a.heapIndex))
	case string:
		size := max(len(v), 1)
		dt, ds = stringType(size), dataspace(nil)
		data = append([]byte(v), make([]byte, size-len(v))...)
	case []string:
		size := 1
		for _, s := range v {
			size = max(size, len(s))
		}
		dt, ds = stringType(size), dataspace([]int{len(v)})
		for _, s := range v {
			data = append(data, s...)
			data = append(data, make([]byte, size-len(s))...)
		}
	case float32:
		dt, ds = float32Type(), dataspace(nil)
		data = le32(nil, math.Float32bits(v))
	case float64:
		dt, ds = float64Type(), dataspace(nil)
		data = le64(nil, math.Float64bits(v))
	case int64:
		dt, ds = int64Type(), dataspace(nil)
		data = le64(nil, uint64(v))
	case []float32:
		dt, ds = float32Type(), dataspace([]int{len(v)})
		for _, x := range v {
			data = le32(data, math.Float32bits(x))
		}
	case []float64:
		dt, ds = float64Type(), dataspace([]int{len(v)})
		for _, x := range v {
			data = le64(data, math.Float64bits(x))
		}
	case []int64:
		dt, ds = int64Type(), dataspace([]int{len(v)})
		for _, x := range v {
			data = le64(data, uint64(x))
		}
	}
	name := append([]byte(a.name), 0)
	if len(name)+len(dt)+len(ds)+len(data)+32 > maxMessage {
		return nil, fmt.Errorf("it takes %d bytes, over the 65535 an object header message holds; split it into several attributes (as Keras does with layer_names0, layer_names1, ...)", len(name)+len(dt)+len(ds)+len(data))
	}
	b := []byte{1, 0}
	b = le16(b, uint16(len(name)))
	b = le16(b, uint16(len(dt)))
	b = le16(b, uint16(len(ds)))
	b = pad8(append(b, name...))
	b = append(b, pad8(append([]byte(nil), dt...))...)
	b = append(b, pad8(append([]byte(nil), ds...))...)
	return append(b, data...), nil
}
