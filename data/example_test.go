package data_test

import (
	"fmt"

	"github.com/gokeras/gokeras/data"
)

// A dataset for a model of two inputs (a 2×2 image and two features) and
// two outputs (a class among 3 and a number), as Keras' fit([x1, x2],
// [y1, y2]) takes it. Each sample is gathered as one row holding its
// inputs one after another, and each label as one row holding its labels;
// InputParts and LabelParts say how the rows are cut.
func ExampleInputTuple() {
	images := []uint8{0, 255, 255, 0, 255, 255, 0, 0, 51, 102, 153, 204}
	features := [][]float32{{0.5, -1}, {2, 0}, {1, 1}}
	classes := []int{1, 2, 0}
	angles := []float64{30, 45, 90}

	ds, err := data.SliceData(
		data.InputTuple(data.Pixels(images, 255, 2, 2), data.Rows(features)),
		data.LabelTuple(data.Classes(classes, 3), data.Targets(angles)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("samples:", ds.Len(), "rows of", ds.SampleShape(), "labels of", ds.LabelShape())
	fmt.Println("input parts:", data.InputParts(ds), "label parts:", data.LabelParts(ds))

	x, y := make([]float32, 6), make([]float32, 2)
	if err := ds.GatherInputs([]int{2}, x); err != nil {
		fmt.Println(err)
		return
	}
	if err := ds.GatherLabels([]int{2}, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sample 2:", x, "label:", y)

	// Parts that do not have one entry per sample are an error naming them.
	_, err = data.SliceData(
		data.InputTuple(data.Pixels(images, 255, 2, 2), data.Rows(features[:2])),
		data.LabelTuple(data.Classes(classes, 3), data.Targets(angles)))
	fmt.Println(err)
	// Output:
	// samples: 3 rows of [6] labels of [2]
	// input parts: [[2 2] [2]] label parts: [[] []]
	// sample 2: [0.2 0.4 0.6 0.8 1 1] label: [0 90]
	// data.InputTuple: part 0 has 3 samples but part 1 has 2: every part needs one entry per sample
}

// FuncParts makes each sample's inputs and labels on demand, one slice per
// part.
func ExampleFuncParts() {
	ds, err := data.FuncParts(4, [][]int{{3}, {1}}, [][]int{{}, {2}}, func(i int, x, y [][]float32) error {
		f := float32(i)
		x[0][0], x[0][1], x[0][2] = f, f*f, -f // input 0: three numbers
		x[1][0] = 100 * f                      // input 1: one number
		y[0][0] = float32(i % 2)               // label 0: a class index
		y[1][0], y[1][1] = f/2, f/4            // label 1: two targets
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	x, y := make([]float32, 2*4), make([]float32, 2*3)
	_ = ds.GatherInputs([]int{3, 1}, x)
	_ = ds.GatherLabels([]int{3, 1}, y)
	fmt.Println(x)
	fmt.Println(y)
	// Output:
	// [3 9 -3 300 1 1 -1 100]
	// [1 1.5 0.75 1 0.5 0.25]
}
