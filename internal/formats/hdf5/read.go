package hdf5

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

var (
	// ErrFormat is wrapped by every error for a file that is damaged or
	// not HDF5: a bad signature or checksum, a size or address beyond the
	// end of the file, a cycle, nesting too deep.
	ErrFormat = errors.New("hdf5: damaged or not an HDF5 file")
	// ErrUnsupported is wrapped by errors for valid HDF5 outside the
	// subset this package reads (see the package documentation).
	ErrUnsupported = errors.New("hdf5: not supported")
	// ErrNotFound is wrapped when a group, dataset or attribute asked for
	// is not in the file.
	ErrNotFound = errors.New("hdf5: not found")
)

const (
	maxDepth   = 64      // groups nested deeper are refused
	maxObjects = 1 << 16 // objects (groups, datasets) a file may hold
	maxRank    = 32      // HDF5's own limit
	maxChunks  = 1 << 12 // object header continuation chunks per object
	// maxInflate bounds what deflate may expand to: zlib's best ratio is
	// about 1032:1.
	maxInflate = 1032
)

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// File is a parsed HDF5 file: its group tree and attributes are read by
// Read, dataset values when asked for.
type File struct {
	r       io.ReaderAt
	size    uint64
	base    uint64
	offSize int
	lenSize int
	root    *Group
	objects int
	gheaps  map[uint64]map[uint16][]byte
	// gheapBytes counts the global heap collections read.
	gheapBytes uint64
}

// Root is the root group, "/".
func (f *File) Root() *Group { return f.root }

type object struct {
	f     *File
	path  string
	attrs []*attribute
}

// Name is the object's path from the root, "/" for the root.
func (o *object) Name() string { return o.path }

// AttrNames lists the object's attributes in the order the file holds them.
func (o *object) AttrNames() []string {
	names := make([]string, len(o.attrs))
	for i, a := range o.attrs {
		names[i] = a.name
	}
	return names
}

