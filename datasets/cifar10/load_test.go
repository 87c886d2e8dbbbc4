package cifar10

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

const recordsPerFile = 100

// failServer is a server any request to which fails the test.
func failServer(t *testing.T) string {
	t.Helper()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		t.Errorf("unexpected request %d: %s %s", n, r.Method, r.URL)
		http.Error(w, "no", http.StatusTeapot)
	})
	return srv.URL + "/" + archiveName
}

// cacheEntries lists what a cache directory holds.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func assertNoValidCache(t *testing.T, cacheDir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(cacheDir, batchesDirName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after a failed Load (stat error %v)", batchesDirName, err)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, archiveName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after a failed Load (stat error %v)", archiveName, err)
	}
}

func TestLoadDownloadsExtractsAndCaches(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveRanges(w, r, archive) })
	cacheDir := t.TempDir()
	var progress bytes.Buffer
	opts := Options{CacheDir: cacheDir, URL: srv.URL + "/" + archiveName, MD5: cifar10test.MD5(archive), Progress: &progress}

	ds, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	out := progress.String()
	for _, want := range []string{"downloading " + opts.URL, archiveName, "downloaded " + itoa(len(archive)) + " bytes in", "extracting"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\r\b") {
		t.Errorf("progress to a non-terminal holds carriage returns or backspaces: %q", out)
	}
	if got, want := cacheEntries(t, cacheDir), []string{batchesDirName, archiveName}; !slices.Equal(got, want) {
		t.Errorf("cache holds %q, want %q (no partial or temporary files)", got, want)
	}
	if got := len(rec.seen()); got != 1 {
		t.Errorf("first Load made %d requests, want 1", got)
	}

	progress.Reset()
	again, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, again, recordsPerFile)
	if got := len(rec.seen()); got != 1 {
		t.Errorf("second Load made %d more requests, want none", got-1)
	}
	wantLine := "cifar10: using cached CIFAR-10 at " + filepath.Join(cacheDir, batchesDirName) + "\n"
	if progress.String() != wantLine {
		t.Errorf("second Load printed %q, want %q", progress.String(), wantLine)
	}
}

func TestLoadResumesCutDownloadWithinOneLoad(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	half := len(archive) / 2
	srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			serveCut(w, r, archive, half)
			return
		}
		serveRanges(w, r, archive)
	})
	var progress bytes.Buffer
	ds, err := Load(context.Background(), Options{
		CacheDir: t.TempDir(), URL: srv.URL, MD5: cifar10test.MD5(archive), Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if got, want := rec.seen(), []string{"", "bytes=" + itoa(half) + "-"}; !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q", got, want)
	}
	for _, want := range []string{"resuming at byte " + itoa(half), "downloaded the remaining " + itoa(len(archive)-half) + " bytes"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress does not say %q:\n%s", want, progress.String())
		}
	}
}

func TestLoadResumesAcrossLoads(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	chunk := len(archive) / 5
	cacheDir := t.TempDir()
	part := filepath.Join(cacheDir, archiveName+".part")
	opts := Options{CacheDir: cacheDir, MD5: cifar10test.MD5(archive)}

	// A flaky server: every response stops after chunk bytes.
	flaky, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveCut(w, r, archive, chunk) })
	opts.URL = flaky.URL
	_, err := Load(context.Background(), opts)
	if !errors.Is(err, ErrDownload) {
		t.Fatalf("Load from a flaky server: error %v, want ErrDownload", err)
	}
	for _, want := range []string{"connection lost", part, "resumes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertNoValidCache(t, cacheDir)
	kept, err := fileSize(part)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(maxDownloadAttempts * chunk); kept != want {
		t.Fatalf("partial file holds %d bytes, want %d", kept, want)
	}

	good, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveRanges(w, r, archive) })
	opts.URL = good.URL
	ds, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if got, want := rec.seen(), []string{"bytes=" + itoa(int(kept)) + "-"}; !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q", got, want)
	}
}

