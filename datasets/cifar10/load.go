package cifar10

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Where the official archive lives and what it must hash to.
const (
	OfficialURL  = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
	OfficialMD5  = "c32a1d4ab5d03f1284b67883e8d87530"
	OfficialSize = 170052171 // bytes
)

// Environment variables Load consults.
const (
	// URLEnv, when set, replaces OfficialURL as the default download URL.
	URLEnv = "GOKERAS_CIFAR10_URL"
	// MD5Env, when set, replaces OfficialMD5 as the default checksum, but
	// only for a download from somewhere other than OfficialURL (a mirror
	// that repackaged the archive): the official archive is always checked
	// against OfficialMD5.
	MD5Env = "GOKERAS_CIFAR10_MD5"
	// HomeEnv, when set, puts the default cache in $GOKERAS_HOME/datasets.
	HomeEnv = "GOKERAS_HOME"
)

// Options controls where Load finds or fetches CIFAR-10. The zero value
// downloads the official archive into the default cache on first use.
type Options struct {
	// Path, when set, is a copy the user already has: the extracted
	// cifar-10-batches-bin directory, its parent, or cifar-10-binary.tar.gz
	// (read in place, not extracted). Nothing is downloaded or cached.
	Path string

	// CacheDir holds the download and the extracted
	// <CacheDir>/cifar-10-batches-bin. Default: $GOKERAS_HOME/datasets when
	// GOKERAS_HOME is set, else os.UserCacheDir()/gokeras/datasets.
	CacheDir string

	// URL of the archive. Default: $GOKERAS_CIFAR10_URL when set, else
	// OfficialURL.
	URL string

	// MD5 the archive must hash to, in hex. Default: $GOKERAS_CIFAR10_MD5
	// when it is set and the URL is not OfficialURL, else OfficialMD5. Set
	// it when a mirror serves a different packaging on purpose.
	MD5 string

	// Size of the archive in bytes, used to show progress and to recognise a
	// finished partial download. Default OfficialSize when the checksum is
	// OfficialMD5; otherwise 0, meaning unknown (the server's Content-Length
	// is used instead).
	Size int64

	// Progress receives the download bar and one-line status messages such
	// as "using cached ...". Nil discards them.
	Progress io.Writer

	// HTTPClient makes the download requests. Nil means http.DefaultClient.
	HTTPClient *http.Client

	// ConnectTimeout bounds how long each download request waits for the
	// server's answer: connecting, the TLS handshake and the response
	// headers. Zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration

	// StallTimeout is how long a download may receive nothing before Load
	// drops the connection. The bytes received so far stay in the .part
	// file: Load resumes from there with a new request (HTTP Range) up to
	// three times while the server keeps sending something, and a later
	// Load resumes it too. A slow download that keeps receiving bytes never
	// times out. Zero means DefaultStallTimeout.
	StallTimeout time.Duration

	// MinRate is the slowest download Load waits for, in bytes a second,
	// averaged over each StallTimeout: a server that sends less, such as a
	// byte every few seconds, is dropped as one that sends nothing is, and
	// the bytes so far are resumed as after a stall. Zero means
	// DefaultMinRate.
	MinRate int64
}

// Defaults of Options.ConnectTimeout, Options.StallTimeout and
// Options.MinRate.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultStallTimeout   = 60 * time.Second
	DefaultMinRate        = 1024 // bytes a second: the 170 MB archive in two days
)

// minRate returns Options.MinRate with its default filled in.
func (o Options) minRate() (int64, error) {
	switch {
	case o.MinRate < 0:
		return 0, fmt.Errorf("cifar10: Options.MinRate = %d, want > 0 bytes a second (or 0 for the default %d)", o.MinRate, DefaultMinRate)
	case o.MinRate == 0:
		return DefaultMinRate, nil
	}
	return o.MinRate, nil
}