// Attr returns the attribute's value: string or []string for strings
// (fixed-length or variable-length), int64 or []int64 for integers,
// float64 or []float64 for floating point. A scalar attribute gives the
// single value, any other its values flattened in row-major order.
func (o *object) Attr(name string) (any, error) {
	for _, a := range o.attrs {
		if a.name == name {
			v, err := a.value(o.f)
			if err != nil {
				return nil, fmt.Errorf("attribute %q of %s: %w", name, o.path, err)
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: %s has no attribute %q (it has %q)", ErrNotFound, o.path, name, o.AttrNames())
}

// AttrString returns a string attribute, scalar or of one element.
func (o *object) AttrString(name string) (string, error) {
	v, err := o.Attr(name)
	if err != nil {
		return "", err
	}
	switch s := v.(type) {
	case string:
		return s, nil
	case []string:
		if len(s) == 1 {
			return s[0], nil
		}
	}
	return "", fmt.Errorf("%w: attribute %q of %s is %T, not a string", ErrFormat, name, o.path, v)
}

// AttrStrings returns a string attribute as a slice (a scalar gives one).
func (o *object) AttrStrings(name string) ([]string, error) {
	v, err := o.Attr(name)
	if err != nil {
		return nil, err
	}
	switch s := v.(type) {
	case string:
		return []string{s}, nil
	case []string:
		return s, nil
	}
	return nil, fmt.Errorf("%w: attribute %q of %s is %T, not strings", ErrFormat, name, o.path, v)
}

// Group is a group: named links to groups and datasets, and attributes.
type Group struct {
	object
	names    []string
	groups   map[string]*Group
	datasets map[string]*Dataset
}

// Names lists the group's members in the order the file lists them
// (by name for symbol tables, by creation for link messages).
func (g *Group) Names() []string { return slices.Clone(g.names) }

func (g *Group) walk(path string) (*Group, string, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for _, p := range parts[:len(parts)-1] {
		c, ok := g.groups[p]
		if !ok {
			return nil, "", fmt.Errorf("%w: %s has no group %q (it has %q)", ErrNotFound, g.path, p, g.names)
		}
		g = c
	}
	return g, parts[len(parts)-1], nil
}

// Group returns the group at path, relative to g ("a" or "a/b").
func (g *Group) Group(path string) (*Group, error) {
	p, name, err := g.walk(path)
	if err != nil {
		return nil, err
	}
	if c, ok := p.groups[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("%w: %s has no group %q (it has %q)", ErrNotFound, p.path, name, p.names)
}

// Dataset returns the dataset at path, relative to g ("kernel:0" or
// "dense/kernel:0").
func (g *Group) Dataset(path string) (*Dataset, error) {
	p, name, err := g.walk(path)
	if err != nil {
		return nil, err
	}
	if d, ok := p.datasets[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: %s has no dataset %q (it has %q)", ErrNotFound, p.path, name, p.names)
}

// Dataset is an array of numbers. Its values are read by Float32.
type Dataset struct {
	object
	shape   []int
	dt      dtype
	layout  layout
	filters []filter
	err     error // why the values cannot be read, found by Read
}

// Shape is the dataset's shape; empty for a scalar.
func (d *Dataset) Shape() []int { return slices.Clone(d.shape) }

// DType names the element type: "float32", "float64", "int8" ... "uint64",
// or the HDF5 class of another type.
func (d *Dataset) DType() string { return d.dt.String() }

type layout struct {
	class   int // 0 compact, 1 contiguous, 2 chunked
	addr    uint64
	size    uint64
	compact []byte
	chunk   []int // chunk dimensions, without the element size
}

type filter struct {
	id     uint16
	name   string
	flags  uint16
	values []uint32
}

// Read parses the HDF5 file in r, of size bytes: superblock, groups,
// attributes and dataset descriptions. Damaged input is refused before
// any allocation larger than the file.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, formatErr("negative file size %d", size)
	}
	f := &File{r: r, size: uint64(size), gheaps: map[uint64]map[uint16][]byte{}}
	root, err := f.superblock()
	if err != nil {
		return nil, err
	}
	g, err := f.loadGroup("/", root, 0, map[uint64]bool{})
	if err != nil {
		return nil, err
	}
	f.root = g
	return f, nil
}

// at reads n bytes at address addr (relative to the base address).
func (f *File) at(addr, n uint64, what string) ([]byte, error) {
	if addr == undefAddr || addr > f.size || f.base > f.size-addr {
		return nil, formatErr("%s at address %d is outside the file (%d bytes); the file is damaged or truncated", what, addr, f.size)
	}
	a := f.base + addr
	if n > f.size-a {
		return nil, formatErr("%s at address %d declares %d bytes, past the end of the file (%d bytes); the file is damaged or truncated", what, addr, n, f.size)
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, int64(a)); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, fmt.Errorf("hdf5: reading %s at %d: %w", what, addr, err)
	}
	return b, nil
}

// rd decodes little-endian fields; the first overrun sticks in err.
type rd struct {
	b    []byte
	p    int
	f    *File
	err  error
	what string
}

func (r *rd) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.p {
		r.err = formatErr("%s is shorter than its fields (need %d bytes at %d of %d)", r.what, n, r.p, len(r.b))
		return nil
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

func (r *rd) uint(n int) uint64 {
	s := r.take(n)
	var v uint64
	for i := len(s) - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return v
}

func (r *rd) u8() int      { return int(r.uint(1)) }
func (r *rd) u16() int     { return int(r.uint(2)) }
func (r *rd) u32() uint64  { return r.uint(4) }
func (r *rd) addr() uint64 { return r.sized(r.f.offSize) }
func (r *rd) len() uint64  { return r.sized(r.f.lenSize) }
func (r *rd) left() int    { return len(r.b) - r.p }

// sized reads an n-byte address or length; all ones is the undefined
// address whatever the width.
func (r *rd) sized(n int) uint64 {
	v := r.uint(n)
	if n < 8 && v == 1<<(8*n)-1 {
		return undefAddr
	}
	return v
}

func (f *File) superblock() (uint64, error) {
	var at uint64
	for at = 0; ; at = max(512, at*2) {
		if at+8 > f.size {
			return 0, formatErr("no HDF5 signature (\\x89HDF\\r\\n\\x1a\\n) at offset 0, 512, 1024, ...: not an HDF5 file (a Keras .keras file is a zip archive holding model.weights.h5)")
		}
		b := make([]byte, 8)
		if _, err := f.r.ReadAt(b, int64(at)); err != nil {
			return 0, fmt.Errorf("hdf5: reading the signature: %w", err)
		}
		if bytes.Equal(b, signature) {
			break
		}
	}
	n := min(f.size-at, 128)
	head := make([]byte, n)
	if _, err := f.r.ReadAt(head, int64(at)); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("hdf5: reading the superblock: %w", err)
	}
	r := &rd{b: head, p: 8, f: f, what: "the superblock"}
	version := r.u8()
	var root, eof uint64
	switch version {
	case 0, 1:
		r.take(4) // free-space, root group and shared header versions, reserved
		f.offSize, f.lenSize = r.u8(), r.u8()
		if err := f.checkSizes(); err != nil {
			return 0, err
		}
		r.take(1 + 2 + 2 + 4)
		if version == 1 {
			r.take(4)
		}
		f.base = r.addr()
		r.addr() // free-space info
		eof = r.addr()
		r.addr() // driver info
		r.addr() // root entry: link name offset
		root = r.addr()
	case 2, 3:
		f.offSize, f.lenSize = r.u8(), r.u8()
		if err := f.checkSizes(); err != nil {
			return 0, err
		}
		r.u8() // consistency flags
		f.base = r.addr()
		r.addr() // superblock extension
		eof = r.addr()
		root = r.addr()
		end := r.p
		sum := r.u32()
		if r.err == nil && uint64(lookup3(head[:end])) != sum {
			return 0, formatErr("superblock checksum mismatch: the file is damaged")
		}
	default:
		return 0, unsupported("superblock version %d; this reader knows versions 0 to 3", version)
	}
	if r.err != nil {
		return 0, r.err
	}
	if f.base != at && f.base != 0 {
		// The base address is absolute; anything else is damage.
		if f.base > f.size {
			return 0, formatErr("base address %d is past the end of the file (%d bytes)", f.base, f.size)
		}
	}
	if f.base > f.size || eof == undefAddr || eof > f.size-f.base {
		return 0, formatErr("the superblock says the file ends at %d bytes but it has %d: the file is truncated or damaged", eof+f.base, f.size)
	}
	return root, nil
}

func (f *File) checkSizes() error {
	for _, s := range []int{f.offSize, f.lenSize} {
		if s != 2 && s != 4 && s != 8 {
			return formatErr("superblock declares %d-byte addresses or lengths; HDF5 uses 2, 4 or 8", s)
		}
	}
	return nil
}

type msg struct {
	typ   int
	flags int
	body  []byte
}

// header reads the messages of the object header at addr, following
// continuation messages.
func (f *File) header(addr uint64) ([]msg, error) {
	pre, err := f.at(addr, min(16, f.size-min(f.size, addr+f.base)), "object header")
	if err != nil {
		return nil, err
	}
	type span struct{ addr, n uint64 }
	var chunks []span
	seen := map[uint64]bool{}
	var v2 bool
	var flags int
	switch {
	case len(pre) >= 16 && pre[0] == 1:
		n := uint64(binary.LittleEndian.Uint32(pre[8:]))
		chunks = append(chunks, span{addr + 16, n})
	case len(pre) >= 6 && string(pre[:4]) == "OHDR":
		if pre[4] != 2 {
			return nil, unsupported("object header version %d at %d", pre[4], addr)
		}
		v2 = true
		flags = int(pre[5])
		p := uint64(6)
		if flags&0x20 != 0 {
			p += 16
		}
		if flags&0x10 != 0 {
			p += 4
		}
		w := uint64(1) << (flags & 3)
		b, err := f.at(addr, p+w, "object header")
		if err != nil {
			return nil, err
		}
		r := &rd{b: b, p: int(p), f: f, what: "object header"}
		n := r.uint(int(w))
		if n > f.size {
			return nil, formatErr("object header at %d declares %d bytes, more than the file", addr, n)
		}
		chunks = append(chunks, span{addr, p + w + n + 4})
	default:
		return nil, formatErr("no object header at address %d (neither version 1 nor \"OHDR\"): the file is damaged", addr)
	}
	var msgs []msg
	for i := 0; i < len(chunks); i++ {
		if i >= maxChunks {
			return nil, formatErr("object header at %d has more than %d continuation chunks", addr, maxChunks)
		}
		c := chunks[i]
		if seen[c.addr] {
			return nil, formatErr("object header at %d continues into a chunk it already read (a cycle)", addr)
		}
		seen[c.addr] = true
		b, err := f.at(c.addr, c.n, "object header chunk")
		if err != nil {
			return nil, err
		}
		start := 0
		if v2 {
			if len(b) < 8 {
				return nil, formatErr("object header chunk at %d is too short", c.addr)
			}
			sig := "OCHK"
			if i == 0 {
				sig = "OHDR"
			}
			if string(b[:4]) != sig {
				return nil, formatErr("object header chunk at %d lacks its %q signature", c.addr, sig)
			}
			if lookup3(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
				return nil, formatErr("object header checksum mismatch at %d: the file is damaged", c.addr)
			}
			if i == 0 {
				p := 6
				if flags&0x20 != 0 {
					p += 16
				}
				if flags&0x10 != 0 {
					p += 4
				}
				start = p + 1<<(flags&3)
			} else {
				start = 4
			}
			b = b[:len(b)-4]
		}
		r := &rd{b: b, p: start, f: f, what: "object header message"}
		hsize := 8
		if v2 {
			hsize = 4
			if flags&0x04 != 0 {
				hsize = 6
			}
		}
		for r.left() >= hsize {
			var m msg
			if v2 {
				m.typ = r.u8()
				n := r.u16()
				m.flags = r.u8()
				if flags&0x04 != 0 {
					r.u16()
				}
				m.body = r.take(n)
			} else {
				m.typ = r.u16()
				n := r.u16()
				m.flags = r.u8()
				r.take(3)
				m.body = r.take(n)
			}
			if r.err != nil {
				return nil, r.err
			}
			if m.typ == 0x10 {
				cr := &rd{b: m.body, f: f, what: "continuation message"}
				a, n := cr.addr(), cr.len()
				if cr.err != nil {
					return nil, cr.err
				}
				if n > f.size {
					return nil, formatErr("continuation chunk of %d bytes is larger than the file", n)
				}
				chunks = append(chunks, span{a, n})
				continue
			}
			msgs = append(msgs, m)
		}
	}
	return msgs, nil
}

type link struct {
	name string
	addr uint64
}

func (f *File) loadGroup(path string, addr uint64, depth int, ancestors map[uint64]bool) (*Group, error) {
	msgs, err := f.header(addr)
	if err != nil {
		return nil, fmt.Errorf("group %s: %w", path, err)
	}
	g := &Group{object: object{f: f, path: path}, groups: map[string]*Group{}, datasets: map[string]*Dataset{}}
	links, err := f.links(path, msgs, &g.object)
	if err != nil {
		return nil, err
	}
	if depth >= maxDepth {
		if len(links) > 0 {
			return nil, formatErr("groups nest deeper than %d at %s", maxDepth, path)
		}
	}
	ancestors[addr] = true
	defer delete(ancestors, addr)
	for _, l := range links {
		if _, dup := g.groups[l.name]; dup || g.datasets[l.name] != nil {
			return nil, formatErr("group %s names %q twice", path, l.name)
		}
		if ancestors[l.addr] {
			return nil, formatErr("link %q in %s points back to a group that contains it (a cycle)", l.name, path)
		}
		f.objects++
		if f.objects > maxObjects {
			return nil, formatErr("more than %d objects (or links that revisit objects many times)", maxObjects)
		}
		child := strings.TrimSuffix(path, "/") + "/" + l.name
		cm, err := f.header(l.addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", child, err)
		}
		switch kindOf(cm) {
		case "group":
			c, err := f.loadGroup(child, l.addr, depth+1, ancestors)
			if err != nil {
				return nil, err
			}
			g.groups[l.name] = c
		case "dataset":
			d, err := f.dataset(child, cm)
			if err != nil {
				return nil, err
			}
			g.datasets[l.name] = d
		default:
			continue // a committed datatype: nothing Keras reads
		}
		g.names = append(g.names, l.name)
	}
	return g, nil
}

func kindOf(msgs []msg) string {
	for _, m := range msgs {
		switch m.typ {
		case 0x02, 0x06, 0x11:
			return "group"
		case 0x08:
			return "dataset"
		}
	}
	return ""
}

// links gathers the group's links (link messages or a symbol table) and
// its attributes.
func (f *File) links(path string, msgs []msg, o *object) ([]link, error) {
	var links []link
	for _, m := range msgs {
		r := &rd{b: m.body, f: f, what: "a message of " + path}
		switch m.typ {
		case 0x02: // link info
			r.u8()
			fl := r.u8()
			if fl&1 != 0 {
				r.take(8)
			}
			heap := r.addr()
			if r.err != nil {
				return nil, r.err
			}
			if heap != undefAddr {
				return nil, unsupported("group %s keeps its links in a fractal heap (dense storage, over 8 links with track_order or libver='latest'); rewrite it with h5py's default libver", path)
			}
		case 0x06:
			l, ok, err := parseLink(r)
			if err != nil {
				return nil, fmt.Errorf("group %s: %w", path, err)
			}
			if ok {
				links = append(links, l)
			}
		case 0x11: // symbol table
			bt, heap := r.addr(), r.addr()
			if r.err != nil {
				return nil, r.err
			}
			ls, err := f.symbolTable(bt, heap)
			if err != nil {
				return nil, fmt.Errorf("group %s: %w", path, err)
			}
			links = append(links, ls...)
		}
	}
	return links, f.attributes(path, msgs, o)
}

// parseLink decodes a link message; ok is false for soft and external
// links, which this reader does not follow.
func parseLink(r *rd) (link, bool, error) {
	if v := r.u8(); v != 1 && r.err == nil {
		return link{}, false, unsupported("link message version %d", v)
	}
	fl := r.u8()
	typ := 0
	if fl&0x08 != 0 {
		typ = r.u8()
	}
	if fl&0x04 != 0 {
		r.take(8)
	}
	if fl&0x10 != 0 {
		r.u8()
	}
	n := r.uint(1 << (fl & 3))
	if n > uint64(r.left()) {
		return link{}, false, formatErr("link name of %d bytes overruns its message", n)
	}
	name := string(r.take(int(n)))
	if typ != 0 {
		return link{}, false, r.err
	}
	a := r.addr()
	if r.err != nil {
		return link{}, false, r.err
	}
	if name == "" || strings.ContainsAny(name, "/\x00") {
		return link{}, false, formatErr("link name %q is empty or holds '/' or NUL", name)
	}
	return link{name, a}, true, nil
}

// symbolTable walks a version 1 B-tree of group nodes and its local heap.
func (f *File) symbolTable(btree, heapAddr uint64) ([]link, error) {
	hb, err := f.at(heapAddr, uint64(8+2*f.lenSize+f.offSize), "local heap")
	if err != nil {
		return nil, err
	}
	if string(hb[:4]) != "HEAP" {
		return nil, formatErr("no local heap (\"HEAP\") at %d", heapAddr)
	}
	hr := &rd{b: hb, p: 8, f: f, what: "local heap"}
	n := hr.len()
	hr.len()
	da := hr.addr()
	if hr.err != nil {
		return nil, hr.err
	}
	heap, err := f.at(da, n, "local heap data")
	if err != nil {
		return nil, err
	}
	var links []link
	seen := map[uint64]bool{}
	var node func(addr uint64, depth int) error
	node = func(addr uint64, depth int) error {
		if depth > maxDepth || seen[addr] {
			return formatErr("group B-tree at %d revisits a node or nests deeper than %d (a cycle)", addr, maxDepth)
		}
		seen[addr] = true
		hsz := uint64(8 + 2*f.offSize)
		b, err := f.at(addr, hsz, "group B-tree node")
		if err != nil {
			return err
		}
		if string(b[:4]) != "TREE" || b[4] != 0 {
			return formatErr("no group B-tree node (\"TREE\", type 0) at %d", addr)
		}
		level, entries := int(b[5]), uint64(binary.LittleEndian.Uint16(b[6:]))
		body, err := f.at(addr+hsz, entries*uint64(f.lenSize+f.offSize)+uint64(f.lenSize), "group B-tree node")
		if err != nil {
			return err
		}
		r := &rd{b: body, f: f, what: "group B-tree node"}
		for range entries {
			r.len()
			child := r.addr()
			if r.err != nil {
				return r.err
			}
			if level > 0 {
				if err := node(child, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := f.symbolNode(child, heap, &links, seen); err != nil {
				return err
			}
		}
		return nil
	}
	return links, node(btree, 0)
}

func (f *File) symbolNode(addr uint64, heap []byte, links *[]link, seen map[uint64]bool) error {
	if seen[addr] {
		return formatErr("symbol table node at %d is listed twice (a cycle)", addr)
	}
	seen[addr] = true
	b, err := f.at(addr, 8, "symbol table node")
	if err != nil {
		return err
	}
	if string(b[:4]) != "SNOD" {
		return formatErr("no symbol table node (\"SNOD\") at %d", addr)
	}
	n := uint64(binary.LittleEndian.Uint16(b[6:]))
	esz := uint64(2*f.offSize + 24)
	body, err := f.at(addr+8, n*esz, "symbol table node")
	if err != nil {
		return err
	}
	r := &rd{b: body, f: f, what: "symbol table node"}
	for range n {
		off := r.sized(f.offSize)
		obj := r.addr()
		r.take(24)
		if r.err != nil {
			return r.err
		}
		if off >= uint64(len(heap)) {
			return formatErr("symbol name offset %d is past its local heap (%d bytes)", off, len(heap))
		}
		name, _, ok := bytes.Cut(heap[off:], []byte{0})
		if !ok || len(name) == 0 || bytes.IndexByte(name, '/') >= 0 {
			return formatErr("symbol name at heap offset %d is unterminated, empty or holds '/'", off)
		}
		*links = append(*links, link{string(name), obj})
	}
	return nil
}

func (f *File) dataset(path string, msgs []msg) (*Dataset, error) {
	d := &Dataset{object: object{f: f, path: path}}
	var haveSpace, haveType, haveLayout bool
	for _, m := range msgs {
		r := &rd{b: m.body, f: f, what: "a message of " + path}
		var err error
		switch m.typ {
		case 0x01:
			d.shape, err = parseDataspace(r)
			haveSpace = true
		case 0x03:
			if m.flags&0x02 != 0 {
				return nil, unsupported("dataset %s has a committed (shared) datatype", path)
			}
			d.dt, err = parseDatatype(r)
			haveType = true
		case 0x08:
			d.layout, err = parseLayout(r, len(d.shape))
			haveLayout = true
			if errors.Is(err, ErrUnsupported) {
				d.err, err = err, nil // the rest of the file stays readable
			}
		case 0x0B:
			d.filters, err = parseFilters(r)
		}
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", path, err)
		}
	}
	if !haveSpace || !haveType || !haveLayout {
		return nil, formatErr("dataset %s lacks its dataspace, datatype or layout message", path)
	}
	if d.err == nil && d.layout.class == 2 && len(d.layout.chunk) != len(d.shape) {
		return nil, formatErr("dataset %s has rank %d but chunks of rank %d", path, len(d.shape), len(d.layout.chunk))
	}
	return d, f.attributes(path, msgs, &d.object)
}

func parseDataspace(r *rd) ([]int, error) {
	v := r.u8()
	rank := r.u8()
	fl := r.u8()
	switch v {
	case 1:
		r.take(5)
	case 2:
		if r.u8() == 2 { // null dataspace
			return []int{0}, r.err
		}
	default:
		if r.err == nil {
			return nil, unsupported("dataspace version %d", v)
		}
	}
	if rank > maxRank {
		return nil, formatErr("dataspace of rank %d, over HDF5's %d", rank, maxRank)
	}
	shape := make([]int, rank)
	for i := range shape {
		n := r.len()
		if n > math.MaxInt32 {
			return nil, formatErr("dimension of %d elements", n)
		}
		shape[i] = int(n)
	}
	_ = fl
	return shape, r.err
}

// count is the number of elements of shape, or an error when that
// overflows int64.
func count(shape []int) (uint64, error) {
	n := uint64(1)
	for _, s := range shape {
		if s != 0 && n > math.MaxInt64/uint64(s) {
			return 0, formatErr("shape %v has too many elements", shape)
		}
		n *= uint64(s)
	}
	return n, nil
}

type dtype struct {
	class     int
	size      int
	bigEndian bool
	signed    bool
	strPad    int  // fixed strings: 0 NUL-terminated, 1 NUL-padded, 2 space-padded
	vlenStr   bool // class 9 string
}

func (t dtype) String() string {
	switch t.class {
	case 0:
		if t.signed {
			return fmt.Sprintf("int%d", 8*t.size)
		}
		return fmt.Sprintf("uint%d", 8*t.size)
	case 1:
		return fmt.Sprintf("float%d", 8*t.size)
	case 3:
		return "string"
	case 9:
		if t.vlenStr {
			return "vlen string"
		}
		return "vlen sequence"
	}
	return fmt.Sprintf("HDF5 class %d", t.class)
}

func parseDatatype(r *rd) (dtype, error) {
	b0 := r.u8()
	b1, b2 := r.u8(), r.u8()
	r.u8()
	t := dtype{class: b0 & 0x0f, size: int(r.u32())}
	if r.err != nil {
		return t, r.err
	}
	if t.size <= 0 || t.size > 1<<16 {
		return t, formatErr("datatype of %d bytes", t.size)
	}
	switch t.class {
	case 0:
		t.bigEndian, t.signed = b1&1 != 0, b1&8 != 0
	case 1:
		t.bigEndian = b1&1 != 0
		if b1&0x40 != 0 {
			return t, unsupported("VAX floating point")
		}
	case 3:
		t.strPad = b1 & 0x0f
	case 9:
		t.vlenStr = b1&0x0f == 1
		t.strPad = (b1 >> 4) & 0x0f
		_ = b2
	}
	return t, nil
}

func parseLayout(r *rd, rank int) (layout, error) {
	v := r.u8()
	if v != 3 && v != 4 {
		if r.err != nil {
			return layout{}, r.err
		}
		return layout{}, unsupported("data layout version %d (HDF5 1.6 and older); rewrite the file with h5py", v)
	}
	l := layout{class: r.u8()}
	if v == 4 && l.class == 2 {
		return l, unsupported("chunked data in layout version 4 (libver='latest': fixed or extensible array chunk indexes); rewrite the file with h5py's default libver")
	}
	switch l.class {
	case 0:
		n := r.u16()
		l.compact = r.take(n)
	case 1:
		l.addr, l.size = r.addr(), r.len()
	case 2:
		dims := r.u8()
		l.addr = r.addr()
		if dims < 1 || dims > maxRank+1 {
			return l, formatErr("chunks of %d dimensions", dims)
		}
		for range dims - 1 {
			c := r.u32()
			if c == 0 || c > math.MaxInt32 {
				return l, formatErr("chunk dimension %d", c)
			}
			l.chunk = append(l.chunk, int(c))
		}
		r.u32() // element size
	default:
		if r.err == nil {
			return l, unsupported("layout class %d (virtual datasets)", l.class)
		}
	}
	return l, r.err
}

func parseFilters(r *rd) ([]filter, error) {
	v := r.u8()
	n := r.u8()
	if v == 1 {
		r.take(6)
	} else if v != 2 && r.err == nil {
		return nil, unsupported("filter pipeline version %d", v)
	}
	var fs []filter
	for range n {
		var fl filter
		fl.id = uint16(r.u16())
		nameLen := 0
		if v == 1 || fl.id >= 256 {
			nameLen = r.u16()
		}
		fl.flags = uint16(r.u16())
		nv := r.u16()
		if v == 1 {
			nameLen = (nameLen + 7) &^ 7
		}
		fl.name = strings.TrimRight(string(r.take(nameLen)), "\x00")
		if nv > r.left()/4 {
			return nil, formatErr("filter with %d client values overruns its message", nv)
		}
		for range nv {
			fl.values = append(fl.values, uint32(r.u32()))
		}
		if v == 1 && nv%2 == 1 {
			r.take(4)
		}
		fs = append(fs, fl)
	}
	return fs, r.err
}

type attribute struct {
	name  string
	dt    dtype
	dtErr error
	shape []int
	data  []byte
}

func (f *File) attributes(path string, msgs []msg, o *object) error {
	for _, m := range msgs {
		r := &rd{b: m.body, f: f, what: "an attribute of " + path}
		switch m.typ {
		case 0x15: // attribute info
			r.u8()
			if fl := r.u8(); fl&1 != 0 {
				r.take(2)
			}
			if h := r.addr(); h != undefAddr && r.err == nil {
				return unsupported("%s keeps its attributes in a fractal heap (dense storage, attributes over 64 KiB or many of them); rewrite it with h5py's default libver", path)
			}
		case 0x0C:
			a, err := parseAttribute(r)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			o.attrs = append(o.attrs, a)
		}
	}
	return nil
}

func parseAttribute(r *rd) (*attribute, error) {
	v := r.u8()
	fl := r.u8()
	nameLen, dtLen, dsLen := r.u16(), r.u16(), r.u16()
	if v == 3 {
		r.u8() // name charset
	}
	if r.err != nil {
		return nil, r.err
	}
	if v < 1 || v > 3 {
		return nil, unsupported("attribute message version %d", v)
	}
	if fl&3 != 0 && v > 1 {
		return nil, unsupported("attribute with a shared datatype or dataspace")
	}
	padded := func(n int) int {
		if v == 1 {
			return (n + 7) &^ 7
		}
		return n
	}
	name := r.take(padded(nameLen))
	if r.err != nil {
		return nil, r.err
	}
	name, _, _ = bytes.Cut(name[:nameLen], []byte{0})
	a := &attribute{name: string(name)}
	dt := r.take(padded(dtLen))
	ds := r.take(padded(dsLen))
	if r.err != nil {
		return nil, r.err
	}
	a.dt, a.dtErr = parseDatatype(&rd{b: dt, f: r.f, what: "attribute " + a.name + "'s datatype"})
	shape, err := parseDataspace(&rd{b: ds, f: r.f, what: "attribute " + a.name + "'s dataspace"})
	if err != nil {
		return nil, fmt.Errorf("attribute %q: %w", a.name, err)
	}
	a.shape = shape
	a.data = r.b[r.p:]
	return a, nil
}

func (a *attribute) value(f *File) (any, error) {
	if a.dtErr != nil {
		return nil, a.dtErr
	}
	n, err := count(a.shape)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(a.data))/uint64(a.dt.size) {
		return nil, formatErr("%d elements of %d bytes do not fit in the %d bytes stored", n, a.dt.size, len(a.data))
	}
	es := a.dt.size
	scalar := len(a.shape) == 0
	switch a.dt.class {
	case 3, 9:
		if a.dt.class == 9 && !a.dt.vlenStr {
			return nil, unsupported("variable-length sequences")
		}
		out := make([]string, n)
		for i := range out {
			e := a.data[i*es : (i+1)*es]
			if a.dt.class == 3 {
				s := e
				if a.dt.strPad == 2 {
					s = bytes.TrimRight(s, " ")
				} else if j := bytes.IndexByte(s, 0); j >= 0 {
					s = s[:j]
				}
				out[i] = string(s)
				continue
			}
			r := &rd{b: e, f: f, what: "variable-length string"}
			ln, addr, idx := r.u32(), r.addr(), r.u32()
			if r.err != nil {
				return nil, r.err
			}
			if ln == 0 {
				continue
			}
			obj, err := f.globalObject(addr, idx)
			if err != nil {
				return nil, err
			}
			if ln > uint64(len(obj)) {
				return nil, formatErr("variable-length string of %d bytes in a heap object of %d", ln, len(obj))
			}
			out[i] = string(obj[:ln])
		}
		if scalar {
			return out[0], nil
		}
		return out, nil
	case 0:
		if es != 1 && es != 2 && es != 4 && es != 8 {
			return nil, unsupported("%d-byte integers", es)
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = a.dt.int(a.data[i*es:])
		}
		if scalar {
			return out[0], nil
		}
		return out, nil
	case 1:
		if es != 4 && es != 8 {
			return nil, unsupported("%d-byte floating point", es)
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = a.dt.float(a.data[i*es:])
		}
		if scalar {
			return out[0], nil
		}
		return out, nil
	}
	return nil, unsupported("attributes of %s", a.dt)
}

func (t dtype) uint(b []byte) uint64 {
	var v uint64
	for i := range t.size {
		j := i
		if !t.bigEndian {
			j = t.size - 1 - i
		}
		v = v<<8 | uint64(b[j])
	}
	return v
}

func (t dtype) int(b []byte) int64 {
	v := t.uint(b)
	if t.signed && t.size < 8 && v&(1<<(8*t.size-1)) != 0 {
		v |= ^uint64(0) << (8 * t.size)
	}
	return int64(v)
}

func (t dtype) float(b []byte) float64 {
	if t.size == 4 {
		return float64(math.Float32frombits(uint32(t.uint(b))))
	}
	return math.Float64frombits(t.uint(b))
}

// globalObject returns object idx of the global heap collection at addr.
func (f *File) globalObject(addr uint64, idx uint64) ([]byte, error) {
	objs, ok := f.gheaps[addr]
	if !ok {
		h, err := f.at(addr, uint64(8+f.lenSize), "global heap")
		if err != nil {
			return nil, err
		}
		if string(h[:4]) != "GCOL" {
			return nil, formatErr("no global heap collection (\"GCOL\") at %d", addr)
		}
		size := (&rd{b: h, p: 8, f: f}).len()
		// Collections do not overlap, so together they fit in the file.
		if f.gheapBytes += size; f.gheapBytes > f.size {
			return nil, formatErr("global heap collections add up to more than the file; the file is damaged")
		}
		b, err := f.at(addr, size, "global heap")
		if err != nil {
			return nil, err
		}
		objs = map[uint16][]byte{}
		r := &rd{b: b, p: 8 + f.lenSize, f: f, what: "global heap"}
		for r.left() >= 8+f.lenSize {
			i := r.u16()
			r.take(6)
			n := r.len()
			if i == 0 {
				break
			}
			if n > uint64(r.left()) {
				return nil, formatErr("global heap object of %d bytes overruns its collection", n)
			}
			objs[uint16(i)] = r.take(int(n))
			r.take(min(r.left(), int((8-n%8)%8)))
		}
		f.gheaps[addr] = objs
	}
	obj, ok := objs[uint16(idx)]
	if !ok || idx > 0xffff {
		return nil, formatErr("global heap at %d has no object %d", addr, idx)
	}
	return obj, nil
}

// Float32 reads the dataset's values in row-major order, converting
// float64 and integer elements to float32.
func (d *Dataset) Float32() ([]float32, error) {
	raw, err := d.raw()
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.path, err)
	}
	es := d.dt.size
	out := make([]float32, len(raw)/es)
	for i := range out {
		e := raw[i*es:]
		if d.dt.class == 1 {
			out[i] = float32(d.dt.float(e))
		} else {
			out[i] = float32(d.dt.int(e))
		}
	}
	return out, nil
}

