//go:build cudavm && cgo

package cuda

import (
	"context"
	"math"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/internal/modeltest"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

// TestPipelinedFitOnAStream fits on /GPU:0, pipelined, from a stream of a
// dataset's batches made ahead on a goroutine (Prefetch), and from the
// dataset itself unshuffled: every batch's figures, the validation on a
// stream and the weights must be the same bit for bit, and the stream's
// steps must overlap as the dataset's do (at a batch's end the next step
// has started, but for an epoch's last two). On the emulated GPU, a batch
// buffer reused while a step still read it would change the results.
func TestPipelinedFitOnAStream(t *testing.T) {
	needGPU(t)
	ds := modeltest.Blobs(t, 500, []int{32, 32, 3}, 1) // 15 batches of 32 and one of 20
	fit := func(src data.Source, val data.Source, opts ...nn.Option) (*nn.History, []batchRecord, *nn.Sequential) {
		m := mlpModel(layers.Softmax)
		m.SetSeed(11)
		opt, err := optim.NewAdam(optim.AdamConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Compile(opt, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{metrics.NewAccuracy()}, nn.OnDevice("/GPU:0")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		rec := &batchRecorder{}
		h, err := m.Fit(context.Background(), src, append(opts, nn.Epochs(2), nn.Verbose(0), nn.ValidationData(val), nn.Callbacks(rec))...)
		if err != nil {
			t.Fatal(err)
		}
		return h, rec.batches, m
	}
	stream := func() *data.Stream { return data.FromDataset(ds).Batch(32, false).Prefetch(2) }
	wantH, wantB, wantM := fit(ds, ds, nn.BatchSize(32), nn.Shuffle(false))
	gotH, gotB, gotM := fit(stream(), stream())
	if len(gotB) != 32 || len(wantB) != 32 {
		t.Fatalf("%d and %d batch ends, want 32", len(gotB), len(wantB))
	}
	for i, g := range gotB {
		w := wantB[i]
		if g.batch != w.batch || g.iterations != w.iterations {
			t.Errorf("batch end %d: batch %d with %d steps started from the stream, batch %d with %d from the dataset", i, g.batch, g.iterations, w.batch, w.iterations)
		}
		for k, v := range w.logs {
			if math.Float64bits(g.logs[k]) != math.Float64bits(v) {
				t.Errorf("epoch %d batch %d: %s %v from the stream, %v from the dataset", g.epoch, g.batch, k, g.logs[k], v)
			}
		}
	}
	if want := int64(2); wantB[0].iterations != want {
		t.Errorf("the dataset's first batch ended with %d steps started, want %d: Fit did not pipeline", wantB[0].iterations, want)
	}
	for _, k := range wantH.Keys {
		for e, v := range wantH.Get(k) {
			if math.Float64bits(gotH.Get(k)[e]) != math.Float64bits(v) {
				t.Errorf("epoch %d: %s %v from the stream, %v from the dataset", e, k, gotH.Get(k)[e], v)
			}
		}
	}
	gw, err := gotM.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	ww, err := wantM.GetWeights()
	if err != nil {
		t.Fatal(err)
	}
	for i := range ww {
		a, b := gw[i].Data().([]float32), ww[i].Data().([]float32)
		for j := range b {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("weight %d value %d: %v from the stream, %v from the dataset", i, j, a[j], b[j])
			}
		}
	}
}
