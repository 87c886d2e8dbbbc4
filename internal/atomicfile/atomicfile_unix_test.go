//go:build unix

package atomicfile_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gokeras/gokeras/internal/atomicfile"
)

func TestWriteRefusesWhatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string) // makes the node at path
		want string
	}{
		{"directory", func(t *testing.T, path string) { mkdir(t, path) }, "is a directory, not a regular file"},
		{"named pipe", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("cannot make a named pipe: %v", err)
			}
		}, "is a named pipe, not a regular file"},
		{"socket", func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Skipf("cannot make a socket: %v", err)
			}
			t.Cleanup(func() { l.Close() })
		}, "is a socket, not a regular file"},
		{"character device", func(t *testing.T, path string) {
			// The same device as /dev/null, made in the test's directory so
			// that a Write that replaces it does no harm.
			if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("cannot make a device node (not root?): %v", err)
			}
		}, "is a character device, not a regular file"},
		{"link to a named pipe", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path+".fifo", 0o644); err != nil {
				t.Skipf("cannot make a named pipe: %v", err)
			}
			symlink(t, filepath.Base(path)+".fifo", path)
		}, "which is a named pipe, not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A short directory: a socket's path is limited to about 100 bytes.
			dir, err := os.MkdirTemp("", "af")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			path := filepath.Join(dir, "x")
			tc.make(t, path)
			before, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct {
				name string
				call func() error
			}{
				{"Check", func() error { return atomicfile.Check(path) }},
				{"Write", func() error { return atomicfile.WriteBytes(path, []byte("new")) }},
			} {
				err := f.call()
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "choose a file path") {
					t.Errorf("%s: error %v, want one containing %q and the fix", f.name, err, tc.want)
				}
			}
			after, err := os.Lstat(path)
			if err != nil || after.Mode() != before.Mode() {
				t.Errorf("%s is now %v (%v), want it untouched (%v)", path, after.Mode(), err, before.Mode())
			}
		})
	}
}

func TestCheckRefusesDevNull(t *testing.T) {
	if _, err := os.Lstat("/dev/null"); err != nil {
		t.Skip("no /dev/null")
	}
	err := atomicfile.Check("/dev/null")
	if want := "/dev/null: is a character device, not a regular file"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want one starting %q", err, want)
	}
}

func TestWriteHonoursTheUmaskForNewFiles(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{
		{0o022, 0o644},
		{0o027, 0o640},
		{0o077, 0o600},
		{0o002, 0o664},
	} {
		t.Run(fmt.Sprintf("umask %03o", tc.umask), func(t *testing.T) {
			old := syscall.Umask(tc.umask)
			defer syscall.Umask(old)
			path := filepath.Join(t.TempDir(), "new.st")
			if err := atomicfile.WriteBytes(path, []byte("new")); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != tc.want {
				t.Errorf("new file's mode %v under umask %03o, want %v", got, tc.umask, tc.want)
			}
		})
	}
}

func TestCheckRefusesAReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	path := filepath.Join(ro, "w.st")
	want := path + ": directory " + ro + " is not writable (permission denied): choose another path or make it writable"
	if err := atomicfile.Check(path); err == nil || err.Error() != want {
		t.Errorf("Check: error %v, want %q", err, want)
	}
	if err := atomicfile.WriteBytes(path, nil); err == nil || !strings.Contains(err.Error(), "is not writable") {
		t.Errorf("Write: error %v, want one saying the directory is not writable", err)
	}
}