// Int64 reads an integer dataset's values in row-major order, exactly
// (Float32 rounds those above 2^24); a floating-point dataset is an error.
func (d *Dataset) Int64() ([]int64, error) {
	if d.dt.class != 0 {
		return nil, fmt.Errorf("dataset %s holds %s, not integers", d.path, d.dt)
	}
	raw, err := d.raw()
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.path, err)
	}
	es := d.dt.size
	out := make([]int64, len(raw)/es)
	for i := range out {
		out[i] = d.dt.int(raw[i*es:])
	}
	return out, nil
}

// raw returns the dataset's elements as stored, little- or big-endian.
func (d *Dataset) raw() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	t := d.dt
	if !(t.class == 1 && (t.size == 4 || t.size == 8)) && !(t.class == 0 && (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8)) {
		return nil, unsupported("elements of type %s; datasets of floats or integers only", t)
	}
	n, err := count(d.shape)
	if err != nil {
		return nil, err
	}
	f := d.f
	if n > math.MaxInt64/uint64(t.size) {
		return nil, formatErr("shape %v is too large", d.shape)
	}
	nb := n * uint64(t.size)
	switch d.layout.class {
	case 0:
		if uint64(len(d.layout.compact)) < nb {
			return nil, formatErr("compact data of %d bytes for %d elements of %d bytes", len(d.layout.compact), n, t.size)
		}
		return d.layout.compact[:nb], nil
	case 1:
		if d.layout.addr == undefAddr {
			if nb > f.size*maxInflate {
				return nil, formatErr("an unwritten dataset of %d bytes in a file of %d", nb, f.size)
			}
			return make([]byte, nb), nil
		}
		if d.layout.size < nb {
			return nil, formatErr("contiguous data of %d bytes for %d elements of %d bytes", d.layout.size, n, t.size)
		}
		return f.at(d.layout.addr, nb, "dataset data")
	}
	return d.chunked(n, nb)
}

