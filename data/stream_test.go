package data

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokeras/gokeras/internal/leaktest"
)

// counting is a stream of n samples (Unknown: n, then io.EOF) whose sample
// i is (i, -i) with label i%3; calls counts fn's calls.
func counting(n int, calls *atomic.Int64) *Stream {
	card := n
	if n < 0 {
		card = Infinite
	}
	return FromFunc(card, []int{2}, nil, func(i int, x, y []float32) error {
		if calls != nil {
			calls.Add(1)
		}
		x[0], x[1], y[0] = float32(i), float32(-i), float32(i%3)
		return nil
	})
}

// readAll reads one pass of s: each element's first sample values.
func readAll(t testing.TB, s *Stream) []Batch {
	t.Helper()
	it, err := s.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []Batch
	for {
		b, err := it.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		if len(out) > 100000 {
			t.Fatal("the stream does not end")
		}
	}
}

// firsts is the sample numbers (x[0]) of each element's samples.
func firsts(bs []Batch) [][]int {
	out := make([][]int, len(bs))
	for k, b := range bs {
		for j := range b.N {
			out[k] = append(out[k], int(b.X[2*j]))
		}
	}
	return out
}

// flat is every sample number, in order.
func flat(bs []Batch) []int {
	var out []int
	for _, e := range firsts(bs) {
		out = append(out, e...)
	}
	return out
}

func TestStreamBatchTakeRepeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Stream
		want [][]int
		card int
	}{
		{"samples", counting(3, nil), [][]int{{0}, {1}, {2}}, 3},
		{"batch keeps the remainder", counting(7, nil).Batch(3, false), [][]int{{0, 1, 2}, {3, 4, 5}, {6}}, 3},
		{"batch drops the remainder", counting(7, nil).Batch(3, true), [][]int{{0, 1, 2}, {3, 4, 5}}, 2},
		{"batches of batches", counting(7, nil).Batch(3, false).Batch(2, false), [][]int{{0, 1}, {2, 3}, {4, 5}, {6}}, Unknown},
		{"take of endless", counting(-1, nil).Take(4).Batch(3, false), [][]int{{0, 1, 2}, {3}}, 2},
		{"take more than there are", counting(2, nil).Take(5), [][]int{{0}, {1}}, 2},
		{"skip", counting(5, nil).Skip(3), [][]int{{3}, {4}}, 2},
		{"skip them all", counting(2, nil).Skip(3), nil, 0},
		{"skip of endless", counting(-1, nil).Skip(2).Take(2), [][]int{{2}, {3}}, 2},
		{"repeat", counting(2, nil).Repeat(3), [][]int{{0}, {1}, {0}, {1}, {0}, {1}}, 6},
		{"repeat then batch", counting(3, nil).Repeat(2).Batch(4, false), [][]int{{0, 1, 2, 0}, {1, 2}}, 2},
		{"repeat forever then take", counting(2, nil).Repeat(-1).Take(5), [][]int{{0}, {1}, {0}, {1}, {0}}, 5},
		{"repeat of nothing", counting(0, nil).Repeat(-1), nil, 0},
		{"repeat 0 times", counting(2, nil).Repeat(0), nil, 0},
		{"dataset", FromDataset(threeClasses(t)).Take(2), nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Cardinality(); got != tc.card {
				t.Errorf("cardinality %d, want %d", got, tc.card)
			}
			got := readAll(t, tc.s)
			if tc.want != nil || len(got) == 0 {
				if g := firsts(got); !slices.EqualFunc(g, tc.want, slices.Equal) {
					t.Errorf("elements %v, want %v", g, tc.want)
				}
			}
			if tc.card >= 0 && len(got) != tc.card {
				t.Errorf("%d elements, cardinality %d", len(got), tc.card)
			}
		})
	}
	if c := counting(-1, nil).Batch(8, false).Cardinality(); c != Infinite {
		t.Errorf("an endless stream batched has cardinality %d, want Infinite", c)
	}
}

// gatherCounter counts the samples of each GatherInputs call.
type gatherCounter struct {
	Dataset
	sizes []int
}

func (g *gatherCounter) GatherInputs(idx []int, dst []float32) error {
	g.sizes = append(g.sizes, len(idx))
	return g.Dataset.GatherInputs(idx, dst)
}

