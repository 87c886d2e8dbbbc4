package cifar10

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// extractArchive unpacks the CIFAR-10 files of the archive that walk
// streams (where names it in errors) into <cacheDir>/cifar-10-batches-bin.
// It writes into a temporary directory inside cacheDir, checks the copy is
// complete, and only then renames it into place, so an interrupted
// extraction never leaves a directory that a later Load would take for a
// valid cache.
//
// Only the CIFAR-10 files are written, each under its base name, after
// walkTar has checked its header: an archive with links, devices, sparse
// files, absolute or ".." names, or a file larger than its official size is
// refused before anything of that entry is written.
func extractArchive(ctx context.Context, where string, walk walkFunc, cacheDir string) error {
	final := filepath.Join(cacheDir, batchesDirName)
	tmp, err := os.MkdirTemp(cacheDir, ".cifar-10-extract-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, batchesDirName)
	if err := os.Mkdir(staged, 0o755); err != nil {
		return err
	}
	err = walk(ctx, func(name string, size int64, r io.Reader) error {
		return writeExtracted(filepath.Join(staged, name), size, r)
	})
	if err != nil {
		return err
	}
	sizes, err := statDatasetFiles(staged)
	if err != nil {
		return err
	}
	if _, _, err := planDataset(sizes, where); err != nil {
		return err
	}
	if err := os.Rename(staged, final); err != nil {
		if info, statErr := os.Stat(final); statErr == nil && info.IsDir() {
			return nil // another process finished the same extraction first
		}
		return fmt.Errorf("moving extracted files to %s: %w", final, err)
	}
	return nil
}

// writeExtracted copies exactly size bytes from r into a new file at p and
// flushes it to disk.
func writeExtracted(p string, size int64, r io.Reader) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	n, err := io.CopyN(f, r, size)
	if errors.Is(err, io.EOF) {
		err = nil // n < size: reported below
	}
	if err == nil && n != size {
		err = fmt.Errorf("%w: %s: got %d bytes from the archive, want %d", ErrCorrupt, filepath.Base(p), n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	return err
}