func (d *Dataset) chunked(n, nb uint64) ([]byte, error) {
	f, t, l := d.f, d.dt, d.layout
	limit := f.size
	for _, fl := range d.filters {
		if fl.id == 1 {
			limit = f.size * maxInflate
		}
		switch fl.id {
		case 1, 2, 3:
		default:
			return nil, unsupported("filter %d (%q); this reader undoes deflate (gzip), shuffle and fletcher32 only", fl.id, fl.name)
		}
	}
	if nb > limit+1<<20 {
		return nil, formatErr("%d bytes of data cannot come from a file of %d bytes", nb, f.size)
	}
	out := make([]byte, nb)
	if n == 0 || l.addr == undefAddr {
		return out, nil
	}
	rank := len(d.shape)
	csz := uint64(t.size)
	for _, c := range l.chunk {
		csz *= uint64(c)
		if csz > 1<<32 {
			return nil, formatErr("chunks of %v elements are too large", l.chunk)
		}
	}
	seen := map[uint64]bool{}
	var node func(addr uint64, depth int) error
	node = func(addr uint64, depth int) error {
		if depth > maxDepth || seen[addr] {
			return formatErr("chunk B-tree at %d revisits a node or nests deeper than %d (a cycle)", addr, maxDepth)
		}
		seen[addr] = true
		hsz := uint64(8 + 2*f.offSize)
		b, err := f.at(addr, hsz, "chunk B-tree node")
		if err != nil {
			return err
		}
		if string(b[:4]) != "TREE" || b[4] != 1 {
			return formatErr("no chunk B-tree node (\"TREE\", type 1) at %d", addr)
		}
		level, entries := int(b[5]), uint64(binary.LittleEndian.Uint16(b[6:]))
		ksz := uint64(8 + 8*(rank+1))
		body, err := f.at(addr+hsz, entries*(ksz+uint64(f.offSize))+ksz, "chunk B-tree node")
		if err != nil {
			return err
		}
		r := &rd{b: body, f: f, what: "chunk B-tree node"}
		for range entries {
			size, mask := r.u32(), r.u32()
			offs := make([]int, rank)
			for i := range offs {
				o := r.uint(8)
				if o >= uint64(d.shape[i]) {
					r.err = formatErr("chunk at offset %d in dimension %d of a dataset of shape %v", o, i, d.shape)
				}
				offs[i] = int(o)
			}
			r.uint(8)
			child := r.addr()
			if r.err != nil {
				return r.err
			}
			if level > 0 {
				if err := node(child, depth+1); err != nil {
					return err
				}
				continue
			}
			if seen[child] {
				return formatErr("chunk at %d is listed twice", child)
			}
			seen[child] = true
			data, err := f.at(child, size, "chunk")
			if err != nil {
				return err
			}
			data, err = d.unfilter(data, mask, csz)
			if err != nil {
				return err
			}
			d.place(out, data, offs)
		}
		return nil
	}
	return out, node(l.addr, 0)
}

