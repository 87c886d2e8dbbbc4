// Package atomicfile writes files so that a reader sees either the old
// content or the complete new content, never a mix or a truncated file.
//
// Write streams the data into a temporary file in the destination's
// directory (a rename is only atomic within one file system), flushes it to
// disk with fsync, and renames it over the destination. When anything fails
// — the writer, a full disk, the fsync, the rename — the temporary file is
// removed and the previous file, if any, is left exactly as it was.
//
// Only regular files are replaced: a destination that is a directory, a
// device, a named pipe or a socket is refused. A symbolic link is written
// through: the file it finally names is replaced (the temporary file is
// made beside that file), and the link is kept. A link is followed only
// where Linux's fs.protected_symlinks (on by default) would follow it: not
// a link in a sticky world-writable directory (such as /tmp) that belongs
// to neither the caller nor the directory's owner, which another user may
// have planted there to have the caller's file replace one of the
// caller's own.
//
// The new file keeps the permissions of the file it replaces; a new file
// gets 0666 less the process's umask, as a file made by os.Create does. A
// read-only file (no write permission for its owner, as chmod a-w leaves
// it) is not replaced, even by its owner or root: make it writable first,
// or remove it, as one would to overwrite it with cp.
//
// The temporary file is named ".NAME.tmp-DIGITS" (for a NAME too long for
// that, a shortened NAME with a hash of the whole name). A process killed
// while saving leaves it behind; the next Write of the same destination
// removes such files when they are older than the process that writes,
// and nothing else.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// processStart is when this process started, near enough: a temporary file
// last written before it is not one this process is writing.
var processStart = time.Now()

// writing holds the temporary files this process is writing, so that a
// file system clock a little behind cannot make one of them look stale.
var writing sync.Map

const (
	// nameMax is the longest file name, in bytes, common file systems
	// allow (NAME_MAX on Linux, the BSDs and macOS).
	nameMax = 255
	// tempMarker comes between the destination's name and the digits in a
	// temporary file's name.
	tempMarker = ".tmp-"
	// maxDigits is the length of the longest random number in a temporary
	// file's name: a uint32 in decimal.
	maxDigits = 10
	// maxLinks is how many symbolic links are followed, as Linux does.
	maxLinks = 40
)

