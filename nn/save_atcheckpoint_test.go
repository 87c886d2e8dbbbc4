package nn_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/nn"
)

// A whole model saved AtCheckpoint loads with LoadModel and resumes with
// LoadCheckpoint as a checkpoint does: the resumed run ends with the
// weights of the run never stopped. A plain Save is no checkpoint, and
// AtCheckpoint without the optimizer's state is refused.
func TestSaveAtCheckpointResumes(t *testing.T) {
	ds, _, _, _, _ := twoByTwoData(t, 64, 6)
	fit := func(m *nn.Model, opts ...nn.Option) {
		t.Helper()
		if _, err := m.Fit(context.Background(), ds, append([]nn.Option{nn.BatchSize(16), nn.Seed(4), nn.Verbose(0)}, opts...)...); err != nil {
			t.Fatal(err)
		}
	}
	whole := twoByTwo(t)
	compileTwoByTwo(t, whole)
	defer whole.Close()
	fit(whole, nn.Epochs(3))
	want := weightsOf(t, whole)

	first := twoByTwo(t)
	compileTwoByTwo(t, first)
	defer first.Close()
	fit(first, nn.Epochs(2))
	dir := t.TempDir()
	path := filepath.Join(dir, "at.safetensors")
	if err := first.Save(path, nn.AtCheckpoint(nn.Checkpoint{Epoch: 2, Metadata: map[string]string{"run": "a"}})); err != nil {
		t.Fatal(err)
	}
	if m, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0"))); err != nil {
		t.Fatalf("LoadModel: %v", err)
	} else {
		m.Close()
	}
	resumed := twoByTwo(t)
	resumed.SetSeed(50)
	compileTwoByTwo(t, resumed)
	defer resumed.Close()
	ck, err := resumed.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Epoch != 2 || ck.Metadata["run"] != "a" {
		t.Errorf("checkpoint %+v", ck)
	}
	fit(resumed, nn.Epochs(3), nn.InitialEpoch(ck.Epoch))
	if !slices.Equal(weightsOf(t, resumed), want) {
		t.Error("the run resumed from the model file ended with other weights than the run never stopped")
	}

	plain := filepath.Join(dir, "plain.safetensors")
	if err := first.Save(plain); err != nil {
		t.Fatal(err)
	}
	if _, err := resumed.LoadCheckpoint(plain); err == nil || !strings.Contains(err.Error(), "not a checkpoint") {
		t.Errorf("LoadCheckpoint of a plain Save: %v", err)
	}
	err = first.Save(filepath.Join(dir, "x.safetensors"), nn.AtCheckpoint(nn.Checkpoint{Epoch: 1}), nn.IncludeOptimizer(false))
	if err == nil || !strings.Contains(err.Error(), "IncludeOptimizer(false)") {
		t.Errorf("AtCheckpoint without the optimizer: %v", err)
	}
}