// A stream of a Dataset gathers a batch's samples at once, and holds the
// dataset's samples and labels in order.
func TestFromDatasetBatchesGatherTogether(t *testing.T) {
	ds := threeClasses(t)
	g := &gatherCounter{Dataset: ds}
	got := readAll(t, FromDataset(g).Batch(32, false))
	if !slices.Equal(g.sizes, []int{32, 32, 6}) {
		t.Errorf("gathers of %v samples, want [32 32 6]", g.sizes)
	}
	idx := make([]int, 70)
	for i := range idx {
		idx[i] = i
	}
	wantX, wantY := make([]float32, 70*4), make([]float32, 70*3)
	if err := ds.GatherInputs(idx, wantX); err != nil {
		t.Fatal(err)
	}
	if err := ds.GatherLabels(idx, wantY); err != nil {
		t.Fatal(err)
	}
	var gotX, gotY []float32
	for _, b := range got {
		gotX, gotY = append(gotX, b.X...), append(gotY, b.Y...)
	}
	if !slices.Equal(gotX, wantX) || !slices.Equal(gotY, wantY) {
		t.Error("the stream's samples or labels are not the dataset's")
	}
}

func TestStreamErrors(t *testing.T) {
	boom := errors.New("boom")
	failing := FromFunc(Unknown, []int{1}, []int{1}, func(i int, x, y []float32) error {
		if i == 5 {
			return boom
		}
		return nil
	})
	panicking := FromFunc(10, []int{1}, []int{1}, func(i int, x, y []float32) error {
		if i == 3 {
			panic("bad sample")
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		s    *Stream
		want string
	}{
		{"generator error", failing.Batch(2, false), "data.FromFunc: sample 5: boom"},
		{"through prefetch", failing.Batch(2, false).Prefetch(2), "data.FromFunc: sample 5: boom"},
		{"panic", panicking.Shuffle(4, 1).Prefetch(1), "sample 3: the function panicked: bad sample"},
		{"map error", counting(9, nil).Map(nil, nil, 3, func(i int, x, y, ox, oy []float32) error {
			if i == 7 {
				return boom
			}
			return nil
		}).Prefetch(3), "data.Stream.Map: sample 7: boom"},
		{"bad batch", counting(3, nil).Batch(0, false).Prefetch(1), "data.Stream.Batch: batch size 0: give 1 or more"},
		{"bad shuffle", counting(3, nil).Shuffle(0, 1).Batch(2, false), "data.Stream.Shuffle: buffer of 0 elements"},
		{"bad prefetch", counting(3, nil).Prefetch(0), "data.Stream.Prefetch: 0 elements"},
		{"bad take", counting(3, nil).Take(-1), "data.Stream.Take: -1 elements"},
		{"bad skip", counting(3, nil).Skip(-1), "data.Stream.Skip: -1 elements"},
		{"bad repeat", counting(3, nil).Repeat(-2), "data.Stream.Repeat: -2 times"},
		{"bad shape", FromFunc(3, []int{0}, nil, func(int, []float32, []float32) error { return nil }), "data.FromFunc: sample shape [0]"},
		{"no function", FromFunc(3, []int{1}, nil, nil).Batch(2, false), "data.FromFunc: no function given"},
		{"cache of endless", counting(-1, nil).Cache(""), "never ends"},
		{"nil dataset", FromDataset(nil).Batch(2, false), "data.FromDataset: no dataset given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			it, err := tc.s.Open(context.Background())
			for err == nil {
				_, err = it.Next()
			}
			if err == io.EOF || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
			if it != nil {
				if _, again := it.Next(); again == nil {
					t.Error("Next after the error gave an element")
				}
				if err := it.Close(); err != nil {
					t.Error(err)
				}
			}
			if errors.Is(err, boom) != strings.Contains(tc.want, "boom") {
				t.Errorf("error %v does not wrap the function's", err)
			}
			leaktest.Check(t, before)
		})
	}
}

// Prefetch and Map hand out the stream's elements in its order, however
// many workers map them and however slowly.
func TestPrefetchAndMapKeepTheOrder(t *testing.T) {
	want := flat(readAll(t, counting(50, nil).Batch(3, false)))
	for _, workers := range []int{1, 2, 7} {
		before := runtime.NumGoroutine()
		s := counting(50, nil).Map([]int{2}, []int{2}, workers, func(i int, x, y, ox, oy []float32) error {
			if i%7 == 0 {
				time.Sleep(time.Millisecond) // finish out of order
			}
			ox[0], ox[1], oy[0], oy[1] = x[0], float32(i), y[0], 1
			return nil
		}).Batch(3, false).Prefetch(2)
		got := readAll(t, s)
		if g := flat(got); !slices.Equal(g, want) {
			t.Errorf("%d workers: samples %v, want %v", workers, g, want)
		}
		for _, b := range got {
			for j := range b.N {
				if b.X[2*j] != b.X[2*j+1] || b.Y[2*j+1] != 1 {
					t.Fatalf("%d workers: sample %v mapped with the wrong number or label %v", workers, b.X[2*j:2*j+2], b.Y[2*j:2*j+2])
				}
			}
		}
		leaktest.Check(t, before)
	}
}

// Closing an iterator midway, or cancelling its context, stops the
// goroutines reading ahead, also when the stream is endless and the
// reader is blocked.
func TestStreamGoroutinesStop(t *testing.T) {
	endless := func() *Stream {
		return counting(-1, nil).Map(nil, nil, 3, func(i int, x, y, ox, oy []float32) error {
			copy(ox, x)
			return nil
		}).Shuffle(10, 1).Batch(4, false).Prefetch(3)
	}
	t.Run("close", func(t *testing.T) {
		before := runtime.NumGoroutine()
		it, err := endless().Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := it.Next(); err != nil {
				t.Fatal(err)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := it.Next(); err == nil {
			t.Error("Next after Close gave an element")
		}
		leaktest.Check(t, before)
	})
	t.Run("cancel", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		it, err := endless().Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		cancel()
		for err == nil {
			_, err = it.Next()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v after cancelling, want context.Canceled", err)
		}
		leaktest.Check(t, before+0) // the goroutines end even before Close
		_ = it.Close()
	})
	t.Run("blocked generator", func(t *testing.T) {
		before := runtime.NumGoroutine()
		release := make(chan struct{})
		slow := FromFunc(Infinite, []int{1}, nil, func(i int, x, y []float32) error {
			if i == 2 {
				<-release
			}
			return nil
		}).Prefetch(1)
		it, err := slow.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = it.Next()
		closed := make(chan error)
		go func() { closed <- it.Close() }()
		time.Sleep(10 * time.Millisecond)
		close(release) // Close waits for the call under way, then returns
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		leaktest.Check(t, before)
	})
}

// Shuffle is tf.data's buffer shuffle: a permutation of each pass, the
// same for a seed, another each pass, and with a buffer of b no element
// comes out more than b-1 places before its turn.
func TestStreamShuffle(t *testing.T) {
	in := flat(readAll(t, counting(100, nil)))
	s := counting(100, nil).Shuffle(10, 42)
	p1, p2 := flat(readAll(t, s)), flat(readAll(t, s))
	q1 := flat(readAll(t, counting(100, nil).Shuffle(10, 42)))
	other := flat(readAll(t, counting(100, nil).Shuffle(10, 43)))
	for name, p := range map[string][]int{"pass 1": p1, "pass 2": p2, "another seed": other} {
		sorted := slices.Sorted(slices.Values(p))
		if !slices.Equal(sorted, in) {
			t.Errorf("%s is not a permutation: %v", name, p)
		}
		for k, v := range p {
			if v > k+9 {
				t.Errorf("%s: sample %d came out at %d, before a buffer of 10 could hold it", name, v, k)
			}
		}
	}
	if !slices.Equal(p1, q1) {
		t.Error("two streams of one seed shuffle their first pass differently")
	}
	if slices.Equal(p1, p2) || slices.Equal(p1, other) || slices.Equal(p1, in) {
		t.Error("a pass repeats another's order, or the stream's own")
	}
	if got := flat(readAll(t, counting(20, nil).Shuffle(1, 3))); !slices.Equal(got, in[:20]) {
		t.Errorf("a buffer of 1 changed the order: %v", got)
	}
	full := flat(readAll(t, counting(100, nil).Shuffle(100, 1)))
	if full[0] < 10 && full[1] < 10 && full[2] < 10 {
		t.Errorf("a buffer of the whole stream kept the first samples first: %v", full[:3])
	}
}

func TestStreamCacheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "train.cache")
	var calls atomic.Int64
	s := counting(10, &calls).Map(nil, []int{1}, 2, func(i int, x, y, ox, oy []float32) error {
		copy(ox, x)
		oy[0] = y[0] * 2
		return nil
	}).Batch(4, false).Cache(file)
	want := readAll(t, counting(10, nil).Map(nil, []int{1}, 1, func(i int, x, y, ox, oy []float32) error {
		copy(ox, x)
		oy[0] = y[0] * 2
		return nil
	}).Batch(4, false))

	// A pass stopped midway leaves no cache behind, nor its temporary file.
	it, err := s.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("a pass stopped midway left %v", names)
	}
	calls.Store(0)
	first := readAll(t, s)
	if calls.Load() != 10 {
		t.Errorf("the first whole pass generated %d samples, want 10", calls.Load())
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"train.cache"}) {
		t.Fatalf("after the first pass the folder holds %v", names)
	}
	// Later passes, and another stream of the same file, read it.
	again := readAll(t, s)
	fresh := readAll(t, counting(10, &calls).Map(nil, []int{1}, 2, func(i int, x, y, ox, oy []float32) error {
		return errors.New("the cache was not read")
	}).Batch(4, false).Cache(file))
	if calls.Load() != 10 {
		t.Errorf("passes after the first generated %d samples", calls.Load()-10)
	}
	for name, got := range map[string][]Batch{"first": first, "again": again, "another stream": fresh} {
		if !slices.EqualFunc(got, want, batchEqual) {
			t.Errorf("%s pass: %v, want %v", name, got, want)
		}
	}

	// A cache of other shapes, or a file that is no cache, is refused.
	for _, tc := range []struct {
		name, want string
		s          *Stream
	}{
		{"other shapes", "holds labels of shape [1] but the stream's are of shape []", counting(10, nil).Cache(file)},
	} {
		if _, err := tc.s.Open(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := counting(3, nil).Cache(junk).Open(context.Background()); err == nil || !strings.Contains(err.Error(), "is not a stream cache") {
		t.Errorf("a file that is no cache: %v", err)
	}
	// A truncated cache (not one Cache renamed) is an error naming it.
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut")
	if err := os.WriteFile(cut, whole[:len(whole)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	it, err = counting(10, nil).Map(nil, []int{1}, 1, func(int, []float32, []float32, []float32, []float32) error { return nil }).Cache(cut).Open(context.Background())
	for err == nil {
		_, err = it.Next()
	}
	if !strings.Contains(err.Error(), "reading "+cut) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a truncated cache: %v", err)
	}
}

func TestStreamCacheMemory(t *testing.T) {
	var calls atomic.Int64
	s := counting(9, &calls).Cache("").Shuffle(9, 1).Batch(4, false)
	p1, p2 := readAll(t, s), readAll(t, s)
	if calls.Load() != 9 {
		t.Errorf("two passes generated %d samples, want 9", calls.Load())
	}
	if a, b := flat(p1), flat(p2); slices.Equal(a, b) || !slices.Equal(slices.Sorted(slices.Values(b)), []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("passes %v and %v: want two shuffles of the cached samples", a, b)
	}
}

func batchEqual(a, b Batch) bool {
	return a.N == b.N && slices.Equal(a.X, b.X) && slices.Equal(a.Y, b.Y)
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A stream of a dataset of several parts keeps them through its
// transformations, for a model of several inputs or outputs.
func TestStreamKeepsParts(t *testing.T) {
	ds, err := SliceData(InputTuple(Rows([][]float32{{1, 2}, {3, 4}}), Rows([][]float32{{5}, {6}})),
		LabelTuple(Classes([]int{0, 1}, 2), Targets([]float32{7, 8})))
	if err != nil {
		t.Fatal(err)
	}
	s := FromDataset(ds).Shuffle(2, 1).Batch(2, false).Prefetch(1)
	if got := s.InputParts(); !slices.EqualFunc(got, [][]int{{2}, {1}}, slices.Equal) {
		t.Errorf("input parts %v", got)
	}
	if got := s.LabelParts(); len(got) != 2 {
		t.Errorf("label parts %v", got)
	}
	if got := s.Map([]int{3}, nil, 1, func(int, []float32, []float32, []float32, []float32) error { return nil }).InputParts(); len(got) != 0 {
		t.Errorf("a Map to a new sample shape keeps the parts %v", got)
	}
}