// Write replaces the file at path with what write produces. write gets a
// buffered writer on a temporary file; when it returns an error, nothing
// is replaced and that error is returned, wrapped with the path.
func Write(path string, write func(w io.Writer) error) (err error) {
	d, err := destination(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	removeStale(d.dir, d.base)
	perm := fs.FileMode(0o666) // less the umask, applied by the system
	if d.old != nil {
		perm = d.old.Mode().Perm()
	}
	f, err := createTemp(d.dir, d.base, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, explainCreate(d.dir, err))
	}
	tmp := f.Name()
	writing.Store(tmp, true)
	defer writing.Delete(tmp)
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
	if d.old != nil {
		// The umask may have cleared bits the old file had: keep its mode exactly.
		if err := f.Chmod(perm); err != nil {
			return fmt.Errorf("writing %s: keeping the permissions %v of the file it replaces: %w", path, perm, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: flushing to disk: %w (the previous file, if any, is untouched)", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: closing: %w (the previous file, if any, is untouched)", path, err)
	}
	if err := os.Rename(tmp, d.target); err != nil {
		return fmt.Errorf("writing %s: moving the new file into place: %w", path, err)
	}
	syncDir(dirName(d.dir))
	return nil
}

// WriteBytes replaces the file at path with data.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Check reports whether Write could replace the file at path, without
// writing it: the path names a regular file or nothing (through symbolic
// links), its directory exists, and a file can be made there (Check makes
// one and removes it). Call it before long work whose result goes to path,
// so that a bad path fails at once instead of after the work. The error
// starts with the path.
func Check(path string) error {
	d, err := destination(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := createTemp(d.dir, d.base, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", path, explainCreate(d.dir, err))
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: removing the test file %s: %w", path, name, err)
	}
	return nil
}

// dest is where Write puts a path's content.
type dest struct {
	target    string      // path with its symbolic links followed
	dir, base string      // target split, dir as written ("" or ending in a separator)
	old       fs.FileInfo // the regular file at target, nil when there is none
}

// reasonError is an error whose message explains the cause and the fix,
// and which still matches the system error beneath it with errors.Is.
type reasonError struct {
	msg string
	err error
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.err }

// destination follows the symbolic links at path to the file they finally
// name, and refuses what is not a regular file or cannot be one.
func destination(path string) (dest, error) {
	target := path
	for links := 0; ; links++ {
		dir, base := filepath.Split(target)
		if base == "" || base == "." || base == ".." {
			return dest{}, errors.New("the path names a directory, not a file: add a file name")
		}
		if len(base) > nameMax {
			return dest{}, fmt.Errorf("the file name is %d bytes long, more than the %d bytes file systems allow: choose a shorter name", len(base), nameMax)
		}
		info, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return dest{target: target, dir: dir, base: base}, nil
		}
		if err != nil {
			// A missing or unreadable directory: explain it as creating would.
			return dest{}, explainCreate(dir, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			if !info.Mode().IsRegular() {
				what := "is " + kind(info.Mode())
				if target != path {
					what = "links to " + target + ", which is " + kind(info.Mode())
				}
				return dest{}, fmt.Errorf("%s, not a regular file: only regular files are replaced; choose a file path", what)
			}
			if info.Mode().Perm()&0o200 == 0 {
				what := "is"
				if target != path {
					what = "links to " + target + ", which is"
				}
				return dest{}, fmt.Errorf("%s read-only (mode %04o): make it writable (chmod u+w) or remove it to replace it, or choose another path", what, info.Mode().Perm())
			}
			return dest{target: target, dir: dir, base: base, old: info}, nil
		}
		if links == maxLinks {
			return dest{}, fmt.Errorf("more than %d symbolic links in a row (a loop?): point the path at a file", maxLinks)
		}
		if err := mayFollow(target, dirName(dir), info); err != nil {
			return dest{}, err
		}
		link, err := os.Readlink(target)
		if err != nil {
			return dest{}, fmt.Errorf("reading the symbolic link %s: %w", target, err)
		}
		if !filepath.IsAbs(link) {
			// Relative to the link's directory as written: cleaning "dir/.."
			// by hand would be wrong when dir is itself a link.
			link = dir + link
		}
		target = link
	}
}

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// dirName is a directory as split off a path, for opening and messages.
// It is not cleaned: "link/.." is not always "." when link is a link.
func dirName(dir string) string {
	if dir == "" {
		return "."
	}
	if d := strings.TrimRight(dir, string(filepath.Separator)); d != "" && !strings.HasSuffix(d, ":") {
		return d
	}
	return dir // the root, "/" or "C:\"
}

// explainCreate turns the error of making a file in dir into one that says
// what is wrong with the directory and what to do.
func explainCreate(dir string, err error) error {
	name := dirName(dir)
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	info, serr := os.Stat(name)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return &reasonError{fmt.Sprintf("directory %s does not exist: create it or choose another path", name), err}
	case serr == nil && !info.IsDir():
		return &reasonError{fmt.Sprintf("%s is not a directory: choose another path", name), err}
	case serr != nil:
		var spe *fs.PathError
		if errors.As(serr, &spe) {
			serr = spe.Err
		}
		return &reasonError{fmt.Sprintf("directory %s cannot be reached (%v): choose another path", name, serr), err}
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return &reasonError{fmt.Sprintf("directory %s is not writable (%v): choose another path or make it writable "+
			"(a file there is replaced through a new file beside it, so that a reader never sees it half written: "+
			"a writable file in a read-only directory cannot be)", name, cause), err}
	default:
		return &reasonError{fmt.Sprintf("cannot create a file in directory %s (%v): choose another path", name, cause), err}
	}
}

// tempPrefix is the name of base's temporary files up to the random
// digits: ".NAME.tmp-", or, when that would make a name longer than the
// file system allows, NAME cut short and a hash of all of it.
func tempPrefix(base string) string {
	p := "." + base + tempMarker
	if len(p)+maxDigits <= nameMax {
		return p
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(base))
	suffix := fmt.Sprintf("~%08x%s", h.Sum32(), tempMarker)
	cut := nameMax - maxDigits - len(suffix) - 1
	for cut > 0 && !utf8.RuneStart(base[cut]) {
		cut-- // keep whole characters
	}
	return "." + base[:cut] + suffix
}

// createTemp makes a new temporary file for base in dir, with perm less
// the umask.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	prefix := dir + tempPrefix(base)
	for try := 0; ; try++ {
		f, err := os.OpenFile(prefix+strconv.FormatUint(uint64(rand.Uint32()), 10), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) || try == 10000 {
			return f, err
		}
	}
}

// removeStale removes base's temporary files in dir that a killed process
// left: regular files named exactly as createTemp names them and last
// written before this process started. Failures are ignored: they only
// leave the files where they were.
func removeStale(dir, base string) {
	entries, err := os.ReadDir(dirName(dir))
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !isNumber(digits) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(processStart) {
			continue
		}
		if _, ok := writing.Load(dir + e.Name()); !ok {
			_ = os.Remove(dir + e.Name())
		}
	}
}

// isNumber reports whether s is what createTemp puts after the prefix.
func isNumber(s string) bool {
	if s == "" || len(s) > maxDigits {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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
