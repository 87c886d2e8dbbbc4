// Package cifar10test writes small copies of CIFAR-10 in the real binary
// format, for tests of code that loads CIFAR-10 (package cifar10 itself, the
// train command, the examples) without the 170 MB download.
//
// A copy made here has the layout of the official cifar-10-binary.tar.gz:
// a cifar-10-batches-bin directory holding data_batch_1.bin …
// data_batch_5.bin, test_batch.bin, batches.meta.txt and readme.html, each
// batch a run of 3,073-byte records (a label byte, then the red, green and
// blue 32×32 planes, each row-major). Only the number of records per batch
// differs. Every label and pixel is computed from where it sits (see
// PixelValue and LabelValue), so a loader that mixes up files, records,
// channels, rows or columns reads wrong values.
//
// The package writes the format from its description, not with package
// cifar10's code, so it is an independent check of the loader.
package cifar10test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The format of the binary version of CIFAR-10.
const (
	Height, Width, Channels = 32, 32, 3
	// RecordSize is the bytes of one record: a label and a 32×32×3 image.
	RecordSize = 1 + Height*Width*Channels

	// BatchesDir is the directory the official archive unpacks into.
	BatchesDir = "cifar-10-batches-bin"
	// ArchiveName is the official archive's file name.
	ArchiveName = "cifar-10-binary.tar.gz"
	// MetaFile lists the class names, one per line.
	MetaFile = "batches.meta.txt"
	// TestFile holds the test split.
	TestFile = "test_batch.bin"
)

// BatchFiles returns the names of the six batch files, numbered as PixelValue
// and LabelValue number them: 0..4 are data_batch_1.bin … data_batch_5.bin,
// 5 is test_batch.bin.
func BatchFiles() []string {
	return []string{
		"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
		"data_batch_4.bin", "data_batch_5.bin", TestFile,
	}
}

// ClassNames returns the ten class names of batches.meta.txt, by label.
func ClassNames() []string {
	return []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}
}

// PixelValue is the byte a copy made here stores for channel ch, row row,
// column col of record record in batch file file (numbered as in BatchFiles).
func PixelValue(file, record, ch, row, col int) uint8 {
	return uint8(file*31 + record*7 + ch*50 + row*3 + col*11)
}

// LabelValue is the label of record record in batch file file.
func LabelValue(file, record int) uint8 {
	return uint8((file + record) % len(ClassNames()))
}

// Batch encodes records records of batch file file (numbered as in
// BatchFiles) in the on-disk layout.
func Batch(file, records int) []byte {
	out := make([]byte, 0, records*RecordSize)
	for r := range records {
		out = append(out, LabelValue(file, r))
		for ch := range Channels {
			for row := range Height {
				for col := range Width {
					out = append(out, PixelValue(file, r, ch, row, col))
				}
			}
		}
	}
	return out
}

// MetaText is batches.meta.txt as the official archive has it: the ten names,
// one per line, then blank lines.
func MetaText() []byte {
	return []byte(strings.Join(ClassNames(), "\n") + "\n\n")
}

// Files returns the contents of a complete cifar-10-batches-bin directory,
// keyed by file name, with records records in every batch file: 5×records
// training samples and records test samples.
func Files(records int) map[string][]byte {
	files := map[string][]byte{
		MetaFile:      MetaText(),
		"readme.html": []byte("<html>a small copy made by cifar10test</html>"),
	}
	for i, name := range BatchFiles() {
		files[name] = Batch(i, records)
	}
	return files
}

// TarGz packs files, in sorted name order, into a gzip-compressed tar archive
// in which each name has prefix before it. With prefix BatchesDir+"/" (and a
// directory entry for it, which TarGz adds for any prefix ending in "/") the
// layout is the official archive's.
func TarGz(tb testing.TB, files map[string][]byte, prefix string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if strings.HasSuffix(prefix, "/") {
		if err := tw.WriteHeader(&tar.Header{Name: prefix, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			tb.Fatal(err)
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		data := files[name]
		hdr := &tar.Header{Name: prefix + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}
		if err := tw.WriteHeader(hdr); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Archive returns a cifar-10-binary.tar.gz laid out like the official one,
// with records records in every batch file.
func Archive(tb testing.TB, records int) []byte {
	tb.Helper()
	return TarGz(tb, Files(records), BatchesDir+"/")
}

// WriteDir writes files into dir, creating dir if needed.
func WriteDir(tb testing.TB, dir string, files map[string][]byte) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// MD5 returns the hex MD5 digest of data, the form the loader's checksum
// options take.
func MD5(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}
