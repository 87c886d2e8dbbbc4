package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

func TestTrainChecksOutputPathsBeforeTraining(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck.safetensors")
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name string
		args []string
		want string // the whole error; DIR stands for dir
	}{
		{"--save into a missing directory", []string{"--save", filepath.Join(missing, "w.st")},
			"--save DIR/missing/w.st: directory DIR/missing does not exist: create it or choose another path"},
		{"--save onto a directory", []string{"--save", sub},
			"--save DIR/sub: is a directory, not a regular file: only regular files are replaced; choose a file path"},
		{"--checkpoint into a missing directory", []string{"--checkpoint", filepath.Join(missing, "ck.st")},
			"--checkpoint DIR/missing/ck.st: directory DIR/missing does not exist: create it or choose another path"},
		{"--checkpoint under a file", []string{"--checkpoint", filepath.Join(file, "ck.st")},
			"--checkpoint DIR/file/ck.st: DIR/file is not a directory: choose another path"},
		{"--plot into a missing directory", []string{"--plot", filepath.Join(missing, "h.png")},
			"--plot DIR/missing/h.png: directory DIR/missing does not exist: create it or choose another path"},
		{"--plot onto a directory", []string{"--plot", dir + string(filepath.Separator)},
			"--plot DIR" + string(filepath.Separator) + ": the path names a directory, not a file: add a file name"},
		{"--save and --checkpoint the same file", []string{"--save", ck, "--checkpoint", ck},
			"--save and --checkpoint both name DIR/ck.safetensors: one would overwrite the other; give each its own file"},
		{"--checkpoint and --plot the same file, spelled differently", []string{"--checkpoint", ck, "--plot", sub + "/../ck.safetensors"},
			"--checkpoint DIR/ck.safetensors and --plot DIR/sub/../ck.safetensors are the same file: one would overwrite the other; give each its own file"},
		{"--save onto the --resume checkpoint", []string{"--resume", ck, "--save", ck},
			"--save DIR/ck.safetensors is the --resume checkpoint: writing it would replace the checkpoint; give --save another file"},
		{"--save a name too long", []string{"--save", filepath.Join(dir, strings.Repeat("w", 256))},
			"--save DIR/" + strings.Repeat("w", 256) + ": the file name is 256 bytes long, more than the 255 bytes file systems allow: choose a shorter name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runTrain(t, append(append(quick, "--seed", "1"), tc.args...)...)
			want := strings.ReplaceAll(filepath.FromSlash(tc.want), "DIR", dir)
			if r.err == nil || r.err.Error() != want {
				t.Fatalf("error %v\nwant %s", r.err, want)
			}
			if r.stdout != "" {
				t.Errorf("printed before the error, so the check came late:\n%s", r.stdout)
			}
			if names := dirNamesOf(t, dir); strings.Join(names, " ") != "file sub" {
				t.Errorf("directory holds %v, want only what the test made", names)
			}
		})
	}
}

