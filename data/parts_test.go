package data

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// gatherAll gathers the inputs and then the labels of the samples at idx.
func gatherAll(t *testing.T, ds Dataset, idx []int) (x, y []float32) {
	t.Helper()
	x = make([]float32, len(idx)*size(ds.SampleShape()))
	y = make([]float32, len(idx)*size(ds.LabelShape()))
	if err := ds.GatherInputs(idx, x); err != nil {
		t.Fatalf("GatherInputs(%v): %v", idx, err)
	}
	if err := ds.GatherLabels(idx, y); err != nil {
		t.Fatalf("GatherLabels(%v): %v", idx, err)
	}
	return x, y
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// shapesEqual compares lists of shapes, () and nil alike.
func shapesEqual(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// Three samples, each part's values telling the part and the sample apart:
// rows are 1x, pixels 2x (halved), flat values 3x.
var (
	rowsPart   = [][]float64{{10, 11}, {12, 13}, {14, 15}}
	pixelsPart = []uint8{40, 42, 44, 46, 48, 50} // 3 samples of shape (2,), divided by 2
	flatPart   = []float32{30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41}
)

func TestTuplesWriteEachSamplesPartsInOrder(t *testing.T) {
	tests := []struct {
		name                string
		x                   Samples
		y                   Labels
		sample, label       []int
		inParts, labelParts [][]int // what the methods give; nil for one part
		idx                 []int
		wantX, wantY        []float32
	}{
		{
			name: "rows, pixels and flat images; classes, one-hot, rows and targets",
			x:    InputTuple(Rows(rowsPart), Pixels(pixelsPart, 2, 2), Flat(flatPart, 2, 2)),
			y: LabelTuple(Classes([]int{2, 0, 1}, 3), OneHot([]uint8{1, 2, 0}, 3),
				TargetRows([][]float32{{-1, -2}, {-3, -4}, {-5, -6}}), Targets([]float64{0.5, 1.5, 2.5})),
			sample: []int{2 + 2 + 4}, label: []int{1 + 3 + 2 + 1},
			inParts:    [][]int{{2}, {2}, {2, 2}},
			labelParts: [][]int{{}, {3}, {2}, {}},
			idx:        []int{2, 0},
			wantX: []float32{
				14, 15, 24, 25, 38, 39, 40, 41,
				10, 11, 20, 21, 30, 31, 32, 33,
			},
			wantY: []float32{
				1, 1, 0, 0, -5, -6, 2.5,
				2, 0, 1, 0, -1, -2, 0.5,
			},
		},
		{
			name:   "a tuple inside a tuple adds its parts",
			x:      InputTuple(InputTuple(Rows(rowsPart), Pixels(pixelsPart, 2, 2)), Flat(flatPart, 4)),
			y:      LabelTuple(Targets([]float32{7, 8, 9}), LabelTuple(OneHot([]int{0, 1, 1}, 2), Classes([]int{4, 3, 2}, 5))),
			sample: []int{8}, label: []int{4},
			inParts:    [][]int{{2}, {2}, {4}},
			labelParts: [][]int{{}, {2}, {}},
			idx:        []int{1},
			wantX:      []float32{12, 13, 22, 23, 34, 35, 36, 37},
			wantY:      []float32{8, 0, 1, 3},
		},
		{
			name:   "one part is that part",
			x:      InputTuple(Pixels(pixelsPart, 2, 2)),
			y:      LabelTuple(OneHot([]int{0, 1, 1}, 2)),
			sample: []int{2}, label: []int{2},
			idx:   []int{0, 2},
			wantX: []float32{20, 21, 24, 25},
			wantY: []float32{1, 0, 0, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := SliceData(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Len() != 3 || !slices.Equal(ds.SampleShape(), tc.sample) || !slices.Equal(ds.LabelShape(), tc.label) {
				t.Errorf("Len %d, SampleShape %v, LabelShape %v; want 3, %v, %v", ds.Len(), ds.SampleShape(), ds.LabelShape(), tc.sample, tc.label)
			}
			if got := ds.(InputParter).InputParts(); !shapesEqual(got, tc.inParts) {
				t.Errorf("InputParts() = %v, want %v", got, tc.inParts)
			}
			if got := ds.(LabelParter).LabelParts(); !shapesEqual(got, tc.labelParts) {
				t.Errorf("LabelParts() = %v, want %v", got, tc.labelParts)
			}
			x, y := gatherAll(t, ds, tc.idx)
			if !slices.Equal(x, tc.wantX) {
				t.Errorf("inputs %v, want %v", x, tc.wantX)
			}
			if !slices.Equal(y, tc.wantY) {
				t.Errorf("labels %v, want %v", y, tc.wantY)
			}
			in, err := SliceInputs(tc.x)
			if err != nil {
				t.Fatal(err)
			}
			px := make([]float32, len(tc.wantX))
			if err := in.GatherInputs(tc.idx, px); err != nil || !slices.Equal(px, tc.wantX) {
				t.Errorf("SliceInputs gathers %v, %v; want %v", px, err, tc.wantX)
			}
			if got := InputParts(in); tc.inParts != nil && !shapesEqual(got, tc.inParts) {
				t.Errorf("InputParts(SliceInputs) = %v, want %v", got, tc.inParts)
			}
		})
	}
}

// Each row of a tuple is its parts' rows one after another, in the order
// the parts were given, whatever the batch's order: swapping two parts
// swaps their places in every row.
func TestTupleRowsAreThePartsRowsInOrder(t *testing.T) {
	a, b := Rows(rowsPart), Pixels(pixelsPart, 2, 2)
	la, lb := OneHot([]int{2, 0, 1}, 3), Targets([]float32{-1, -2, -3})
	idx := []int{1, 2, 0, 1}
	for _, tc := range []struct {
		name string
		x    []Samples
		y    []Labels
	}{
		{"a, b", []Samples{a, b}, []Labels{la, lb}},
		{"b, a", []Samples{b, a}, []Labels{lb, la}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := SliceData(InputTuple(tc.x...), LabelTuple(tc.y...))
			if err != nil {
				t.Fatal(err)
			}
			x, y := gatherAll(t, ds, idx)
			var wantX, wantY []float32
			for _, i := range idx {
				for k := range tc.x {
					part, err := SliceData(tc.x[k], tc.y[k])
					if err != nil {
						t.Fatal(err)
					}
					px, _ := gatherAll(t, part, []int{i})
					wantX = append(wantX, px...)
				}
				for k := range tc.y {
					part, err := SliceData(tc.x[0], tc.y[k])
					if err != nil {
						t.Fatal(err)
					}
					_, py := gatherAll(t, part, []int{i})
					wantY = append(wantY, py...)
				}
			}
			if !slices.Equal(x, wantX) || !slices.Equal(y, wantY) {
				t.Errorf("gathered %v and %v, want the parts' rows in order: %v and %v", x, y, wantX, wantY)
			}
		})
	}
	ab, _ := SliceInputs(InputTuple(a, b))
	ba, _ := SliceInputs(InputTuple(b, a))
	x1, x2 := make([]float32, 4), make([]float32, 4)
	_ = ab.GatherInputs([]int{0}, x1)
	_ = ba.GatherInputs([]int{0}, x2)
	if slices.Equal(x1, x2) {
		t.Errorf("InputTuple(a, b) and InputTuple(b, a) write the same row %v", x1)
	}
}

func TestTuplesRefuseBadParts(t *testing.T) {
	ragged := Rows([][]float32{{1, 2}, {3}})
	tests := []struct {
		name string
		x    Samples
		y    Labels
		want string
	}{
		{"no input parts", InputTuple(), Targets([]float32{1}),
			"data.InputTuple: no parts given: give the samples of each model input, e.g. InputTuple(Rows(a), Pixels(b, 255, 28, 28))"},
		{"no label parts", Rows([][]float32{{1}}), LabelTuple(),
			"data.LabelTuple: no parts given: give the labels of each model output, e.g. LabelTuple(Classes(a, 10), Targets(b))"},
		{"an input part never made", InputTuple(Rows(rowsPart), Samples{}), Targets([]float32{1, 2, 3}),
			"data.InputTuple: part 1 was never made: make it with Rows, Flat or Pixels"},
		{"a label part never made", Rows(rowsPart), LabelTuple(Labels{}, Targets([]float32{1, 2, 3})),
			"data.LabelTuple: part 0 was never made: make it with Classes, OneHot, Targets or TargetRows"},
		{"an input part's own mistake", InputTuple(Rows(rowsPart), Pixels(pixelsPart, 2, 2), ragged), Targets([]float32{1, 2, 3}),
			"data.InputTuple: part 2: data.Rows: row 1 has length 1 but row 0 has length 2: every row must have the same length"},
		{"a label part's own mistake", Rows(rowsPart), LabelTuple(Targets([]float32{1, 2, 3}), Classes([]int{0, 5, 1}, 3)),
			"data.LabelTuple: part 1: data.Classes: sample 1 has class 5, outside the 3 classes 0 to 2"},
		{"a mistake is found before a count that differs", InputTuple(Rows(rowsPart), Flat(flatPart, 2), ragged), Targets([]float32{1, 2, 3}),
			"data.InputTuple: part 2: data.Rows: row 1 has length 1 but row 0 has length 2: every row must have the same length"},
		{"input counts differ", InputTuple(Rows(rowsPart), Flat(flatPart, 2)), Targets([]float32{1, 2, 3}),
			"data.InputTuple: part 0 has 3 samples but part 1 has 6: every part needs one entry per sample"},
		{"label counts differ", Rows(rowsPart), LabelTuple(Targets([]float32{1, 2, 3}), Targets([]float32{1, 2})),
			"data.LabelTuple: part 0 has 3 labels but part 1 has 2: every part needs one entry per sample"},
		{"a tuple of other counts than its labels", InputTuple(Rows(rowsPart), Flat(flatPart, 4)), LabelTuple(Targets([]float32{1}), Targets([]float32{2})),
			"data.SliceData: 3 samples but 1 labels: give one label per sample"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := SliceData(tc.x, tc.y)
			if err == nil || err.Error() != tc.want || ds != nil {
				t.Errorf("SliceData = %v, %v; want the error %q", ds, err, tc.want)
			}
		})
	}
	// The part's own error is wrapped, for errors.Is and errors.As.
	if _, err := SliceInputs(InputTuple(Rows(rowsPart), ragged)); err == nil || !errors.Is(err, ragged.err) {
		t.Errorf("SliceInputs(InputTuple(ok, ragged)) = %v; want it to wrap %v", err, ragged.err)
	}
}

// partsOf is a Dataset of two inputs and two labels, and a Dataset of one
// of each.
func partsOf(t *testing.T) (several, one Dataset) {
	t.Helper()
	several, err := SliceData(InputTuple(Rows(rowsPart), Flat(flatPart, 2, 2)),
		LabelTuple(Classes([]int{0, 1, 2}, 3), TargetRows([][]float32{{1, 2}, {3, 4}, {5, 6}})))
	if err != nil {
		t.Fatal(err)
	}
	one, err = SliceData(Rows(rowsPart), Classes([]int{0, 1, 2}, 3))
	if err != nil {
		t.Fatal(err)
	}
	return several, one
}

func TestWrappersKeepTheParts(t *testing.T) {
	several, one := partsOf(t)
	wrap := map[string]func(Dataset) Dataset{
		"as is": func(d Dataset) Dataset { return d },
		"Subset": func(d Dataset) Dataset {
			s, err := Subset(d, []int{2, 0})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"Prefetch":           Prefetch,
		"Subset of Prefetch": func(d Dataset) Dataset { s, _ := Subset(Prefetch(d), []int{1}); return s },
		"Prefetch of Subset": func(d Dataset) Dataset { s, _ := Subset(d, []int{1}); return Prefetch(s) },
	}
	for name, w := range wrap {
		t.Run(name, func(t *testing.T) {
			tests := []struct {
				ds                  Dataset
				inParts, labelParts [][]int // InputParts(ds), LabelParts(ds)
				methodIn, methodOut [][]int // what the methods give
			}{
				{w(several), [][]int{{2}, {2, 2}}, [][]int{{}, {2}}, [][]int{{2}, {2, 2}}, [][]int{{}, {2}}},
				{w(one), [][]int{{2}}, [][]int{{}}, nil, nil},
			}
			for _, tc := range tests {
				if got := InputParts(tc.ds); !shapesEqual(got, tc.inParts) {
					t.Errorf("InputParts = %v, want %v", got, tc.inParts)
				}
				if got := LabelParts(tc.ds); !shapesEqual(got, tc.labelParts) {
					t.Errorf("LabelParts = %v, want %v", got, tc.labelParts)
				}
				ip, ok1 := tc.ds.(InputParter)
				lp, ok2 := tc.ds.(LabelParter)
				if !ok1 || !ok2 {
					t.Fatalf("%T is not an InputParter and a LabelParter", tc.ds)
				}
				if got := ip.InputParts(); !shapesEqual(got, tc.methodIn) {
					t.Errorf("InputParts() = %v, want %v", got, tc.methodIn)
				}
				if got := lp.LabelParts(); !shapesEqual(got, tc.methodOut) {
					t.Errorf("LabelParts() = %v, want %v", got, tc.methodOut)
				}
			}
		})
	}
	// The shapes are the caller's.
	parts := InputParts(several)
	parts[1][0] = 99
	if again := InputParts(several); again[1][0] != 2 {
		t.Errorf("changing InputParts' result changed the data's parts: %v", again)
	}
	labels := LabelParts(several)
	labels[1][0] = 99
	if again := LabelParts(several); again[1][0] != 2 {
		t.Errorf("changing LabelParts' result changed the data's parts: %v", again)
	}
	if InputParts(nil) != nil || LabelParts(nil) != nil {
		t.Error("the parts of no data are not nil")
	}
}

// Fit's prefetched batches of a tuple are what the tuple gathers.
func TestPrefetchGathersTuplesAsTheyAre(t *testing.T) {
	several, _ := partsOf(t)
	p := Prefetch(several).(*prefetched)
	defer p.StopBatches()
	order := []int{2, 0, 1}
	p.PlanBatches(order, 2, 0, 2)
	for _, idx := range [][]int{{2, 0}, {1}} {
		gx, gy := gatherAll(t, p, idx)
		wx, wy := gatherAll(t, several, idx)
		if !slices.Equal(gx, wx) || !slices.Equal(gy, wy) {
			t.Errorf("batch %v: prefetched %v %v, want %v %v", idx, gx, gy, wx, wy)
		}
	}
}

func TestFuncPartsGathersEachSampleOnce(t *testing.T) {
	var calls []int
	// Sample i is (i, 10i) and ((-i, -i), (2i, 2i)) as its two inputs, and
	// the class i mod 3 and the target i/2 as its two labels; sample 5
	// cannot be read.
	ds, err := FuncParts(7, [][]int{{2}, {2, 2}}, [][]int{nil, {1}}, func(i int, x, y [][]float32) error {
		calls = append(calls, i)
		if len(x) != 2 || len(x[0]) != 2 || len(x[1]) != 4 || len(y) != 2 || len(y[0]) != 1 || len(y[1]) != 1 {
			return fmt.Errorf("parts of %d and %d values", len(x), len(y))
		}
		if slices.ContainsFunc(slices.Concat(x[0], x[1], y[0], y[1]), func(v float32) bool { return v != 0 }) {
			return errors.New("x and y are not zeroed")
		}
		if i == 5 {
			return errors.New("bad record")
		}
		f := float32(i)
		copy(x[0], []float32{f, 10 * f})
		copy(x[1], []float32{-f, -f, 2 * f, 2 * f})
		y[0][0], y[1][0] = float32(i%3), f/2
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 7 || !slices.Equal(ds.SampleShape(), []int{6}) || !slices.Equal(ds.LabelShape(), []int{2}) {
		t.Fatalf("Len %d, SampleShape %v, LabelShape %v", ds.Len(), ds.SampleShape(), ds.LabelShape())
	}
	if in, out := InputParts(ds), LabelParts(ds); !shapesEqual(in, [][]int{{2}, {2, 2}}) || !shapesEqual(out, [][]int{{}, {1}}) {
		t.Errorf("InputParts %v, LabelParts %v", in, out)
	}
	tests := []struct {
		name       string
		labelsOnly bool
		idx        []int
		wantCalls  []int
		wantX      []float32
		wantY      []float32
		wantErr    string
	}{
		{"inputs, then their labels", false, []int{4, 1}, []int{4, 1},
			[]float32{4, 40, -4, -4, 8, 8, 1, 10, -1, -1, 2, 2}, []float32{1, 2, 1, 0.5}, ""},
		{"labels alone", true, []int{3}, []int{3}, nil, []float32{0, 1.5}, ""},
		{"a sample that fails", false, []int{2, 5, 6}, []int{2, 5}, nil, nil, "sample 5: bad record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			x, y := make([]float32, 6*len(tc.idx)), make([]float32, 2*len(tc.idx))
			var err error
			if !tc.labelsOnly {
				err = ds.GatherInputs(tc.idx, x)
			}
			if err == nil {
				err = ds.GatherLabels(tc.idx, y)
			}
			switch {
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantX != nil && !slices.Equal(x, tc.wantX):
				t.Errorf("inputs %v, want %v", x, tc.wantX)
			case !slices.Equal(y, tc.wantY):
				t.Errorf("labels %v, want %v", y, tc.wantY)
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("gather called for %v, want %v", calls, tc.wantCalls)
			}
		})
	}
}

func TestFuncPartsAndFuncDataRefuseBadArguments(t *testing.T) {
	one := func(int, []float32, []float32) error { return nil }
	parts := func(int, [][]float32, [][]float32) error { return nil }
	funcData := func(n int, sample, label []int, g func(int, []float32, []float32) error) func() (Dataset, error) {
		return func() (Dataset, error) { return FuncData(n, sample, label, g) }
	}
	funcParts := func(n int, inputs, labels [][]int, g func(int, [][]float32, [][]float32) error) func() (Dataset, error) {
		return func() (Dataset, error) { return FuncParts(n, inputs, labels, g) }
	}
	tests := []struct {
		name string
		make func() (Dataset, error)
		want string
	}{
		{"FuncData: no function", funcData(3, []int{2}, nil, nil), "data.FuncData: no gather function given"},
		{"FuncData: no samples", funcData(0, []int{2}, nil, one), "data.FuncData: 0 samples: a dataset needs at least one"},
		{"FuncData: no sample shape", funcData(3, nil, nil, one), "data.FuncData: no sample shape given: say what one sample is, e.g. []int{28, 28} for 28×28 images"},
		{"FuncData: zero dimension", funcData(3, []int{28, 0}, nil, one), "data.FuncData: sample shape (28, 0) has a dimension 0: every dimension must be positive"},
		{"FuncData: negative label dimension", funcData(3, []int{2}, []int{-10}, one), "data.FuncData: label shape (-10,) has a dimension -10: every dimension must be positive"},
		{"FuncParts: no function", funcParts(3, [][]int{{2}}, [][]int{nil}, nil), "data.FuncParts: no gather function given"},
		{"FuncParts: negative count", funcParts(-1, [][]int{{2}}, [][]int{nil}, parts), "data.FuncParts: -1 samples: a dataset needs at least one"},
		{"FuncParts: no inputs", funcParts(3, nil, [][]int{nil}, parts), "data.FuncParts: no input shapes given: give one per model input, e.g. [][]int{{28, 28}, {4}}"},
		{"FuncParts: no labels", funcParts(3, [][]int{{2}}, nil, parts), "data.FuncParts: no label shapes given: give one per model output, e.g. [][]int{{}, {10}} for a class index and a row of 10 numbers"},
		{"FuncParts: an input without a shape", funcParts(3, [][]int{{2}, {}}, [][]int{nil}, parts),
			"data.FuncParts: no shape given for input 1: say what it is for one sample, e.g. []int{28, 28} for 28×28 images or []int{1} for one number"},
		{"FuncParts: a zero dimension", funcParts(3, [][]int{{2}, {3, 0}}, [][]int{nil}, parts),
			"data.FuncParts: input 1 shape (3, 0) has a dimension 0: every dimension must be positive"},
		{"FuncParts: a negative label dimension", funcParts(3, [][]int{{2}}, [][]int{nil, {-1}}, parts),
			"data.FuncParts: label 1 shape (-1,) has a dimension -1: every dimension must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.make()
			if err == nil || err.Error() != tc.want || d != nil {
				t.Errorf("got %v, %v; want the error %q", d, err, tc.want)
			}
		})
	}
}

// FuncParts of one input and one label is FuncData: the same shapes, and
// no parts.
func TestFuncPartsOfOneEachIsFuncData(t *testing.T) {
	ds, err := FuncParts(2, [][]int{{3}}, [][]int{nil}, func(i int, x, y [][]float32) error {
		x[0][2], y[0][0] = float32(i), 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.SampleShape(), []int{3}) || !slices.Equal(ds.LabelShape(), []int{}) ||
		ds.(InputParter).InputParts() != nil || ds.(LabelParter).LabelParts() != nil {
		t.Errorf("SampleShape %v, LabelShape %v, parts %v %v", ds.SampleShape(), ds.LabelShape(),
			ds.(InputParter).InputParts(), ds.(LabelParter).LabelParts())
	}
	if x, y := gatherAll(t, ds, []int{1, 0}); !slices.Equal(x, []float32{0, 0, 1, 0, 0, 0}) || !slices.Equal(y, []float32{1, 1}) {
		t.Errorf("gathered %v %v", x, y)
	}
}

func TestTensorTuple(t *testing.T) {
	dense := func(values []float32, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(values))
	}
	x1 := dense([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	x2 := dense([]float32{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, 3, 2, 2)
	y1 := dense([]float32{0, 1, 2}, 3)
	y2 := dense([]float32{0.5, 1.5, 2.5}, 3, 1)
	ds, err := TensorTuple([]*tensor.Dense{x1, x2}, []*tensor.Dense{y1, y2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.SampleShape(), []int{6}) || !slices.Equal(ds.LabelShape(), []int{2}) ||
		!shapesEqual(InputParts(ds), [][]int{{2}, {2, 2}}) || !shapesEqual(LabelParts(ds), [][]int{{}, {1}}) {
		t.Errorf("SampleShape %v, LabelShape %v, InputParts %v, LabelParts %v", ds.SampleShape(), ds.LabelShape(), InputParts(ds), LabelParts(ds))
	}
	x, y := gatherAll(t, ds, []int{2, 0})
	if want := []float32{5, 6, 18, 19, 20, 21, 1, 2, 10, 11, 12, 13}; !slices.Equal(x, want) {
		t.Errorf("inputs %v, want %v", x, want)
	}
	if want := []float32{2, 2.5, 0, 0.5}; !slices.Equal(y, want) {
		t.Errorf("labels %v, want %v", y, want)
	}
	single, err := TensorTuple([]*tensor.Dense{x2}, []*tensor.Dense{y1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(single.SampleShape(), []int{2, 2}) || InputParts(single) == nil || single.(InputParter).InputParts() != nil {
		t.Errorf("one tensor each: SampleShape %v, parts %v", single.SampleShape(), single.(InputParter).InputParts())
	}

	f64 := tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]float64{1, 2, 3}))
	tests := []struct {
		name   string
		xs, ys []*tensor.Dense
		want   string
	}{
		{"no inputs", nil, []*tensor.Dense{y1}, "data.TensorTuple: no input tensors given: give one per model input"},
		{"no labels", []*tensor.Dense{x1}, nil, "data.TensorTuple: no label tensors given: give one per model output"},
		{"a float64 input", []*tensor.Dense{x1, f64}, []*tensor.Dense{y1},
			"data.TensorTuple: input 1: tensor has dtype float64: gokeras models take float32 data"},
		{"a missing label", []*tensor.Dense{x1}, []*tensor.Dense{y1, nil}, "data.TensorTuple: label 1: no tensor given"},
		{"inputs of other counts", []*tensor.Dense{x1, dense([]float32{1, 2}, 2)}, []*tensor.Dense{y1},
			"data.TensorTuple: input 0 has 3 samples but input 1 has 2: every tensor needs one entry per sample"},
		{"labels of another count", []*tensor.Dense{x1, x2}, []*tensor.Dense{dense([]float32{1}, 1)},
			"data.TensorTuple: the inputs have 3 samples but the labels have 1: give one label per sample"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := TensorTuple(tc.xs, tc.ys)
			if err == nil || err.Error() != tc.want || d != nil {
				t.Errorf("TensorTuple = %v, %v; want the error %q", d, err, tc.want)
			}
		})
	}
}

// Every tuple the package makes says its parts, through the interfaces.
var (
	_ InputParter = (*sliceInputs)(nil)
	_ LabelParter = (*sliceData)(nil)
	_ InputParter = (*funcData)(nil)
	_ LabelParter = (*funcData)(nil)
	_ InputParter = (*tensorTuple)(nil)
	_ LabelParter = (*tensorTuple)(nil)
	_ InputParter = (*subset)(nil)
	_ LabelParter = (*subset)(nil)
	_ InputParter = (*prefetched)(nil)
	_ LabelParter = (*prefetched)(nil)
)
