package nn_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
)

// pngImages are n random 96×96 RGB images encoded as PNG, as a folder or
// an archive of photos holds them.
func pngImages(b testing.TB, n int) [][]byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		img := image.NewNRGBA(image.Rect(0, 0, 96, 96))
		for y := range 96 {
			for x := range 96 {
				img.Set(x, y, color.NRGBA{uint8(x + i), uint8(y * 2), uint8(rng.IntN(256)), 255})
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
		out[i] = buf.Bytes()
	}
	return out
}

// waitTimer is a stream read through, timing how long its Next calls
// wait: the time a training step waits for its batch.
func waitTimer(s *data.Stream, wait *atomic.Int64) *data.Stream {
	return data.NewStream(s.SampleShape(), s.LabelShape(), s.Cardinality(), func(ctx context.Context) (data.Iterator, error) {
		it, err := s.Open(ctx)
		if err != nil {
			return nil, err
		}
		return timedIter{it, wait}, nil
	})
}

type timedIter struct {
	data.Iterator
	wait *atomic.Int64
}

func (t timedIter) Next() (data.Batch, error) {
	start := time.Now()
	b, err := t.Iterator.Next()
	t.wait.Add(int64(time.Since(start)))
	return b, err
}

// BenchmarkStreamFeedsTraining trains a CNN on 32×32 images that a
// stream's Map decodes from PNG and resizes (96×96 → 32×32) as it reads
// them, one step per op: without Prefetch each step waits for its batch
// to be made; with Prefetch the batches are made beside the steps. The
// metric wait-% is the share of the time spent waiting for data. "small"
// is a CNN whose step takes less time than decoding its batch, which
// no pipeline on the same cores can hide; "cifar10_cnn" is Keras'
// example, whose step takes longer: there the pipeline keeps up.
//
//	go test -run - -bench StreamFeedsTraining -benchtime 100x ./nn
func BenchmarkStreamFeedsTraining(b *testing.B) {
	images := pngImages(b, 64)
	small := func() *nn.Model {
		return nn.NewSequential(
			layers.Rescaling(1.0/255, 0),
			layers.Conv2D(16, 3, layers.ReLU),
			layers.MaxPooling2D(),
			layers.Flatten(),
			layers.Dense(64, layers.ReLU),
			layers.Dense(10, layers.Softmax),
		)
	}
	cnn := func() *nn.Model {
		return nn.NewSequential(
			layers.Rescaling(1.0/255, 0),
			layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU),
			layers.Conv2D(32, 3, layers.ReLU),
			layers.MaxPooling2D(),
			layers.Dropout(0.25),
			layers.Conv2D(64, 3, layers.Padding("same"), layers.ReLU),
			layers.Conv2D(64, 3, layers.ReLU),
			layers.MaxPooling2D(),
			layers.Dropout(0.25),
			layers.Flatten(),
			layers.Dense(512, layers.ReLU),
			layers.Dropout(0.5),
			layers.Dense(10, layers.Softmax),
		)
	}
	for _, bc := range []struct {
		name     string
		prefetch int
		model    func() *nn.Model
	}{
		{"no-prefetch", 0, small},
		{"prefetch-2", 2, small},
		{"cifar10_cnn/no-prefetch", 0, cnn},
		{"cifar10_cnn/prefetch-2", 2, cnn},
	} {
		b.Run(bc.name, func(b *testing.B) {
			src := data.FromFunc(data.Infinite, []int{1}, []int{10}, func(i int, x, y []float32) error {
				x[0] = float32(i % len(images))
				y[i%10] = 1
				return nil
			})
			s := src.Map([]int{32, 32, 3}, nil, 0, func(i int, x, y, ox, oy []float32) error {
				copy(oy, y)
				return data.DecodeImage(bytes.NewReader(images[int(x[0])]), ox, 32, 32, 3)
			}).Batch(32, true)
			if bc.prefetch > 0 {
				s = s.Prefetch(bc.prefetch)
			}
			var wait atomic.Int64
			s = waitTimer(s, &wait)
			m := bc.model()
			m.SetSeed(1)
			if err := m.Compile(newSGD(b, 0.01), losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
				b.Fatal(err)
			}
			// A first step builds the graph: not timed.
			if _, err := m.Fit(context.Background(), s, nn.StepsPerEpoch(1), nn.Verbose(0)); err != nil {
				b.Fatal(err)
			}
			wait.Store(0)
			b.ResetTimer()
			start := time.Now()
			if _, err := m.Fit(context.Background(), s, nn.StepsPerEpoch(b.N), nn.Verbose(0)); err != nil {
				b.Fatal(err)
			}
			total := time.Since(start)
			b.ReportMetric(100*float64(wait.Load())/float64(total), "wait-%")
		})
	}
}
