//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestTrainRefusesOutputsThatAreNotRegularFiles(t *testing.T) {
	isolate(t)
	// A short directory: a socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "train")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	// A device made in the test's directory, the same as /dev/null: a train
	// that replaced it would do no harm, unlike one given /dev/null (as
	// root, train once replaced /dev/null with its weights).
	null := filepath.Join(dir, "null")
	haveDevice := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3) == nil
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--save onto a named pipe", []string{"--save", fifo}, "--save " + fifo + ": is a named pipe, not a regular file: only regular files are replaced; choose a file path"},
		{"--checkpoint onto a device", []string{"--checkpoint", null}, "--checkpoint " + null + ": is a character device, not a regular file: only regular files are replaced; choose a file path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "device") && !haveDevice {
				t.Skip("cannot make a device node (not root?)")
			}
			r := runTrain(t, append(append(quick, "--seed", "1"), tc.args...)...)
			if r.err == nil || r.err.Error() != tc.want {
				t.Fatalf("error %v\nwant %s", r.err, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("printed before the error, so the check came late:\n%s", r.stdout)
			}
		})
	}
	for _, path := range []string{fifo, null} {
		if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() {
			t.Errorf("%s was replaced by a regular file", path)
		}
	}
}

func TestTrainKeepsFileModes(t *testing.T) {
	isolate(t)
	defer syscall.Umask(syscall.Umask(0o027))
	dir := t.TempDir()
	ck, weights, plot := filepath.Join(dir, "ck.st"), filepath.Join(dir, "w.st"), filepath.Join(dir, "h.png")
	// A private checkpoint from an earlier run: it must stay private.
	if err := os.WriteFile(ck, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runTrain(t, append(quick, "--seed", "1", "--checkpoint", ck, "--save", weights, "--plot", plot)...); r.err != nil {
		t.Fatal(r.err)
	}
	for _, f := range []struct {
		path string
		want os.FileMode
	}{
		{ck, 0o600},      // the mode of the file it replaced
		{weights, 0o640}, // new: 0666 less the umask 027
		{plot, 0o640},
	} {
		info, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != f.want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(f.path), got, f.want)
		}
	}
}

func TestTrainChecksOutputDirectoriesAreWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	isolate(t)
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	for _, flag := range []string{"--save", "--checkpoint", "--plot"} {
		path := filepath.Join(ro, "out")
		r := runTrain(t, append(quick, "--seed", "1", flag, path)...)
		want := flag + " " + path + ": directory " + ro + " is not writable (permission denied): choose another path or make it writable"
		if r.err == nil || r.err.Error() != want {
			t.Errorf("error %v\nwant %s", r.err, want)
		}
		if r.stdout != "" {
			t.Errorf("%s: printed before the error, so the check came late:\n%s", flag, r.stdout)
		}
	}
}
