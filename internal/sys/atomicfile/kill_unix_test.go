//go:build unix

package atomicfile_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gokeras/gokeras/internal/sys/atomicfile"
)

// childEnv makes the test binary, run again, do one save of its argument
// instead of the tests: "hang" writes 3 MB, says "writing" and waits to be
// killed; "save" writes "new".
const childEnv = "GOKERAS_TEST_ATOMICFILE_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "hang":
		err := atomicfile.Write(os.Args[1], func(w io.Writer) error {
			if _, err := w.Write(make([]byte, 3<<20)); err != nil {
				return err
			}
			fmt.Println("writing")
			time.Sleep(time.Minute)
			return nil
		})
		fmt.Println(err)
		os.Exit(1)
	case "save":
		if err := atomicfile.WriteBytes(os.Args[1], []byte("new")); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func child(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, path)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd
}

func TestSaveKilledMidwayKeepsTheOldFileAndTheNextSaveCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ck.safetensors")
	writeOld(t, path, 0o600)

	hang := child(t, "hang", path)
	out, err := hang.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hang.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "writing\n" {
		_ = hang.Process.Kill()
		t.Fatalf("the saving process said %q (%v), want writing", line, err)
	}
	if err := hang.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = hang.Wait()
	if got, err := os.ReadFile(path); err != nil || string(got) != "old" {
		t.Fatalf("after a SIGKILL mid-save the file holds %.20q (%v), want the old content", got, err)
	}
	names := entries(t, dir)
	if len(names) != 2 || !strings.HasPrefix(names[0], ".ck.safetensors.tmp-") {
		t.Fatalf("directory holds %v, want the file and the killed save's temporary file", names)
	}

	// The next process that saves the file removes what the killed one left.
	if out, err := child(t, "save", path).CombinedOutput(); err != nil {
		t.Fatalf("saving again: %v: %s", err, out)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "new" {
		t.Errorf("file holds %q (%v), want the new content", got, err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only the file", names)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600 kept", info.Mode().Perm(), err)
	}
}
