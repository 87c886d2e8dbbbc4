package callbacks_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/nn"
)

// On a stream whose epochs' steps are not known, the batch figures are
// written at the count of batches trained, as on a dataset: every 3rd of
// 3 epochs of 4 batches at steps 3, 6, 9 and 12.
func TestTensorBoardOnAStream(t *testing.T) {
	ds := blobs(t, 64, 1)
	unknown := data.NewStream(ds.SampleShape(), ds.LabelShape(), data.Unknown, func(ctx context.Context) (data.Iterator, error) {
		return data.FromDataset(ds).Batch(16, false).Open(ctx)
	})
	dir := filepath.Join(t.TempDir(), "logs")
	tb := callbacks.NewTensorBoard(dir)
	tb.UpdateFreq = 3
	if _, err := tinyModel(t, 0.1).Fit(context.Background(), unknown, nn.Epochs(3), nn.Verbose(0), nn.Callbacks(tb)); err != nil {
		t.Fatal(err)
	}
	train, _ := readRun(t, filepath.Join(dir, "train"))
	var steps []int64
	for k := range train {
		if k.tag == "batch_loss" {
			steps = append(steps, k.step)
		}
	}
	slices.Sort(steps)
	if want := []int64{3, 6, 9, 12}; !slices.Equal(steps, want) {
		t.Errorf("batch_loss at steps %v, want %v", steps, want)
	}
}
