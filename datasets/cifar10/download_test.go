package cifar10

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// Short timeouts for tests against a local server.
const (
	testConnectTimeout = 400 * time.Millisecond
	testStallTimeout   = 200 * time.Millisecond
)

// serveStalling sends the headers of the request's range (or of the whole
// archive) and limit bytes of it, then nothing more: it holds the
// connection open until the client gives up or the test ends.
func serveStalling(w http.ResponseWriter, r *http.Request, archive []byte, limit int, testDone <-chan struct{}) {
	start := 0
	if spec, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		first, _, _ := strings.Cut(spec, "-")
		start = atoi(first)
	}
	body := archive[start:]
	w.Header().Set("Content-Length", itoa(len(body)))
	if start > 0 {
		w.Header().Set("Content-Range", "bytes "+itoa(start)+"-"+itoa(len(archive)-1)+"/"+itoa(len(archive)))
		w.WriteHeader(http.StatusPartialContent)
	}
	_, _ = w.Write(body[:min(limit, len(body))])
	w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
	case <-testDone:
	}
}

func TestLoadStalledDownloadResumes(t *testing.T) {
	// The server sends the headers and 1,000 bytes, then nothing; the
	// second request (a Range request from byte 1,000) gets the rest.
	archive := cifar10test.Archive(t, recordsPerFile)
	testDone := make(chan struct{})
	defer close(testDone)
	srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			serveStalling(w, r, archive, 1000, testDone)
			return
		}
		serveRanges(w, r, archive)
	})
	var progress bytes.Buffer
	start := time.Now()
	ds, err := Load(context.Background(), Options{
		CacheDir: t.TempDir(), URL: srv.URL, MD5: cifar10test.MD5(archive), Progress: &progress,
		ConnectTimeout: testConnectTimeout, StallTimeout: testStallTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if got, want := rec.seen(), []string{"", "bytes=1000-"}; !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q", got, want)
	}
	for _, want := range []string{"no data for 200ms after 1000 of", "Options.StallTimeout", "retrying (attempt 2 of 3)"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress does not say %q:\n%s", want, progress.String())
		}
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Load took %v", elapsed)
	}
}

func TestLoadTimeouts(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	for _, tc := range []struct {
		name     string
		limit    int // bytes each response sends before stalling; -1: no headers at all
		requests int
		say      []string
		partSize int64 // the .part file left for the next Load; -1: none
	}{
		{
			name:  "no answer",
			limit: -1, requests: 1,
			say:      []string{"no answer within 400ms (Options.ConnectTimeout)", "--data", "--synthetic"},
			partSize: -1,
		},
		{
			name:  "headers, then nothing",
			limit: 0, requests: 1,
			say:      []string{"no data for 200ms after 0 of", "Options.StallTimeout", "next Load resumes it"},
			partSize: 0,
		},
		{
			name:  "stalls on every attempt",
			limit: 1000, requests: 3,
			say:      []string{"no data for 200ms after 3000 of", "Options.StallTimeout", "next Load resumes it"},
			partSize: 3000,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testDone := make(chan struct{})
			defer close(testDone)
			srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				if tc.limit < 0 {
					select { // answer nothing until the client gives up
					case <-r.Context().Done():
					case <-testDone:
					}
					return
				}
				serveStalling(w, r, archive, tc.limit, testDone)
			})
			cacheDir := t.TempDir()
			start := time.Now()
			_, err := Load(context.Background(), Options{
				CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive),
				ConnectTimeout: testConnectTimeout, StallTimeout: testStallTimeout,
			})
			elapsed := time.Since(start)
			if !errors.Is(err, ErrDownload) {
				t.Fatalf("error %v, want ErrDownload", err)
			}
			for _, want := range append(tc.say, srv.URL) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if got := len(rec.seen()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			if elapsed > 10*time.Second {
				t.Errorf("Load took %v to give up", elapsed)
			}
			info, statErr := os.Stat(filepath.Join(cacheDir, archiveName+".part"))
			switch {
			case tc.partSize < 0 && statErr == nil:
				t.Errorf("a .part file of %d bytes was left", info.Size())
			case tc.partSize >= 0 && statErr != nil:
				t.Errorf("no .part file left for the next Load: %v", statErr)
			case tc.partSize >= 0 && info.Size() != tc.partSize:
				t.Errorf(".part file holds %d bytes, want %d", info.Size(), tc.partSize)
			}
			assertNoValidCache(t, cacheDir)
		})
	}
}

