package nn

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
)

// TestPipelinedFitOnAStream: pipelined, Fit on a stream of a dataset's
// batches gives the hooks and weights of Fit on the dataset unshuffled,
// also when the stream's length is known only at its end (the step under
// way then finishes with its hooks); an error reading the stream finishes
// the step under way and stops Fit with it.
func TestPipelinedFitOnAStream(t *testing.T) {
	alwaysPipeline(t)
	fit := func(src data.Source, opts ...Option) (*hookLog, []float32, *Sequential, error) {
		m, _ := pipelineModel(t, -1)
		h := &hookLog{async: true, stopAt: -1}
		_, err := m.Fit(context.Background(), src, append(opts, Epochs(2), Verbose(0), Callbacks(h))...)
		w, werr := m.GetWeights()
		if werr != nil {
			t.Fatal(werr)
		}
		return h, w[0].Data().([]float32), m, err
	}
	_, ds := pipelineModel(t, -1)
	want, wantW, _, err := fit(ds, Shuffle(false))
	if err != nil {
		t.Fatal(err)
	}
	// The same batches, of a length known only once a pass has ended.
	unknown := data.NewStream(ds.SampleShape(), ds.LabelShape(), data.Unknown, func(ctx context.Context) (data.Iterator, error) {
		return data.FromDataset(ds).Batch(32, false).Open(ctx)
	})
	for name, s := range map[string]*data.Stream{
		"known length":   data.FromDataset(ds).Batch(32, false).Prefetch(1),
		"unknown length": unknown,
	} {
		got, gotW, _, err := fit(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got.events, want.events) || !slices.Equal(gotW, wantW) {
			t.Errorf("%s: hooks\n%s\nwant\n%s", name, strings.Join(got.events, "\n"), strings.Join(want.events, "\n"))
		}
		if !slices.Equal(got.started, []int64{2, 2, 3, 5, 5, 6}) {
			t.Errorf("%s: steps started at each batch's end: %v", name, got.started)
		}
	}
	boom := errors.New("no more records")
	failing := data.NewStream(ds.SampleShape(), ds.LabelShape(), data.Unknown, func(ctx context.Context) (data.Iterator, error) {
		it, err := data.FromDataset(ds).Batch(32, false).Open(ctx)
		return &failingIter{Iterator: it, left: 2, err: boom}, err
	})
	got, _, m, err := fit(failing)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "fit: epoch 1/2, step 3: reading the stream: no more records") {
		t.Errorf("error %v", err)
	}
	if !slices.Equal(got.started, []int64{2, 2}) || m.Optimizer().Iterations() != 2 {
		t.Errorf("steps started at each batch's end %v, %d steps: want both steps finished with their hooks", got.started, m.Optimizer().Iterations())
	}
}

// failingIter is an Iterator that fails with err after left elements.
type failingIter struct {
	data.Iterator
	left int
	err  error
}

func (f *failingIter) Next() (data.Batch, error) {
	if f.left == 0 {
		return data.Batch{}, f.err
	}
	f.left--
	b, err := f.Iterator.Next()
	if err == io.EOF {
		return b, errors.New("ended early")
	}
	return b, err
}