func TestTrainWritesThroughSymlinks(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	direct := filepath.Join(dir, "direct.st")
	if r := runTrain(t, append(quick, "--seed", "6", "--save", direct)...); r.err != nil {
		t.Fatal(r.err)
	}
	real := filepath.Join(dir, "models", "w.st")
	if err := os.Mkdir(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("stale weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.st")
	if err := os.Symlink(filepath.Join("models", "w.st"), link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if r := runTrain(t, append(quick, "--seed", "6", "--save", link)...); r.err != nil {
		t.Fatal(r.err)
	}
	if to, err := os.Readlink(link); err != nil || to != filepath.Join("models", "w.st") {
		t.Errorf("%s now links to %q (%v), want the link kept", link, to, err)
	}
	want, err := os.ReadFile(direct)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(real); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the link's target holds %d bytes (%v), want the weights (%d bytes)", len(got), err, len(want))
	}
	if names := dirNamesOf(t, filepath.Dir(real)); len(names) != 1 {
		t.Errorf("the target's directory holds %v, want only the weights", names)
	}
}

func TestTrainSavesLongFileNames(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	var args []string
	for _, f := range []struct {
		flag string
		n    int // bytes in the name
	}{{"--save", 241}, {"--checkpoint", 250}, {"--plot", 255}} {
		args = append(args, f.flag, filepath.Join(dir, strings.Repeat("n", f.n-4)+".out"))
	}
	if r := runTrain(t, append(append(quick, "--seed", "1"), args...)...); r.err != nil {
		t.Fatal(r.err)
	}
	for i := 1; i < len(args); i += 2 {
		if info, err := os.Stat(args[i]); err != nil || info.Size() == 0 {
			t.Errorf("%s: %v, size %v", args[i-1], err, info)
		}
	}
	if names := dirNamesOf(t, dir); len(names) != 3 {
		t.Errorf("directory holds %d files, want the 3 written", len(names))
	}
}

func TestTrainRemovesStaleTemporaryFiles(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	hourAgo := time.Now().Add(-time.Hour)
	files := []struct {
		name  string
		stale bool // last written before this process started
		kept  bool
	}{
		{".ck.safetensors.tmp-2840101234", true, false}, // left by a save that was killed
		{".ck.safetensors.tmp-77", false, true},         // written since: maybe a save under way
		{".ck.safetensors.tmp-77x", true, true},
		{".other.safetensors.tmp-1", true, true},
		{"ck.safetensors.tmp-1", true, true},
		{"notes.txt", true, true},
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.stale {
			if err := os.Chtimes(path, hourAgo, hourAgo); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r := runTrain(t, append(quick, "--seed", "1", "--checkpoint", filepath.Join(dir, "ck.safetensors"))...); r.err != nil {
		t.Fatal(r.err)
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f.name)); (err == nil) != f.kept {
			t.Errorf("%s kept: %v, want %v", f.name, err == nil, f.kept)
		}
	}
}

func TestTrainResumeWarnsOnlyAboutSettingsThatCount(t *testing.T) {
	isolate(t)
	data := filepath.Join(t.TempDir(), cifar10test.BatchesDir)
	cifar10test.WriteDir(t, data, cifar10test.Files(recordsPerFile))
	base := []string{"--batch-size", "8", "--steps-per-epoch", "2", "--verbose", "0", "--seed", "1"}
	synthetic := []string{"--synthetic", "--synthetic-samples", "40"}
	real := []string{"--data", data}
	tests := []struct {
		name          string
		first, resume []string
		warnings      []string // "" for none
	}{
		{"synthetic, then CIFAR-10", synthetic, real,
			[]string{"was trained on --synthetic data, this run on CIFAR-10: the batches differ from the original run's"}},
		{"CIFAR-10 with an unused --synthetic-samples, then CIFAR-10", append(real, "--synthetic-samples", "40"), real, nil},
		{"CIFAR-10, then synthetic", real, synthetic,
			[]string{"was trained on CIFAR-10, this run on --synthetic data: the batches differ from the original run's"}},
		{"synthetic, then synthetic of another size", synthetic, []string{"--synthetic", "--synthetic-samples", "48"},
			[]string{"was written with --synthetic-samples 40, this run has 48: the batches differ from the original run's"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ck := filepath.Join(t.TempDir(), "ck.st")
			if r := runTrain(t, append(append(base, tc.first...), "--epochs", "1", "--checkpoint", ck)...); r.err != nil {
				t.Fatal(r.err)
			}
			r := runTrain(t, append(append(base, tc.resume...), "--epochs", "2", "--resume", ck)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			var got []string
			for _, l := range strings.Split(r.stderr, "\n") {
				if w, ok := strings.CutPrefix(l, "train: warning: "+ck+" "); ok {
					got = append(got, w)
				} else if strings.Contains(l, "warning") {
					t.Errorf("unexpected warning %q", l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}

func dirNamesOf(t *testing.T, dir string) []string {
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
