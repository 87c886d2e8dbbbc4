package cifar10test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Tar entry types an Entry can have (the tar format's type flags).
const (
	TypeReg     byte = '0' // regular file
	TypeLink    byte = '1' // hard link
	TypeSymlink byte = '2' // symbolic link
	TypeChar    byte = '3' // character device
	TypeBlock   byte = '4' // block device
	TypeDir     byte = '5' // directory
	TypeFifo    byte = '6' // named pipe
)

// Entry is one member of an archive made by Tar. Unlike TarGz, Tar can make
// what the official archive never holds, the way a damaged or crafted
// archive might: links, devices, names of any length or with "..", GNU sparse
// files, and headers that declare more data than follows.
type Entry struct {
	Name     string
	Type     byte   // TypeReg when zero
	Linkname string // target of a link
	Data     []byte // content that follows the header

	// Size is the size the header declares. Zero means len(Data), or
	// SparseSize for a sparse entry. A Size above len(Data) makes an entry
	// whose data ends early (put it last, or the next header lands in the
	// middle of its declared data).
	Size int64

	// SparseSize, when positive, makes the entry a GNU sparse file in the
	// PAX 1.0 format, as GNU tar --sparse writes it: Data at offset 0, then a
	// hole up to SparseSize bytes. The archive stays small whatever
	// SparseSize is; a reader that expands the hole produces SparseSize
	// bytes.
	SparseSize int64
}

// Entries returns the entries TarGz would write for files and prefix: a
// directory entry for a prefix ending in "/", then one regular file per
// name in sorted order.
func Entries(files map[string][]byte, prefix string) []Entry {
	var entries []Entry
	if strings.HasSuffix(prefix, "/") {
		entries = append(entries, Entry{Name: prefix, Type: TypeDir})
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		entries = append(entries, Entry{Name: prefix + name, Data: files[name]})
	}
	return entries
}

// Tar writes entries as an uncompressed tar stream, block by block from the
// format's description (ustar headers, PAX extended headers for long names,
// large sizes and sparse files), ending with the two zero blocks of the
// trailer. Gzip compresses it into the form Load reads.
func Tar(entries []Entry) []byte {
	var buf bytes.Buffer
	for i, e := range entries {
		typ := e.Type
		if typ == 0 {
			typ = TypeReg
		}
		name, size, data := e.Name, e.Size, e.Data
		pax := map[string]string{}
		if e.SparseSize > 0 {
			pax["GNU.sparse.major"] = "1"
			pax["GNU.sparse.minor"] = "0"
			pax["GNU.sparse.name"] = e.Name
			pax["GNU.sparse.realsize"] = strconv.FormatInt(e.SparseSize, 10)
			name = path.Join(path.Dir(e.Name), "GNUSparseFile.0", path.Base(e.Name))
			data = append(sparseMap(int64(len(e.Data)), e.SparseSize), e.Data...)
			size = int64(len(data))
		} else if size == 0 {
			size = int64(len(data))
		}
		if len(name) > 100 {
			pax["path"] = name
			name = name[:100]
		}
		if len(e.Linkname) > 100 {
			pax["linkpath"] = e.Linkname
		}
		if size > maxOctal {
			pax["size"] = strconv.FormatInt(size, 10)
		}
		if len(pax) > 0 {
			records := paxRecords(pax)
			buf.Write(header(fmt.Sprintf("PaxHeaders.%d/%s", i, path.Base(e.Name)), 'x', int64(len(records)), ""))
			buf.Write(pad(records))
		}
		buf.Write(header(name, typ, size, e.Linkname))
		if int64(len(data)) >= size {
			buf.Write(pad(data[:size]))
		} else {
			buf.Write(data) // ends early, as declared
		}
	}
	buf.Write(make([]byte, 2*blockSize))
	return buf.Bytes()
}

// Gzip compresses data as a .tar.gz holds its tar stream.
func Gzip(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

const (
	blockSize = 512
	maxOctal  = 1<<33 - 1 // the largest size an 11-digit octal field holds
)

// header encodes one ustar header block.
func header(name string, typ byte, size int64, linkname string) []byte {
	b := make([]byte, blockSize)
	copy(b[0:100], name)
	octal(b[100:108], 0o644) // mode
	octal(b[108:116], 0)     // uid
	octal(b[116:124], 0)     // gid
	octal(b[124:136], min(size, maxOctal))
	octal(b[136:148], 0) // mtime
	b[156] = typ
	copy(b[157:257], linkname)
	copy(b[257:263], "ustar\x00")
	copy(b[263:265], "00")
	copy(b[148:156], "        ") // the checksum counts its own field as spaces
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// octal writes v as zero-padded octal digits followed by a NUL.
func octal(field []byte, v int64) {
	copy(field, fmt.Sprintf("%0*o\x00", len(field)-1, v))
}

// paxRecords encodes PAX extended header records, "LEN KEY=VALUE\n" each,
// where LEN counts the whole record including its own digits, in key order.
func paxRecords(records map[string]string) []byte {
	keys := make([]string, 0, len(records))
	for k := range records {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []byte
	for _, k := range keys {
		body := " " + k + "=" + records[k] + "\n"
		n := len(body)
		for n != len(body)+len(strconv.Itoa(n)) {
			n = len(body) + len(strconv.Itoa(n))
		}
		out = append(out, strconv.Itoa(n)+body...)
	}
	return out
}

// sparseMap encodes the map GNU tar writes at the start of a PAX 1.0
// sparse file's data: the number of fragments, then each fragment's offset
// and length, one decimal number per line, padded to a whole block. The
// fragments are the data at offset 0 and an empty one at the logical end.
func sparseMap(dataLen, logical int64) []byte {
	fragments := [][2]int64{{logical, 0}}
	if dataLen > 0 {
		fragments = [][2]int64{{0, dataLen}, {logical, 0}}
	}
	text := strconv.Itoa(len(fragments)) + "\n"
	for _, f := range fragments {
		text += strconv.FormatInt(f[0], 10) + "\n" + strconv.FormatInt(f[1], 10) + "\n"
	}
	return pad([]byte(text))
}

// pad appends zeros up to a whole number of blocks.
func pad(data []byte) []byte {
	if rest := len(data) % blockSize; rest != 0 {
		return append(slices.Clip(data), make([]byte, blockSize-rest)...)
	}
	return data
}