func TestLoadRestartsWhenServerIgnoresRange(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	cacheDir := t.TempDir()
	// A stale partial file whose bytes do not even match the archive.
	stale := bytes.Repeat([]byte{0xff}, len(archive)/2)
	if err := os.WriteFile(filepath.Join(cacheDir, archiveName+".part"), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	srv, rec := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { serveWhole(w, archive) })
	var progress bytes.Buffer
	ds, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if got, want := rec.seen(), []string{"bytes=" + itoa(len(stale)) + "-"}; !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q", got, want)
	}
	if !strings.Contains(progress.String(), "starting over") {
		t.Errorf("progress does not say the download restarted:\n%s", progress.String())
	}
}

func TestLoadChecksumMismatchRemovesDownload(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveRanges(w, r, archive) })
	cacheDir := t.TempDir()
	_, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5([]byte("another archive"))})
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("error %v, want ErrChecksum", err)
	}
	if !strings.Contains(err.Error(), "removed the bad file") || !strings.Contains(err.Error(), cifar10test.MD5(archive)) {
		t.Errorf("error %q should give the digest and say the file was removed", err)
	}
	if got := cacheEntries(t, cacheDir); len(got) != 0 {
		t.Errorf("cache holds %q after a checksum mismatch, want nothing", got)
	}
}

func TestLoadHTTPStatusError(t *testing.T) {
	srv, _ := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		http.Error(w, "gone", http.StatusNotFound)
	})
	url := srv.URL + "/missing.tar.gz"
	_, err := Load(context.Background(), Options{CacheDir: t.TempDir(), URL: url})
	var status *StatusError
	if !errors.As(err, &status) || status.StatusCode != http.StatusNotFound {
		t.Fatalf("error %v, want a *StatusError with code 404", err)
	}
	if !errors.Is(err, ErrDownload) || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), URLEnv) {
		t.Errorf("error %q should match ErrDownload, name the URL and suggest %s", err, URLEnv)
	}
}

func TestLoadServerDown(t *testing.T) {
	srv, _ := newServer(t, func(http.ResponseWriter, *http.Request, int) {})
	url := srv.URL + "/" + archiveName
	srv.Close() // connection refused from now on
	cacheDir := t.TempDir()
	_, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: url})
	if !errors.Is(err, ErrDownload) {
		t.Fatalf("error %v, want ErrDownload", err)
	}
	for _, want := range []string{url, cacheDir, archiveName, "Options.Path (--data)", URLEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertNoValidCache(t, cacheDir)
}

func TestLoadCancelledMidDownload(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	started := make(chan struct{})
	testDone := make(chan struct{})
	defer close(testDone)
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Length", itoa(len(archive)))
		_, _ = w.Write(archive[:len(archive)/2])
		w.(http.Flusher).Flush()
		close(started)
		select { // hold the rest back until the client gives up
		case <-r.Context().Done():
		case <-testDone:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	cacheDir := t.TempDir()
	_, err := Load(ctx, Options{CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive)})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrDownload) {
		t.Fatalf("error %v, want context.Canceled and ErrDownload", err)
	}
	assertNoValidCache(t, cacheDir)
}

func TestLoadUsesArchivePlacedInCache(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	cacheDir := t.TempDir()
	cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName: archive})
	var progress bytes.Buffer
	ds, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: failServer(t), MD5: cifar10test.MD5(archive), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if !strings.Contains(progress.String(), "found "+filepath.Join(cacheDir, archiveName)) {
		t.Errorf("progress does not mention the archive found:\n%s", progress.String())
	}
}

func TestLoadPlacedArchiveWithWrongChecksumIsKept(t *testing.T) {
	archive := cifar10test.Archive(t, recordsPerFile)
	cacheDir := t.TempDir()
	cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName: archive})
	_, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: failServer(t)}) // official MD5
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "replace it") {
		t.Fatalf("error %v, want ErrChecksum telling to replace the file", err)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, archiveName)); err != nil {
		t.Errorf("a file the user placed was removed: %v", err)
	}
}

