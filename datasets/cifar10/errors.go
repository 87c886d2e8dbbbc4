package cifar10

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package that belongs to one
// of these classes wraps the matching sentinel, so callers can branch with
// errors.Is while the message itself still names the file or URL involved and
// the way to fix it. Returned errors start with "cifar10: "; the sentinels'
// own text is the short phrase that follows.
var (
	// ErrNotCIFAR10 reports a path (directory or file) that does not hold the
	// CIFAR-10 binary version at all: no batch files, not a gzip archive, a
	// batches.meta.txt without ten class names, or an archive with an entry
	// the official one never has (a sparse file, a link, a device, an
	// absolute name or one with a ".." element).
	ErrNotCIFAR10 = errors.New("not CIFAR-10 data")

	// ErrMissingFile reports that a directory or archive looks like CIFAR-10
	// but lacks one of the files a complete copy has.
	ErrMissingFile = errors.New("missing file")

	// ErrCorrupt reports a batch file whose size is not a whole number of
	// records or is more than BatchRecords records, batch files holding
	// different numbers of records, a record whose label is not 0..9, or an
	// archive that ends early or fails its gzip checksum.
	ErrCorrupt = errors.New("corrupt data")

	// ErrChecksum reports a downloaded or cached archive whose MD5 does not
	// match the expected one.
	ErrChecksum = errors.New("checksum mismatch")

	// ErrDownload reports that the archive could not be fetched: no network,
	// connection refused, no answer within Options.ConnectTimeout, a
	// connection cut or silent for Options.StallTimeout, or an HTTP status
	// other than 200/206 (see StatusError).
	ErrDownload = errors.New("download failed")
)

// StatusError is returned (wrapped) when the server answers the archive
// request with an HTTP status other than 200 OK or 206 Partial Content.
// It matches ErrDownload under errors.Is.
type StatusError struct {
	URL        string
	StatusCode int
	Status     string // the full status line text, e.g. "404 Not Found"
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: server answered %s, want 200 OK", e.URL, e.Status)
}

// Unwrap makes a StatusError match ErrDownload.
func (e *StatusError) Unwrap() error { return ErrDownload }