// unfilter undoes the filter pipeline on one chunk, last filter first.
func (d *Dataset) unfilter(b []byte, mask uint64, want uint64) ([]byte, error) {
	for i := len(d.filters) - 1; i >= 0; i-- {
		if mask&(1<<i) != 0 {
			continue
		}
		fl := d.filters[i]
		switch fl.id {
		case 1:
			zr, err := zlib.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, formatErr("deflated chunk: %v", err)
			}
			b, err = io.ReadAll(io.LimitReader(zr, int64(want)+5))
			if err != nil {
				return nil, formatErr("deflated chunk: %v", err)
			}
		case 2:
			es := d.dt.size
			if len(fl.values) > 0 && fl.values[0] > 0 {
				es = int(fl.values[0])
			}
			b = unshuffle(b, es)
		case 3:
			if len(b) < 4 {
				return nil, formatErr("fletcher32 chunk of %d bytes", len(b))
			}
			b = b[:len(b)-4]
		}
	}
	if uint64(len(b)) != want {
		return nil, formatErr("chunk holds %d bytes after its filters, want %d", len(b), want)
	}
	return b, nil
}

func unshuffle(b []byte, es int) []byte {
	n := len(b) / es
	out := make([]byte, len(b))
	for j := range es {
		for i := range n {
			out[i*es+j] = b[j*n+i]
		}
	}
	copy(out[n*es:], b[n*es:])
	return out
}

