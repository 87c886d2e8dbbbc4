package cifar10

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gokeras/gokeras/internal/sys/term"

	"github.com/schollz/progressbar/v3"
)

// maxDownloadAttempts bounds how often one Load resumes a download whose
// connection dropped after some bytes arrived.
const maxDownloadAttempts = 3

// downloader fetches one URL into a partial file, resuming with HTTP Range
// requests where the server allows.
type downloader struct {
	client   *http.Client
	url      string
	size     int64 // expected archive size, 0 when unknown
	cacheDir string
	progress io.Writer

	connectTimeout time.Duration // until the response headers arrive
	stallTimeout   time.Duration // longest wait for the next byte of the body
	minRate        int64         // bytes per second each stallTimeout must average
}

// maxArchiveBytes bounds a download whose size nothing states (neither
// Options.Size nor the server): CIFAR-10's archive is 170 MB, and no
// packaging of it comes near 1 GiB.
const maxArchiveBytes = 1 << 30

// Causes with which an attempt's context is cancelled when a timeout fires.
var (
	errNoAnswer = errors.New("no answer")
	errStalled  = errors.New("download stalled")
	errTooSlow  = errors.New("download too slow")
)

// offlineAdvice is what a download error suggests when the server cannot
// be reached: the ways to get the data without it, and to do without it.
func offlineAdvice(cacheDir string) string {
	return fmt.Sprintf("without network, put %s (md5 %s) into %s, "+
		"or point Options.Path (--data) at an archive or extracted copy you already have, "+
		"or set %s to a reachable mirror; to try everything without the data, "+
		"use generated data instead (cifar10.Synthetic; train --synthetic)",
		archiveName, OfficialMD5, cacheDir, URLEnv)
}

// retryableError marks a failed attempt that a fresh request can continue:
// the connection dropped mid-body or the server sent a range we did not ask
// for. Its message is the one the user sees if no attempt is left.
type retryableError struct {
	msg    string // the whole story, for the caller
	reason string // what happened, for the progress line announcing a retry
	err    error
}

func (e *retryableError) Error() string { return e.msg }
func (e *retryableError) Unwrap() error { return e.err }

// fetch downloads d.url into part, resuming part if it exists.
func (d *downloader) fetch(ctx context.Context, part string) error {
	for attempt := 1; ; attempt++ {
		progressed, err := d.attempt(ctx, part)
		if err == nil {
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("cifar10: %w: GET %s: %w; the partial file %s is kept and the next Load resumes it",
				ErrDownload, d.url, ctxErr, part)
		}
		var retry *retryableError
		if !errors.As(err, &retry) || !progressed || attempt == maxDownloadAttempts {
			return err
		}
		fmt.Fprintf(d.progress, "cifar10: %s; retrying (attempt %d of %d)\n", retry.reason, attempt+1, maxDownloadAttempts)
	}
}

