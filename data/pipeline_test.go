package data

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// counted counts the samples its Dataset gathers.
type counted struct {
	Dataset
	inputs, labels atomic.Int64
}

func (c *counted) GatherInputs(idx []int, dst []float32) error {
	c.inputs.Add(int64(len(idx)))
	return c.Dataset.GatherInputs(idx, dst)
}

func (c *counted) GatherLabels(idx []int, dst []float32) error {
	c.labels.Add(int64(len(idx)))
	return c.Dataset.GatherLabels(idx, dst)
}

// six is 6 samples of 2 values (i, 10·i) labelled i.
func six(t *testing.T) *counted {
	t.Helper()
	rows := make([][]float32, 6)
	targets := make([]float32, 6)
	for i := range rows {
		rows[i] = []float32{float32(i), float32(10 * i)}
		targets[i] = float32(i)
	}
	ds, err := SliceData(Rows(rows), Targets(targets))
	if err != nil {
		t.Fatal(err)
	}
	return &counted{Dataset: ds}
}

func TestMap(t *testing.T) {
	// The sum of a sample's values and its label plus 100: a new shape.
	sum := func(i int, x, y, outX, outY []float32) error {
		outX[0] = x[0] + x[1]
		outY[0], outY[1] = y[0]+100, float32(i)
		return nil
	}
	var want []float32
	for _, workers := range []int{1, 3, 0} {
		src := six(t)
		m, err := Map(src, []int{1}, []int{2}, workers, sum)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.SampleShape(), []int{1}) || !slices.Equal(m.LabelShape(), []int{2}) {
			t.Fatalf("shapes %v and %v", m.SampleShape(), m.LabelShape())
		}
		x, y := gatherAll(t, m, []int{5, 0, 3})
		got := append(x, y...)
		if want == nil {
			want = []float32{55, 0, 33, 105, 5, 100, 0, 103, 3}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d workers: %v, want %v", workers, got, want)
		}
		// Inputs then labels of one batch: each sample read once.
		if n := src.inputs.Load(); n != 3 {
			t.Errorf("%d workers: the source gathered %d samples for a batch of 3", workers, n)
		}
	}
	// The same shapes by default, and the source's parts.
	several, _ := partsOf(t)
	id, err := Map(several, nil, nil, 2, func(i int, x, y, outX, outY []float32) error {
		copy(outX, x)
		copy(outY, y)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !shapesEqual(InputParts(id), InputParts(several)) || !shapesEqual(LabelParts(id), LabelParts(several)) {
		t.Errorf("Map with the same shapes lost the parts: %v %v", InputParts(id), LabelParts(id))
	}
	gx, gy := gatherAll(t, id, []int{2, 1})
	wx, wy := gatherAll(t, several, []int{2, 1})
	if !slices.Equal(gx, wx) || !slices.Equal(gy, wy) {
		t.Errorf("an identity Map changed the samples")
	}
	// An error names the sample; bad arguments are refused.
	bad, err := Map(six(t), nil, nil, 2, func(i int, x, y, outX, outY []float32) error {
		if i == 4 {
			return errors.New("no good")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.GatherInputs([]int{1, 4}, make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "sample 4: no good") {
		t.Errorf("a failing map: %v", err)
	}
	for _, c := range []struct {
		name string
		make func() (Dataset, error)
	}{
		{"no function", func() (Dataset, error) { return Map(six(t), nil, nil, 0, nil) }},
		{"negative workers", func() (Dataset, error) { return Map(six(t), nil, nil, -1, sum) }},
		{"an empty sample shape", func() (Dataset, error) { return Map(six(t), []int{}, nil, 0, sum) }},
	} {
		if _, err := c.make(); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestCacheGathersEachSampleOnce(t *testing.T) {
	src := six(t)
	c := Cache(src)
	first, firstY := gatherAll(t, c, []int{3, 1, 3})
	for range 3 { // later epochs
		x, y := gatherAll(t, c, []int{1, 3, 0})
		if !slices.Equal(x[:4], []float32{1, 10, 3, 30}) || !slices.Equal(y, []float32{1, 3, 0}) {
			t.Fatalf("cached samples %v, labels %v", x, y)
		}
	}
	if !slices.Equal(first, []float32{3, 30, 1, 10, 3, 30}) || !slices.Equal(firstY, []float32{3, 1, 3}) {
		t.Errorf("first gather %v %v", first, firstY)
	}
	if n, m := src.inputs.Load(), src.labels.Load(); n != 3 || m != 3 {
		t.Errorf("the source gathered %d samples and %d labels for 3 distinct samples", n, m)
	}
	several, _ := partsOf(t)
	if !shapesEqual(InputParts(Cache(several)), InputParts(several)) {
		t.Error("Cache lost the parts")
	}
}

func TestTakeSkipRepeat(t *testing.T) {
	src := six(t)
	labels := func(ds Dataset, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		_, y := gatherAll(t, ds, count(0, ds.Len()))
		return y
	}
	for _, c := range []struct {
		name string
		got  []float32
		want []float32
	}{
		{"take 2", labels(Take(src, 2)), []float32{0, 1}},
		{"take 10", labels(Take(src, 10)), []float32{0, 1, 2, 3, 4, 5}},
		{"skip 4", labels(Skip(src, 4)), []float32{4, 5}},
		{"repeat 2 of take 2", labels(Repeat(mustTake(t, src, 2), 2)), []float32{0, 1, 0, 1}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, err := Repeat(src, 0); err == nil {
		t.Error("Repeat 0 times: no error")
	}
	if _, err := Take(src, -1); err == nil {
		t.Error("Take -1: no error")
	}
}

func mustTake(t *testing.T, ds Dataset, n int) Dataset {
	t.Helper()
	d, err := Take(ds, n)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Map keeps the parts of what it keeps: a new sample shape keeps the
// label parts. A panicking function is an error naming the sample.
func TestMapKeepsPartsApartAndRecovers(t *testing.T) {
	several, _ := partsOf(t)
	m, err := Map(several, []int{1}, nil, 2, func(i int, x, y, outX, outY []float32) error {
		copy(outY, y)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !shapesEqual(LabelParts(m), LabelParts(several)) || len(InputParts(m)) != 1 {
		t.Errorf("a new sample shape: input parts %v, label parts %v", InputParts(m), LabelParts(m))
	}
	bad, err := Map(six(t), nil, nil, 2, func(i int, x, y, outX, outY []float32) error {
		if i == 2 {
			panic("boom")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.GatherInputs([]int{0, 2}, make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "sample 2: the function panicked: boom") {
		t.Errorf("a panicking map: %v", err)
	}
}