// timeouts returns the download timeouts with their defaults filled in.
func (o Options) timeouts() (connect, stall time.Duration, err error) {
	connect, stall = o.ConnectTimeout, o.StallTimeout
	if connect < 0 {
		return 0, 0, fmt.Errorf("cifar10: Options.ConnectTimeout = %v, want > 0 (or 0 for the default %v)", connect, DefaultConnectTimeout)
	}
	if stall < 0 {
		return 0, 0, fmt.Errorf("cifar10: Options.StallTimeout = %v, want > 0 (or 0 for the default %v)", stall, DefaultStallTimeout)
	}
	if connect == 0 {
		connect = DefaultConnectTimeout
	}
	if stall == 0 {
		stall = DefaultStallTimeout
	}
	return connect, stall, nil
}

func (o Options) url() string {
	if o.URL != "" {
		return o.URL
	}
	if env := os.Getenv(URLEnv); env != "" {
		return env
	}
	return OfficialURL
}

func (o Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	if home := os.Getenv(HomeEnv); home != "" {
		return filepath.Join(home, "datasets"), nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cifar10: no default cache directory (%w); set Options.CacheDir or %s", err, HomeEnv)
	}
	return filepath.Join(dir, "gokeras", "datasets"), nil
}

// expected returns the MD5 and size the archive must have (size 0: unknown).
func (o Options) expected() (sum string, size int64, err error) {
	if o.Size < 0 {
		return "", 0, fmt.Errorf("cifar10: Options.Size = %d, want >= 0", o.Size)
	}
	sum, from := o.MD5, "Options.MD5"
	if sum == "" && o.url() != OfficialURL {
		sum, from = os.Getenv(MD5Env), MD5Env
	}
	if sum == "" {
		if o.Size == 0 {
			return OfficialMD5, OfficialSize, nil
		}
		return OfficialMD5, o.Size, nil
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != 16 {
		return "", 0, fmt.Errorf("cifar10: %s = %q, want 32 hex digits (the archive's MD5, as md5sum prints it)", from, sum)
	}
	return sum, o.Size, nil
}

// ignoredMD5Env returns the value of MD5Env when it is set but does not
// apply, because the download comes from OfficialURL.
func (o Options) ignoredMD5Env() string {
	if o.MD5 != "" || o.url() != OfficialURL {
		return ""
	}
	return os.Getenv(MD5Env)
}

func (o Options) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return http.DefaultClient
}

// Load returns CIFAR-10, the way keras.datasets.cifar10.load_data does.
//
// With Options.Path set it reads that directory or archive and touches
// nothing else. Otherwise it looks in the cache directory: an extracted
// cifar-10-batches-bin there is used as is (a line saying so goes to
// Options.Progress); else an archive placed there by hand is checked and
// extracted; else the archive is downloaded (resuming a partial download
// left by an earlier run when the server allows), checked against its MD5
// and extracted. Downloads and extractions go to temporary names first, so
// an interrupted Load never leaves a cache that looks complete. A download
// that gets no answer or stalls gives up after Options.ConnectTimeout or
// Options.StallTimeout, resuming while it makes progress. An archive with
// entries the official one never has (sparse files, links, devices, escaping
// names, oversized files) is refused before anything is allocated or
// written for them.
//
// Errors wrap ErrDownload, ErrChecksum, ErrNotCIFAR10, ErrMissingFile or
// ErrCorrupt as fits, plus ctx's error when ctx ends first, and say how to
// fix the problem.
func Load(ctx context.Context, opts Options) (*Dataset, error) {
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if opts.Path != "" {
		return loadPath(ctx, opts.Path, progress)
	}
	want, size, err := opts.expected()
	if err != nil {
		return nil, err
	}
	if _, _, err := opts.timeouts(); err != nil {
		return nil, err
	}
	cacheDir, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	batches := filepath.Join(cacheDir, batchesDirName)
	cacheFix := fmt.Sprintf("delete %s and run again to rebuild the cache", batches)
	if info, err := os.Stat(batches); err == nil && info.IsDir() {
		fmt.Fprintf(progress, "cifar10: using cached CIFAR-10 at %s\n", batches)
		return loadDir(ctx, batches, cacheFix)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("cifar10: creating cache directory: %w; set Options.CacheDir or %s to a writable directory", err, HomeEnv)
	}
	archive := filepath.Join(cacheDir, archiveName)
	if env := opts.ignoredMD5Env(); env != "" {
		fmt.Fprintf(progress, "cifar10: ignoring %s=%s: it applies only to a mirror named by %s or Options.URL; "+
			"the official archive is checked against %s\n", MD5Env, env, URLEnv, OfficialMD5)
	}
	if info, err := os.Stat(archive); err == nil && info.Mode().IsRegular() {
		fmt.Fprintf(progress, "cifar10: found %s; checking it\n", archive)
		if err := checkMD5(archive, want); err != nil {
			return nil, fmt.Errorf("cifar10: %w; replace it with the archive from %s, or delete it so the next Load downloads one",
				err, opts.url())
		}
	} else if err := downloadArchive(ctx, opts, archive, want, size, cacheDir, progress); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "cifar10: extracting %s\n", archive)
	if err := extractArchive(ctx, archive, archiveFile(archive), cacheDir); err != nil {
		return nil, fmt.Errorf("cifar10: extracting %s: %w",
			archive, withFix(err, fmt.Sprintf("delete %s and run again to download it afresh", archive)))
	}
	return loadDir(ctx, batches, cacheFix)
}

