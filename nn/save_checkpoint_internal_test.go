package nn

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/optim"
)

// failAfter passes n bytes through, then fails every write, like a disk
// that fills up midway.
type failAfter struct {
	w io.Writer
	n int
}

var errDiskFull = errors.New("injected: no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n, _ := f.w.Write(p[:f.n])
		f.n = 0
		return n, errDiskFull
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestCheckpointWriteFailingMidwayKeepsTheOldFile(t *testing.T) {
	m := NewSequential(layers.Input(8), layers.Dense(300), layers.Dense(2))
	m.SetSeed(1)
	opt, err := optim.NewSGD(optim.SGDConfig{Momentum: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(opt, losses.MeanSquaredError{}, nil, OnDevice("/CPU:0")); err != nil {
		t.Fatal(err)
	}
	if err := m.Build(8); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ck.safetensors")
	if err := m.SaveCheckpoint(path, Checkpoint{Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range m.weights() {
		w.value.Data().([]float32)[0] += 1 // the next checkpoint differs
	}
	for _, at := range []int{0, 7, 100, len(old) / 2, len(old) - 1} {
		err := m.saveCheckpoint(path, Checkpoint{Epoch: 2}, func(w io.Writer) io.Writer { return &failAfter{w: w, n: at} })
		if !errors.Is(err, errDiskFull) {
			t.Fatalf("failing after %d bytes: error %v, want the injected one", at, err)
		}
		now, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(now, old) {
			t.Fatalf("failing after %d bytes changed the previous checkpoint", at)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("failing after %d bytes left %d entries in the directory, want only the checkpoint", at, len(entries))
		}
	}
	if ck, err := m.LoadCheckpoint(path); err != nil || ck.Epoch != 1 {
		t.Errorf("the kept checkpoint: %+v, %v", ck, err)
	}
}
