package cifar10

import (
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/datasets/cifar10/cifar10test"
)

// smallSplit holds three images whose pixel (n, row, col, ch) is
// cifar10test.PixelValue(0, n, ch, row, col), labelled 7, 0 and 9.
func smallSplit() *Split {
	s := &Split{Images: make([]uint8, 3*ImageSize), Labels: []uint8{7, 0, 9}}
	for n := range 3 {
		for row := range Height {
			for col := range Width {
				for ch := range Channels {
					s.Images[((n*Height+row)*Width+col)*Channels+ch] = cifar10test.PixelValue(0, n, ch, row, col)
				}
			}
		}
	}
	return s
}

func TestSplitShapes(t *testing.T) {
	s := smallSplit()
	if s.Len() != 3 {
		t.Errorf("Len = %d, want 3", s.Len())
	}
	for _, tc := range []struct {
		name  string
		view  *Labelled
		label []int
	}{
		{"one-hot", s.OneHot(), []int{10}},
		{"sparse", s.Sparse(), []int{1}},
	} {
		sample, label := tc.view.SampleShape(), tc.view.LabelShape()
		if !slices.Equal(sample, []int{32, 32, 3}) || !slices.Equal(label, tc.label) || tc.view.Len() != 3 {
			t.Errorf("%s: SampleShape %v, LabelShape %v, Len %d; want [32 32 3], %v, 3",
				tc.name, sample, label, tc.view.Len(), tc.label)
		}
	}
	if s.OneHot().Split() != s || s.Sparse().Split() != s {
		t.Error("views do not read their split")
	}
	shape := s.SampleShape()
	shape[0] = 99
	if s.SampleShape()[0] != 32 {
		t.Error("SampleShape shares its slice between calls")
	}
}

func TestGatherInputs(t *testing.T) {
	s := smallSplit()
	indices := []int{2, 0, 2}
	dst := make([]float32, len(indices)*ImageSize)
	for i := range dst {
		dst[i] = -1 // every value must be overwritten
	}
	if err := s.OneHot().GatherInputs(indices, dst); err != nil {
		t.Fatal(err)
	}
	for i, n := range indices {
		for _, at := range [][3]int{{0, 0, 0}, {0, 0, 2}, {31, 31, 1}, {12, 3, 2}} {
			row, col, ch := at[0], at[1], at[2]
			got := dst[i*ImageSize+(row*Width+col)*Channels+ch]
			if want := float32(cifar10test.PixelValue(0, n, ch, row, col)) / 255; got != want {
				t.Errorf("sample %d (image %d) row %d col %d ch %d: %v, want %v", i, n, row, col, ch, got, want)
			}
		}
	}
	for i, v := range dst {
		if v < 0 || v > 1 {
			t.Fatalf("dst[%d] = %v, outside [0, 1]", i, v)
		}
	}
	if err := s.GatherInputs(nil, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func TestGatherErrors(t *testing.T) {
	s := smallSplit()
	for _, tc := range []struct {
		name    string
		gather  func() error
		mention string
	}{
		{"inputs dst too short", func() error { return s.GatherInputs([]int{0, 1}, make([]float32, ImageSize)) }, "want 6144"},
		{"inputs dst too long", func() error { return s.GatherInputs([]int{0}, make([]float32, ImageSize+1)) }, "want 3072"},
		{"inputs index too big", func() error { return s.GatherInputs([]int{0, 3}, make([]float32, 2*ImageSize)) }, "indices[1] = 3 is out of range [0, 3)"},
		{"inputs negative index", func() error { return s.GatherInputs([]int{-1}, make([]float32, ImageSize)) }, "indices[0] = -1"},
		{"one-hot dst wrong", func() error { return s.OneHot().GatherLabels([]int{0}, make([]float32, 1)) }, "want 10"},
		{"sparse dst wrong", func() error { return s.Sparse().GatherLabels([]int{0, 1}, make([]float32, 20)) }, "want 2"},
		{"labels index too big", func() error { return s.Sparse().GatherLabels([]int{5}, make([]float32, 1)) }, "out of range"},
		{"malformed split", func() error {
			bad := &Split{Images: make([]uint8, 10), Labels: []uint8{1}}
			return bad.GatherInputs([]int{0}, make([]float32, ImageSize))
		}, "malformed Split"},
		{"label above 9 in one-hot", func() error {
			bad := &Split{Images: make([]uint8, ImageSize), Labels: []uint8{12}}
			return bad.OneHot().GatherLabels([]int{0}, make([]float32, 10))
		}, "label 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.gather()
			if err == nil || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %v, want one mentioning %q", err, tc.mention)
			}
		})
	}
}

