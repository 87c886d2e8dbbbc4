// Package atomicfile writes files so that a reader sees either the old
// content or the complete new content, never a mix or a truncated file.
//
// Write streams the data into a temporary file in the destination's
// directory (a rename is only atomic within one file system), flushes it to
// disk with fsync, and renames it over the destination. When anything fails
// — the writer, a full disk, the fsync, the rename — the temporary file is
// removed and the previous file, if any, is left exactly as it was.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces the file at path with what write produces. write gets a
// buffered writer on a temporary file; when it returns an error, nothing
// is replaced and that error is returned, wrapped with the path. The new
// file has mode 0644: readable by all, writable by the owner.
func Write(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return fmt.Errorf("writing %q: the path names a directory, not a file", path)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: creating a temporary file beside it: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; the first error is the one to report
			_ = os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fmt.Errorf("writing %s: %w (the previous file, if any, is untouched)", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w (is the disk full? the previous file, if any, is untouched)", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: setting permissions: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: flushing to disk: %w (the previous file, if any, is untouched)", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: closing: %w (the previous file, if any, is untouched)", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: moving the new file into place: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// WriteBytes replaces the file at path with data.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// syncDir flushes the directory entry of the rename to disk, so the new
// file survives a power loss. Some systems cannot sync a directory; the
// file itself is already safe then, so failures are ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