// attempt makes one request. progressed reports whether it changed the
// partial file, which is what makes another attempt worthwhile.
func (d *downloader) attempt(ctx context.Context, part string) (progressed bool, err error) {
	offset, err := fileSize(part)
	if err != nil {
		return false, err
	}
	if d.size > 0 && offset == d.size {
		return false, nil // complete already; the checksum has the last word
	}
	if d.size > 0 && offset > d.size {
		offset = 0
	}
	// attemptCtx ends when ctx does, or with errNoAnswer or errStalled as
	// its cause when a timeout fires; either way the transport then drops
	// the connection and the request's pending read returns.
	attemptCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(attemptCtx, http.MethodGet, d.url, nil)
	if err != nil {
		return false, fmt.Errorf("cifar10: %w: bad URL %q: %w; set Options.URL or %s to the archive's http(s) address",
			ErrDownload, d.url, err, URLEnv)
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	answer := time.AfterFunc(d.connectTimeout, func() { cancel(errNoAnswer) })
	resp, err := d.client.Do(req)
	if !answer.Stop() && err == nil {
		resp.Body.Close() // the answer came just as the timeout fired
		err = context.Cause(attemptCtx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if errors.Is(context.Cause(attemptCtx), errNoAnswer) {
			return false, fmt.Errorf("cifar10: %w: GET %s: no answer within %v (Options.ConnectTimeout); %s",
				ErrDownload, d.url, d.connectTimeout, offlineAdvice(d.cacheDir))
		}
		// err (a *url.Error) names the method and URL itself.
		return false, fmt.Errorf("cifar10: %w: %w; %s", ErrDownload, err, offlineAdvice(d.cacheDir))
	}
	defer resp.Body.Close()

	total := int64(-1) // size of the whole archive, when the server says
	switch {
	case resp.StatusCode == http.StatusPartialContent && offset > 0:
		start, complete, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("cifar10: %w", err)
			}
			reason := fmt.Sprintf("asked for bytes from %d, server sent Content-Range %q", offset, resp.Header.Get("Content-Range"))
			return true, &retryableError{
				msg:    fmt.Sprintf("cifar10: %v: GET %s: %s", ErrDownload, d.url, reason),
				reason: reason + "; starting over",
				err:    ErrDownload,
			}
		}
		total = complete
		fmt.Fprintf(d.progress, "cifar10: resuming at byte %d\n", offset)
	case resp.StatusCode == http.StatusOK:
		if offset > 0 {
			fmt.Fprintf(d.progress, "cifar10: server does not resume downloads; starting over\n")
		}
		offset = 0
		total = resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && offset > 0:
		if _, complete, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && complete == offset {
			return false, nil // the partial file already holds everything
		}
		if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("cifar10: %w", err)
		}
		reason := fmt.Sprintf("server refused to resume at byte %d", offset)
		return true, &retryableError{
			msg:    fmt.Sprintf("cifar10: %v: GET %s: %s", ErrDownload, d.url, reason),
			reason: reason + "; starting over",
			err:    ErrDownload,
		}
	default:
		return false, fmt.Errorf("cifar10: %w; check the URL, set %s to a working mirror, "+
			"or point Options.Path (--data) at an archive you already have",
			&StatusError{URL: d.url, StatusCode: resp.StatusCode, Status: resp.Status}, URLEnv)
	}
	if total <= 0 && d.size > 0 {
		total = d.size
	}
	// bound is the most the archive may hold: the size it is known to
	// have, else what the server says, else maxArchiveBytes. A server that
	// claims more, or sends more, is not serving the archive, and is not
	// allowed to fill the disk.
	bound := total
	switch {
	case d.size > 0 && total > d.size:
		return false, fmt.Errorf("cifar10: %w: GET %s: the server says the archive is %d bytes, but it has %d (Options.Size, or CIFAR-10's own size): "+
			"check the URL, or set Options.Size (or Options.MD5) for a mirror that packs it differently", ErrDownload, d.url, total, d.size)
	case bound <= 0:
		bound = maxArchiveBytes
	case bound > maxArchiveBytes && d.size <= 0:
		return false, fmt.Errorf("cifar10: %w: GET %s: the server says the archive is %d bytes, more than the %d any packing of CIFAR-10 takes: "+
			"check the URL, or set Options.Size to the size you expect", ErrDownload, d.url, total, int64(maxArchiveBytes))
	}

	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("cifar10: %w", err)
	}
	if err := f.Truncate(offset); err != nil {
		f.Close()
		return false, fmt.Errorf("cifar10: %w", err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return false, fmt.Errorf("cifar10: %w", err)
	}
	remaining := int64(-1)
	if total > 0 {
		remaining = total - offset
	}
	meter := newDownloadMeter(d.progress, remaining, offset > 0)
	body := &stallReader{r: io.LimitReader(resp.Body, bound-offset+1), timeout: d.stallTimeout,
		minBytes: int64(float64(d.minRate) * d.stallTimeout.Seconds()), windowStart: time.Now()}
	body.timer = time.AfterFunc(d.stallTimeout, func() { cancel(errStalled) })
	n, copyErr := io.Copy(io.MultiWriter(f, meter), body)
	body.timer.Stop()
	closeErr := f.Close()
	progressed = n > 0
	if offset+n > bound {
		meter.abort()
		if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("cifar10: %w", err)
		}
		return false, fmt.Errorf("cifar10: %w: GET %s: the server sent more than the %d bytes the archive can hold (%s); removed the partial file %s: "+
			"check the URL, or set Options.Size for a mirror that packs it differently", ErrDownload, d.url, bound, boundSource(d.size, total), part)
	}
	if copyErr == nil && total > 0 && offset+n < total {
		copyErr = io.ErrUnexpectedEOF
	}
	if copyErr != nil {
		meter.abort()
		if ctx.Err() != nil {
			return progressed, ctx.Err()
		}
		var pathErr *fs.PathError
		if errors.As(copyErr, &pathErr) { // writing the file failed, not the network
			return false, fmt.Errorf("cifar10: writing %s: %w", part, copyErr)
		}
		reason := fmt.Sprintf("connection lost after %s (%v)", describeBytes(offset+n, total), copyErr)
		switch {
		case errors.Is(context.Cause(attemptCtx), errStalled):
			reason = fmt.Sprintf("no data for %v after %s (the server stalled; Options.StallTimeout)",
				d.stallTimeout, describeBytes(offset+n, total))
		case errors.Is(copyErr, errTooSlow):
			reason = fmt.Sprintf("less than %d bytes a second over %v after %s (the server trickles; Options.MinRate)",
				d.minRate, d.stallTimeout, describeBytes(offset+n, total))
		}
		return progressed, &retryableError{
			msg: fmt.Sprintf("cifar10: %v: GET %s: %s; the partial file %s is kept and the next Load resumes it",
				ErrDownload, d.url, reason, part),
			reason: reason,
			err:    fmt.Errorf("%w: %w", ErrDownload, copyErr),
		}
	}
	if closeErr != nil {
		return false, fmt.Errorf("cifar10: writing %s: %w", part, closeErr)
	}
	meter.finish()
	return progressed, nil
}

