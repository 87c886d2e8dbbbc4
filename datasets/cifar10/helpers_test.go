package cifar10

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test batches hold values computed from where they sit, so any mix-up
// of files, records, channels, rows or columns shows up as a wrong value.

// fileIndex numbers the batch files: 0..4 for data_batch_1..5, 5 for the test batch.
func fileIndex(name string) int {
	if name == testFileName {
		return 5
	}
	return slices.Index(trainFileNames(), name)
}

func pixelValue(file, record, ch, row, col int) uint8 {
	return uint8(file*31 + record*7 + ch*50 + row*3 + col*11)
}

func labelValue(file, record int) uint8 {
	return uint8((file + record) % NumClasses)
}

// makeBatch encodes records records of file in the on-disk layout: a label
// byte, then the red, green and blue planes, each row-major.
func makeBatch(file, records int) []byte {
	out := make([]byte, 0, records*RecordSize)
	for r := range records {
		out = append(out, labelValue(file, r))
		for ch := range Channels {
			for row := range Height {
				for col := range Width {
					out = append(out, pixelValue(file, r, ch, row, col))
				}
			}
		}
	}
	return out
}

// metaText is batches.meta.txt as the real archive has it: ten names and
// trailing blank lines.
func metaText() []byte {
	return []byte(strings.Join(ClassNames(), "\n") + "\n\n")
}

// testFiles returns the content of a complete cifar-10-batches-bin with
// records records in every batch file.
func testFiles(records int) map[string][]byte {
	files := map[string][]byte{
		metaFileName:   metaText(),
		readmeFileName: []byte("<html>test copy</html>"),
		testFileName:   makeBatch(5, records),
	}
	for i, name := range trainFileNames() {
		files[name] = makeBatch(i, records)
	}
	return files
}

// makeTarGz packs files (in sorted order) under prefix, as a .tar.gz.
func makeTarGz(t testing.TB, files map[string][]byte, prefix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if prefix != "" {
		if err := tw.WriteHeader(&tar.Header{Name: prefix, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			t.Fatal(err)
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
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func md5Hex(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// checkDataset verifies every label and pixel of a dataset loaded from
// testFiles(records).
func checkDataset(t *testing.T, ds *Dataset, records int) {
	t.Helper()
	if ds.Train.Len() != 5*records || ds.Test.Len() != records {
		t.Fatalf("got %d train and %d test samples, want %d and %d", ds.Train.Len(), ds.Test.Len(), 5*records, records)
	}
	if len(ds.Train.Images) != 5*records*ImageSize || len(ds.Test.Images) != records*ImageSize {
		t.Fatalf("got %d train and %d test image bytes", len(ds.Train.Images), len(ds.Test.Images))
	}
	if !slices.Equal(ds.ClassNames, ClassNames()) {
		t.Errorf("ClassNames = %q, want %q", ds.ClassNames, ClassNames())
	}
	check := func(split *Split, file, first int) {
		for r := range records {
			n := first + r
			if got, want := split.Labels[n], labelValue(file, r); got != want {
				t.Fatalf("file %d record %d: label %d, want %d", file, r, got, want)
			}
			for row := range Height {
				for col := range Width {
					for ch := range Channels {
						got := split.Images[((n*Height+row)*Width+col)*Channels+ch]
						if want := pixelValue(file, r, ch, row, col); got != want {
							t.Fatalf("file %d record %d row %d col %d ch %d: pixel %d, want %d",
								file, r, row, col, ch, got, want)
						}
					}
				}
			}
		}
	}
	for file := range 5 {
		check(&ds.Train, file, file*records)
	}
	check(&ds.Test, 5, 0)
}

// recorder counts requests to a test server and remembers their Range
// headers.
type recorder struct {
	mu     sync.Mutex
	ranges []string
}

func (r *recorder) add(req *http.Request) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ranges = append(r.ranges, req.Header.Get("Range"))
	return len(r.ranges)
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ranges)
}

// newServer starts a test server whose handler gets the 1-based number of
// each request.
func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handle(w, r, rec.add(r))
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// serveRanges answers like a server that supports resuming.
func serveRanges(w http.ResponseWriter, r *http.Request, archive []byte) {
	http.ServeContent(w, r, archiveName, time.Time{}, bytes.NewReader(archive))
}

// serveWhole answers 200 with the whole archive, ignoring any Range header.
func serveWhole(w http.ResponseWriter, archive []byte) {
	w.Header().Set("Content-Length", itoa(len(archive)))
	_, _ = w.Write(archive)
}

// serveCut answers the request's range (or the whole archive) like
// serveRanges, but drops the connection after sending limit bytes.
func serveCut(w http.ResponseWriter, r *http.Request, archive []byte, limit int) {
	start := 0
	if spec, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		first, _, _ := strings.Cut(spec, "-")
		start = atoi(first)
	}
	body := archive[start:]
	if start > 0 {
		w.Header().Set("Content-Range", "bytes "+itoa(start)+"-"+itoa(len(archive)-1)+"/"+itoa(len(archive)))
	}
	w.Header().Set("Content-Length", itoa(len(body)))
	if start > 0 {
		w.WriteHeader(http.StatusPartialContent)
	}
	_, _ = w.Write(body[:min(limit, len(body))])
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler) // close the connection mid-body
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}
