//go:build unix

package atomicfile_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
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

// A symbolic link in a sticky world-writable directory (a shared /tmp) is
// followed only when it belongs to the writer or to the directory's owner,
// as Linux's fs.protected_symlinks does: another user's link there is how
// that user would have root's (or anyone's) save replace a file of theirs.
// As root, and as an unprivileged user (uid 65534, a child process), for
// links owned by the writer, the directory's owner and a third user. It
// needs root to give the links and the directory their owners.
func TestWriteFollowsLinksOnlyWhereTheKernelWould(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to make files of other users (CI runs it as root)")
	}
	const nobody, other, dirOwner = 65534, 4321, 4322
	// Not t.TempDir: its parent is 0700, and the other user must get in.
	base, err := os.MkdirTemp("", "atomicfile-users")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := copyTestBinary(t, base)
	for _, tc := range []struct {
		name      string
		writer    int // uid that writes
		linkOwner int
		dirOwner  int
		follow    bool
	}{
		{"root, another user's link", 0, other, 0, false},
		{"root, its own link", 0, 0, 0, true},
		{"root, the directory owner's link", 0, dirOwner, dirOwner, true},
		{"user, another user's link", nobody, other, 0, false},
		{"user, its own link", nobody, nobody, 0, true},
		{"user, the directory owner's link", nobody, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp(base, "case")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			// The victim: a file the writer may replace, in a directory
			// it may write (so that only the link decides).
			victimDir := filepath.Join(dir, "victim")
			mkdir(t, victimDir)
			chown(t, victimDir, tc.writer)
			victim := filepath.Join(victimDir, "precious")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			chown(t, victim, tc.writer)
			shared := filepath.Join(dir, "shared") // as /tmp: sticky, world-writable
			mkdir(t, shared)
			if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			chown(t, shared, tc.dirOwner)
			link := filepath.Join(shared, "out.st")
			symlink(t, victim, link)
			if err := os.Lchown(link, tc.linkOwner, tc.linkOwner); err != nil {
				t.Fatal(err)
			}
			var err2 error
			if tc.writer == 0 {
				err2 = atomicfile.WriteBytes(link, []byte("new"))
			} else {
				cmd := exec.Command(exe, link)
				cmd.Env = append(os.Environ(), childEnv+"=save")
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tc.writer), Gid: uint32(tc.writer)}}
				out, err := cmd.CombinedOutput()
				if err != nil {
					err2 = fmt.Errorf("%s (%v)", strings.TrimSpace(string(out)), err)
				}
			}
			got, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			if tc.follow {
				if err2 != nil || string(got) != "new" {
					t.Errorf("writing through the link: %v, the file holds %q; want it written", err2, got)
				}
				return
			}
			want := "belongs to another user (uid " + fmt.Sprint(tc.linkOwner) + "): such a link is not followed"
			if err2 == nil || !strings.Contains(err2.Error(), want) {
				t.Errorf("writing through the link: error %v, want one saying %q", err2, want)
			}
			if string(got) != "precious" {
				t.Errorf("the link's target holds %q: it was replaced", got)
			}
		})
	}
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Chown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// copyTestBinary copies this test binary into dir, where another user
// may run it (the go command builds it in a directory only root enters).
func copyTestBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "atomicfile.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}
