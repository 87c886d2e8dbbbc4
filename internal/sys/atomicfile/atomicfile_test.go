package atomicfile_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
)

// entries lists the names in dir, to catch temporary files left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	boom := errors.New("injected failure")
	tests := []struct {
		name    string
		write   func(w io.Writer) error
		want    string // content afterwards
		wantErr error
	}{
		{"replaces the file", func(w io.Writer) error {
			_, err := io.WriteString(w, "new content")
			return err
		}, "new content", nil},
		{"fails before writing", func(w io.Writer) error { return boom }, "old content", boom},
		{"fails midway", func(w io.Writer) error {
			// More than the buffer holds, so part of it reaches the temporary file.
			if _, err := w.Write(make([]byte, 3<<20)); err != nil {
				return err
			}
			return boom
		}, "old content", boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "weights.safetensors")
			if err := os.WriteFile(path, []byte("old content"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := atomicfile.Write(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Write error = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("file holds %.20q, want %q", got, tc.want)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only the file", names)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr == nil && info.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", info.Mode().Perm())
			}
		})
	}
}

func TestWriteCreatesAndReportsMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.csv")
	if err := atomicfile.WriteBytes(path, []byte("a,b\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "a,b\r\n" {
		t.Errorf("file holds %q", got)
	}
	err := atomicfile.WriteBytes(filepath.Join(dir, "missing", "x.csv"), nil)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("writing into a missing directory: error %v, want one wrapping os.ErrNotExist", err)
	}
	if err := atomicfile.WriteBytes(dir+"/", nil); err == nil {
		t.Error("writing to a directory path succeeded")
	}
}

// writeOld writes a file with content "old" and mode perm (whatever the umask).
func writeOld(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("old"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func TestWriteKeepsTheModeOfTheFileItReplaces(t *testing.T) {
	for _, perm := range []os.FileMode{0o600, 0o640, 0o664, 0o644, 0o755} {
		t.Run(perm.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ck.safetensors")
			writeOld(t, path, perm)
			if err := atomicfile.WriteBytes(path, []byte("new")); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != perm {
				t.Errorf("mode %v after replacing a %v file, want it kept", got, perm)
			}
		})
	}
}

func TestWriteThroughSymlinks(t *testing.T) {
	tests := []struct {
		name string
		// setup makes the link in dir and returns the link and the file
		// that must receive the content.
		setup func(t *testing.T, dir string) (link, target string)
	}{
		{"relative link", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "real"))
			writeOld(t, filepath.Join(dir, "real", "w.st"), 0o644)
			symlink(t, filepath.Join("real", "w.st"), filepath.Join(dir, "link.st"))
			return filepath.Join(dir, "link.st"), filepath.Join(dir, "real", "w.st")
		}},
		{"absolute link", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "w.st")
			writeOld(t, target, 0o644)
			symlink(t, target, filepath.Join(dir, "link.st"))
			return filepath.Join(dir, "link.st"), target
		}},
		{"chain of links", func(t *testing.T, dir string) (string, string) {
			mkdir(t, filepath.Join(dir, "a"))
			mkdir(t, filepath.Join(dir, "b"))
			writeOld(t, filepath.Join(dir, "b", "w.st"), 0o644)
			symlink(t, filepath.Join("..", "b", "w.st"), filepath.Join(dir, "a", "mid.st"))
			symlink(t, filepath.Join("a", "mid.st"), filepath.Join(dir, "link.st"))
			return filepath.Join(dir, "link.st"), filepath.Join(dir, "b", "w.st")
		}},
		{"link to a file not made yet", func(t *testing.T, dir string) (string, string) {
			symlink(t, "later.st", filepath.Join(dir, "link.st"))
			return filepath.Join(dir, "link.st"), filepath.Join(dir, "later.st")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			link, target := tc.setup(t, dir)
			linkTo, err := os.Readlink(link)
			if err != nil {
				t.Fatal(err)
			}
			before := tree(t, dir)
			if err := atomicfile.WriteBytes(link, []byte("new")); err != nil {
				t.Fatal(err)
			}
			if got, err := os.Readlink(link); err != nil || got != linkTo {
				t.Errorf("the link now reads %q (%v), want it kept pointing at %q", got, err, linkTo)
			}
			if got, err := os.ReadFile(target); err != nil || string(got) != "new" {
				t.Errorf("the link's target holds %q (%v), want the new content", got, err)
			}
			after := tree(t, dir)
			if _, ok := before[target]; !ok {
				before[target] = true
			}
			if !equalSets(before, after) {
				t.Errorf("files before %v, after %v: want the same (no temporary file left)", keys(before), keys(after))
			}
		})
	}
}

func TestWriteRefusesASymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	symlink(t, "b", a)
	symlink(t, "a", b)
	err := atomicfile.WriteBytes(a, []byte("new"))
	if err == nil || !strings.Contains(err.Error(), "symbolic links in a row") {
		t.Fatalf("error %v, want one about a loop of links", err)
	}
}

func TestWriteRemovesOnlyStaleTemporaryFilesOfItsTarget(t *testing.T) {
	long := strings.Repeat("n", 250) + ".st"
	tests := []struct {
		name   string
		target string
		file   string // made in the directory before the write
		old    bool   // last written an hour ago, before this process started
		dir    bool   // a directory, not a file
		kept   bool
	}{
		{"stale temporary file", "w.st", ".w.st.tmp-123456789", true, false, false},
		{"stale, ten digits", "w.st", ".w.st.tmp-4294967295", true, false, false},
		{"stale, of a long name", long, tempName(t, long), true, false, false},
		{"written since this process started", "w.st", ".w.st.tmp-123456789", false, false, true},
		{"not only digits", "w.st", ".w.st.tmp-12a", true, false, true},
		{"no digits", "w.st", ".w.st.tmp-", true, false, true},
		{"eleven digits", "w.st", ".w.st.tmp-12345678901", true, false, true},
		{"another file's", "w.st", ".v.st.tmp-1", true, false, true},
		{"a name that extends the target's", "w.st", ".w.st.x.tmp-1", true, false, true},
		{"no leading dot", "w.st", "w.st.tmp-1", true, false, true},
		{"a directory", "w.st", ".w.st.tmp-1", true, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			other := filepath.Join(dir, tc.file)
			if tc.dir {
				mkdir(t, other)
			} else if err := os.WriteFile(other, []byte("partial"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.old {
				hourAgo := time.Now().Add(-time.Hour)
				if err := os.Chtimes(other, hourAgo, hourAgo); err != nil {
					t.Fatal(err)
				}
			}
			if err := atomicfile.WriteBytes(filepath.Join(dir, tc.target), []byte("new")); err != nil {
				t.Fatal(err)
			}
			_, err := os.Lstat(other)
			if kept := err == nil; kept != tc.kept {
				t.Errorf("%s kept: %v, want %v", tc.file, kept, tc.kept)
			}
		})
	}
}

// tempName is a name Write gives a temporary file of base, seen in the
// directory while a write runs.
func tempName(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, base)
	var name string
	if err := atomicfile.Write(path, func(io.Writer) error {
		for _, n := range entries(t, dir) {
			if n != base {
				name = n
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if name == "" {
		t.Fatal("no temporary file seen during a write")
	}
	return name
}

func TestWriteLongNames(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		wantErr string
	}{
		{"200 bytes", strings.Repeat("a", 197) + ".st", ""},
		{"239 bytes", strings.Repeat("a", 236) + ".st", ""},
		{"240 bytes", strings.Repeat("a", 237) + ".st", ""},
		{"241 bytes", strings.Repeat("a", 238) + ".st", ""},
		{"250 bytes", strings.Repeat("a", 247) + ".st", ""},
		{"255 bytes", strings.Repeat("a", 252) + ".st", ""},
		{"254 bytes of two-byte characters", strings.Repeat("é", 127), ""},
		{"255 bytes ending in three-byte characters", "é" + strings.Repeat("€", 84) + "x", ""},
		{"256 bytes", strings.Repeat("a", 253) + ".st", "256 bytes long, more than the 255 bytes file systems allow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.base)
			for _, check := range []struct {
				name string
				f    func() error
			}{
				{"Check", func() error { return atomicfile.Check(path) }},
				{"Write", func() error { return atomicfile.WriteBytes(path, []byte("new")) }},
			} {
				err := check.f()
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("%s: error %v, want one containing %q", check.name, err, tc.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", check.name, err)
				}
			}
			if tc.wantErr != "" {
				return
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != "new" {
				t.Errorf("file holds %q (%v)", got, err)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only the file", names)
			}
		})
	}
}

func TestLongNamesGetDistinctTemporaryNames(t *testing.T) {
	common := strings.Repeat("x", 245)
	a, b := tempName(t, common+"a.st"), tempName(t, common+"b.st")
	for _, n := range []string{a, b} {
		if len(n) > 255 || !utf8.ValidString(n) {
			t.Errorf("temporary name %q: %d bytes, valid UTF-8 %v", n, len(n), utf8.ValidString(n))
		}
	}
	if strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		t.Errorf("two long names share the temporary name %q", strings.TrimRight(a, "0123456789"))
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the path to check, given a fresh directory.
		setup    func(t *testing.T, dir string) string
		wantErr  string // "" for none
		notExist bool   // the error matches os.ErrNotExist
	}{
		{"a new file", func(t *testing.T, dir string) string { return filepath.Join(dir, "w.st") }, "", false},
		{"an existing file", func(t *testing.T, dir string) string {
			writeOld(t, filepath.Join(dir, "w.st"), 0o600)
			return filepath.Join(dir, "w.st")
		}, "", false},
		{"a missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "missing", "w.st")
		}, "directory DIR/missing does not exist: create it or choose another path", true},
		{"a file as the directory", func(t *testing.T, dir string) string {
			writeOld(t, filepath.Join(dir, "f"), 0o644)
			return filepath.Join(dir, "f", "w.st")
		}, "DIR/f is not a directory: choose another path", false},
		{"an existing directory", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, "sub"))
			return filepath.Join(dir, "sub")
		}, "is a directory, not a regular file: only regular files are replaced; choose a file path", false},
		{"a link to a directory", func(t *testing.T, dir string) string {
			mkdir(t, filepath.Join(dir, "sub"))
			symlink(t, "sub", filepath.Join(dir, "link"))
			return filepath.Join(dir, "link")
		}, "links to DIR/sub, which is a directory, not a regular file", false},
		{"a path ending in a separator", func(t *testing.T, dir string) string {
			return dir + string(filepath.Separator)
		}, "the path names a directory, not a file: add a file name", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := tree(t, dir)
			err := atomicfile.Check(path)
			want := strings.ReplaceAll(tc.wantErr, "DIR", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("Check(%s): %v", path, err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("Check(%s): error %v, want one containing %q", path, err, want)
			case want != "" && !strings.HasPrefix(err.Error(), path+": "):
				t.Errorf("error %q does not start with the path", err)
			case tc.notExist && !errors.Is(err, os.ErrNotExist):
				t.Errorf("error %v does not match os.ErrNotExist", err)
			}
			if after := tree(t, dir); !equalSets(before, after) {
				t.Errorf("Check changed the directory: before %v, after %v", keys(before), keys(after))
			}
			// Write refuses what Check refuses, with the same reason.
			werr := atomicfile.WriteBytes(path, []byte("new"))
			if (werr == nil) != (err == nil) || err != nil && !strings.Contains(werr.Error(), want) {
				t.Errorf("Write's error %v, Check's %v", werr, err)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, oldname, newname string) {
	t.Helper()
	if err := os.Symlink(oldname, newname); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// tree lists every path under dir, to catch files left or lost.
func tree(t *testing.T, dir string) map[string]bool {
	t.Helper()
	paths := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		paths[path] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// A read-only file (no write permission for its owner) is not replaced,
// by its owner or root, directly or through a link, as cp would not
// overwrite it: it stays as it was. Before, it was replaced silently.
func TestWriteRefusesAReadOnlyFile(t *testing.T) {
	for _, perm := range []os.FileMode{0o444, 0o400, 0o555, 0o044} {
		t.Run(fmt.Sprintf("%04o", perm), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ck.safetensors")
			writeOld(t, path, perm)
			link := filepath.Join(dir, "link")
			if err := os.Symlink("ck.safetensors", link); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path, link} {
				want := fmt.Sprintf("read-only (mode %04o): make it writable (chmod u+w) or remove it to replace it", perm)
				if err := atomicfile.WriteBytes(p, []byte("new")); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Write %s: error %v, want one saying %q", p, err, want)
				}
				if err := atomicfile.Check(p); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Check %s: error %v, want one saying %q", p, err, want)
				}
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
				t.Errorf("the read-only file holds %q (%v), want it untouched", b, err)
			}
			if names := entries(t, dir); len(names) != 2 {
				t.Errorf("directory holds %v, want the file and the link only", names)
			}
		})
	}
}