func TestLoadPath(t *testing.T) {
	files := cifar10test.Files(recordsPerFile)
	root := t.TempDir()
	batches := filepath.Join(root, "extracted", batchesDirName)
	cifar10test.WriteDir(t, batches, files)
	archives := filepath.Join(root, "archives")
	cifar10test.WriteDir(t, archives, map[string][]byte{
		"official.tar.gz": cifar10test.TarGz(t, files, batchesDirName+"/"),
		"dotted.tgz":      cifar10test.TarGz(t, files, "./"+batchesDirName+"/"),
		"flat.tar.gz":     cifar10test.TarGz(t, files, ""),
	})
	for _, tc := range []struct {
		name, path string
	}{
		{"batches directory", batches},
		{"its parent", filepath.Dir(batches)},
		{"archive", filepath.Join(archives, "official.tar.gz")},
		{"archive with ./ names", filepath.Join(archives, "dotted.tgz")},
		{"archive without a directory", filepath.Join(archives, "flat.tar.gz")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir := filepath.Join(t.TempDir(), "cache")
			var progress bytes.Buffer
			ds, err := Load(context.Background(), Options{Path: tc.path, CacheDir: cacheDir, URL: failServer(t), Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			checkDataset(t, ds, recordsPerFile)
			if _, err := os.Stat(cacheDir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Load with Path touched the cache directory (stat: %v)", err)
			}
			if !strings.Contains(progress.String(), tc.path) {
				t.Errorf("progress does not name %s:\n%s", tc.path, progress.String())
			}
		})
	}
}

// TestLoadBadData runs each broken copy both as a directory and as an
// archive.
func TestLoadBadData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(files map[string][]byte)
		want   error
		say    []string
	}{
		{
			name:   "truncated batch",
			change: func(f map[string][]byte) { f["data_batch_3.bin"] = f["data_batch_3.bin"][:50*RecordSize+100] },
			want:   ErrCorrupt,
			say:    []string{"data_batch_3.bin", itoa(50*RecordSize + 100), "truncated"},
		},
		{
			name:   "empty test batch",
			change: func(f map[string][]byte) { f[testFileName] = nil },
			want:   ErrCorrupt,
			say:    []string{testFileName, "0 bytes"},
		},
		{
			name: "batches of different sizes",
			change: func(f map[string][]byte) {
				f["data_batch_5.bin"] = f["data_batch_5.bin"][:(recordsPerFile-1)*RecordSize]
			},
			want: ErrCorrupt,
			say:  []string{"different numbers of records", "data_batch_4.bin: 100, data_batch_5.bin: 99,"},
		},
		{
			name:   "label above 9",
			change: func(f map[string][]byte) { f["data_batch_2.bin"][7*RecordSize] = 10 },
			want:   ErrCorrupt,
			say:    []string{"data_batch_2.bin record 7 has label 10"},
		},
		{
			name:   "missing batch",
			change: func(f map[string][]byte) { delete(f, "data_batch_4.bin") },
			want:   ErrMissingFile,
			say:    []string{"data_batch_4.bin"},
		},
		{
			name:   "missing class names",
			change: func(f map[string][]byte) { delete(f, metaFileName) },
			want:   ErrMissingFile,
			say:    []string{metaFileName},
		},
		{
			name:   "nine class names",
			change: func(f map[string][]byte) { f[metaFileName] = []byte(strings.Join(ClassNames()[:9], "\n")) },
			want:   ErrNotCIFAR10,
			say:    []string{metaFileName, "9 class names"},
		},
		{
			name: "no CIFAR-10 files",
			change: func(f map[string][]byte) {
				clear(f)
				f["notes.txt"] = []byte("hello")
			},
			want: ErrNotCIFAR10,
		},
	} {
		for _, form := range []string{"directory", "archive"} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				files := cifar10test.Files(recordsPerFile)
				tc.change(files)
				dir := t.TempDir()
				path := filepath.Join(dir, batchesDirName)
				if form == "directory" {
					cifar10test.WriteDir(t, path, files)
				} else {
					path = filepath.Join(dir, archiveName)
					cifar10test.WriteDir(t, dir, map[string][]byte{archiveName: cifar10test.TarGz(t, files, batchesDirName+"/")})
				}
				ds, err := Load(context.Background(), Options{Path: path, URL: failServer(t)})
				if !errors.Is(err, tc.want) {
					t.Fatalf("Load = %v, %v; want error %v", ds != nil, err, tc.want)
				}
				for _, want := range append(tc.say, "to fix") {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
			})
		}
	}
}

