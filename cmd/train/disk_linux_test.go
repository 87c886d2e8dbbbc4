package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gokeras/gokeras/nn"
)

// smallDisk mounts a tmpfs of size bytes on a new directory, for the
// length of the test, or skips the test where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a small file system needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	return dir
}

// fill takes all of dir's file system but about keep bytes.
func fill(t *testing.T, dir string, keep int64) {
	t.Helper()
	free, ok := freeBytes(dir)
	if !ok {
		t.Fatal("cannot read the free space")
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, max(free-keep, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A --csv-log on a full disk stops training at the first epoch's end, but
// the checkpoint of that epoch, on another disk, is written first, and
// the error says how to resume: the log used to fail first and cost the
// epoch's weights.
func TestTrainLogOnAFullDiskKeepsTheCheckpoint(t *testing.T) {
	isolate(t)
	full := smallDisk(t, "64k")
	fill(t, full, 0)
	ck := filepath.Join(t.TempDir(), "ck.safetensors")
	log := filepath.Join(full, "log.csv")
	r := runTrain(t, append(quick, "--seed", "1", "--checkpoint", ck, "--csv-log", log)...)
	if r.err == nil || !strings.Contains(r.err.Error(), "CSVLogger") {
		t.Fatalf("error %v, want the CSV log's failure", r.err)
	}
	for _, want := range []string{"the checkpoint after epoch 1 is saved in " + ck, "resume with:\n  train ", "--resume " + ck} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not say %q", r.err, want)
		}
	}
	if got, err := nn.ReadCheckpoint(ck); err != nil || got.Epoch != 1 {
		t.Errorf("checkpoint at epoch %d, %v; want the first epoch's", got.Epoch, err)
	}
}

// --save and --checkpoint on a file system without room for the files
// they will hold are refused before training: the size is known from the
// start, and the save used to fail only at the end.
func TestTrainRefusesASaveThatCannotFit(t *testing.T) {
	isolate(t)
	disk := smallDisk(t, "8m")
	fill(t, disk, 2<<20) // the flagship's weights alone take 49 MB
	for _, flag := range []string{"--save", "--checkpoint"} {
		path := filepath.Join(disk, "out.safetensors")
		r := runTrain(t, append(quick, "--seed", "1", flag, path)...)
		want := flag + " " + path + ": its file system has "
		if r.err == nil || !strings.Contains(r.err.Error(), want) || !strings.Contains(r.err.Error(), "free some space or choose another path") {
			t.Errorf("%s: error %v, want one saying %q", flag, r.err, want)
		}
		if strings.Contains(r.stdout, "Epoch 1/") {
			t.Errorf("%s: training started before the refusal:\n%s", flag, r.stdout)
		}
	}
}
