package layers_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gokeras/gokeras/nn"
)

// stopAt cancels a Fit after a given batch of a given epoch.
type stopAt struct {
	nn.CallbackBase
	epoch, batch, current int
	cancel                context.CancelFunc
}

func (c *stopAt) OnEpochBegin(e int, _ nn.Logs) error { c.current = e; return nil }
func (c *stopAt) OnTrainBatchEnd(b int, _ nn.Logs) error {
	if c.current == c.epoch && b == c.batch {
		c.cancel()
	}
	return nil
}

// TestAugmentationResumes: a Fit of a model with RandomFlip and
// RandomTranslation (unseeded: their keys drawn from the model's seed)
// interrupted mid-epoch, saved, loaded and resumed at its epoch and step
// ends with the weights of the run never stopped, bit for bit: the
// saved keys and the step draw the same flips and shifts again. A
// control resumed one step late ends elsewhere.
func TestAugmentationResumes(t *testing.T) {
	ds, _ := augmentImages(t, 80) // 5 steps of 16 an epoch
	fit := func(ctx context.Context, m *nn.Sequential, opts ...nn.Option) error {
		_, err := m.Fit(ctx, ds, append([]nn.Option{nn.Epochs(3), nn.BatchSize(16), nn.Seed(7), nn.Verbose(0)}, opts...)...)
		return err
	}
	weights := func(m *nn.Sequential) []float32 {
		ws, err := m.GetWeights()
		if err != nil {
			t.Fatal(err)
		}
		var all []float32
		for _, w := range ws {
			all = append(all, w.Data().([]float32)...)
		}
		return all
	}
	whole := augmentCNN(true, "/CPU:0")
	defer whole.Close()
	if err := fit(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	want := weights(whole)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := augmentCNN(true, "/CPU:0")
	defer first.Close()
	err := fit(ctx, first, nn.Callbacks(&stopAt{epoch: 1, batch: 2, cancel: cancel}))
	var ie *nn.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("interrupted Fit returned %v", err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := first.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, late := range []int{0, 1} {
		m, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := fit(context.Background(), m, nn.InitialEpoch(ie.Epoch), nn.InitialStep(ie.Step+late)); err != nil {
			t.Fatal(err)
		}
		if same := slices.Equal(weights(m), want); same != (late == 0) {
			t.Errorf("resumed %d step(s) late: the weights equal the uninterrupted run's: %t", late, same)
		}
	}
}