func TestLoadBadPaths(t *testing.T) {
	dir := t.TempDir()
	archive := cifar10test.Archive(t, recordsPerFile)
	cifar10test.WriteDir(t, dir, map[string][]byte{
		"cut.tar.gz":     archive[:len(archive)*2/3],
		"flipped.tar.gz": flipByte(archive, len(archive)/2),
		"notes.txt":      []byte("not an archive"),
		"empty.tar.gz":   nil,
	})
	for _, tc := range []struct {
		name, path string
		want       error
	}{
		{"missing path", filepath.Join(dir, "nowhere"), fs.ErrNotExist},
		{"truncated archive", filepath.Join(dir, "cut.tar.gz"), ErrCorrupt},
		{"damaged archive", filepath.Join(dir, "flipped.tar.gz"), ErrCorrupt},
		{"plain file", filepath.Join(dir, "notes.txt"), ErrNotCIFAR10},
		{"empty file", filepath.Join(dir, "empty.tar.gz"), ErrNotCIFAR10},
		{"directory without CIFAR-10", dir, ErrNotCIFAR10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), Options{Path: tc.path, URL: failServer(t)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}

func flipByte(data []byte, at int) []byte {
	out := slices.Clone(data)
	out[at] ^= 0x55
	return out
}

func TestLoadCorruptCacheSaysHowToRebuild(t *testing.T) {
	cacheDir := t.TempDir()
	files := cifar10test.Files(recordsPerFile)
	files[testFileName] = files[testFileName][:RecordSize*3/2]
	batches := filepath.Join(cacheDir, batchesDirName)
	cifar10test.WriteDir(t, batches, files)
	_, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: failServer(t)})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "delete "+batches) {
		t.Fatalf("error %v, want ErrCorrupt telling to delete %s", err, batches)
	}
}

func TestLoadCancelledBeforeReading(t *testing.T) {
	dir := filepath.Join(t.TempDir(), batchesDirName)
	cifar10test.WriteDir(t, dir, cifar10test.Files(recordsPerFile))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, path := range []string{dir} {
		if _, err := Load(ctx, Options{Path: path}); !errors.Is(err, context.Canceled) {
			t.Errorf("Load(%s) with a cancelled context: %v, want context.Canceled", path, err)
		}
	}
}

func TestLoadDefaultsFromEnvironment(t *testing.T) {
	// A repackaged mirror: its URL and its own checksum both come from the
	// environment, and the cache from GOKERAS_HOME.
	archive := cifar10test.Archive(t, recordsPerFile)
	srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveRanges(w, r, archive) })
	home := t.TempDir()
	t.Setenv(HomeEnv, home)
	t.Setenv(URLEnv, srv.URL+"/mirror/"+archiveName)
	t.Setenv(MD5Env, cifar10test.MD5(archive))
	ds, err := Load(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if len(rec.seen()) != 1 {
		t.Errorf("got %d requests to the %s mirror, want 1", len(rec.seen()), URLEnv)
	}
	if _, err := os.Stat(filepath.Join(home, "datasets", batchesDirName)); err != nil {
		t.Errorf("cache not under $%s/datasets: %v", HomeEnv, err)
	}
}