// downloadArchive fetches the archive into archive+".part", checks its MD5
// and renames it to archive.
func downloadArchive(ctx context.Context, opts Options, archive, wantMD5 string, size int64, cacheDir string, progress io.Writer) error {
	part := archive + ".part"
	connect, stall, err := opts.timeouts()
	if err != nil {
		return err
	}
	rate, err := opts.minRate()
	if err != nil {
		return err
	}
	d := &downloader{
		minRate:        rate,
		client:         opts.httpClient(),
		url:            opts.url(),
		size:           size,
		cacheDir:       cacheDir,
		progress:       progress,
		connectTimeout: connect,
		stallTimeout:   stall,
	}
	fmt.Fprintf(progress, "cifar10: downloading %s to %s\n", d.url, archive)
	if err := d.fetch(ctx, part); err != nil {
		return err
	}
	if err := checkMD5(part, wantMD5); err != nil {
		if !errors.Is(err, ErrChecksum) {
			return fmt.Errorf("cifar10: %w", err)
		}
		if rmErr := os.Remove(part); rmErr != nil {
			return fmt.Errorf("cifar10: %w; could not remove the bad download either: %v", err, rmErr)
		}
		return fmt.Errorf("cifar10: downloaded from %s: %w; removed the bad file, run again to download it afresh "+
			"(if your mirror serves a different archive on purpose, set %s or Options.MD5 to its checksum)", d.url, err, MD5Env)
	}
	if err := os.Rename(part, archive); err != nil {
		return fmt.Errorf("cifar10: %w", err)
	}
	return nil
}

// loadPath reads a copy the user pointed at with Options.Path.
func loadPath(ctx context.Context, p string, progress io.Writer) (*Dataset, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("cifar10: %w; point Options.Path (--data) at %s or at its extracted %s directory",
			err, archiveName, batchesDirName)
	}
	fmt.Fprintf(progress, "cifar10: reading CIFAR-10 from %s\n", p)
	if !info.IsDir() {
		return loadArchive(ctx, p, fmt.Sprintf("download %s again from %s and point Options.Path (--data) at it, "+
			"or at a complete extracted copy", archiveName, OfficialURL))
	}
	dir, err := findBatchesDir(p)
	if err != nil {
		return nil, fmt.Errorf("cifar10: %w", err)
	}
	return loadDir(ctx, dir, fmt.Sprintf("extract %s again, or point Options.Path (--data) at a complete copy", archiveName))
}