// stallReader reads the response body and re-arms timer, which gives up on
// the connection, whenever bytes arrive: the download fails after timeout
// without a byte. It also fails, with errTooSlow, when a window of timeout
// brings fewer than minBytes: a server that sends a byte now and then
// would otherwise hold the download for ever.
type stallReader struct {
	r           io.Reader
	timer       *time.Timer
	timeout     time.Duration
	minBytes    int64
	windowStart time.Time
	windowBytes int64
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.timeout)
		s.windowBytes += int64(n)
		if now := time.Now(); now.Sub(s.windowStart) >= s.timeout {
			if s.windowBytes < s.minBytes {
				return n, errTooSlow
			}
			s.windowStart, s.windowBytes = now, 0
		}
	}
	return n, err
}

// boundSource says where the bound on a download's size came from.
func boundSource(size, total int64) string {
	switch {
	case size > 0:
		return "Options.Size, or CIFAR-10's own size"
	case total > 0:
		return "the size the server announced"
	}
	return "no size was known: the most any packing of CIFAR-10 takes"
}

func describeBytes(got, total int64) string {
	if total > 0 {
		return fmt.Sprintf("%d of %d bytes", got, total)
	}
	return fmt.Sprintf("%d bytes", got)
}

// downloadMeter shows how a download goes. On a terminal it is a live byte
// bar (amount, rate and time left); elsewhere (a log file, a pipe, a test
// buffer) it writes one line when the download ends, so such output holds
// no carriage returns.
type downloadMeter struct {
	w       io.Writer
	bar     *progressbar.ProgressBar // nil when w is not a terminal
	resumed bool
	start   time.Time
	bytes   int64
}

// newDownloadMeter measures a download of size bytes (-1: unknown). A
// resumed download counts only the bytes still to come, so the rate stays
// honest.
func newDownloadMeter(w io.Writer, size int64, resumed bool) *downloadMeter {
	m := &downloadMeter{w: w, resumed: resumed, start: time.Now()}
	if !term.IsTerminal(w) {
		return m
	}
	description := archiveName
	if resumed {
		description += " (rest)"
	}
	m.bar = progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetSpinnerChangeInterval(0), // no background goroutine
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return m
}

func (m *downloadMeter) Write(p []byte) (int, error) {
	m.bytes += int64(len(p))
	if m.bar != nil {
		_, _ = m.bar.Write(p) // a progress display that fails must not fail the download
	}
	return len(p), nil
}

// finish ends a download that completed.
func (m *downloadMeter) finish() {
	if m.bar != nil {
		_ = m.bar.Finish()
		return
	}
	what := "downloaded"
	if m.resumed {
		what = "downloaded the remaining"
	}
	fmt.Fprintf(m.w, "cifar10: %s %d bytes in %s\n", what, m.bytes, time.Since(m.start).Round(time.Millisecond))
}

// abort ends a download that failed; the error says what happened.
func (m *downloadMeter) abort() {
	if m.bar != nil {
		_ = m.bar.Exit()
	}
}

// parseContentRange reads "bytes START-END/TOTAL" or "bytes */TOTAL".
// total is -1 when the header says "*".
func parseContentRange(header string) (start, total int64, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(header), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, size, found := strings.Cut(spec, "/")
	if !found {
		return 0, 0, false
	}
	total = -1
	if size != "*" {
		var err error
		if total, err = strconv.ParseInt(size, 10, 64); err != nil || total < 0 {
			return 0, 0, false
		}
	}
	if rng == "*" {
		return 0, total, total >= 0
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	return start, total, true
}

// fileSize returns the size of the file at p, or 0 when there is none.
func fileSize(p string) (int64, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cifar10: %w", err)
	}
	return info.Size(), nil
}

// checkMD5 hashes the file at p and returns an ErrChecksum error when the
// digest is not want (hex, any case).
func checkMD5(p, want string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return fmt.Errorf("%w: %s has MD5 %s, want %s", ErrChecksum, p, got, want)
	}
	return nil
}