func TestMD5EnvIgnoredForOfficialURL(t *testing.T) {
	// The official archive is always checked against OfficialMD5: an
	// archive placed in the cache that matches only $GOKERAS_CIFAR10_MD5 is
	// refused, and Load says the variable was ignored.
	archive := cifar10test.Archive(t, recordsPerFile)
	cacheDir := t.TempDir()
	cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName: archive})
	t.Setenv(URLEnv, "")
	t.Setenv(MD5Env, cifar10test.MD5(archive))
	var progress bytes.Buffer
	_, err := Load(context.Background(), Options{CacheDir: cacheDir, Progress: &progress})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), OfficialMD5) {
		t.Fatalf("error %v, want ErrChecksum against %s", err, OfficialMD5)
	}
	if want := "ignoring " + MD5Env + "=" + cifar10test.MD5(archive); !strings.Contains(progress.String(), want) {
		t.Errorf("progress does not say %q:\n%s", want, progress.String())
	}
}

func TestOptionsDefaults(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv(HomeEnv, "")
	t.Setenv(URLEnv, "")
	t.Setenv(MD5Env, "")
	t.Setenv("XDG_CACHE_HOME", xdg)
	t.Setenv("HOME", xdg)

	var opts Options
	if got := opts.url(); got != OfficialURL {
		t.Errorf("default URL %q, want %q", got, OfficialURL)
	}
	dir, err := opts.cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want, err := os.UserCacheDir(); err != nil || dir != filepath.Join(want, "gokeras", "datasets") {
		t.Errorf("default cache dir %q, want it under %q/gokeras/datasets", dir, want)
	}
	if opts.httpClient() != http.DefaultClient {
		t.Error("default HTTP client is not http.DefaultClient")
	}
	custom := &http.Client{Timeout: time.Minute}
	if (Options{HTTPClient: custom}).httpClient() != custom {
		t.Error("Options.HTTPClient ignored")
	}

	for _, tc := range []struct {
		name     string
		opts     Options
		wantMD5  string
		wantSize int64
		wantErr  bool
	}{
		{"official", Options{}, OfficialMD5, OfficialSize, false},
		{"official MD5, own size", Options{Size: 42}, OfficialMD5, 42, false},
		{"own MD5, size unknown", Options{MD5: strings.Repeat("ab", 16)}, strings.Repeat("ab", 16), 0, false},
		{"own MD5 and size", Options{MD5: strings.Repeat("AB", 16), Size: 7}, strings.Repeat("AB", 16), 7, false},
		{"MD5 too short", Options{MD5: "abc"}, "", 0, true},
		{"MD5 not hex", Options{MD5: strings.Repeat("zz", 16)}, "", 0, true},
		{"negative size", Options{Size: -1}, "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, size, err := tc.opts.expected()
			if (err != nil) != tc.wantErr || sum != tc.wantMD5 || size != tc.wantSize {
				t.Errorf("expected() = %q, %d, %v; want %q, %d, error %v", sum, size, err, tc.wantMD5, tc.wantSize, tc.wantErr)
			}
		})
	}
	if _, err := Load(context.Background(), Options{MD5: "nope", CacheDir: t.TempDir()}); err == nil {
		t.Error("Load accepted a malformed MD5")
	}
}