func TestLoadOfflineSuggestsGeneratedData(t *testing.T) {
	srv, _ := newServer(t, func(http.ResponseWriter, *http.Request, int) {})
	url := srv.URL + "/" + archiveName
	srv.Close() // connection refused from now on
	_, err := Load(context.Background(), Options{CacheDir: t.TempDir(), URL: url})
	if !errors.Is(err, ErrDownload) {
		t.Fatalf("error %v, want ErrDownload", err)
	}
	for _, want := range []string{"Options.Path (--data)", "cifar10.Synthetic", "train --synthetic"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOptionsTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name           string
		opts           Options
		connect, stall time.Duration
		wantErr        string
	}{
		{"defaults", Options{}, DefaultConnectTimeout, DefaultStallTimeout, ""},
		{"own", Options{ConnectTimeout: time.Second, StallTimeout: 2 * time.Second}, time.Second, 2 * time.Second, ""},
		{"negative connect", Options{ConnectTimeout: -time.Second}, 0, 0, "Options.ConnectTimeout = -1s"},
		{"negative stall", Options{StallTimeout: -1}, 0, 0, "Options.StallTimeout = -1ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			connect, stall, err := tc.opts.timeouts()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("timeouts() error %v, want one containing %q", err, tc.wantErr)
				}
				opts := tc.opts
				opts.CacheDir = t.TempDir()
				opts.URL = failServer(t)
				if _, err := Load(context.Background(), opts); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Load error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || connect != tc.connect || stall != tc.stall {
				t.Errorf("timeouts() = %v, %v, %v; want %v, %v", connect, stall, err, tc.connect, tc.stall)
			}
		})
	}
}

// A server that trickles (a byte every 20 ms, where MinRate asks for 1000
// a second) is dropped like one that stalls, after three attempts that
// each made progress, and the bytes so far are kept for the next Load: one
// that sent a byte every two seconds once held Load for ever, its stall
// timer re-armed by every byte.
func TestLoadDropsATricklingServer(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	testDone := make(chan struct{})
	defer close(testDone)
	srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Length", itoa(len(archive)))
		if r.Header.Get("Range") != "" {
			w.Header().Set("Content-Range", "bytes "+strings.TrimPrefix(r.Header.Get("Range"), "bytes=")+itoa(len(archive)-1)+"/"+itoa(len(archive)))
		}
		for i := 0; ; i++ {
			if _, err := w.Write(archive[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-testDone:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	cacheDir := t.TempDir()
	start := time.Now()
	_, err := Load(context.Background(), Options{
		CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive),
		ConnectTimeout: testConnectTimeout, StallTimeout: testStallTimeout, MinRate: 1000,
	})
	if !errors.Is(err, ErrDownload) {
		t.Fatalf("error %v, want ErrDownload", err)
	}
	for _, want := range []string{"less than 1000 bytes a second over 200ms", "Options.MinRate", "next Load resumes it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := len(rec.seen()); got != maxDownloadAttempts {
		t.Errorf("%d requests, want %d", got, maxDownloadAttempts)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Load took %v to give up", elapsed)
	}
	assertNoValidCache(t, cacheDir)
}

// A server that sends more than the archive holds (endlessly, here), or
// announces more, cannot fill the disk: the download stops at the size the
// archive is known to have (Options.Size) and the partial file is removed;
// with no size known, an announced size beyond any packing of CIFAR-10 is
// refused before a byte is written.
func TestLoadBoundsTheDownloadBySize(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	endless := func(w http.ResponseWriter, r *http.Request, _ int) {
		chunk := bytes.Repeat([]byte{7}, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil || r.Context().Err() != nil {
				return
			}
		}
	}
	huge := func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Length", "109951162777600") // 100 TiB
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(archive[:100])
	}
	for _, tc := range []struct {
		name   string
		handle func(http.ResponseWriter, *http.Request, int)
		size   int64
		say    string
	}{
		{"endless, size known", endless, int64(len(archive)), "the server sent more than the " + itoa(len(archive)) + " bytes the archive can hold (Options.Size"},
		{"100 TiB announced, size known", huge, int64(len(archive)), "the server says the archive is 109951162777600 bytes, but it has " + itoa(len(archive))},
		{"100 TiB announced, no size known", huge, 0, "more than the 1073741824 any packing of CIFAR-10 takes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := newServer(t, tc.handle)
			cacheDir := t.TempDir()
			_, err := Load(context.Background(), Options{
				CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive), Size: tc.size,
				ConnectTimeout: testConnectTimeout, StallTimeout: testStallTimeout,
			})
			if !errors.Is(err, ErrDownload) || !strings.Contains(err.Error(), tc.say) {
				t.Fatalf("error %v, want ErrDownload saying %q", err, tc.say)
			}
			if _, err := os.Stat(filepath.Join(cacheDir, archiveName+".part")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a .part file is left (%v)", err)
			}
			assertNoValidCache(t, cacheDir)
		})
	}
}
