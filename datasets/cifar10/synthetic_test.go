package cifar10

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestSyntheticShapeAndLabels(t *testing.T) {
	for _, tc := range []struct {
		train, test         int
		wantTrain, wantTest int
	}{
		{1000, 200, 1000, 200},
		{7, 3, 7, 3},
		{0, 0, 0, 0},
		{-5, 4, 0, 4},
	} {
		ds := Synthetic(tc.train, tc.test, 42)
		if ds.Train.Len() != tc.wantTrain || ds.Test.Len() != tc.wantTest {
			t.Errorf("Synthetic(%d, %d): %d train, %d test; want %d, %d",
				tc.train, tc.test, ds.Train.Len(), ds.Test.Len(), tc.wantTrain, tc.wantTest)
		}
		if err := ds.Train.check(); err != nil {
			t.Error(err)
		}
		if err := ds.Test.check(); err != nil {
			t.Error(err)
		}
		if !slices.Equal(ds.ClassNames, ClassNames()) {
			t.Errorf("ClassNames %q", ds.ClassNames)
		}
		for _, split := range []*Split{&ds.Train, &ds.Test} {
			var counts [NumClasses]int
			for _, label := range split.Labels {
				if label >= NumClasses {
					t.Fatalf("label %d out of range", label)
				}
				counts[label]++
			}
			if lo, hi := slices.Min(counts[:]), slices.Max(counts[:]); hi-lo > 1 {
				t.Errorf("Synthetic(%d, %d): class counts %v differ by more than one", tc.train, tc.test, counts)
			}
		}
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	a, b := Synthetic(300, 100, 7), Synthetic(300, 100, 7)
	if !bytes.Equal(a.Train.Images, b.Train.Images) || !bytes.Equal(a.Train.Labels, b.Train.Labels) ||
		!bytes.Equal(a.Test.Images, b.Test.Images) || !bytes.Equal(a.Test.Labels, b.Test.Labels) {
		t.Error("same seed, different data")
	}
	c := Synthetic(300, 100, 8)
	if bytes.Equal(a.Train.Images, c.Train.Images) || bytes.Equal(a.Train.Labels, c.Train.Labels) {
		t.Error("different seeds, same data")
	}
	if bytes.Equal(a.Train.Images[:ImageSize], a.Train.Images[ImageSize:2*ImageSize]) {
		t.Error("two samples are identical")
	}
}

// TestSyntheticIsLearnable checks the classes are separable: classifying
// each test image by the nearest training-class mean must be nearly always
// right (chance is 10%).
func TestSyntheticIsLearnable(t *testing.T) {
	ds := Synthetic(500, 200, 3)
	var sums [NumClasses][ImageSize]float64
	var counts [NumClasses]float64
	for n, label := range ds.Train.Labels {
		for p, v := range ds.Train.Images[n*ImageSize : (n+1)*ImageSize] {
			sums[label][p] += float64(v)
		}
		counts[label]++
	}
	correct := 0
	for n, label := range ds.Test.Labels {
		img := ds.Test.Images[n*ImageSize : (n+1)*ImageSize]
		best, bestDist := -1, 0.0
		for class := range NumClasses {
			dist := 0.0
			for p, v := range img {
				d := float64(v) - sums[class][p]/counts[class]
				dist += d * d
			}
			if best < 0 || dist < bestDist {
				best, bestDist = class, dist
			}
		}
		if best == int(label) {
			correct++
		}
	}
	if acc := float64(correct) / float64(ds.Test.Len()); acc < 0.95 {
		t.Errorf("nearest-mean accuracy %.2f, want >= 0.95", acc)
	}
}

func BenchmarkSynthetic(b *testing.B) {
	b.SetBytes(50000 * ImageSize)
	for b.Loop() {
		Synthetic(50000, 0, 1)
	}
}

// TestSyntheticTrainsInOneEpoch fits a softmax-regression model (the
// simplest network) for one epoch of plain SGD on the scaled inputs and
// expects it to be well above chance on the test split.
func TestSyntheticTrainsInOneEpoch(t *testing.T) {
	ds := Synthetic(1000, 500, 11)
	train, test := ds.Train.OneHot(), ds.Test.OneHot()
	weights := make([]float32, ImageSize*NumClasses)
	var bias [NumClasses]float32
	x := make([]float32, ImageSize)
	y := make([]float32, NumClasses)
	logits := func() [NumClasses]float32 {
		var z [NumClasses]float32
		for k := range NumClasses {
			z[k] = bias[k]
		}
		for p, v := range x {
			row := weights[p*NumClasses : (p+1)*NumClasses]
			for k := range NumClasses {
				z[k] += v * row[k]
			}
		}
		return z
	}
	const learningRate = 0.01
	for i := range train.Len() {
		if err := train.GatherInputs([]int{i}, x); err != nil {
			t.Fatal(err)
		}
		if err := train.GatherLabels([]int{i}, y); err != nil {
			t.Fatal(err)
		}
		z := logits()
		maxZ := slices.Max(z[:])
		var sum float64
		var prob [NumClasses]float64
		for k := range NumClasses {
			prob[k] = math.Exp(float64(z[k] - maxZ))
			sum += prob[k]
		}
		var grad [NumClasses]float32
		for k := range NumClasses {
			grad[k] = float32(prob[k]/sum) - y[k]
			bias[k] -= learningRate * grad[k]
		}
		for p, v := range x {
			row := weights[p*NumClasses : (p+1)*NumClasses]
			for k := range NumClasses {
				row[k] -= learningRate * v * grad[k]
			}
		}
	}
	correct := 0
	for i := range test.Len() {
		if err := test.GatherInputs([]int{i}, x); err != nil {
			t.Fatal(err)
		}
		z := logits()
		if slices.Index(z[:], slices.Max(z[:])) == int(ds.Test.Labels[i]) {
			correct++
		}
	}
	acc := float64(correct) / float64(test.Len())
	t.Logf("softmax regression, one epoch of %d samples: test accuracy %.3f", train.Len(), acc)
	if acc < 0.8 {
		t.Errorf("test accuracy after one epoch %.2f, want >= 0.8 (chance is 0.1)", acc)
	}
}

// nearestMeanAccuracy classifies each test image of ds by the nearest
// training-class mean and returns the share it gets right.
func nearestMeanAccuracy(ds *Dataset) float64 {
	var sums [NumClasses][ImageSize]float64
	var counts [NumClasses]float64
	for n, label := range ds.Train.Labels {
		for p, v := range ds.Train.Images[n*ImageSize : (n+1)*ImageSize] {
			sums[label][p] += float64(v)
		}
		counts[label]++
	}
	correct := 0
	for n, label := range ds.Test.Labels {
		img := ds.Test.Images[n*ImageSize : (n+1)*ImageSize]
		best, bestDist := -1, 0.0
		for class := range NumClasses {
			dist := 0.0
			for p, v := range img {
				d := float64(v) - sums[class][p]/counts[class]
				dist += d * d
			}
			if best < 0 || dist < bestDist {
				best, bestDist = class, dist
			}
		}
		if best == int(label) {
			correct++
		}
	}
	return float64(correct) / float64(ds.Test.Len())
}

// TestSyntheticHard checks SyntheticHard's shape, labels and determinism,
// and that it is learnable (a nearest-class-mean classifier beats chance,
// 0.1) yet hard (it stays far below Synthetic's near 1).
func TestSyntheticHard(t *testing.T) {
	for _, tc := range []struct {
		train, test, wantTrain, wantTest int
	}{
		{1000, 200, 1000, 200},
		{7, 3, 7, 3},
		{0, 0, 0, 0},
		{-5, 4, 0, 4},
	} {
		ds := SyntheticHard(tc.train, tc.test, 42)
		if ds.Train.Len() != tc.wantTrain || ds.Test.Len() != tc.wantTest {
			t.Errorf("SyntheticHard(%d, %d): %d train, %d test", tc.train, tc.test, ds.Train.Len(), ds.Test.Len())
		}
		for _, split := range []*Split{&ds.Train, &ds.Test} {
			if err := split.check(); err != nil {
				t.Error(err)
			}
			var counts [NumClasses]int
			for _, label := range split.Labels {
				counts[label]++
			}
			if lo, hi := slices.Min(counts[:]), slices.Max(counts[:]); hi-lo > 1 {
				t.Errorf("class counts %v differ by more than one", counts)
			}
		}
	}
	a, b, c := SyntheticHard(300, 100, 7), SyntheticHard(300, 100, 7), SyntheticHard(300, 100, 8)
	if !bytes.Equal(a.Train.Images, b.Train.Images) || !bytes.Equal(a.Test.Labels, b.Test.Labels) {
		t.Error("same seed, different data")
	}
	if bytes.Equal(a.Train.Images, c.Train.Images) {
		t.Error("different seeds, same data")
	}
	for _, tc := range []struct {
		name     string
		ds       *Dataset
		min, max float64
	}{
		{"Synthetic", Synthetic(2000, 500, 3), 0.95, 1},
		{"SyntheticHard", SyntheticHard(2000, 500, 3), 0.125, 0.6},
	} {
		acc := nearestMeanAccuracy(tc.ds)
		t.Logf("%s: nearest-mean accuracy %.3f", tc.name, acc)
		if acc < tc.min || acc > tc.max {
			t.Errorf("%s: nearest-mean accuracy %.3f, want in [%v, %v]", tc.name, acc, tc.min, tc.max)
		}
	}
}