func TestMD5EnvDefaults(t *testing.T) {
	const mirror = "https://mirror.example/cifar-10-binary.tar.gz"
	envSum, ownSum := strings.Repeat("cd", 16), strings.Repeat("ef", 16)
	for _, tc := range []struct {
		name, urlEnv, md5Env string
		opts                 Options
		wantMD5              string
		wantSize             int64
		wantIgnored          string
		wantErr              string
	}{
		{name: "mirror and its checksum", urlEnv: mirror, md5Env: envSum, wantMD5: envSum},
		{name: "mirror by option", md5Env: envSum, opts: Options{URL: mirror}, wantMD5: envSum},
		{name: "Options.MD5 wins", urlEnv: mirror, md5Env: envSum, opts: Options{MD5: ownSum}, wantMD5: ownSum},
		{name: "mirror of the official archive", urlEnv: mirror, wantMD5: OfficialMD5, wantSize: OfficialSize},
		{name: "official URL ignores the variable", md5Env: envSum, wantMD5: OfficialMD5, wantSize: OfficialSize, wantIgnored: envSum},
		{name: "official URL named explicitly", md5Env: envSum, opts: Options{URL: OfficialURL}, wantMD5: OfficialMD5, wantSize: OfficialSize, wantIgnored: envSum},
		{name: "malformed variable", urlEnv: mirror, md5Env: "c32a1d4a", wantErr: MD5Env + ` = "c32a1d4a", want 32 hex digits`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(URLEnv, tc.urlEnv)
			t.Setenv(MD5Env, tc.md5Env)
			sum, size, err := tc.opts.expected()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("expected() error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || sum != tc.wantMD5 || size != tc.wantSize {
				t.Errorf("expected() = %q, %d, %v; want %q, %d", sum, size, err, tc.wantMD5, tc.wantSize)
			}
			if got := tc.opts.ignoredMD5Env(); got != tc.wantIgnored {
				t.Errorf("ignoredMD5Env() = %q, want %q", got, tc.wantIgnored)
			}
		})
	}
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		header       string
		start, total int64
		ok           bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 0-0/*", 0, -1, true},
		{"bytes */5000", 0, 5000, true},
		{"bytes */*", 0, 0, false},
		{"", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"bytes 1-2", 0, 0, false},
		{"bytes x-2/3", 0, 0, false},
		{"bytes 1-2/x", 0, 0, false},
		{"bytes -1-2/3", 0, 0, false},
	} {
		start, total, ok := parseContentRange(tc.header)
		if ok != tc.ok || (ok && (start != tc.start || total != tc.total)) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v; want %d, %d, %v", tc.header, start, total, ok, tc.start, tc.total, tc.ok)
		}
	}
}

func TestDownloadSizeKnownUpFront(t *testing.T) {
	// A partial file that already holds Size bytes is not fetched again;
	// the checksum decides.
	archive := cifar10test.Archive(t, recordsPerFile)
	cacheDir := t.TempDir()
	cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName + ".part": archive})
	ds, err := Load(context.Background(), Options{
		CacheDir: cacheDir, URL: failServer(t), MD5: cifar10test.MD5(archive), Size: int64(len(archive)),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
}

func TestDownloadCompletePartWithUnknownSize(t *testing.T) {
	// Without a known size the client asks to resume; the server's 416 with
	// the total tells it the partial file is already whole.
	archive := cifar10test.Archive(t, recordsPerFile)
	cacheDir := t.TempDir()
	cifar10test.WriteDir(t, cacheDir, map[string][]byte{archiveName + ".part": archive})
	srv, rec := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveRanges(w, r, archive) })
	ds, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive)})
	if err != nil {
		t.Fatal(err)
	}
	checkDataset(t, ds, recordsPerFile)
	if got := rec.seen(); len(got) != 1 {
		t.Errorf("requests %q, want one", got)
	}
}

func TestLoadIncompleteArchiveLeavesNoCache(t *testing.T) {
	// The archive passes its (overridden) checksum but lacks a batch: the
	// extraction must fail without leaving a directory that looks valid.
	files := cifar10test.Files(recordsPerFile)
	delete(files, "data_batch_5.bin")
	archive := cifar10test.TarGz(t, files, batchesDirName+"/")
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { serveRanges(w, r, archive) })
	cacheDir := t.TempDir()
	_, err := Load(context.Background(), Options{CacheDir: cacheDir, URL: srv.URL, MD5: cifar10test.MD5(archive)})
	if !errors.Is(err, ErrMissingFile) || !strings.Contains(err.Error(), "data_batch_5.bin") ||
		!strings.Contains(err.Error(), "delete "+filepath.Join(cacheDir, archiveName)) {
		t.Fatalf("error %v, want ErrMissingFile naming data_batch_5.bin and the archive to delete", err)
	}
	if got, want := cacheEntries(t, cacheDir), []string{archiveName}; !slices.Equal(got, want) {
		t.Errorf("cache holds %q, want only %q", got, want)
	}
}
