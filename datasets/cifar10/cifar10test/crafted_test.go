package cifar10test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestTarReadsBackWithArchiveTar checks the hand-written tar stream against
// the standard library's reader.
func TestTarReadsBackWithArchiveTar(t *testing.T) {
	long := strings.Repeat("d", 150) + "/" + strings.Repeat("n", 120) + ".bin"
	data := Batch(0, 1)
	for _, tc := range []struct {
		name     string
		entry    Entry
		wantType byte
		wantSize int64
		wantLink string
		sparse   bool
		readErr  error // what reading the data gives
	}{
		{name: "regular", entry: Entry{Name: "a/data_batch_1.bin", Data: data}, wantType: tar.TypeReg, wantSize: int64(len(data))},
		{name: "long name", entry: Entry{Name: long, Data: []byte("x")}, wantType: tar.TypeReg, wantSize: 1},
		{name: "directory", entry: Entry{Name: "a/", Type: TypeDir}, wantType: tar.TypeDir},
		{name: "symbolic link", entry: Entry{Name: "l", Type: TypeSymlink, Linkname: "/etc/passwd"}, wantType: tar.TypeSymlink, wantLink: "/etc/passwd"},
		{name: "long link", entry: Entry{Name: "l", Type: TypeSymlink, Linkname: long}, wantType: tar.TypeSymlink, wantLink: long},
		{name: "hard link", entry: Entry{Name: "h", Type: TypeLink, Linkname: "a"}, wantType: tar.TypeLink, wantLink: "a"},
		{name: "character device", entry: Entry{Name: "c", Type: TypeChar}, wantType: tar.TypeChar},
		{name: "declares more", entry: Entry{Name: "m", Data: data, Size: 2 * RecordSize}, wantType: tar.TypeReg, wantSize: 2 * RecordSize, readErr: io.ErrUnexpectedEOF},
		{name: "declares 2^40", entry: Entry{Name: "m", Data: data, Size: 1 << 40}, wantType: tar.TypeReg, wantSize: 1 << 40, readErr: io.ErrUnexpectedEOF},
		{name: "sparse", entry: Entry{Name: "a/data_batch_1.bin", Data: data, SparseSize: 1 << 62}, wantType: tar.TypeReg, wantSize: 1 << 62, sparse: true},
		{name: "sparse, no data", entry: Entry{Name: "s", SparseSize: 20000 * RecordSize}, wantType: tar.TypeReg, wantSize: 20000 * RecordSize, sparse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive := Gzip(t, Tar([]Entry{tc.entry, {Name: "after", Data: []byte("next")}}))
			gz, err := gzip.NewReader(bytes.NewReader(archive))
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(gz)
			hdr, err := tr.Next()
			if err != nil {
				t.Fatal(err)
			}
			if hdr.Name != tc.entry.Name || hdr.Typeflag != tc.wantType || hdr.Size != tc.wantSize || hdr.Linkname != tc.wantLink {
				t.Fatalf("read back %q type %q size %d link %q; want %q type %q size %d link %q",
					hdr.Name, hdr.Typeflag, hdr.Size, hdr.Linkname, tc.entry.Name, tc.wantType, tc.wantSize, tc.wantLink)
			}
			if got := hdr.PAXRecords["GNU.sparse.major"] == "1"; got != tc.sparse {
				t.Errorf("GNU.sparse.major record present = %v, want %v", got, tc.sparse)
			}
			want := tc.entry.Data
			if tc.wantType != tar.TypeReg {
				want = nil
			}
			got := make([]byte, len(want)+100)
			n, err := io.ReadFull(tr, got)
			switch {
			case tc.sparse: // the data, then the hole
				if err != nil || !bytes.Equal(got[:len(want)], want) || !bytes.Equal(got[len(want):], make([]byte, 100)) {
					t.Errorf("sparse data: %d bytes, %v", n, err)
				}
				return
			case tc.readErr != nil:
				if _, err := io.Copy(io.Discard, tr); !errors.Is(err, tc.readErr) {
					t.Errorf("reading past the data: %v, want %v", err, tc.readErr)
				}
				return
			}
			if !bytes.Equal(got[:n], want) {
				t.Errorf("data: %d bytes, want %d", n, len(want))
			}
			if next, err := tr.Next(); err != nil || next.Name != "after" {
				t.Errorf("entry after it: %v, %v", next, err)
			}
		})
	}
}

// TestTarMatchesTarGz checks that Tar of Entries holds what TarGz writes.
func TestTarMatchesTarGz(t *testing.T) {
	files := Files(2)
	read := func(archive []byte) map[string]string {
		gz, err := gzip.NewReader(bytes.NewReader(archive))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(gz)
		out := make(map[string]string)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[string(hdr.Typeflag)+" "+hdr.Name] = string(data)
		}
	}
	got, want := read(Gzip(t, Tar(Entries(files, BatchesDir+"/")))), read(TarGz(t, files, BatchesDir+"/"))
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for name, data := range want {
		if got[name] != data {
			t.Errorf("%s differs", name)
		}
	}
}