func TestGatherLabels(t *testing.T) {
	s := smallSplit()
	indices := []int{1, 2, 0, 0}

	sparse := make([]float32, len(indices))
	if err := s.Sparse().GatherLabels(indices, sparse); err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 9, 7, 7}; !slices.Equal(sparse, want) {
		t.Errorf("sparse labels %v, want %v", sparse, want)
	}

	oneHot := make([]float32, len(indices)*NumClasses)
	for i := range oneHot {
		oneHot[i] = 5 // stale values must be cleared
	}
	if err := s.OneHot().GatherLabels(indices, oneHot); err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(indices)*NumClasses)
	for i, class := range []int{0, 9, 7, 7} {
		want[i*NumClasses+class] = 1
	}
	if !slices.Equal(oneHot, want) {
		t.Errorf("one-hot labels %v, want %v", oneHot, want)
	}
}

func TestScale(t *testing.T) {
	src := []uint8{0, 1, 51, 128, 254, 255}
	for _, tc := range []struct {
		name string
		dst  int
		want []float32
	}{
		{"same length", 6, []float32{0, 1.0 / 255, 0.2, 128.0 / 255, 254.0 / 255, 1}},
		{"shorter dst", 3, []float32{0, 1.0 / 255, 0.2}},
		{"longer dst", 8, []float32{0, 1.0 / 255, 0.2, 128.0 / 255, 254.0 / 255, 1, -1, -1}},
		{"empty dst", 0, []float32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]float32, tc.dst)
			for i := range dst {
				dst[i] = -1
			}
			Scale(dst, src)
			if !slices.Equal(dst, tc.want) {
				t.Errorf("Scale = %v, want %v", dst, tc.want)
			}
		})
	}
}

func TestScaleLongInput(t *testing.T) {
	// Long inputs take the lookup-table path; it must agree with division.
	src := make([]uint8, 4096)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	dst := make([]float32, len(src))
	Scale(dst, src)
	for i, v := range src {
		if want := float32(v) / 255; dst[i] != want {
			t.Fatalf("dst[%d] = %v, want %v", i, dst[i], want)
		}
	}
}

func TestOneHotEncode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		labels  []uint8
		classes int
		dst     int
		want    []float32
		mention string
	}{
		{"three classes", []uint8{2, 0, 1}, 3, 9, []float32{0, 0, 1, 1, 0, 0, 0, 1, 0}, ""},
		{"empty", nil, 10, 0, []float32{}, ""},
		{"label too big", []uint8{0, 3}, 3, 6, nil, "labels[1] = 3"},
		{"dst wrong", []uint8{0}, 3, 4, nil, "want 3"},
		{"no classes", []uint8{0}, 0, 0, nil, "classes = 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]float32, tc.dst)
			for i := range dst {
				dst[i] = 7
			}
			err := OneHotEncode(dst, tc.labels, tc.classes)
			if tc.mention != "" {
				if err == nil || !strings.Contains(err.Error(), tc.mention) {
					t.Errorf("error %v, want one mentioning %q", err, tc.mention)
				}
				return
			}
			if err != nil || !slices.Equal(dst, tc.want) {
				t.Errorf("OneHotEncode = %v, %v; want %v", dst, err, tc.want)
			}
		})
	}
}

func BenchmarkGatherInputs(b *testing.B) {
	ds := Synthetic(1024, 0, 1)
	indices := make([]int, 128)
	for i := range indices {
		indices[i] = (i * 37) % ds.Train.Len()
	}
	dst := make([]float32, len(indices)*ImageSize)
	b.SetBytes(int64(len(indices) * ImageSize))
	for b.Loop() {
		if err := ds.Train.GatherInputs(indices, dst); err != nil {
			b.Fatal(err)
		}
	}
}
