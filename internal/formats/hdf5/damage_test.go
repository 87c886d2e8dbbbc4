package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

// visit reads every attribute and dataset below g; it returns the first
// error. A dataset read without error must hold exactly its shape's values.
func visit(t testing.TB, g *Group, depth int) error {
	if depth > maxDepth+1 {
		t.Fatalf("%s: nested deeper than the reader allows", g.Name())
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, a := range g.AttrNames() {
		_, err := g.Attr(a)
		keep(err)
	}
	for _, n := range g.Names() {
		if c, err := g.Group(n); err == nil {
			keep(visit(t, c, depth+1))
			continue
		}
		d, err := g.Dataset(n)
		if err != nil {
			t.Fatalf("%s lists %q but it is neither a group nor a dataset: %v", g.Name(), n, err)
		}
		for _, a := range d.AttrNames() {
			_, err := d.Attr(a)
			keep(err)
		}
		v, err := d.Float32()
		keep(err)
		if err == nil {
			want := 1
			for _, s := range d.Shape() {
				want *= s
			}
			if len(v) != want {
				t.Fatalf("%s: %d values for shape %v", d.Name(), len(v), d.Shape())
			}
		}
	}
	return first
}

func readBytes(b []byte) (*File, error) { return Read(bytes.NewReader(b), int64(len(b))) }

func mustFixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantRefused(t *testing.T, what string, b []byte, is error, substr string) {
	t.Helper()
	f, err := readBytes(b)
	if err == nil {
		err = visit(t, f.Root(), 0)
	}
	if !errors.Is(err, is) || !strings.Contains(err.Error(), substr) {
		t.Errorf("%s: got %v, want %v naming %q", what, err, is, substr)
	}
}

func TestRefusesTruncated(t *testing.T) {
	for _, name := range []string{"default.h5", "latest.h5"} {
		b := mustFixture(t, name)
		for n := 0; n < len(b); n += 97 {
			if _, err := readBytes(b[:n]); !errors.Is(err, ErrFormat) {
				t.Fatalf("%s cut to %d bytes: %v, want ErrFormat", name, n, err)
			}
		}
	}
	// A truncated file whose superblock was patched to the shorter size
	// fails on the first address past the end instead.
	b := mustFixture(t, "default.h5")
	cut := append([]byte(nil), b[:len(b)/2]...)
	binary.LittleEndian.PutUint64(cut[40:], uint64(len(cut)))
	wantRefused(t, "patched truncation", cut, ErrFormat, "damaged or truncated")
}

func TestRefusesWrongSignature(t *testing.T) {
	b := append([]byte(nil), mustFixture(t, "default.h5")...)
	b[1] = 'X'
	wantRefused(t, "signature", b, ErrFormat, "no HDF5 signature")
	wantRefused(t, "a zip file", []byte("PK\x03\x04 a .keras archive, not its model.weights.h5"), ErrFormat, "zip archive")
	b = append([]byte(nil), mustFixture(t, "latest.h5")...)
	b[20] ^= 1
	wantRefused(t, "superblock checksum", b, ErrFormat, "checksum")
}

// small writes /a/b with a dataset, and returns the file and the offsets
// of b's link address and of k's dataspace dimension.
func small(t *testing.T) (b []byte, aAddr uint64, bLink, kDim int) {
	w := NewWriter()
	w.Root().Group("a").Group("b").Dataset("k", []int{3}, []float32{1, 2, 3})
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b = buf.Bytes()
	aAddr = w.Root().children[0].addr
	bLink = bytes.Index(b, []byte("\x01b")) + 2
	k := w.Root().children[0].children[0].children[0]
	kDim = int(k.addr) + 16 + 8 + 8 // header prefix, message header, dataspace fields
	if binary.LittleEndian.Uint64(b[bLink:]) != w.Root().children[0].children[0].addr || binary.LittleEndian.Uint64(b[kDim:]) != 3 {
		t.Fatal("the writer's layout moved; update small")
	}
	return b, aAddr, bLink, kDim
}

func TestRefusesCycle(t *testing.T) {
	b, aAddr, bLink, _ := small(t)
	binary.LittleEndian.PutUint64(b[bLink:], aAddr) // /a/b is /a again
	wantRefused(t, "cycle", b, ErrFormat, "cycle")
	binary.LittleEndian.PutUint64(b[bLink:], sbSize) // /a/b is the root
	wantRefused(t, "cycle to the root", b, ErrFormat, "cycle")
}

func TestRefusesHugeSizes(t *testing.T) {
	b, aAddr, _, kDim := small(t)
	huge := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(huge[kDim:], 1<<31-1)
	wantRefused(t, "dataset of 2^31 elements in a small file", huge, ErrFormat, "contiguous data of 12 bytes")
	huge = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(huge[aAddr+8:], 0xfffffff0) // /a's header size
	wantRefused(t, "object header of 4 GiB", huge, ErrFormat, "past the end of the file")
	huge = append([]byte(nil), b...)
	huge[kDim-7] = 40 // the dataspace's rank
	wantRefused(t, "rank 40", huge, ErrFormat, "rank 40")
}

// TestRefusesByteFlips flips bytes all over an h5py file: every result is
// an error or a file whose values match their shapes, never a panic.
func TestRefusesByteFlips(t *testing.T) {
	orig := mustFixture(t, "default.h5")
	step := 13
	if testing.Short() {
		step = 101
	}
	for i := 0; i < len(orig); i += step {
		b := append([]byte(nil), orig...)
		b[i] ^= 0xa5
		if f, err := readBytes(b); err == nil {
			_ = visit(t, f.Root(), 0)
		}
	}
}
