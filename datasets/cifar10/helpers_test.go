package cifar10

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// checkDataset verifies every label and pixel of a dataset loaded from
// cifar10test.Files(records).
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
			if got, want := split.Labels[n], cifar10test.LabelValue(file, r); got != want {
				t.Fatalf("file %d record %d: label %d, want %d", file, r, got, want)
			}
			for row := range Height {
				for col := range Width {
					for ch := range Channels {
						got := split.Images[((n*Height+row)*Width+col)*Channels+ch]
						if want := cifar10test.PixelValue(file, r, ch, row, col); got != want {
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