// place copies a chunk at offsets offs into out, clipping at the edges.
func (d *Dataset) place(out, chunk []byte, offs []int) {
	es, shape, cd := d.dt.size, d.shape, d.layout.chunk
	rank := len(shape)
	cnt := make([]int, rank)
	for i := range cnt {
		cnt[i] = min(cd[i], shape[i]-offs[i])
	}
	idx := make([]int, rank)
	for {
		src, dst := 0, 0
		for i := range rank {
			src = src*cd[i] + idx[i]
			dst = dst*shape[i] + offs[i] + idx[i]
		}
		row := cnt[rank-1] * es
		copy(out[dst*es:dst*es+row], chunk[src*es:src*es+row])
		i := rank - 2
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < cnt[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// lookup3 is Bob Jenkins' hashlittle with seed 0, HDF5's metadata
// checksum.
func lookup3(k []byte) uint32 {
	rot := func(x uint32, n uint) uint32 { return x<<n | x>>(32-n) }
	a := 0xdeadbeef + uint32(len(k))
	b, c := a, a
	for len(k) > 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var t [12]byte
	copy(t[:], k)
	a += binary.LittleEndian.Uint32(t[:])
	b += binary.LittleEndian.Uint32(t[4:])
	c += binary.LittleEndian.Uint32(t[8:])
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return c
}
